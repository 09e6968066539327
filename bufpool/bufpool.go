// Package bufpool recycles the byte buffers of decoded pages. A scan
// allocates and frees buffers of the same few sizes page after page; fresh
// zeroed allocations for each made clearing memory and collecting garbage a
// fifth of a full-column scan's time.
//
// A Pool implements memory.Allocator but hands buffers out as they were last
// written, never zeroed. It must only ever back buffers that their user
// overwrites entirely (decoded pages, gathered columns); builders and compute
// kernels, which may count on zeroed memory, must never be given one.
package bufpool

import (
	"math/bits"
	"sync"
)

// Size classes are powers of two from 64 B to 64 MiB; larger buffers are
// neither pooled nor kept.
const (
	minClass = 6
	maxClass = 26
)

// Pool recycles buffers by size class. Its zero value is ready to use; it is
// safe for concurrent use. Idle buffers are dropped by the garbage collector
// as sync.Pool drops them, so a pool does not pin memory after a scan.
type Pool struct {
	classes [maxClass + 1]sync.Pool
}

// Default is the pool scans use unless told otherwise.
var Default = new(Pool)

func class(size int) int {
	if size <= 1<<minClass {
		return minClass
	}
	return bits.Len(uint(size - 1))
}

// Allocate returns a buffer of size bytes whose contents are unspecified.
func (p *Pool) Allocate(size int) []byte {
	c := class(size)
	if c > maxClass {
		return make([]byte, size)
	}
	if b, ok := p.classes[c].Get().(*[]byte); ok {
		return (*b)[:size]
	}
	return make([]byte, size, 1<<c)
}

// Reallocate returns a buffer of size bytes holding the first bytes of b,
// which must not be used afterwards.
func (p *Pool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free takes back a buffer returned by Allocate or Reallocate.
func (p *Pool) Free(b []byte) {
	c := cap(b)
	if c < 1<<minClass || c > 1<<maxClass || c&(c-1) != 0 {
		return
	}
	b = b[:c]
	p.classes[bits.Len(uint(c))-1].Put(&b)
}
