package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MemFS is an in-memory FS that remembers what has been made durable, so
// that a test can simulate a crash (a power cut, not only a killed process):
//
//   - a file's contents are durable up to its last Sync; later writes and
//     truncations are lost by a crash;
//   - a directory's entries (files and directories created, renamed in or
//     out, removed) are durable up to the directory's last SyncDir; a file
//     whose entry is not durable is lost whole, whatever was synced into it.
//
// The root directory "/" always exists. Relative names are taken from the
// root. All methods are safe for concurrent use.
//
// A volatile MemFS (NewVolatileMemFS) makes nothing durable: Sync and
// SyncDir keep no copy of what they would make durable, so a file costs its
// size once, and a crash of it loses everything.
type MemFS struct {
	mu   sync.Mutex
	root *memNode
	// gen is bumped by Crash: files opened in an earlier generation are
	// detached and fail every call.
	gen      int
	volatile bool
}

// memNode is a file or a directory (an inode): a node may be reachable
// from several directories for a moment, between a crash and a sync, when a
// rename had reached one directory's durable state and not the other's.
type memNode struct {
	isDir   bool
	modTime time.Time

	// A file: its current contents and the contents as of its last Sync.
	data   []byte
	synced []byte

	// A directory: its current entries, its entries as of its last
	// SyncDir, and the changes made since then, in order.
	children map[string]*memNode
	durable  map[string]*memNode
	pending  []dirOp
}

// dirOp is one change to a directory's entries; node nil is a removal.
type dirOp struct {
	name string
	node *memNode
}

func newDir() *memNode {
	return &memNode{isDir: true, children: map[string]*memNode{}, durable: map[string]*memNode{}, modTime: time.Now()}
}

// NewMemFS returns an empty in-memory file system.
func NewMemFS() *MemFS { return &MemFS{root: newDir()} }

// NewVolatileMemFS returns an empty in-memory file system that makes
// nothing durable: for files that live in memory only and are never read
// after a crash (a memtable's in-memory rowsets), which a durable MemFS
// would hold twice once synced.
func NewVolatileMemFS() *MemFS { return &MemFS{root: newDir(), volatile: true} }

var _ FS = (*MemFS)(nil)

// split cleans name and returns its path components below the root.
func split(name string) []string {
	p := filepath.ToSlash(filepath.Clean("/" + name))
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

func pathErr(op, name string, err error) error { return &os.PathError{Op: op, Path: name, Err: err} }

// lookupLocked returns the node at name.
func (m *MemFS) lookupLocked(name string) (*memNode, error) {
	n := m.root
	for _, c := range split(name) {
		if !n.isDir {
			return nil, syscall.ENOTDIR
		}
		child, ok := n.children[c]
		if !ok {
			return nil, fs.ErrNotExist
		}
		n = child
	}
	return n, nil
}

// parentLocked returns the directory that holds name, and name's base.
func (m *MemFS) parentLocked(name string) (*memNode, string, error) {
	parts := split(name)
	if len(parts) == 0 {
		return nil, "", fs.ErrInvalid
	}
	dir, err := m.lookupLocked("/" + strings.Join(parts[:len(parts)-1], "/"))
	if err != nil {
		return nil, "", err
	}
	if !dir.isDir {
		return nil, "", syscall.ENOTDIR
	}
	return dir, parts[len(parts)-1], nil
}

// setEntry changes a directory entry and logs it for the next SyncDir.
func (d *memNode) setEntry(name string, n *memNode) {
	if n == nil {
		delete(d.children, name)
	} else {
		d.children[name] = n
	}
	d.pending = append(d.pending, dirOp{name: name, node: n})
	d.modTime = time.Now()
}

// Create implements FS.
func (m *MemFS) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parentLocked(name)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	n, ok := dir.children[base]
	switch {
	case ok && n.isDir:
		return nil, pathErr("open", name, syscall.EISDIR)
	case ok:
		n.data = nil // O_TRUNC keeps the inode; the synced contents stay
		n.modTime = time.Now()
	default:
		n = &memNode{modTime: time.Now()}
		dir.setEntry(base, n)
	}
	return &memFile{fs: m, node: n, name: name, gen: m.gen, write: true}, nil
}

func (m *MemFS) openFile(name string, appendMode bool) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookupLocked(name)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	if n.isDir {
		return nil, pathErr("open", name, syscall.EISDIR)
	}
	return &memFile{fs: m, node: n, name: name, gen: m.gen, write: appendMode, append: appendMode}, nil
}

