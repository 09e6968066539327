package table

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/vfs"
)

// The cut tests shorten the manifest of a small table and open it. Each
// open must show exactly the acknowledged data, or fail with ErrCorruption
// naming the manifest and change no file; no open may delete a segment
// file. Only a table that was not closed may show less, and only when the
// cut falls inside its final record: that is what a crash during the final
// append leaves (the write was never acknowledged), and its files must
// then be in lost+found/.

// cutFixture is a small table: three writes with a DELETE between the
// second and the third, so that the manifest ends with a write.
type cutFixture struct {
	closed, crashed *vfs.MemFS
	// states are what the table shows after each operation; the last is
	// what was acknowledged.
	states []*refModel
	// lastStart is the offset of the manifest's final record.
	lastStart int
	size      int
}

func newCutFixture(t *testing.T, model schema.Model) *cutFixture {
	t.Helper()
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	fsys := vfs.NewMemFS()
	tbl := mustCreate(t, "/t", modelDef(model, false), reliabilityOpts(fsys, mem))
	ref := newRef(model, false)
	f := &cutFixture{}
	keep := func() { f.states = append(f.states, ref.clone()) }
	write := func(id0, n int) {
		if err := writeModelRows(tbl, mem, ref, modelRowsFor(id0, n, 0, int64(id0), false)); err != nil {
			t.Fatal(err)
		}
		keep()
	}
	write(0, 6)
	write(10, 6)
	if _, err := tbl.DeleteWhere(context.Background(), Matcher{Filter: query.Compare("v", query.Lt, int64(3))}, WriteOptions{Now: base}); err != nil {
		t.Fatal(err)
	}
	ref.deleteWhere(base.UnixMicro(), 3)
	keep()
	write(20, 6)
	// What a power cut now leaves: every acknowledged record, and CURRENT
	// as Create wrote it.
	f.crashed = fsys.CrashClone(nil)
	checkClose(t, tbl)
	f.closed = fsys
	data, err := vfs.ReadFile(fsys, "/t/"+manifestName(1))
	if err != nil {
		t.Fatal(err)
	}
	payloads, _, err := readRecords("m", data)
	if err != nil {
		t.Fatal(err)
	}
	last := payloads[len(payloads)-1]
	f.size = len(data)
	f.lastStart = len(data) - recordHeaderLen - len(last)
	return f
}

// segmentContents maps the base name of every segment file of the table,
// in lost+found/ or not, to its contents.
func segmentContents(t *testing.T, fsys vfs.FS) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, dir := range []string{"/t", "/t/" + lostFoundDir} {
		names, err := fsys.List(dir)
		if err != nil && dir == "/t" {
			t.Fatal(err)
		}
		for _, n := range names {
			if _, ok := rowset.ParseSegmentFileName(n); !ok {
				continue
			}
			b, err := vfs.ReadFile(fsys, path.Join(dir, n))
			if err != nil {
				t.Fatal(err)
			}
			out[n] = string(b)
		}
	}
	return out
}

func TestManifestCutAtEveryOffset(t *testing.T) {
	for _, model := range []schema.Model{schema.Duplicate, schema.UniqueMOW, schema.UniqueMOR} {
		t.Run(modelName(model), func(t *testing.T) {
			t.Parallel()
			f := newCutFixture(t, model)
			acked := f.states[len(f.states)-1]
			torn := f.states[len(f.states)-2]
			for _, closed := range []bool{true, false} {
				src := f.crashed
				if closed {
					src = f.closed
				}
				var shortened, tornTails int
				for cut := 0; cut < f.size; cut++ {
					where := fmt.Sprintf("closed %v, manifest cut to %d of %d bytes", closed, cut, f.size)
					fsys := src.Clone()
					mutateFile(t, fsys, "/t/"+manifestName(1), func(b []byte) []byte { return b[:cut] })
					segs := segmentContents(t, fsys)
					roErr := openCut(t, where+", read-only", fsys, true, nil)
					if roErr == nil && closed {
						t.Fatalf("%s: a read-only open (rowttl check) found nothing wrong", where)
					}
					want := []*refModel{acked}
					if !closed && cut >= f.lastStart {
						want = append(want, torn)
					}
					err := openCut(t, where, fsys, false, want)
					if (err == nil) != (roErr == nil) {
						t.Fatalf("%s: a read-only open says %v, an open %v", where, roErr, err)
					}
					if err != nil {
						shortened++
					} else {
						tornTails++
					}
					after := segmentContents(t, fsys)
					for n, b := range segs {
						if after[n] != b {
							t.Fatalf("%s: segment file %s is gone or changed", where, n)
						}
					}
				}
				if closed && tornTails != 0 || !closed && tornTails != f.size-f.lastStart {
					t.Fatalf("closed %v: %d cuts taken for a torn tail, %d reported", closed, tornTails, shortened)
				}
			}
		})
	}
}

