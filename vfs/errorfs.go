package vfs

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// Op is a kind of file-system operation, as a bit so that kinds combine
// into sets.
type Op uint32

// The operations an ErrorFS can fail.
const (
	OpCreate Op = 1 << iota
	OpOpen
	OpOpenAppend
	OpRead // Read, ReadAt and File.Stat
	OpWrite
	OpSync
	OpTruncate
	OpRename
	OpRemove
	OpRemoveAll
	OpMkdirAll
	OpList
	OpStat
	OpSyncDir

	// WriteOps are the operations that change the file system or make a
	// change durable.
	WriteOps = OpCreate | OpOpenAppend | OpWrite | OpSync | OpTruncate | OpRename | OpRemove | OpRemoveAll | OpMkdirAll | OpSyncDir
	// ReadOps are the others.
	ReadOps = OpOpen | OpRead | OpList | OpStat
	// AllOps is every operation.
	AllOps = WriteOps | ReadOps
)

var opNames = []string{"create", "open", "open-append", "read", "write", "sync", "truncate", "rename", "remove", "remove-all", "mkdir-all", "list", "stat", "sync-dir"}

func (o Op) String() string {
	var parts []string
	for i, n := range opNames {
		if o&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// ErrInjected marks every error an ErrorFS makes up: errors.Is(err,
// ErrInjected) tells an injected failure from a real one.
var ErrInjected = errors.New("injected error")

// InjectedError is the error of an injected failure. It wraps both Err (the
// errno it imitates, e.g. syscall.ENOSPC, or ErrInjected) and ErrInjected.
type InjectedError struct {
	Op   Op
	Path string
	Err  error
}

func (e *InjectedError) Error() string {
	return fmt.Sprintf("%s %s: %v (injected)", e.Op, e.Path, e.Err)
}

// Unwrap returns the imitated errno and ErrInjected.
func (e *InjectedError) Unwrap() []error {
	if e.Err == ErrInjected {
		return []error{ErrInjected}
	}
	return []error{e.Err, ErrInjected}
}

// Injector decides, before each operation, whether it fails.
type Injector interface {
	// MaybeError returns the error op on path should fail with, or nil.
	MaybeError(op Op, path string) error
}

// InjectorFunc adapts a function to Injector.
type InjectorFunc func(op Op, path string) error

// MaybeError implements Injector.
func (f InjectorFunc) MaybeError(op Op, path string) error { return f(op, path) }

// ErrorFS wraps an FS and fails the operations its injector picks. A failed
// operation does nothing, except a write with PartialWrites set, which
// first writes half its bytes (as a full disk or an interrupted write
// would).
type ErrorFS struct {
	inner FS
	inj   Injector
	// PartialWrites makes a failed File.Write store a prefix of its data.
	PartialWrites bool
}

// NewErrorFS wraps inner.
func NewErrorFS(inner FS, inj Injector) *ErrorFS { return &ErrorFS{inner: inner, inj: inj} }

var _ FS = (*ErrorFS)(nil)

// Inner returns the wrapped FS.
func (e *ErrorFS) Inner() FS { return e.inner }

func (e *ErrorFS) maybe(op Op, path string) error {
	if e.inj == nil {
		return nil
	}
	return e.inj.MaybeError(op, path)
}

// Create implements FS.
func (e *ErrorFS) Create(name string) (File, error) {
	if err := e.maybe(OpCreate, name); err != nil {
		return nil, err
	}
	f, err := e.inner.Create(name)
	if err != nil {
		return nil, err
	}
	return &errorFile{fs: e, f: f, name: name}, nil
}

// Open implements FS.
func (e *ErrorFS) Open(name string) (File, error) {
	if err := e.maybe(OpOpen, name); err != nil {
		return nil, err
	}
	f, err := e.inner.Open(name)
	if err != nil {
		return nil, err
	}
	return &errorFile{fs: e, f: f, name: name}, nil
}

// OpenAppend implements FS.
func (e *ErrorFS) OpenAppend(name string) (File, error) {
	if err := e.maybe(OpOpenAppend, name); err != nil {
		return nil, err
	}
	f, err := e.inner.OpenAppend(name)
	if err != nil {
		return nil, err
	}
	return &errorFile{fs: e, f: f, name: name}, nil
}

// Rename implements FS.
func (e *ErrorFS) Rename(oldname, newname string) error {
	if err := e.maybe(OpRename, oldname); err != nil {
		return err
	}
	return e.inner.Rename(oldname, newname)
}

// Remove implements FS.
func (e *ErrorFS) Remove(name string) error {
	if err := e.maybe(OpRemove, name); err != nil {
		return err
	}
	return e.inner.Remove(name)
}

// RemoveAll implements FS.
func (e *ErrorFS) RemoveAll(name string) error {
	if err := e.maybe(OpRemoveAll, name); err != nil {
		return err
	}
	return e.inner.RemoveAll(name)
}

// MkdirAll implements FS.
func (e *ErrorFS) MkdirAll(dir string) error {
	if err := e.maybe(OpMkdirAll, dir); err != nil {
		return err
	}
	return e.inner.MkdirAll(dir)
}

// List implements FS.
func (e *ErrorFS) List(dir string) ([]string, error) {
	if err := e.maybe(OpList, dir); err != nil {
		return nil, err
	}
	return e.inner.List(dir)
}

// Stat implements FS.
func (e *ErrorFS) Stat(name string) (os.FileInfo, error) {
	if err := e.maybe(OpStat, name); err != nil {
		return nil, err
	}
	return e.inner.Stat(name)
}

// SyncDir implements FS.
func (e *ErrorFS) SyncDir(dir string) error {
	if err := e.maybe(OpSyncDir, dir); err != nil {
		return err
	}
	return e.inner.SyncDir(dir)
}

type errorFile struct {
	fs   *ErrorFS
	f    File
	name string
}

func (f *errorFile) Read(p []byte) (int, error) {
	if err := f.fs.maybe(OpRead, f.name); err != nil {
		return 0, err
	}
	return f.f.Read(p)
}

func (f *errorFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.maybe(OpRead, f.name); err != nil {
		return 0, err
	}
	return f.f.ReadAt(p, off)
}

func (f *errorFile) Write(p []byte) (int, error) {
	if err := f.fs.maybe(OpWrite, f.name); err != nil {
		n := 0
		if f.fs.PartialWrites && len(p) > 1 {
			n, _ = f.f.Write(p[:len(p)/2])
		}
		return n, err
	}
	return f.f.Write(p)
}

func (f *errorFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.maybe(OpWrite, f.name); err != nil {
		n := 0
		if f.fs.PartialWrites && len(p) > 1 {
			n, _ = f.f.WriteAt(p[:len(p)/2], off)
		}
		return n, err
	}
	return f.f.WriteAt(p, off)
}

func (f *errorFile) Close() error { return f.f.Close() }

// DataSync fails as Sync does: it is a sync.
func (f *errorFile) DataSync() error {
	if err := f.fs.maybe(OpSync, f.name); err != nil {
		return err
	}
	return DataSync(f.f)
}

func (f *errorFile) Sync() error {
	if err := f.fs.maybe(OpSync, f.name); err != nil {
		return err
	}
	return f.f.Sync()
}

func (f *errorFile) Stat() (os.FileInfo, error) {
	if err := f.fs.maybe(OpRead, f.name); err != nil {
		return nil, err
	}
	return f.f.Stat()
}

func (f *errorFile) Truncate(size int64) error {
	if err := f.fs.maybe(OpTruncate, f.name); err != nil {
		return err
	}
	return f.f.Truncate(size)
}

// CountInjector counts the operations of some kinds and fails the Nth
// (1-based) of them, and with Sticky every one after it too (a disk that
// stays full). Disarmed, it neither counts nor fails. The zero N never
// fails, which makes a counter: run once to learn how many operations a
// request makes.
type CountInjector struct {
	mu     sync.Mutex
	kinds  Op
	n      int
	err    error
	sticky bool
	armed  bool
	count  int
	fired  []string
}

// FailNth returns an armed injector that fails the nth operation whose kind
// is in kinds (0 kinds means WriteOps), with an error wrapping ErrInjected.
func FailNth(n int, kinds Op) *CountInjector {
	if kinds == 0 {
		kinds = WriteOps
	}
	return &CountInjector{kinds: kinds, n: n, err: ErrInjected, armed: true}
}

// WithErr makes the injected errors wrap err (syscall.ENOSPC, syscall.EIO,
// …) besides ErrInjected.
func (c *CountInjector) WithErr(err error) *CountInjector {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
	return c
}

// Sticky makes every operation after the Nth fail as well.
func (c *CountInjector) Sticky() *CountInjector {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sticky = true
	return c
}

// SetArmed switches counting and failing on or off.
func (c *CountInjector) SetArmed(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = on
}

// Count returns how many operations of the kinds it has seen armed.
func (c *CountInjector) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count
}

// Fired returns the operations it failed, as "op path".
func (c *CountInjector) Fired() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.fired...)
}

// MaybeError implements Injector.
func (c *CountInjector) MaybeError(op Op, path string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.armed || op&c.kinds == 0 {
		return nil
	}
	c.count++
	if c.n <= 0 || c.count < c.n || c.count > c.n && !c.sticky {
		return nil
	}
	c.fired = append(c.fired, op.String()+" "+path)
	return &InjectedError{Op: op, Path: path, Err: c.err}
}
