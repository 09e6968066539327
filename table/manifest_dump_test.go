package table

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
)

// TestManifestDump runs testdata/manifest: a table is made and changed
// through the public API, and dump draws its live manifest record by
// record: each header's fields with their checksums verified, then the
// payload, indented. Any change of what the manifest stores shows here.
// Regenerate with `go test ./table -run TestManifestDump -rewrite`.
//
//	create                 a direct-mode DUPLICATE events table
//	write                  one version; input lines "id ttl" (ttl µs or null)
//	compact                a full compaction
//	reopen                 close and open again
//	dump                   draw the manifest CURRENT names (records drawn
//	                       by an earlier dump only by their header)
func TestManifestDump(t *testing.T) {
	datadriven.Walk(t, "testdata/manifest", func(t *testing.T, path string) {
		dir := t.TempDir()
		var tbl *Table
		var seen dumped
		defer func() {
			if tbl != nil {
				tbl.Close()
			}
		}()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "create":
				tbl = mustCreate(t, dir, directDef(), quiet())
				return ""
			case "write":
				var rows []eventRow
				for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
					f := strings.Fields(line)
					id, _ := strconv.ParseInt(f[0], 10, 64)
					r := eventRow{id: id, eventTime: base.UnixMicro(), userID: id % 3, amount: float64(id), message: "m"}
					if f[1] != "null" {
						v, _ := strconv.ParseInt(f[1], 10, 64)
						r.ttl = &v
					}
					rows = append(rows, r)
				}
				rec := eventBatch(memory.DefaultAllocator, rows, true)
				defer rec.Release()
				if err := tbl.Write(context.Background(), rec); err != nil {
					return "error: " + err.Error() + "\n"
				}
				return ""
			case "compact":
				if err := tbl.Compact(context.Background(), Full); err != nil {
					return "error: " + err.Error() + "\n"
				}
				return ""
			case "reopen":
				if err := tbl.Close(); err != nil {
					t.Fatal(err)
				}
				var err error
				if tbl, err = Open(dir, quiet()); err != nil {
					t.Fatal(err)
				}
				return ""
			case "dump":
				return drawManifest(t, dir, &seen)
			}
			d.Fatalf(t, "unknown command %s", d.Cmd)
			return ""
		})
	})
}

// dumped remembers the records of a manifest already drawn, which later
// dumps list without their payload.
type dumped struct {
	name    string
	records int
}

func drawManifest(t *testing.T, dir string, seen *dumped) string {
	t.Helper()
	cur, err := os.ReadFile(filepath.Join(dir, currentFile))
	if err != nil {
		t.Fatal(err)
	}
	// CURRENT names the manifest first; what follows is the record count
	// the owner last found durable.
	name := strings.Fields(string(cur))[0]
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "CURRENT -> %s, %d bytes\n", name, len(data))
	drawn := 0
	for off, i := 0, 0; off < len(data); i++ {
		if len(data)-off < recordHeaderLen {
			fmt.Fprintf(&out, "@%d: %d bytes of a torn header\n", off, len(data)-off)
			break
		}
		h := data[off : off+recordHeaderLen]
		n := binary.LittleEndian.Uint32(h[0:])
		lenCRC, payCRC := binary.LittleEndian.Uint32(h[4:]), binary.LittleEndian.Uint32(h[8:])
		ok := func(b bool) string {
			if b {
				return "ok"
			}
			return "BAD"
		}
		end := off + recordHeaderLen + int(n)
		if end > len(data) {
			fmt.Fprintf(&out, "@%d: record %d of %d bytes runs past the end\n", off, i, n)
			break
		}
		payload := data[off+recordHeaderLen : end]
		if seen.name == name && i < seen.records {
			fmt.Fprintf(&out, "@%d record %d: %d bytes, as drawn above\n", off, i, n)
			off = end
			drawn = i + 1
			continue
		}
		fmt.Fprintf(&out, "@%d record %d\n", off, i)
		fmt.Fprintf(&out, "  +0 len          %08x = %d\n", n, n)
		fmt.Fprintf(&out, "  +4 crc(len)     %08x %s\n", lenCRC, ok(lenCRC == crc32.Checksum(h[0:4], crcTable)))
		fmt.Fprintf(&out, "  +8 crc(payload) %08x %s\n", payCRC, ok(payCRC == crc32.Checksum(payload, crcTable)))
		fmt.Fprintf(&out, "  +12 payload, %d bytes of JSON:\n", n)
		var ind bytes.Buffer
		if err := json.Indent(&ind, payload, "    ", "  "); err != nil {
			fmt.Fprintf(&out, "    (not JSON: %v)\n", err)
		} else {
			out.WriteString("    " + ind.String() + "\n")
		}
		off = end
		drawn = i + 1
	}
	*seen = dumped{name: name, records: drawn}
	return out.String()
}
