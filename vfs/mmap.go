package vfs

import (
	"errors"
	"fmt"
	"io"
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
	// inHeap: data is a volatile MemFS file's own bytes, not an mmap: the
	// collector frees them, and no page of them can be let go.
	inHeap bool
	closed atomic.Bool
	// used counts the bytes read since the process last let go of the
	// mapped pages (see Used).
	used atomic.Int64
}

// residentBytes bounds what the reads of one mapping keep mapped into the
// process between two releases of its pages: the page cache holds the file
// either way, but a mapped page counts in the process's resident set until
// it is let go, and a scan of a whole table would otherwise end with every
// page it touched counted there.
const residentBytes = 2 << 20

// errMappingClosed is what ReadAt of a closed mapping returns, as a closed
// file's ReadAt returns an error.
var errMappingClosed = errors.New("vfs: read of a closed mapping")

// Map maps the first size bytes of f read-only. A file of a volatile
// MemFS (NewVolatileMemFS) of size bytes is "mapped" as its own bytes in
// memory: nothing can crash it or inject errors into its reads, and the
// copy of every chunk a read would make is what a memtable's in-memory
// rowsets would pay above a flushed rowset's. ok is false when f is
// neither that nor a file of the operating system (a test's durable MemFS,
// or an FS that injects errors, which must keep seeing every read) or the
// mapping fails (a file system that cannot map, no address space left):
// the caller then reads f as it is, which costs a copy but loses nothing.
func Map(f File, size int64) (m *Mapping, ok bool) {
	if size <= 0 || int64(int(size)) != size {
		return nil, false
	}
	if mf, isMem := f.(*memFile); isMem {
		data, ok := mf.volatileBytes(size)
		if !ok {
			return nil, false
		}
		return &Mapping{data: data, inHeap: true}, true
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

// Used says that n bytes of the mapping have been read. Once residentBytes
// have been since the last time, the mapping's pages leave the process
// (they stay in the page cache, and a later read maps them again): so a
// scan holds a few MiB of the file in its resident set, not all it read.
func (m *Mapping) Used(n int) {
	if m.used.Add(int64(n)) < residentBytes {
		return
	}
	m.used.Store(0)
	if !m.closed.Load() && !m.inHeap {
		release(m.data)
	}
}

// Close unmaps the file; later calls do nothing.
func (m *Mapping) Close() error {
	if m.closed.Swap(true) || m.inHeap {
		return nil
	}
	return unmap(m.data)
}
