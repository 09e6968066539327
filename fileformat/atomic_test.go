package fileformat

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/vfs"
)

func TestAtomicFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.parquet")
	os.WriteFile(path, []byte("old"), 0o644)

	// Refused: a directory that does not exist, a directory as the path.
	for _, p := range []string{filepath.Join(dir, "nope", "x.parquet"), dir, ""} {
		if _, err := CreateAtomic(nil, p); !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Fatalf("%q: %v", p, err)
		}
	}
	// Aborted: the old file stays, no temporary file is left.
	a, err := CreateAtomic(nil, path)
	if err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("new, aborted"))
	a.Abort()
	checkDir(t, dir, "old")
	// A failed sync: the same.
	fs := vfs.NewErrorFS(vfs.Default, vfs.FailNth(1, vfs.OpSync))
	a, err = CreateAtomic(fs, path)
	if err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("new, not synced"))
	if err := a.Commit(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("commit with a failing sync: %v", err)
	}
	checkDir(t, dir, "old")
	// Committed: the new contents, under the path alone.
	a, err = CreateAtomic(nil, path)
	if err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("new"))
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	a.Abort() // harmless after Commit
	checkDir(t, dir, "new")
	if a.Size() != 3 {
		t.Fatalf("size %d", a.Size())
	}
}

func checkDir(t *testing.T, dir, want string) {
	t.Helper()
	names, _ := os.ReadDir(dir)
	if len(names) != 1 || names[0].Name() != "out.parquet" {
		var ns []string
		for _, n := range names {
			ns = append(ns, n.Name())
		}
		t.Fatalf("directory holds %s", strings.Join(ns, ", "))
	}
	b, _ := os.ReadFile(filepath.Join(dir, "out.parquet"))
	if string(b) != want {
		t.Fatalf("file holds %q, want %q", b, want)
	}
}

// TestAtomicSizeWhileFlushing: a Parquet writer's flusher goroutine
// writes row groups while the caller reads the file's size (as SQL's
// OUTFILE does to cut files, and the export's progress line); run with
// the race detector, this fails unless the size is shared safely.
func TestAtomicSizeWhileFlushing(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	path := filepath.Join(t.TempDir(), "x.parquet")
	a, err := CreateAtomic(nil, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Abort()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	w, err := NewParquetWriter(a, sc, ParquetOptions{RowGroupRows: 5000, Parallelism: 2}, mem)
	if err != nil {
		t.Fatal(err)
	}
	rec := randomBatch(rand.New(rand.NewPCG(9, 9)), mem, sc, 5000, 0)
	defer rec.Release()
	var last int64
	for range 40 {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		last = max(last, a.Size())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if a.Size() <= last || last == 0 {
		t.Errorf("sizes: %d while writing, %d at the end", last, a.Size())
	}
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
}
