package table

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/vfs"
)

// The corruption tests damage one file of a closed table and require that
// Open, a full scan or Check reports it — an error wrapping ErrCorruption
// whose message names the file — and that no scan ever returns rows other
// than the table's.

// corruptionFixture builds a table with several rowsets, delete marks and a
// compaction output on a MemFS, closes it, and returns the file system and
// the reference model of its contents.
func corruptionFixture(t *testing.T, model schema.Model) (*vfs.MemFS, *refModel) {
	t.Helper()
	mem := newCountingAllocator()
	fsys := vfs.NewMemFS()
	tbl := mustCreate(t, "/t", modelDef(model, false), reliabilityOpts(fsys, mem))
	ref := newRef(model, false)
	standardSetup(t, tbl, mem, ref)
	if err := writeModelRows(tbl, mem, ref, modelRowsFor(200, 20, 0, 700, false)); err != nil {
		t.Fatal(err)
	}
	checkClose(t, tbl)
	mem.AssertSize(t, 0)
	return fsys, ref
}

// tableFiles lists the files of the table directory.
func tableFiles(t *testing.T, fsys vfs.FS) []string {
	t.Helper()
	names, err := fsys.List("/t")
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// flipPositions chooses the byte offsets to damage in a file of size n:
// every one of a small file; the head, the tail and an even spread of a
// large one (dense enough to hit every structure, cheap enough for -race).
// heldBytes is how many bytes of a table file hold data: a write-ahead
// log segment's zeros preallocated past its records hold none (damage
// there reads as the torn tail of a write never synced).
func heldBytes(t *testing.T, name string, data []byte) int {
	t.Helper()
	if _, ok := parseWALName(name); !ok {
		return len(data)
	}
	seg, err := decodeWALSegment(name, bytes.Clone(data))
	if err != nil {
		t.Fatalf("%s before any damage: %v", name, err)
	}
	return int(seg.valid)
}

func flipPositions(n int, dense bool) []int {
	limit := 160
	if dense {
		limit = n
	}
	if n <= limit {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	seen := map[int]bool{}
	var out []int
	add := func(i int) {
		if i >= 0 && i < n && !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	for i := 0; i < 40; i++ {
		add(i)
		add(n - 1 - i)
	}
	step := float64(n) / float64(limit-80)
	for f := 0.0; f < float64(n); f += step {
		add(int(f))
	}
	return out
}

// mutateFile rewrites name with f applied to its contents.
func mutateFile(t *testing.T, fsys vfs.FS, name string, f func([]byte) []byte) {
	t.Helper()
	data, err := vfs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	data = f(data)
	w, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	w.Close()
}

// expectCorruption opens the table on fsys and reads everything. It fails
// the test unless some step reports a corruption naming file, or when a
// scan returns rows other than ref's. It returns the error reported.
func expectCorruption(t *testing.T, where string, fsys vfs.FS, file string, ref *refModel) error {
	t.Helper()
	mem := newCountingAllocator()
	defer func() {
		if n := mem.size.Load(); n != 0 {
			t.Errorf("%s: %d bytes leaked", where, n)
		}
	}()
	named := func(step string, err error) error {
		t.Helper()
		if !errors.Is(err, rowttl.ErrCorruption) || !strings.Contains(err.Error(), file) {
			t.Fatalf("%s: %s: %v: want a corruption naming %s", where, step, err, file)
		}
		return err
	}
	tbl, err := Open("/t", reliabilityOpts(fsys, mem))
	if err != nil {
		return named("open", err)
	}
	defer tbl.Close()
	var reported error
	for _, now := range checkNows {
		rows, err := visibleRows(tbl, now)
		if err != nil {
			reported = named("scan", err)
			break
		}
		if got, want := strings.Join(rows, " "), strings.Join(ref.visible(now.UnixMicro()), " "); got != want {
			t.Fatalf("%s: a scan at %v returned wrong rows without an error:\ngot  %s\nwant %s", where, now, got, want)
		}
	}
	if err := tbl.Check(); err != nil {
		return named("check", err)
	}
	if reported == nil {
		t.Fatalf("%s: damage to %s went unnoticed by open, scan and check", where, file)
	}
	return reported
}

func TestCorruptionByteFlips(t *testing.T) {
	dense := soakDuration(t) > 0
	for _, model := range []schema.Model{schema.Duplicate, schema.UniqueMOW, schema.UniqueMOR} {
		t.Run(modelName(model), func(t *testing.T) {
			t.Parallel()
			fsys, ref := corruptionFixture(t, model)
			for _, name := range tableFiles(t, fsys) {
				if name == "LOCK" {
					continue
				}
				path := "/t/" + name
				data, err := vfs.ReadFile(fsys, path)
				if err != nil {
					t.Fatal(err)
				}
				for _, pos := range flipPositions(heldBytes(t, name, data), dense) {
					c := fsys.Clone()
					mutateFile(t, c, path, func(b []byte) []byte { b[pos] ^= 0xff; return b })
					expectCorruption(t, fmt.Sprintf("%s byte %d of %d", name, pos, len(data)), c, name, ref)
				}
			}
		})
	}
}

func TestCorruptionMissingAndTruncatedFiles(t *testing.T) {
	fsys, ref := corruptionFixture(t, schema.UniqueMOW)
	var segs []string
	for _, n := range tableFiles(t, fsys) {
		if _, ok := rowset.ParseSegmentFileName(n); ok {
			segs = append(segs, n)
		}
	}
	if len(segs) < 2 {
		t.Fatalf("fixture has segments %v", segs)
	}
	for _, seg := range segs {
		c := fsys.Clone()
		if err := c.Remove("/t/" + seg); err != nil {
			t.Fatal(err)
		}
		err := expectCorruption(t, "missing "+seg, c, seg, ref)
		if !strings.Contains(err.Error(), "missing") {
			t.Fatalf("missing %s: %v", seg, err)
		}
		for _, cut := range []int{0, 1, 20} {
			c := fsys.Clone()
			mutateFile(t, c, "/t/"+seg, func(b []byte) []byte { return b[:len(b)-1-cut] })
			expectCorruption(t, fmt.Sprintf("%s cut by %d", seg, cut+1), c, seg, ref)
		}
		c = fsys.Clone()
		mutateFile(t, c, "/t/"+seg, func(b []byte) []byte { return append(b, 0) })
		expectCorruption(t, seg+" grown", c, seg, ref)
	}

	// CURRENT: garbled, empty, naming a manifest that is not there.
	for _, cur := range []string{"", "\n", "MANIFEST-00000x\n", "MANIFEST-1\n", "garbage", "MANIFEST-000007\n", "MANIFEST-000001\nMANIFEST-000002\n"} {
		c := fsys.Clone()
		mutateFile(t, c, "/t/CURRENT", func([]byte) []byte { return []byte(cur) })
		expectCorruption(t, fmt.Sprintf("CURRENT %q", cur), c, "CURRENT", ref)
	}
	// The manifest missing while CURRENT names it.
	c := fsys.Clone()
	if err := c.Remove("/t/" + manifestName(1)); err != nil {
		t.Fatal(err)
	}
	expectCorruption(t, "missing manifest", c, manifestName(1), ref)
	// A manifest cut inside its first record has no definition.
	c = fsys.Clone()
	mutateFile(t, c, "/t/"+manifestName(1), func(b []byte) []byte { return b[:20] })
	expectCorruption(t, "manifest cut in its first record", c, manifestName(1), ref)
}

// TestCorruptionNotMistakenForTornTail: damage in the middle of the
// manifest, followed by good records, is corruption, never a torn tail to
// cut (which would silently drop acknowledged writes).
func TestCorruptionNotMistakenForTornTail(t *testing.T) {
	fsys, ref := corruptionFixture(t, schema.Duplicate)
	path := "/t/" + manifestName(1)
	data, err := vfs.ReadFile(fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	payloads, _, err := readRecords(path, data)
	if err != nil || len(payloads) < 3 {
		t.Fatalf("%d records, %v", len(payloads), err)
	}
	// Zero the second record whole: it looks like a crash's zero fill, but
	// records follow it.
	off := recordHeaderLen + len(payloads[0])
	end := off + recordHeaderLen + len(payloads[1])
	c := fsys.Clone()
	mutateFile(t, c, path, func(b []byte) []byte { clear(b[off:end]); return b })
	expectCorruption(t, "zeroed middle record", c, manifestName(1), ref)
	// Its payload only.
	c = fsys.Clone()
	mutateFile(t, c, path, func(b []byte) []byte { clear(b[off+recordHeaderLen : end]); return b })
	expectCorruption(t, "zeroed middle payload", c, manifestName(1), ref)
}

// TestCorruptionOnDisk repeats a few flips on a real directory, through
// the operating system's file system.
func TestCorruptionOnDisk(t *testing.T) {
	mem := newCountingAllocator()
	dir := filepath.Join(t.TempDir(), "t")
	opts := reliabilityOpts(nil, mem)
	tbl := mustCreate(t, dir, modelDef(schema.Duplicate, false), opts)
	ref := newRef(schema.Duplicate, false)
	if err := writeModelRows(tbl, mem, ref, modelRowsFor(0, 40, 0, 0, false)); err != nil {
		t.Fatal(err)
	}
	checkClose(t, tbl)
	names, err := vfs.Default.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if name == lockFile || name == readersFile { // no data: nothing to corrupt
			continue
		}
		path := filepath.Join(dir, name)
		orig, err := vfs.ReadFile(vfs.Default, path)
		if err != nil {
			t.Fatal(err)
		}
		n := heldBytes(t, name, orig)
		if n == 0 { // an empty write-ahead log
			continue
		}
		for _, pos := range []int{0, n / 2, n - 1} {
			mutateFile(t, vfs.Default, path, func(b []byte) []byte { b[pos] ^= 0x01; return b })
			tbl, err := Open(dir, opts)
			if err == nil {
				_, err = tbl.Count(context.Background(), base, query.Compare("v", query.Ge, int64(0)))
				if err == nil {
					err = tbl.Check()
				}
				tbl.Close()
			}
			if !errors.Is(err, rowttl.ErrCorruption) || !strings.Contains(err.Error(), name) {
				t.Fatalf("%s byte %d: %v", name, pos, err)
			}
			mutateFile(t, vfs.Default, path, func([]byte) []byte { return append([]byte(nil), orig...) })
		}
	}
	tbl, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	expectState(t, "restored", tbl, []*refModel{ref})
	checkClose(t, tbl)
	mem.AssertSize(t, 0)
}
