// Package vfs is the one seam between the engine and the file system. Every
// file the engine reads or writes goes through an FS, so that tests can
// inject errors, simulate a crash that loses unsynced data, or run in memory
// (and a table keeps its memtables' in-memory rowsets in a volatile MemFS).
// It also paces how large files reach the disk (WritebackWriter), so that
// their syncs do not stall the small ones of the write-ahead log. Map maps
// a finished file read-only, for scans to read it where the page cache
// holds it, keeping a few MiB of it in the process's resident set; a file
// of a volatile MemFS maps as its own bytes, so that a memtable's rowsets
// are read in place as a flushed rowset's are, not copied chunk by chunk.
//
// It must never interpret file contents: it only moves bytes.
package vfs

import (
	"io"
	"os"
	"path/filepath"
	"sort"
)

// File is an open file.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	// WriterAt writes without moving the offset Write uses; a log that
	// overwrites the zeros it preallocated writes its records with it.
	io.WriterAt
	io.Closer
	// Sync makes the file's contents durable.
	Sync() error
	// Stat returns the file's metadata; only Size is relied on.
	Stat() (os.FileInfo, error)
	// Truncate changes the file's size (used to cut a torn manifest tail).
	Truncate(size int64) error
}

// FS is the file system the engine works on.
type FS interface {
	// Create creates or truncates a file for writing.
	Create(name string) (File, error)
	// Open opens a file for reading.
	Open(name string) (File, error)
	// OpenAppend opens an existing file for appending.
	OpenAppend(name string) (File, error)
	// Rename atomically replaces newname with oldname.
	Rename(oldname, newname string) error
	// Remove deletes a file or an empty directory.
	Remove(name string) error
	// RemoveAll deletes a directory tree.
	RemoveAll(name string) error
	// MkdirAll creates a directory and its parents.
	MkdirAll(dir string) error
	// List returns the sorted names of a directory's entries.
	List(dir string) ([]string, error)
	// Stat returns a file's metadata.
	Stat(name string) (os.FileInfo, error)
	// SyncDir makes a directory's entries (creations, renames, removals)
	// durable.
	SyncDir(dir string) error
}

// Default is the operating system's file system.
var Default FS = osFS{}

type osFS struct{}

func (osFS) Create(name string) (File, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (osFS) Open(name string) (File, error) { return os.Open(name) }

func (osFS) OpenAppend(name string) (File, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_APPEND, 0o644)
}

func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
func (osFS) Remove(name string) error             { return os.Remove(name) }
func (osFS) RemoveAll(name string) error          { return os.RemoveAll(name) }
func (osFS) MkdirAll(dir string) error            { return os.MkdirAll(dir, 0o755) }
func (osFS) Stat(name string) (os.FileInfo, error) {
	return os.Stat(name)
}

func (osFS) List(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

func (osFS) SyncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// DataSync makes the file's contents durable, and of its metadata only what
// reading them back needs (fdatasync): a file overwritten in place, never
// growing, then costs the disk one data write and no journal commit for its
// modification time. Files that cannot do less than Sync are synced.
func DataSync(f File) error {
	if d, ok := f.(interface{ DataSync() error }); ok {
		return d.DataSync()
	}
	if of, ok := f.(*os.File); ok {
		return dataSyncOS(of)
	}
	return f.Sync()
}

// WriteFileAtomic writes data to name through a temporary file that is
// synced and renamed into place, then syncs the directory: after it returns
// nil, name holds data even across a crash, and at no moment does name hold
// anything but the old or the new contents.
func WriteFileAtomic(fs FS, name string, data []byte) error {
	tmp := name + ".tmp"
	f, err := fs.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		fs.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		fs.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		fs.Remove(tmp)
		return err
	}
	if err := fs.Rename(tmp, name); err != nil {
		fs.Remove(tmp)
		return err
	}
	return fs.SyncDir(filepath.Dir(name))
}

// ReadFile reads a whole file.
func ReadFile(fs FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
