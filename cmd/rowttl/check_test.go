package main

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/table"
)

// makeCheckTable creates <dir>/<db>/<name> with two writes of n rows.
func makeCheckTable(t *testing.T, dir, db, name string, n int) string {
	t.Helper()
	// dir is a data directory (the first call makes it one).
	d, err := table.OpenDB(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	tdir := filepath.Join(dir, db, name)
	def := &table.Definition{Model: schema.Duplicate, Schema: schema.Schema{KeyCount: 1, Columns: []schema.Column{
		{Name: "id", Type: schema.BigIntType},
		{Name: "msg", Type: schema.StringType, Nullable: true},
	}}, Properties: map[string]string{"function_column.enable_row_ttl": "true"}}
	// Each write a rowset and a manifest record, which the checks count
	// and cut.
	tbl, err := table.Create(tdir, def, &table.Options{DisableAutoCompaction: true, SmallWriteRows: -1})
	if err != nil {
		t.Fatal(err)
	}
	for w := 0; w < 2; w++ {
		b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64},
			{Name: "msg", Type: arrow.BinaryTypes.String, Nullable: true},
		}, nil))
		for i := 0; i < n; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(w*n + i))
			b.Field(1).(*array.StringBuilder).Append("hello")
		}
		rec := b.NewRecordBatch()
		b.Release()
		err := tbl.Write(context.Background(), rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	return tdir
}

func runCheckCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, _, err := runIn(checkCommand(), "", args...)
	return out, err
}

// dirSnapshot maps every file under dir to its contents.
func dirSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func segFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no segments in %s: %v", dir, err)
	}
	return m
}

