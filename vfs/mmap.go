package vfs

import (
	"container/list"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// Mapping is a read-only memory mapping of the whole of a file that no one
// changes while it is mapped (a finished segment). A scan reads its bytes
// where the operating system's page cache holds them, with neither a read
// call nor a copy into a buffer of its own.
//
// Bytes must not be used after Close: the memory is gone, and touching it
// is a fault, not an error. Whoever maps a file therefore unmaps it only
// when nothing that read it is left (a rowset's last reference).
type Mapping struct {
	data []byte
	// closed is set under resident.mu, so that no release of the
	// mapping's pages can run once Close has begun to unmap them (the
	// address range may then be reused by another mapping).
	closed atomic.Bool
	// spans counts the mapping's ranges in resident.
	spans int
}

// DefaultResidentBudget is what the reads of all mappings together keep
// mapped into the process unless SetResidentBudget says otherwise. The page
// cache holds a file either way, but a mapped page counts in the process's
// resident set until it is let go, and a scan of a whole table would
// otherwise end with every page it touched counted there. Letting pages go
// is not free either: the drop, and the fault that maps a page again, are
// kernel time a scan pays per page. Within the budget a query repeated (a
// benchmark, a dashboard) finds the columns it reads still mapped.
const DefaultResidentBudget = 16 << 20

// resident is the process-wide account of the mapped ranges read recently,
// least recently read first. When their bytes pass the budget the oldest
// ranges leave the process (MADV_DONTNEED: the pages stay in the page
// cache, a later read maps them again), never a whole file at once, so the
// ranges a scan has just read, and may read again soon, stay mapped.
var resident = residentSet{budget: DefaultResidentBudget, lru: list.New(), at: map[spanKey]*list.Element{}}

type residentSet struct {
	mu     sync.Mutex
	budget int64
	total  int64
	lru    *list.List // of *span, least recently read first
	at     map[spanKey]*list.Element
}

type spanKey struct {
	m   *Mapping
	off int64
}

type span struct {
	key spanKey
	n   int64
}

// SetResidentBudget sets how many bytes of mapped files read recently stay
// mapped into the process, over all mappings, and returns the previous
// budget. Ranges past a smaller budget leave at the next read.
func SetResidentBudget(bytes int64) int64 {
	resident.mu.Lock()
	defer resident.mu.Unlock()
	old := resident.budget
	resident.budget = max(bytes, 0)
	return old
}

// ResidentBytes returns the bytes of the mapped ranges the process holds
// as read recently: at most the budget, once a read has made room.
func ResidentBytes() int64 {
	resident.mu.Lock()
	defer resident.mu.Unlock()
	return resident.total
}

// errMappingClosed is what ReadAt of a closed mapping returns, as a closed
// file's ReadAt returns an error.
var errMappingClosed = errors.New("vfs: read of a closed mapping")

// Map maps the first size bytes of f read-only. ok is false when f is not
// a file of the operating system (a test's FS in memory, or one that
// injects errors, which must keep seeing every read) or the mapping fails
// (a file system that cannot map, no address space left): the caller then
// reads f as it is, which costs a copy but loses nothing.
func Map(f File, size int64) (m *Mapping, ok bool) {
	if size <= 0 || int64(int(size)) != size {
		return nil, false
	}
	data, ok := mapFile(f, int(size))
	if !ok {
		return nil, false
	}
	return &Mapping{data: data}, true
}

// MappedBytes returns the file's bytes. The slice is read-only: a write
// through it is a fault.
func (m *Mapping) MappedBytes() []byte { return m.data }

// ReadAt copies bytes of the mapping, as a file's ReadAt reads them.
func (m *Mapping) ReadAt(p []byte, off int64) (int, error) {
	if m.closed.Load() {
		return 0, errMappingClosed
	}
	if off < 0 {
		return 0, fmt.Errorf("vfs: read of a mapping at %d", off)
	}
	if off >= int64(len(m.data)) {
		return 0, io.EOF
	}
	n := copy(p, m.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Used says that the n bytes of the mapping at off are about to be read:
// they become the range read most recently, and the ranges read longest
// ago, of any mapping, leave the process until the rest fit the budget.
// The kernel may map a few pages past a range when it faults one in
// (fault-around): those are not counted, and leave with the range they
// belong to or at Close.
func (m *Mapping) Used(off int64, n int) {
	if n <= 0 || off < 0 || off+int64(n) > int64(len(m.data)) {
		return
	}
	rs := &resident
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if m.closed.Load() {
		return
	}
	k := spanKey{m, off}
	cur, ok := rs.at[k]
	if ok {
		s := cur.Value.(*span)
		rs.total += int64(n) - s.n
		s.n = int64(n)
		rs.lru.MoveToBack(cur)
	} else {
		cur = rs.lru.PushBack(&span{key: k, n: int64(n)})
		rs.at[k] = cur
		rs.total += int64(n)
		m.spans++
	}
	// The range about to be read stays in the account even past the
	// budget: dropping it now would leave what the read maps uncounted.
	for rs.total > rs.budget {
		e := rs.lru.Front()
		if e == cur {
			break
		}
		s := e.Value.(*span)
		rs.remove(e)
		release(s.key.m.data, s.key.off, s.n)
	}
}

// remove takes the range of e out of the account; rs.mu is held.
func (rs *residentSet) remove(e *list.Element) {
	s := e.Value.(*span)
	rs.lru.Remove(e)
	delete(rs.at, s.key)
	rs.total -= s.n
	s.key.m.spans--
}

// Close unmaps the file; later calls do nothing.
func (m *Mapping) Close() error {
	rs := &resident
	rs.mu.Lock()
	if m.closed.Swap(true) {
		rs.mu.Unlock()
		return nil
	}
	for e := rs.lru.Front(); e != nil && m.spans > 0; {
		next := e.Next()
		if e.Value.(*span).key.m == m {
			rs.remove(e)
		}
		e = next
	}
	rs.mu.Unlock()
	return unmap(m.data)
}
