package table

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/vfs"
)

// fileLock keeps a second process (or a second Open in this one) from
// opening the same table: two writers would each append to the manifest
// believing they own it.
type fileLock struct{ f *os.File }

// ErrLocked marks a table that another Open holds.
var ErrLocked = rowttl.Errorf(rowttl.ErrNotSupported, "table is open elsewhere")

// lockDirFS locks dir when fsys is the operating system's file system. The
// lock file stays outside the vfs seam (flock needs a real descriptor), so on
// any other file system (in memory, fault-injecting) nothing is locked: the
// test that builds such a file system is the only process using it.
func lockDirFS(fsys vfs.FS, dir string) (*fileLock, error) {
	if fsys != vfs.Default {
		return &fileLock{}, nil
	}
	return lockDir(dir)
}

func lockDir(dir string) (*fileLock, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", dir, ErrLocked)
	}
	return &fileLock{f: f}, nil
}

func (l *fileLock) release() {
	if l != nil && l.f != nil {
		syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		l.f.Close()
		l.f = nil
	}
}