func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	good := makeCheckTable(t, dir, "default", "events", 10)
	bad := makeCheckTable(t, dir, "sales", "orders", 7)
	// Scratch directories of a CREATE or DROP in progress are skipped.
	if err := os.MkdirAll(filepath.Join(dir, "default", ".creating-1-x"), 0o755); err != nil {
		t.Fatal(err)
	}

	out, err := runCheckCmd(t, "--dir", dir)
	if err != nil {
		t.Fatalf("check of a healthy directory: %v\n%s", err, out)
	}
	want := "ok default.events: 2 rowsets, 20 rows\nok sales.orders: 2 rowsets, 14 rows\n"
	if out != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out, want)
	}

	// A torn manifest tail and an orphan file are what a crash leaves: not
	// problems, and check must leave them for the next real open.
	mf := filepath.Join(good, "MANIFEST-000001")
	f, err := os.OpenFile(mf, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{7, 0, 0})
	f.Close()
	if err := os.WriteFile(filepath.Join(good, "000999.seg"), []byte("orphan"), 0o644); err != nil {
		t.Fatal(err)
	}

	// One flipped byte in a segment of the other table.
	seg := segFiles(t, bad)[0]
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/3] ^= 0x40
	if err := os.WriteFile(seg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before := dirSnapshot(t, dir)
	out, err = runCheckCmd(t, "--dir", dir)
	if !errors.Is(err, errCheckFailed) {
		t.Fatalf("check of a corrupt directory: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != "ok default.events: 2 rowsets, 20 rows; segment files no record lists: 000999.seg" ||
		!strings.HasPrefix(lines[1], "FAIL sales.orders: ") || !strings.Contains(lines[1], filepath.Base(seg)) || !strings.Contains(lines[1], "corruption") {
		t.Fatalf("output:\n%s", out)
	}
	if after := dirSnapshot(t, dir); len(after) != len(before) {
		t.Fatalf("check changed the directory: %d files before, %d after", len(before), len(after))
	} else {
		for p, b := range before {
			if after[p] != b {
				t.Fatalf("check changed %s", p)
			}
		}
	}

	// --table picks one; --dir may name a table directory.
	if out, err := runCheckCmd(t, "--dir", dir, "--table", "default.events"); err != nil || out != "ok default.events: 2 rowsets, 20 rows; segment files no record lists: 000999.seg\n" {
		t.Fatalf("--table: %v\n%s", err, out)
	}
	if out, err := runCheckCmd(t, "--dir", bad); !errors.Is(err, errCheckFailed) || !strings.HasPrefix(out, "FAIL sales.orders: ") {
		t.Fatalf("--dir of a table: %v\n%s", err, out)
	}
	if out, err := runCheckCmd(t, "--dir", dir, "--table", "default.nope"); !errors.Is(err, errCheckFailed) || !strings.HasPrefix(out, "FAIL default.nope: ") {
		t.Fatalf("--table of a missing table: %v\n%s", err, out)
	}

	// A segment file the manifest lists is missing; CURRENT is garbled; a
	// table directory lost its CURRENT.
	if err := os.Remove(segFiles(t, good)[0]); err != nil {
		t.Fatal(err)
	}
	other := makeCheckTable(t, dir, "sales", "refunds", 3)
	if err := os.WriteFile(filepath.Join(other, "CURRENT"), []byte("MANIFEST-0000x1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lost := makeCheckTable(t, dir, "sales", "returns", 3)
	if err := os.Remove(filepath.Join(lost, "CURRENT")); err != nil {
		t.Fatal(err)
	}
	out, err = runCheckCmd(t, "--dir", dir)
	if !errors.Is(err, errCheckFailed) || !strings.Contains(err.Error(), "4 of 4") {
		t.Fatalf("check: %v\n%s", err, out)
	}
	for _, want := range []string{"FAIL default.events: ", "is missing", "FAIL sales.refunds: ", "CURRENT", "FAIL sales.returns: ", "no CURRENT"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestCheckCommandReadsAnOpenTable: check reads a table that another open
// owns without disturbing it: the owner writes and compacts afterwards as
// before.
func TestCheckCommandReadsAnOpenTable(t *testing.T) {
	dir := t.TempDir()
	tdir := makeCheckTable(t, dir, "default", "t", 3)
	tbl, err := table.Open(tdir, &table.Options{DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	out, err := runCheckCmd(t, "--dir", dir)
	if err != nil || out != "ok default.t: 2 rowsets, 6 rows\n" {
		t.Fatalf("check of an open table: %v\n%s", err, out)
	}
	if err := tbl.Compact(context.Background(), table.Full); err != nil {
		t.Fatalf("compaction after check: %v", err)
	}
	if out, err := runCheckCmd(t, "--dir", dir); err != nil || out != "ok default.t: 1 rowsets, 6 rows\n" {
		t.Fatalf("check after compaction: %v\n%s", err, out)
	}
}

// TestCheckCommandRefusesOtherDirectories: check of a directory that is
// not a data directory says so, instead of a list of corrupt tables, and
// creates nothing.
func TestCheckCommandRefusesOtherDirectories(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "photos", "2024"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := dirSnapshot(t, dir)
	out, err := runCheckCmd(t, "--dir", dir)
	if err == nil || !strings.Contains(err.Error(), "not a rowttl data directory") || out != "" {
		t.Fatalf("check of a foreign directory: %v\n%s", err, out)
	}
	if len(dirSnapshot(t, dir)) != len(before) {
		t.Fatal("check created files")
	}
	missing := filepath.Join(dir, "missing")
	if _, err := runCheckCmd(t, "--dir", missing); err == nil {
		t.Fatal("check of a missing directory succeeded")
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("check created %s: %v", missing, err)
	}
}

// TestCheckCommandCutManifest: a manifest cut at a record boundary after
// the table was closed — the acknowledged writes of its last records gone
// from it, their files still there — fails the check, naming the manifest,
// and changes nothing; an open then refuses it too. The files of a write
// that no record lists are reported, and after an open they are listed in
// lost+found/.
func TestCheckCommandCutManifest(t *testing.T) {
	dir := t.TempDir()
	tdir := makeCheckTable(t, dir, "default", "events", 10)
	mf := filepath.Join(tdir, "MANIFEST-000001")
	data, err := os.ReadFile(mf)
	if err != nil {
		t.Fatal(err)
	}
	// The manifest holds the snapshot and two writes; cut the second.
	first := int(binary.LittleEndian.Uint32(data)) + 12
	second := first + int(binary.LittleEndian.Uint32(data[first:])) + 12
	if err := os.WriteFile(mf, data[:second], 0o644); err != nil {
		t.Fatal(err)
	}
	before := dirSnapshot(t, dir)
	out, err := runCheckCmd(t, "--dir", dir)
	if !errors.Is(err, errCheckFailed) || !strings.HasPrefix(out, "FAIL default.events: ") ||
		!strings.Contains(out, "MANIFEST-000001") || !strings.Contains(out, "acknowledged changes are lost") {
		t.Fatalf("check of a cut manifest: %v\n%s", err, out)
	}
	if after := dirSnapshot(t, dir); len(after) != len(before) {
		t.Fatalf("check changed the directory")
	}
	if _, err := table.Open(tdir, &table.Options{DisableAutoCompaction: true, Logf: t.Logf}); !errors.Is(err, rowttl.ErrCorruption) {
		t.Fatalf("open of a cut manifest: %v", err)
	}
	for p, b := range before {
		if after := dirSnapshot(t, dir); after[p] != b {
			t.Fatalf("the refused open changed %s", p)
		}
	}

	// The second write's files without its record, CURRENT as a crash
	// leaves it (naming no published record): a write in flight.
	if err := os.WriteFile(filepath.Join(tdir, "CURRENT"), []byte("MANIFEST-000001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = runCheckCmd(t, "--dir", dir)
	segs := segFiles(t, tdir)
	inFlight := filepath.Base(segs[len(segs)-1])
	if err != nil || out != "ok default.events: 1 rowsets, 10 rows; segment files no record lists: "+inFlight+"\n" {
		t.Fatalf("check of a table with a write in flight: %v\n%s", err, out)
	}
	tbl, err := table.Open(tdir, &table.Options{DisableAutoCompaction: true, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	out, err = runCheckCmd(t, "--dir", dir)
	if err != nil || out != "ok default.events: 1 rowsets, 10 rows; segment files no record lists: lost+found/"+inFlight+"\n" {
		t.Fatalf("check after the open: %v\n%s", err, out)
	}
}