// Open implements FS.
func (m *MemFS) Open(name string) (File, error) { return m.openFile(name, false) }

// OpenAppend implements FS.
func (m *MemFS) OpenAppend(name string) (File, error) { return m.openFile(name, true) }

// Rename implements FS.
func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	odir, obase, err := m.parentLocked(oldname)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	n, ok := odir.children[obase]
	if !ok {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrNotExist}
	}
	ndir, nbase, err := m.parentLocked(newname)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	if odir == ndir && obase == nbase {
		return nil
	}
	if n.isDir {
		// A directory may not move below itself.
		for p := split(newname); len(p) > 0; p = p[:len(p)-1] {
			if q, _ := m.lookupLocked("/" + strings.Join(p, "/")); q == n {
				return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrInvalid}
			}
		}
	}
	if old, ok := ndir.children[nbase]; ok {
		switch {
		case old.isDir && !n.isDir:
			return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.EISDIR}
		case !old.isDir && n.isDir:
			return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.ENOTDIR}
		case old.isDir && len(old.children) > 0:
			return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.ENOTEMPTY}
		}
	}
	odir.setEntry(obase, nil)
	ndir.setEntry(nbase, n)
	return nil
}

// Remove implements FS.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parentLocked(name)
	if err != nil {
		return pathErr("remove", name, err)
	}
	n, ok := dir.children[base]
	if !ok {
		return pathErr("remove", name, fs.ErrNotExist)
	}
	if n.isDir && len(n.children) > 0 {
		return pathErr("remove", name, syscall.ENOTEMPTY)
	}
	dir.setEntry(base, nil)
	return nil
}

// RemoveAll implements FS.
func (m *MemFS) RemoveAll(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parentLocked(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return pathErr("removeall", name, err)
	}
	if _, ok := dir.children[base]; ok {
		dir.setEntry(base, nil)
	}
	return nil
}

// MkdirAll implements FS.
func (m *MemFS) MkdirAll(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.root
	for _, c := range split(dir) {
		child, ok := n.children[c]
		if !ok {
			child = newDir()
			n.setEntry(c, child)
		} else if !child.isDir {
			return pathErr("mkdir", dir, syscall.ENOTDIR)
		}
		n = child
	}
	return nil
}

// List implements FS.
func (m *MemFS) List(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookupLocked(dir)
	if err != nil {
		return nil, pathErr("open", dir, err)
	}
	if !n.isDir {
		return nil, pathErr("readdirent", dir, syscall.ENOTDIR)
	}
	names := make([]string, 0, len(n.children))
	for k := range n.children {
		names = append(names, k)
	}
	sort.Strings(names)
	return names, nil
}

// Stat implements FS.
func (m *MemFS) Stat(name string) (os.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookupLocked(name)
	if err != nil {
		return nil, pathErr("stat", name, err)
	}
	return n.info(filepath.Base(filepath.Clean("/" + name))), nil
}

// SyncDir implements FS.
func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookupLocked(dir)
	if err != nil {
		return pathErr("sync", dir, err)
	}
	if !n.isDir {
		return pathErr("sync", dir, syscall.ENOTDIR)
	}
	if m.volatile {
		n.pending = nil
		return nil
	}
	n.durable = make(map[string]*memNode, len(n.children))
	for k, v := range n.children {
		n.durable[k] = v
	}
	n.pending = nil
	return nil
}

// Clone returns an exact, independent copy of the file system, unsynced
// state included (what a crash of the copy would lose is what a crash of m
// would lose). Files open on m stay on m.
func (m *MemFS) Clone() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	memo := map[*memNode]*memNode{}
	var clone func(n *memNode) *memNode
	clone = func(n *memNode) *memNode {
		if c, ok := memo[n]; ok {
			return c
		}
		c := &memNode{isDir: n.isDir, modTime: n.modTime, data: cloneBytes(n.data), synced: cloneBytes(n.synced)}
		memo[n] = c
		if n.isDir {
			c.children = make(map[string]*memNode, len(n.children))
			c.durable = make(map[string]*memNode, len(n.durable))
			for k, v := range n.children {
				c.children[k] = clone(v)
			}
			for k, v := range n.durable {
				c.durable[k] = clone(v)
			}
			for _, op := range n.pending {
				var node *memNode
				if op.node != nil {
					node = clone(op.node)
				}
				c.pending = append(c.pending, dirOp{name: op.name, node: node})
			}
		}
		return c
	}
	return &MemFS{root: clone(m.root)}
}

