package table

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/vfs"
)

// Two lock files keep processes from disturbing each other:
//
//   - LOCK is the writer's. The process that owns a table (or a data
//     directory) holds an exclusive flock on it for as long as it is open,
//     and writes its process id and program into it so that others can say
//     who holds it. Two writers would each append to the manifest
//     believing they own it.
//   - READERS is the readers'. A read-only open (`rowttl check`, `rowttl
//     inspect`) takes no writer lock: it holds a shared flock on READERS
//     while it reads. The owner deletes a file a reader may still need (an
//     obsolete rowset's segments, an old manifest, an orphan) only while it
//     holds READERS exclusively, and takes it with a try-lock: when readers
//     hold it, the deletions wait for a later attempt (the next deletion,
//     the background loop, Close; what is still left then is an orphan the
//     next open deletes). The owner never waits for a reader and a reader
//     never makes the owner fail.
//
// Only the owner creates these files: a read-only open of a table that has
// no READERS file (made before it existed, and not opened since) reads
// unlocked and retries if a file vanishes under it.
const (
	lockFile    = "LOCK"
	readersFile = "READERS"
)

// fileLock is a held writer lock.
type fileLock struct{ f *os.File }

// ErrLocked marks a table or data directory that another Open holds.
var ErrLocked = rowttl.Errorf(rowttl.ErrNotSupported, "table is open elsewhere")

// lockDirFS locks dir when fsys is the operating system's file system. The
// lock file stays outside the vfs seam (flock needs a real descriptor), so on
// any other file system (in memory, fault-injecting) nothing is locked: the
// test that builds such a file system is the only process using it.
func lockDirFS(fsys vfs.FS, dir, holder string) (*fileLock, error) {
	if fsys != vfs.Default {
		return &fileLock{}, nil
	}
	return lockDir(dir, holder)
}

func lockDir(dir, holder string) (*fileLock, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, rowttl.Errorf(ErrLocked, "table %s is open in %s", dir, Holder(dir))
	}
	// Who holds the lock is for messages only: a failure to say so is no
	// reason to refuse the open.
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(ownerLine(holder)), 0)
	}
	return &fileLock{f: f}, nil
}

// ownerLine names this process in its lock files: the pid and holder, or
// the program and its subcommand, never the rest of the command line (it
// may hold a password, and lock files are readable by all).
func ownerLine(holder string) string {
	if holder != "" {
		return "pid " + strconv.Itoa(os.Getpid()) + ": " + holder + "\n"
	}
	cmd := "?"
	if len(os.Args) > 0 {
		cmd = filepath.Base(os.Args[0])
	}
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		cmd += " " + os.Args[1]
	}
	return "pid " + strconv.Itoa(os.Getpid()) + ": " + cmd + "\n"
}

// Holder says which process holds dir's writer lock, as its lock file
// tells: "process 1234 (rowttl serve --dir data)", or "another process"
// when the file says nothing.
func Holder(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, lockFile))
	line, _, _ := strings.Cut(string(b), "\n")
	pid, cmd, ok := strings.Cut(strings.TrimPrefix(line, "pid "), ": ")
	if err != nil || !ok || !strings.HasPrefix(line, "pid ") {
		return "another process"
	}
	return "process " + pid + " (" + cmd + ")"
}

func (l *fileLock) release() {
	if l != nil && l.f != nil {
		syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		l.f.Close()
		l.f = nil
	}
}

// readerLock is a shared hold of a table's READERS file (nil f: none, the
// file system not being the operating system's or the file absent).
type readerLock struct{ f *os.File }

// readerWait bounds how long a read-only open waits for the owner to finish
// a round of deletions (each holds READERS only for a few unlinks).
const readerWait = 10 * time.Second

// lockReaders takes a shared lock on dir's READERS file for a read-only
// open.
func lockReaders(fsys vfs.FS, dir string) (*readerLock, error) {
	if fsys != vfs.Default {
		return &readerLock{}, nil
	}
	f, err := os.Open(filepath.Join(dir, readersFile))
	if errors.Is(err, fs.ErrNotExist) {
		return &readerLock{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Join(dir, readersFile), err)
	}
	deadline := time.Now().Add(readerWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			return &readerLock{f: f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, rowttl.Errorf(rowttl.ErrNotSupported, "table %s: %s keeps deleting files; try again", dir, Holder(dir))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (l *readerLock) release() {
	if l != nil && l.f != nil {
		syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		l.f.Close()
		l.f = nil
	}
}

// deferringFS is the owner's view of the file system: Remove deletes only
// while no reader holds READERS, and otherwise keeps the name for a later
// attempt. Removing a name that is still on the list is harmless (it is
// deleted at most once), and file numbers are never reused within a table,
// so a deferred name cannot hit a newer file.
type deferringFS struct {
	vfs.FS
	dir string

	mu      sync.Mutex
	readers *os.File // READERS, open for the table's life
	pending []string
}

// newDeferringFS creates dir's READERS file if missing and returns the
// owner's file system. Only the operating system's file system has
// readers of other processes to protect.
func newDeferringFS(fsys vfs.FS, dir string) (vfs.FS, error) {
	if fsys != vfs.Default {
		return fsys, nil
	}
	f, err := os.OpenFile(filepath.Join(dir, readersFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Join(dir, readersFile), err)
	}
	return &deferringFS{FS: fsys, dir: dir, readers: f}, nil
}

// Remove deletes name now if no reader is reading the table, else later;
// it fails only when the deletion itself fails.
func (d *deferringFS) Remove(name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pending = append(d.pending, name)
	return d.flushLocked()
}

// flush deletes what earlier Removes deferred, if no reader holds READERS.
func (d *deferringFS) flush() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.flushLocked()
}

func (d *deferringFS) flushLocked() error {
	if len(d.pending) == 0 {
		return nil
	}
	f := d.readers
	if f == nil {
		// Closed, and a scan let go of the last obsolete rowset: ask the
		// readers once more.
		var err error
		if f, err = os.OpenFile(filepath.Join(d.dir, readersFile), os.O_RDWR, 0); err != nil {
			return nil
		}
		defer f.Close()
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return nil // a reader is reading: later
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	var first error
	for _, name := range d.pending {
		if err := d.FS.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
	}
	d.pending = d.pending[:0]
	return first
}

// close makes a last attempt at the deferred deletions and lets READERS
// go; what is left is an orphan the next open deletes.
func (d *deferringFS) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.flushLocked()
	if d.readers != nil {
		d.readers.Close()
		d.readers = nil
	}
}

// deferredCount is the number of deletions waiting for readers (tests).
func (d *deferringFS) deferredCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.pending)
}

// readersBusy reports whether a reader of another process holds dir's
// READERS lock; if not, it holds it exclusively until release is called,
// so that no reader starts on files about to go.
func readersBusy(fsys vfs.FS, dir string) (busy bool, release func()) {
	noop := func() {}
	if fsys != vfs.Default {
		return false, noop
	}
	f, err := os.OpenFile(filepath.Join(dir, readersFile), os.O_RDWR, 0)
	if err != nil {
		return false, noop
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return true, noop
	}
	return false, func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}
