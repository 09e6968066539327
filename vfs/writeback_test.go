package vfs

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
)

// writeInPieces writes data through w in pieces of random sizes (seeded)
// and returns the first error.
func writeInPieces(t *testing.T, w *WritebackWriter, data []byte, seed uint64) error {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	for off := 0; off < len(data); {
		n := min(len(data)-off, 1+rng.IntN(3000))
		m, err := w.Write(data[off : off+n])
		if err != nil {
			return err
		}
		if m != n {
			t.Fatalf("wrote %d of %d bytes", m, n)
		}
		off += n
	}
	return nil
}

// TestWritebackWriterContents writes a file in steps, on the operating
// system's file system and in memory: the contents are those written, and
// the writeback of every whole step began (on Linux).
func TestWritebackWriterContents(t *testing.T) {
	data := make([]byte, 100_000)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, c := range []struct {
		name string
		fs   FS
		dir  string
	}{{"os", Default, t.TempDir()}, {"mem", NewMemFS(), "/d"}} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.fs.MkdirAll(c.dir); err != nil {
				t.Fatal(err)
			}
			name := filepath.Join(c.dir, "f")
			f, err := c.fs.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			w := NewWritebackWriter(f, 4096)
			if err := writeInPieces(t, w, data, 1); err != nil {
				t.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := ReadFile(c.fs, name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes that differ from the %d written", len(got), len(data))
			}
			wantStarted := int64(0)
			if c.name == "os" && runtime.GOOS == "linux" {
				wantStarted = int64(len(data)) / 4096 * 4096
			}
			if w.started != wantStarted {
				t.Errorf("writeback began for %d bytes, want %d", w.started, wantStarted)
			}
		})
	}
}

// badFdFile is an in-memory file that claims a descriptor no process has
// open, so that every ranged writeback on it fails.
type badFdFile struct{ File }

func (badFdFile) Fd() uintptr { return 1 << 30 }

// TestWritebackWriterError checks that a failed writeback is the Write's
// error, not dropped: the kernel may report a lost write only once.
func TestWritebackWriterError(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the ranged writeback is Linux's")
	}
	fs := NewMemFS()
	f, err := fs.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := NewWritebackWriter(badFdFile{f}, 1024)
	if err := writeInPieces(t, w, make([]byte, 10_000), 2); err == nil {
		t.Fatal("a writeback on a bad descriptor succeeded")
	}
	// Once it failed the writer stops asking, and writes go on.
	if _, err := w.Write(make([]byte, 5000)); err != nil {
		t.Fatalf("write after a failed writeback: %v", err)
	}
}