// CrashClone returns the state a machine would find after losing power
// now: a new file system holding only what was made durable. m itself is
// unchanged, so whatever still runs on it (an abandoned table, a background
// goroutine) cannot disturb the copy.
//
// With rng nil the crash is strict: nothing unsynced survives. With an rng
// it is one of the states a real file system may leave: each file keeps
// its synced contents plus a random prefix of what was appended since (that
// prefix zeroed now and then, as after a crash that extended the size but
// not the data; a file overwritten in place without changing its size
// keeps each 512-byte sector old or new), and each directory keeps its synced entries plus a random
// prefix of the changes made since, in order.
func (m *MemFS) CrashClone(rng *rand.Rand) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	return &MemFS{root: crashNode(m.root, rng, map[*memNode]*memNode{})}
}

func crashNode(n *memNode, rng *rand.Rand, memo map[*memNode]*memNode) *memNode {
	if c, ok := memo[n]; ok {
		return c
	}
	c := &memNode{isDir: n.isDir, modTime: n.modTime}
	memo[n] = c
	if !n.isDir {
		c.data = crashData(n, rng)
		c.synced = cloneBytes(c.data)
		return c
	}
	entries := make(map[string]*memNode, len(n.durable))
	for k, v := range n.durable {
		entries[k] = v
	}
	if rng != nil && len(n.pending) > 0 {
		for _, op := range n.pending[:rng.IntN(len(n.pending)+1)] {
			if op.node == nil {
				delete(entries, op.name)
			} else {
				entries[op.name] = op.node
			}
		}
	}
	c.children = make(map[string]*memNode, len(entries))
	c.durable = make(map[string]*memNode, len(entries))
	for k, v := range entries {
		cv := crashNode(v, rng, memo)
		c.children[k] = cv
		c.durable[k] = cv
	}
	return c
}

// crashSector is the unit a disk writes whole or not at all.
const crashSector = 512

// crashData is what a crash leaves of a file's contents.
func crashData(n *memNode, rng *rand.Rand) []byte {
	if rng == nil || len(n.data) == len(n.synced) && string(n.data) == string(n.synced) {
		return cloneBytes(n.synced)
	}
	if len(n.data) > len(n.synced) && string(n.data[:len(n.synced)]) == string(n.synced) {
		// Appended since the last sync: a prefix of the tail may survive.
		keep := rng.IntN(len(n.data) - len(n.synced) + 1)
		out := cloneBytes(n.data[:len(n.synced)+keep])
		if rng.IntN(4) == 0 {
			clear(out[len(n.synced):])
		}
		return out
	}
	if len(n.data) == len(n.synced) {
		// Overwritten in place (a preallocated log): the disk writes
		// each sector or not, in no particular order.
		out := cloneBytes(n.synced)
		for s := 0; s < len(out); s += crashSector {
			e := min(s+crashSector, len(out))
			if rng.IntN(2) == 0 {
				copy(out[s:e], n.data[s:e])
			}
		}
		return out
	}
	// Truncated or overwritten since: the old or a prefix of the new.
	if rng.IntN(2) == 0 {
		return cloneBytes(n.synced)
	}
	return cloneBytes(n.data[:rng.IntN(len(n.data)+1)])
}

// Crash loses, in place, everything that was not made durable (strictly:
// see CrashClone). Every file opened before is detached: its methods fail
// with os.ErrClosed. Anything still running on m after the crash acts on
// the new state, so stop it first, or prefer CrashClone.
func (m *MemFS) Crash() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.root = crashNode(m.root, nil, map[*memNode]*memNode{})
	m.gen++
}

// String lists every file and directory with its size, durable or not; for
// test failure messages.
func (m *MemFS) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	var walk func(n *memNode, path string)
	walk = func(n *memNode, path string) {
		names := make([]string, 0, len(n.children))
		for k := range n.children {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			c := n.children[k]
			p := path + "/" + k
			durable := n.durable[k] == c
			if c.isDir {
				fmt.Fprintf(&b, "%s/ durable=%v\n", p, durable)
				walk(c, p)
				continue
			}
			fmt.Fprintf(&b, "%s %d bytes (%d synced) durable=%v\n", p, len(c.data), len(c.synced), durable)
		}
	}
	walk(m.root, "")
	return b.String()
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

func (n *memNode) info(name string) os.FileInfo {
	fi := memInfo{name: name, size: int64(len(n.data)), modTime: n.modTime, mode: 0o644}
	if n.isDir {
		fi.size, fi.mode = 0, fs.ModeDir|0o755
	}
	return fi
}

