package table

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/vfs"
)

// TestWALDamagedZeroRunIsCorruption: a synced record whose body holds a
// run of zeros longer than a sector (a column of zeros), damaged elsewhere
// by the medium, is corruption naming the segment, not a torn tail that
// would drop it and the acknowledged records after it.
func TestWALDamagedZeroRunIsCorruption(t *testing.T) {
	zeros := func(seq uint64) []byte {
		if seq == 2 {
			return append(walBody(seq), make([]byte, 3*tornSector)...)
		}
		return walBody(seq)
	}
	fsys := vfs.NewMemFS()
	mkdirDurable(t, fsys, "/t")
	w, err := openWALWriter(fsys, "/t", fileNums(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for s := uint64(1); s <= 4; s++ {
		if _, err := w.commit(zeros(s), false, nil); err != nil {
			t.Fatal(err)
		}
	}
	name := "/t/" + walName(1)
	if got := replayedWith(t, fsys, "/t", zeros); fmt.Sprint(got) != "[1 2 3 4]" {
		t.Fatalf("replayed %v before any damage", got)
	}
	data, err := vfs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	// The second record starts after the first; damage its body's text,
	// ahead of the zeros.
	first := recordHeaderLen + 1 + len(walBody(1)) + 1
	for _, pos := range []int{first + recordHeaderLen + 3, first + recordHeaderLen + 1 + len(walBody(2)) + 3*tornSector} {
		c := fsys.Clone()
		d := bytes.Clone(data)
		d[pos] ^= 0x10
		if err := vfs.WriteFileAtomic(c, name, d); err != nil {
			t.Fatal(err)
		}
		_, err := replayWAL(c, "/t")
		if !errors.Is(err, rowttl.ErrCorruption) || !strings.Contains(err.Error(), name) {
			t.Fatalf("byte %d flipped: replay = %v, want corruption naming %s", pos, err, name)
		}
	}
}

// TestWALReplaysUnmaskedFormat: segments written before records were
// masked (testdata/wal-format1, one closed, one live with its
// preallocated zeros) replay, and a writer carries on after them.
func TestWALReplaysUnmaskedFormat(t *testing.T) {
	dir := filepath.Join("testdata", "wal-format1")
	if got := replayedSeqs(t, vfs.Default, dir); fmt.Sprint(got) != "[1 2 3 4 5 6 7]" {
		t.Fatalf("replayed %v", got)
	}
	fsys := vfs.NewMemFS()
	mkdirDurable(t, fsys, "/t")
	names, err := vfs.Default.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		data, err := vfs.ReadFile(vfs.Default, filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFileAtomic(fsys, "/t/"+n, data); err != nil {
			t.Fatal(err)
		}
	}
	segs, err := replayWAL(fsys, "/t")
	if err != nil {
		t.Fatal(err)
	}
	nums := fileNums()
	nums() // the fixture's segments hold 1 and 2
	nums()
	w, err := openWALWriter(fsys, "/t", nums, 8, segs)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := commitNumbered(w, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := replayedSeqs(t, fsys, "/t"); fmt.Sprint(got) != "[1 2 3 4 5 6 7 8 9]" {
		t.Fatalf("replayed %v", got)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
}
