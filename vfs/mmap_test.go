package vfs

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestMap(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "freebsd" {
		t.Skip("files are read, not mapped, on", runtime.GOOS)
	}
	name := filepath.Join(t.TempDir(), "f")
	want := bytes.Repeat([]byte("0123456789abcdef"), 3*residentBytes/16+5)
	if err := os.WriteFile(name, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Default.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := Map(f, int64(len(want)))
	// The mapping outlives the descriptor.
	f.Close()
	if !ok {
		t.Fatal("an OS file was not mapped")
	}
	if !bytes.Equal(m.MappedBytes(), want) {
		t.Fatal("the mapped bytes differ from the file")
	}
	// Letting the pages go, again and again, leaves the bytes readable.
	for range 4 {
		m.Used(residentBytes)
		if !bytes.Equal(m.MappedBytes(), want) {
			t.Fatal("the mapped bytes differ from the file after their pages were let go")
		}
	}
	buf := make([]byte, 10)
	if n, err := m.ReadAt(buf, 3); n != 10 || err != nil || string(buf) != "3456789abc" {
		t.Fatalf("ReadAt: %d %v %q", n, err, buf)
	}
	if n, err := m.ReadAt(buf, int64(len(want))-4); n != 4 || err != io.EOF {
		t.Fatalf("ReadAt across the end: %d %v", n, err)
	}
	if n, err := m.ReadAt(buf, int64(len(want))); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt at the end: %d %v", n, err)
	}
	if _, err := m.ReadAt(buf, -1); err == nil {
		t.Fatal("ReadAt at -1: no error")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if _, err := m.ReadAt(buf, 0); !errors.Is(err, errMappingClosed) {
		t.Fatalf("ReadAt after Close: %v", err)
	}
}

// TestMapDeclines checks the files Map leaves to be read: those of the
// in-memory and error-injecting file systems, and empty ones.
func TestMapDeclines(t *testing.T) {
	mfs := NewMemFS()
	mfs.MkdirAll("/d")
	if err := WriteFileAtomic(mfs, "/d/f", []byte("data")); err != nil {
		t.Fatal(err)
	}
	f, err := mfs.Open("/d/f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := Map(f, 4); ok {
		t.Fatal("a MemFS file was mapped")
	}

	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	if err := os.WriteFile(name, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	efs := NewErrorFS(Default, InjectorFunc(func(Op, string) error { return nil }))
	ef, err := efs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	if _, ok := Map(ef, 4); ok {
		t.Fatal("an ErrorFS file was mapped: its reads could no longer fail")
	}
	of, err := Default.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer of.Close()
	if _, ok := Map(of, 0); ok {
		t.Fatal("an empty mapping was made")
	}
}

// TestMapVolatileMemFS checks that a volatile MemFS file maps as its own
// bytes, read in place with no copy, and that a mapping asking for other
// than the file's size, or of a closed file, is refused.
func TestMapVolatileMemFS(t *testing.T) {
	mfs := NewVolatileMemFS()
	mfs.MkdirAll("/d")
	want := bytes.Repeat([]byte("0123456789abcdef"), 3*residentBytes/16+5)
	if err := WriteFileAtomic(mfs, "/d/f", want); err != nil {
		t.Fatal(err)
	}
	f, err := mfs.Open("/d/f")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := Map(f, int64(len(want))-1); ok {
		t.Fatal("a mapping of fewer bytes than the file was made")
	}
	m, ok := Map(f, int64(len(want)))
	if !ok {
		t.Fatal("a volatile MemFS file was not mapped")
	}
	m2, ok := Map(f, int64(len(want)))
	if !ok || &m.MappedBytes()[0] != &m2.MappedBytes()[0] {
		t.Fatal("two mappings of a volatile MemFS file are not the same bytes: one was copied")
	}
	// The mapping outlives the descriptor and the file's name.
	f.Close()
	if err := mfs.Remove("/d/f"); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		m.Used(residentBytes)
	}
	if !bytes.Equal(m.MappedBytes(), want) {
		t.Fatal("the mapped bytes differ from the file")
	}
	buf := make([]byte, 10)
	if n, err := m.ReadAt(buf, 3); n != 10 || err != nil || string(buf) != "3456789abc" {
		t.Fatalf("ReadAt: %d %v %q", n, err, buf)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ReadAt(buf, 0); !errors.Is(err, errMappingClosed) {
		t.Fatalf("ReadAt after Close: %v", err)
	}
	if _, ok := Map(f, int64(len(want))); ok {
		t.Fatal("a closed file was mapped")
	}
}