type memInfo struct {
	name    string
	size    int64
	mode    fs.FileMode
	modTime time.Time
}

func (fi memInfo) Name() string       { return fi.name }
func (fi memInfo) Size() int64        { return fi.size }
func (fi memInfo) Mode() fs.FileMode  { return fi.mode }
func (fi memInfo) ModTime() time.Time { return fi.modTime }
func (fi memInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi memInfo) Sys() any           { return nil }

// memFile is an open file of a MemFS.
type memFile struct {
	fs     *MemFS
	node   *memNode
	name   string
	gen    int
	pos    int64
	write  bool
	append bool
	closed bool
}

// checkLocked reports a closed or detached file.
func (f *memFile) checkLocked(op string) error {
	if f.closed || f.gen != f.fs.gen {
		return pathErr(op, f.name, os.ErrClosed)
	}
	return nil
}

func (f *memFile) Read(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkLocked("read"); err != nil {
		return 0, err
	}
	if f.pos >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[f.pos:])
	f.pos += int64(n)
	return n, nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkLocked("read"); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("read", f.name, fs.ErrInvalid)
	}
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// volatileBytes returns the bytes of f for Map when f is an open file of a
// volatile MemFS holding size bytes. The slice is the file's own: a write
// or truncation within them would show through it, which Map's contract
// (a file no one changes while it is mapped) rules out; a write past them
// or a removal of the file leaves them as they are.
func (f *memFile) volatileBytes(size int64) ([]byte, bool) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if !f.fs.volatile || f.checkLocked("map") != nil || int64(len(f.node.data)) != size {
		return nil, false
	}
	return f.node.data[:size:size], true
}

// writableLocked is the check of a write: the file open, for writing.
func (f *memFile) writableLocked() error {
	if err := f.checkLocked("write"); err != nil {
		return err
	}
	if !f.write {
		return pathErr("write", f.name, syscall.EBADF)
	}
	return nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.writableLocked(); err != nil {
		return 0, err
	}
	if f.append {
		f.pos = int64(len(f.node.data))
	}
	end := f.pos + int64(len(p))
	f.node.extend(end)
	copy(f.node.data[f.pos:], p)
	f.pos = end
	f.node.modTime = time.Now()
	return len(p), nil
}

// WriteAt implements io.WriterAt; like pwrite, it ignores the offset and
// the append mode of Write.
func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.writableLocked(); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("write", f.name, fs.ErrInvalid)
	}
	end := off + int64(len(p))
	f.node.extend(end)
	copy(f.node.data[off:], p)
	f.node.modTime = time.Now()
	return len(p), nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return pathErr("close", f.name, os.ErrClosed)
	}
	f.closed = true
	if d := f.node.data; f.write && cap(d)-len(d) > len(d)/8 {
		// A file written whole is mostly kept, not appended to: give
		// back the room its growth left.
		f.node.data = append([]byte(nil), d...)
	}
	return nil
}

// extend makes a file at least end bytes long, zero-filled, in room that
// grows geometrically: a file written in many small writes is copied a
// few times over, not once per write.
func (n *memNode) extend(end int64) {
	old := int64(len(n.data))
	if end <= old {
		return
	}
	if end > int64(cap(n.data)) {
		grown := make([]byte, end, max(end, 2*int64(cap(n.data))))
		copy(grown, n.data)
		n.data = grown
		return
	}
	n.data = n.data[:end]
	clear(n.data[old:])
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkLocked("sync"); err != nil {
		return err
	}
	if f.fs.volatile {
		return nil
	}
	f.node.synced = cloneBytes(f.node.data)
	if f.node.synced == nil {
		f.node.synced = []byte{}
	}
	return nil
}

func (f *memFile) Stat() (os.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkLocked("stat"); err != nil {
		return nil, err
	}
	return f.node.info(filepath.Base(f.name)), nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.checkLocked("truncate"); err != nil {
		return err
	}
	if !f.write {
		return pathErr("truncate", f.name, syscall.EBADF)
	}
	if size < 0 {
		return pathErr("truncate", f.name, fs.ErrInvalid)
	}
	if size <= int64(len(f.node.data)) {
		f.node.data = f.node.data[:size:size]
	} else {
		grown := make([]byte, size)
		copy(grown, f.node.data)
		f.node.data = grown
	}
	f.node.modTime = time.Now()
	return nil
}
