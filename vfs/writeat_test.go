package vfs

import (
	"errors"
	"path/filepath"
	"testing"
)

// A log preallocates zeros and overwrites them in place: WriteAt must not
// move Write's offset, must grow the file when it writes past the end, and
// what it wrote is durable after DataSync exactly as after Sync.
func TestWriteAtAndDataSync(t *testing.T) {
	for _, c := range []struct {
		name string
		fs   FS
		dir  string
	}{{"mem", NewMemFS(), "/"}, {"os", Default, t.TempDir()}} {
		t.Run(c.name, func(t *testing.T) {
			name := filepath.Join(c.dir, "log")
			f := mustWriteFile(t, c.fs, name, "0000000000", true)
			if err := c.fs.SyncDir(c.dir); err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte("ab"), 2); err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte("xyz"), 12); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write([]byte("W")); err != nil {
				t.Fatal(err)
			}
			if err := DataSync(f); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			const want = "00ab000000W\x00xyz"
			if got, err := readString(t, c.fs, name); err != nil || got != want {
				t.Fatalf("contents %q, %v; want %q", got, err, want)
			}
			if m, ok := c.fs.(*MemFS); ok {
				m.Crash()
				if got, err := readString(t, m, name); err != nil || got != want {
					t.Fatalf("after a crash: %q, %v; want %q", got, err, want)
				}
			}
		})
	}
}

func TestErrorFSWriteAtAndDataSyncFail(t *testing.T) {
	m := NewMemFS()
	e := NewErrorFS(m, FailNth(1, OpWrite))
	e.PartialWrites = true
	f, err := e.Create("/x")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.WriteAt([]byte("abcd"), 0); !errors.Is(err, ErrInjected) || n != 2 {
		t.Fatalf("WriteAt: %d, %v", n, err)
	}
	e = NewErrorFS(m, FailNth(1, OpSync))
	f, err = e.OpenAppend("/x")
	if err != nil {
		t.Fatal(err)
	}
	if err := DataSync(f); !errors.Is(err, ErrInjected) {
		t.Fatalf("DataSync: %v", err)
	}
}