// openCut opens the table on fsys and checks the outcome: ErrCorruption
// naming the manifest with no file changed, or (returning nil) one of the
// states of want, passing Check, with the unlisted files in lost+found/
// when the open may change files.
func openCut(t *testing.T, where string, fsys *vfs.MemFS, readOnly bool, want []*refModel) error {
	t.Helper()
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	o := reliabilityOpts(fsys, mem)
	o.ReadOnly = readOnly
	o.Logf = func(string, ...any) {}
	before := fsys.String()
	tbl, err := Open("/t", o)
	if err != nil {
		if !errors.Is(err, rowttl.ErrCorruption) || !strings.Contains(err.Error(), manifestName(1)) {
			t.Fatalf("%s: %v: want a corruption naming %s", where, err, manifestName(1))
		}
		if after := fsys.String(); after != before {
			t.Fatalf("%s: a failed open changed files:\nbefore\n%s\nafter\n%s", where, before, after)
		}
		return err
	}
	defer tbl.Close()
	if err := tbl.Check(); err != nil {
		t.Fatalf("%s: check: %v", where, err)
	}
	if want != nil {
		expectState(t, where, tbl, want)
	}
	if !readOnly {
		names, err := fsys.List("/t")
		if err != nil {
			t.Fatal(err)
		}
		live := map[string]bool{}
		for _, h := range tbl.vs.current.rowsets {
			for _, s := range h.Meta.Segments {
				live[path.Base(rowset.SegmentFileName("", s.FileNum))] = true
			}
		}
		for _, n := range names {
			if _, ok := rowset.ParseSegmentFileName(n); ok && !live[n] {
				t.Fatalf("%s: %s is listed by no record, yet left in the table directory", where, n)
			}
		}
	}
	return nil
}

// TestManifestCutAtRecordBoundary: the attack's case — a manifest of a
// closed table cut at a record boundary, dropping several acknowledged
// writes. Open and a read-only open fail naming the manifest, and say why.
func TestManifestCutAtRecordBoundary(t *testing.T) {
	for _, closed := range []bool{true, false} {
		f := newCutFixture(t, schema.Duplicate)
		src := f.crashed
		if closed {
			src = f.closed
		}
		data, err := vfs.ReadFile(src, "/t/"+manifestName(1))
		if err != nil {
			t.Fatal(err)
		}
		payloads, _, err := readRecords("m", data)
		if err != nil {
			t.Fatal(err)
		}
		// Keep the snapshot and the first write: two writes and the DELETE go.
		keep := 2*recordHeaderLen + len(payloads[0]) + len(payloads[1])
		fsys := src.Clone()
		mutateFile(t, fsys, "/t/"+manifestName(1), func(b []byte) []byte { return b[:keep] })
		for _, ro := range []bool{true, false} {
			err := openCut(t, fmt.Sprintf("closed %v, read-only %v", closed, ro), fsys, ro, nil)
			want := "segment file"
			if closed {
				want = "CURRENT records that record 5 was published"
			}
			if err == nil || !strings.Contains(err.Error(), "acknowledged changes are lost") || !strings.Contains(err.Error(), want) {
				t.Fatalf("closed %v, read-only %v: %v", closed, ro, err)
			}
		}
	}
}

