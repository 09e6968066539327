package bufpool

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

var _ memory.Allocator = (*Pool)(nil)

func TestPoolSizes(t *testing.T) {
	var p Pool
	for _, size := range []int{0, 1, 63, 64, 65, 4096, 100_000, 1 << 26, 1<<26 + 1} {
		b := p.Allocate(size)
		if len(b) != size {
			t.Fatalf("Allocate(%d): len %d", size, len(b))
		}
		for i := range b {
			b[i] = 0xa5
		}
		b = p.Reallocate(size+10, b)
		if len(b) != size+10 {
			t.Fatalf("Reallocate(%d): len %d", size+10, len(b))
		}
		for i := 0; i < size; i++ {
			if b[i] != 0xa5 {
				t.Fatalf("Reallocate(%d) lost byte %d", size+10, i)
			}
		}
		p.Free(b)
	}
}

// TestPoolReuses checks that a freed buffer comes back for the next
// allocation of its class: the point of the pool.
func TestPoolReuses(t *testing.T) {
	var p Pool
	reused := 0
	for range 100 {
		b := p.Allocate(5000)
		if cap(b) != 8192 {
			t.Fatalf("cap %d, want the class size 8192", cap(b))
		}
		b[0] = 1
		c := p.Allocate(5000)
		if &c[0] == &b[0] {
			t.Fatal("a buffer in use was handed out twice")
		}
		p.Free(b)
		d := p.Allocate(6000)
		if &d[0] == &b[0] {
			reused++
		}
		p.Free(c)
		p.Free(d)
	}
	// sync.Pool may drop an item at a garbage collection; most must come back.
	if reused < 50 {
		t.Fatalf("reused %d of 100 freed buffers", reused)
	}
}

func TestPoolIgnoresForeignBuffers(t *testing.T) {
	var p Pool
	p.Free(make([]byte, 100)) // not a class size: dropped
	p.Free(nil)
	if b := p.Allocate(100); cap(b) != 128 {
		t.Fatalf("cap %d after foreign frees, want 128", cap(b))
	}
}

func BenchmarkPoolVsGo(b *testing.B) {
	const size = 512 << 10
	b.Run("pool", func(b *testing.B) {
		var p Pool
		b.SetBytes(size)
		for b.Loop() {
			p.Free(p.Allocate(size))
		}
	})
	b.Run("go", func(b *testing.B) {
		mem := memory.NewGoAllocator()
		b.SetBytes(size)
		for b.Loop() {
			mem.Free(mem.Allocate(size))
		}
	})
}
