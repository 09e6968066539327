package fileformat

import (
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// scratchAllocator is the allocator a ParquetReader gives arrow-go. It
// passes everything to the caller's allocator, and remembers the buffers
// arrow-go's DELTA_BINARY_PACKED decoder takes for the bit widths of its
// miniblocks: the decoder (also inside the DELTA_LENGTH_BYTE_ARRAY and
// DELTA_BYTE_ARRAY ones) has no Release and never frees that buffer, so an
// accounting allocator (a session's memory limit, a test's checked
// allocator) would count it as held forever, once for every column chunk
// read. Closing the reader frees them: only the decoder uses them, and it
// is done with the file. The decoder is told apart by the allocation's
// caller, which only small allocations are asked for; if arrow-go renames
// it, the checked allocators of the round-trip tests report the leak.
type scratchAllocator struct {
	memory.Allocator
	mu   sync.Mutex
	bufs map[*byte][]byte // the decoders' buffers not yet freed
}

// maxScratch bounds the allocations checked for the decoder as caller: its
// buffer holds one byte per miniblock of a block, 4 in most writers.
const maxScratch = 4 << 10

// deltaDecoder is how the decoder's methods begin in a stack frame.
const deltaDecoder = "parquet/internal/encoding.(*deltaBitPackDecoder["

func newScratchAllocator(mem memory.Allocator) *scratchAllocator {
	return &scratchAllocator{Allocator: mem, bufs: make(map[*byte][]byte)}
}

func (a *scratchAllocator) Allocate(size int) []byte {
	b := a.Allocator.Allocate(size)
	if size <= maxScratch && fromDeltaDecoder() {
		a.mu.Lock()
		a.bufs[first(b)] = b
		a.mu.Unlock()
	}
	return b
}

func (a *scratchAllocator) Reallocate(size int, b []byte) []byte {
	a.mu.Lock()
	_, tracked := a.bufs[first(b)]
	delete(a.bufs, first(b))
	a.mu.Unlock()
	nb := a.Allocator.Reallocate(size, b)
	if tracked {
		a.mu.Lock()
		a.bufs[first(nb)] = nb
		a.mu.Unlock()
	}
	return nb
}

func (a *scratchAllocator) Free(b []byte) {
	a.mu.Lock()
	delete(a.bufs, first(b))
	a.mu.Unlock()
	a.Allocator.Free(b)
}

// release frees the decoders' buffers; the reader's decoders must be done.
func (a *scratchAllocator) release() {
	a.mu.Lock()
	bufs := a.bufs
	a.bufs = make(map[*byte][]byte)
	a.mu.Unlock()
	for _, b := range bufs {
		a.Allocator.Free(b)
	}
}

// first identifies a buffer by the address of its first byte.
func first(b []byte) *byte {
	if cap(b) == 0 {
		return nil
	}
	return unsafe.SliceData(b[:1])
}

// fromDeltaDecoder reports an allocation the delta decoder asked for:
// its frame is a few above (memory.Buffer's Resize and Reserve between).
func fromDeltaDecoder() bool {
	var pcs [8]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, deltaDecoder) {
			return true
		}
		if !more {
			return false
		}
	}
}