// TestManifestCutLosingCompaction: a merge-on-write table whose last
// record, a compaction, is cut off after the compaction deleted its inputs.
// Opening names the manifest as what lost records — not only the missing
// segment — whether CURRENT tells (the table was closed) or nothing but
// the missing inputs and the compaction's output do (it was not).
func TestManifestCutLosingCompaction(t *testing.T) {
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	fsys := vfs.NewMemFS()
	tbl := mustCreate(t, "/t", modelDef(schema.UniqueMOW, false), reliabilityOpts(fsys, mem))
	ref := newRef(schema.UniqueMOW, false)
	for i := 0; i < 3; i++ {
		if err := writeModelRows(tbl, mem, ref, modelRowsFor(i*10, 10, 0, int64(i*10), false)); err != nil {
			t.Fatal(err)
		}
	}
	name := "/t/" + manifestName(1)
	data, err := vfs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.CompactAt(context.Background(), Full, base); err != nil {
		t.Fatal(err)
	}
	// The removal of the inputs reached the disk, the close did not.
	crashed := fsys.Clone()
	checkClose(t, tbl)
	mutateFile(t, crashed, name, func([]byte) []byte { return bytes.Clone(data) })
	// Closed, CURRENT tells first.
	mutateFile(t, fsys, name, func([]byte) []byte { return bytes.Clone(data) })
	for _, ro := range []bool{true, false} {
		err := openCut(t, fmt.Sprintf("read-only %v", ro), crashed, ro, nil)
		if err == nil || !strings.Contains(err.Error(), "has lost records") || !strings.Contains(err.Error(), "is missing") {
			t.Fatalf("read-only %v: %v", ro, err)
		}
		err = openCut(t, fmt.Sprintf("closed, read-only %v", ro), fsys, ro, nil)
		if err == nil || !strings.Contains(err.Error(), "acknowledged changes are lost") {
			t.Fatalf("closed, read-only %v: %v", ro, err)
		}
	}
}

// TestStrayFilesGoToLostFound: segment files that no record lists — a
// write's whose record never made it, a file of an older build, garbage —
// are moved to lost+found/ with a log line, listed by LostFound (on a
// read-only open too, before they move), and their numbers are not handed
// out again. A load's spilled run is temporary and is deleted.
func TestStrayFilesGoToLostFound(t *testing.T) {
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	fsys := vfs.NewMemFS()
	opts := reliabilityOpts(fsys, mem)
	tbl := mustCreate(t, "/t", modelDef(schema.Duplicate, false), opts)
	ref := newRef(schema.Duplicate, false)
	if err := writeModelRows(tbl, mem, ref, modelRowsFor(0, 10, 0, 0, false)); err != nil {
		t.Fatal(err)
	}
	// A write whose files are published and whose record is not: what a
	// crash between the two leaves.
	crashed := fsys.Clone()
	other := crashed.Clone()
	tblAt := mustOpenOn(t, other, mem)
	if err := writeModelRows(tblAt, mem, ref.clone(), modelRowsFor(100, 10, 0, 0, false)); err != nil {
		t.Fatal(err)
	}
	checkClose(t, tblAt)
	checkClose(t, tbl)
	segs := segmentContents(t, crashed)
	for n, b := range segmentContents(t, other) {
		if _, ok := segs[n]; !ok {
			writeBytes(t, crashed, "/t/"+n, []byte(b))
		}
	}
	writeBytes(t, crashed, "/t/000090.seg", []byte("garbage"))
	writeBytes(t, crashed, "/t/000095.seg", runFile(t, mem, 2))
	ro := reliabilityOpts(crashed, mem)
	ro.ReadOnly = true
	rtbl, err := Open("/t", ro)
	if err != nil {
		t.Fatal(err)
	}
	roList := rtbl.LostFound()
	checkClose(t, rtbl)
	var logged []string
	o := reliabilityOpts(crashed, mem)
	o.Logf = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
	tbl, err = Open("/t", o)
	if err != nil {
		t.Fatal(err)
	}
	expectState(t, "after moving strays", tbl, []*refModel{ref})
	lf := tbl.LostFound()
	if len(lf) != 2 || len(roList) != 2 || !strings.HasPrefix(lf[0], lostFoundDir+"/") || path.Base(lf[0]) != roList[0] {
		t.Fatalf("lost+found %v, read-only open listed %v", lf, roList)
	}
	if len(logged) != 2 || !strings.Contains(strings.Join(logged, "\n"), "moved to lost+found/000090.seg") {
		t.Fatalf("log:\n%s", strings.Join(logged, "\n"))
	}
	if _, err := crashed.Stat("/t/000095.seg"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a spilled run is left behind: %v", err)
	}
	// Written again, the numbers of the strays are not reused.
	if err := writeModelRows(tbl, mem, ref, modelRowsFor(200, 10, 0, 0, false)); err != nil {
		t.Fatal(err)
	}
	checkClose(t, tbl)
	got := segmentContents(t, crashed)
	for _, n := range lf {
		b, err := vfs.ReadFile(crashed, "/t/"+n)
		if err != nil {
			t.Fatal(err)
		}
		if got[path.Base(n)] != string(b) {
			t.Fatalf("%s was reused", n)
		}
	}
	tbl = mustOpenOn(t, crashed, mem)
	expectState(t, "reopened", tbl, []*refModel{ref})
	if l := tbl.LostFound(); !slices.Equal(l, lf) {
		t.Fatalf("lost+found %v, then %v", lf, l)
	}
	checkClose(t, tbl)
}

