package vfs

import (
	"errors"
	"syscall"
	"testing"
)

func TestCountInjector(t *testing.T) {
	m := NewMemFS()
	inj := FailNth(2, OpWrite).WithErr(syscall.ENOSPC)
	e := NewErrorFS(m, inj)
	e.PartialWrites = true
	f, err := e.Create("/x")
	if err != nil {
		t.Fatal(err) // creates are not counted
	}
	if _, err := f.Write([]byte("ab")); err != nil {
		t.Fatal(err)
	}
	n, err := f.Write([]byte("cdef"))
	if !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, ErrInjected) || n != 2 {
		t.Fatalf("second write: %d %v", n, err)
	}
	if _, err := f.Write([]byte("g")); err != nil {
		t.Fatalf("third write (not sticky): %v", err)
	}
	if got, _ := ReadFile(m, "/x"); string(got) != "abcdg" {
		t.Fatalf("contents %q", got)
	}
	if inj.Count() != 3 || len(inj.Fired()) != 1 {
		t.Fatalf("count %d fired %v", inj.Count(), inj.Fired())
	}

	sticky := FailNth(1, OpSync|OpRename).Sticky()
	e = NewErrorFS(m, sticky)
	if err := e.Rename("/x", "/y"); !errors.Is(err, ErrInjected) {
		t.Fatalf("rename: %v", err)
	}
	f, _ = e.OpenAppend("/x")
	if err := f.Sync(); !errors.Is(err, ErrInjected) {
		t.Fatalf("sticky sync: %v", err)
	}
	sticky.SetArmed(false)
	if err := f.Sync(); err != nil {
		t.Fatalf("disarmed sync: %v", err)
	}
	if got := (OpSync | OpRename).String(); got != "sync|rename" {
		t.Fatalf("op names %q", got)
	}
}
