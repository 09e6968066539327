package table

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/vfs"
)

// format1Table loads testdata/format1 — a merge-on-write table written by
// the format 1 build: two writes of 8 rows, then DELETE WHERE v < 2; its
// CURRENT records nothing and its segment files carry no tag — into a
// MemFS, and returns the reference model of its contents.
func format1Table(t *testing.T) (*vfs.MemFS, *refModel) {
	t.Helper()
	fsys := vfs.NewMemFS()
	if err := fsys.MkdirAll("/t"); err != nil {
		t.Fatal(err)
	}
	names, err := os.ReadDir("testdata/format1")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("testdata/format1", n.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeBytes(t, fsys, "/t/"+n.Name(), b)
	}
	ref := newRef(schema.UniqueMOW, false)
	for i := 0; i < 2; i++ {
		ref.write(modelRowsFor(i*8, 8, 0, int64(i*10), false))
	}
	ref.deleteWhere(base.UnixMicro(), 2)
	return fsys, ref
}

// TestOpenFormat1Table: a table of the format 1 build opens, shows its
// rows, takes writes (numbered after its records) and reopens, CURRENT now
// recording its last record.
func TestOpenFormat1Table(t *testing.T) {
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	fsys, ref := format1Table(t)
	tbl := mustOpenOn(t, fsys, mem)
	expectState(t, "format 1 table", tbl, []*refModel{ref})
	if err := writeModelRows(tbl, mem, ref, modelRowsFor(4, 8, 0, 100, false)); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.DeleteWhere(context.Background(), Matcher{Filter: query.Compare("v", query.Lt, int64(13))}, WriteOptions{Now: base}); err != nil {
		t.Fatal(err)
	}
	ref.deleteWhere(base.UnixMicro(), 13)
	checkClose(t, tbl)
	num, published, err := readCurrent(fsys, "/t")
	if err != nil || num != 1 || published != 6 {
		t.Fatalf("CURRENT names manifest %d, published %d: %v", num, published, err)
	}
	tbl = mustOpenOn(t, fsys, mem)
	expectState(t, "reopened", tbl, []*refModel{ref})
	checkClose(t, tbl)
}

// TestFormat1CutKeepsFiles: a format 1 table has nothing to tell a cut
// manifest from a torn tail by, but its files are never deleted: a cut
// that drops the second write moves that write's file to lost+found/.
func TestFormat1CutKeepsFiles(t *testing.T) {
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	fsys, _ := format1Table(t)
	name := "/t/" + manifestName(1)
	data, err := vfs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	payloads, _, err := readRecords(name, data)
	if err != nil || len(payloads) != 4 {
		t.Fatalf("%d records: %v", len(payloads), err)
	}
	keep := 2*recordHeaderLen + len(payloads[0]) + len(payloads[1])
	mutateFile(t, fsys, name, func(b []byte) []byte { return b[:keep] })
	tbl := mustOpenOn(t, fsys, mem)
	first := newRef(schema.UniqueMOW, false)
	first.write(modelRowsFor(0, 8, 0, 0, false))
	expectState(t, "cut", tbl, []*refModel{first})
	if lf := tbl.LostFound(); fmt.Sprint(lf) != "[lost+found/000003.seg]" {
		t.Fatalf("lost+found: %v", lf)
	}
	checkClose(t, tbl)
}

// TestReadCurrent covers what CURRENT may hold: format 1's one line, or the
// manifest and the last published record with their checksum; anything
// else is corruption naming CURRENT.
func TestReadCurrent(t *testing.T) {
	good := string(currentContents(7, 42))
	if !strings.HasPrefix(good, "MANIFEST-000007\npublished 42 crc ") {
		t.Fatalf("CURRENT %q", good)
	}
	for _, c := range []struct {
		data           string
		num, published uint64
	}{
		{"MANIFEST-000001\n", 1, 0},
		{good, 7, 42},
		{string(currentContents(123456, 0)), 123456, 0},
		{"", 0, 0},
		{"MANIFEST-000001", 0, 0},
		{"MANIFEST-000001\n\n", 0, 0},
		{strings.Replace(good, "42", "43", 1), 0, 0},
		{strings.Replace(good, "000007", "000008", 1), 0, 0},
		{good + "\n", 0, 0},
		{strings.TrimSuffix(good, "\n"), 0, 0},
		{"MANIFEST-000001\npublished 3\n", 0, 0},
		{"MANIFEST-000001\nMANIFEST-000002\n", 0, 0},
	} {
		fsys := vfs.NewMemFS()
		if err := fsys.MkdirAll("/t"); err != nil {
			t.Fatal(err)
		}
		writeBytes(t, fsys, "/t/CURRENT", []byte(c.data))
		num, published, err := readCurrent(fsys, "/t")
		if c.num == 0 {
			if !errors.Is(err, rowttl.ErrCorruption) || !strings.Contains(err.Error(), "CURRENT") {
				t.Errorf("%q: %d %d %v, want a corruption naming CURRENT", c.data, num, published, err)
			}
			continue
		}
		if err != nil || num != c.num || published != c.published {
			t.Errorf("%q: %d %d %v, want %d %d", c.data, num, published, err, c.num, c.published)
		}
	}
}

// FuzzCurrent: readCurrent never panics, rejects only with ErrCorruption,
// and what it accepts is exactly what the writer writes for its result.
func FuzzCurrent(f *testing.F) {
	f.Add([]byte("MANIFEST-000001\n"))
	f.Add(currentContents(7, 42))
	f.Add([]byte("MANIFEST-000001\npublished 1 crc 00000000\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := vfs.NewMemFS()
		if err := fsys.MkdirAll("/t"); err != nil {
			t.Fatal(err)
		}
		writeBytes(t, fsys, "/t/CURRENT", data)
		num, published, err := readCurrent(fsys, "/t")
		if err != nil {
			if !errors.Is(err, rowttl.ErrCorruption) {
				t.Fatalf("unmarked error %v", err)
			}
			return
		}
		want := currentContents(num, published)
		if published == 0 && string(data) == manifestName(num)+"\n" {
			return
		}
		if string(want) != string(data) {
			t.Fatalf("accepted %q as %d %d, which writes %q", data, num, published, want)
		}
	})
}

// FuzzSegmentTag: parseSegmentTag never panics and reads back exactly the
// tags segmentTag makes.
func FuzzSegmentTag(f *testing.F) {
	f.Add(segmentTag(kindData, 0))
	f.Add(segmentTag(kindRun, 1<<40))
	f.Add([]byte{1, 1})
	f.Fuzz(func(t *testing.T, tag []byte) {
		kind, after, ok := parseSegmentTag(tag)
		if ok && string(segmentTag(kind, after)) != string(tag) {
			t.Fatalf("%x reads as kind %d after %d", tag, kind, after)
		}
	})
}