// runFile is a segment file as a load spills it, written after record
// after.
func runFile(t *testing.T, mem *countingAllocator, after uint64) []byte {
	t.Helper()
	rec := modelBatch(mem, modelRowsFor(0, 3, 0, 0, false), false)
	defer rec.Release()
	var buf bytes.Buffer
	w, err := segment.NewWriter(&buf, rec.Schema(), segment.WriterOptions{Tag: segmentTag(kindRun, after)})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func mustOpenOn(t *testing.T, fsys vfs.FS, mem *countingAllocator) *Table {
	t.Helper()
	o := reliabilityOpts(fsys, mem)
	o.Logf = func(string, ...any) {}
	tbl, err := Open("/t", o)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestReadOnlyOpenBesideAWriter: `rowttl check` opens a table read-only
// while its writer goes on. Records the writer publishes while the check
// reads are not taken for lost ones, not even for a moment: the check
// lists the files before it replays the manifest, so no file it sees is
// newer than what it replays, and it has no reason to start over.
func TestReadOnlyOpenBesideAWriter(t *testing.T) {
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	fsys := vfs.NewMemFS()
	writer := mustCreate(t, "/t", modelDef(schema.Duplicate, false), reliabilityOpts(fsys, mem))
	ref := newRef(schema.Duplicate, false)
	if err := writeModelRows(writer, mem, ref, modelRowsFor(0, 5, 0, 0, false)); err != nil {
		t.Fatal(err)
	}
	before := ref.clone()
	var replays int
	var wrote bool
	efs := vfs.NewErrorFS(fsys, vfs.InjectorFunc(func(op vfs.Op, p string) error {
		switch {
		case op == vfs.OpOpen && p == "/t/"+manifestName(1):
			replays++
		case op == vfs.OpOpen && strings.HasSuffix(p, ".seg") && replays > 0 && !wrote:
			// After the replay, while the open reads the files: two
			// writes land.
			wrote = true
			for i := 1; i <= 2; i++ {
				if err := writeModelRows(writer, mem, ref, modelRowsFor(i*10, 5, 0, 0, false)); err != nil {
					t.Error(err)
				}
			}
		}
		return nil
	}))
	o := reliabilityOpts(efs, mem)
	o.ReadOnly = true
	tbl, err := Open("/t", o)
	if err != nil {
		t.Fatalf("read-only open beside a writer: %v", err)
	}
	if !wrote || replays != 1 {
		t.Fatalf("writes landed %v, %d replays (want one)", wrote, replays)
	}
	expectState(t, "read-only", tbl, []*refModel{before})
	if lf := tbl.LostFound(); len(lf) != 0 {
		t.Fatalf("unlisted files %v", lf)
	}
	checkClose(t, tbl)
	checkClose(t, writer)
}

// TestOpenRecordsPublished: an open that finds records CURRENT does not
// record (the table crashed) records them once they are durable, so that a
// later cut of them is caught even if the table crashes again: here a
// DELETE, the final record, cut by one byte.
func TestOpenRecordsPublished(t *testing.T) {
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	fsys := vfs.NewMemFS()
	tbl := mustCreate(t, "/t", modelDef(schema.Duplicate, false), reliabilityOpts(fsys, mem))
	ref := newRef(schema.Duplicate, false)
	if err := writeModelRows(tbl, mem, ref, modelRowsFor(0, 10, 0, 0, false)); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.DeleteWhere(context.Background(), Matcher{Filter: query.Compare("v", query.Lt, int64(4))}, WriteOptions{Now: base}); err != nil {
		t.Fatal(err)
	}
	ref.deleteWhere(base.UnixMicro(), 4)
	crashed := fsys.CrashClone(nil)
	checkClose(t, tbl)
	if _, published, err := readCurrent(crashed, "/t"); err != nil || published != 1 {
		t.Fatalf("CURRENT of the crashed table records %d: %v", published, err)
	}
	tbl = mustOpenOn(t, crashed, mem)
	expectState(t, "reopened", tbl, []*refModel{ref})
	again := crashed.CrashClone(nil)
	checkClose(t, tbl)
	mutateFile(t, again, "/t/"+manifestName(1), func(b []byte) []byte { return b[:len(b)-1] })
	err := openCut(t, "DELETE cut by a byte", again, false, nil)
	if err == nil || !strings.Contains(err.Error(), "CURRENT records that record 3 was published") {
		t.Fatalf("DELETE cut by a byte after a reopen and a crash: %v", err)
	}
}

// TestStrayReadErrorFailsOpen: a stray whose tag cannot be read (the disk
// says no) fails the open with that error — the tag might have shown a
// loss — and nothing changes; the next open, the disk healed, reads the
// tag: a load's spilled run, deleted.
func TestStrayReadErrorFailsOpen(t *testing.T) {
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	fsys := vfs.NewMemFS()
	tbl := mustCreate(t, "/t", modelDef(schema.Duplicate, false), reliabilityOpts(fsys, mem))
	ref := newRef(schema.Duplicate, false)
	if err := writeModelRows(tbl, mem, ref, modelRowsFor(0, 10, 0, 0, false)); err != nil {
		t.Fatal(err)
	}
	checkClose(t, tbl)
	writeBytes(t, fsys, "/t/000050.seg", runFile(t, mem, 2))
	before := fsys.String()
	efs := vfs.NewErrorFS(fsys, vfs.InjectorFunc(func(op vfs.Op, p string) error {
		if op == vfs.OpRead && p == "/t/000050.seg" {
			return &vfs.InjectedError{Op: op, Path: p, Err: syscall.EIO}
		}
		return nil
	}))
	if _, err := Open("/t", reliabilityOpts(efs, mem)); !errors.Is(err, syscall.EIO) || errors.Is(err, rowttl.ErrCorruption) {
		t.Fatalf("open with an unreadable stray: %v", err)
	}
	if fsys.String() != before {
		t.Fatal("a failed open changed files")
	}
	tbl = mustOpenOn(t, fsys, mem)
	expectState(t, "healed", tbl, []*refModel{ref})
	checkClose(t, tbl)
	if _, err := fsys.Stat("/t/000050.seg"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the spilled run is still there: %v", err)
	}
}

// TestBackgroundRecordsPublished: a table that keeps running records in
// CURRENT, every PublishInterval, the records it has made durable, so that
// a process killed later still has a one-byte cut of its final DELETE
// caught.
func TestBackgroundRecordsPublished(t *testing.T) {
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	fsys := vfs.NewMemFS()
	o := reliabilityOpts(fsys, mem)
	o.PublishInterval = 5 * time.Millisecond
	tbl := mustCreate(t, "/t", modelDef(schema.Duplicate, false), o)
	ref := newRef(schema.Duplicate, false)
	if err := writeModelRows(tbl, mem, ref, modelRowsFor(0, 10, 0, 0, false)); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.DeleteWhere(context.Background(), Matcher{Filter: query.Compare("v", query.Lt, int64(4))}, WriteOptions{Now: base}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, published, err := readCurrent(fsys, "/t"); err == nil && published == 3 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("CURRENT records %d after 10s: %v", published, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	killed := fsys.CrashClone(nil)
	checkClose(t, tbl)
	mutateFile(t, killed, "/t/"+manifestName(1), func(b []byte) []byte { return b[:len(b)-1] })
	err := openCut(t, "DELETE cut by a byte", killed, false, nil)
	if err == nil || !strings.Contains(err.Error(), "CURRENT records that record 3 was published") {
		t.Fatalf("DELETE cut by a byte after the process was killed: %v", err)
	}
}
