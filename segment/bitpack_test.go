package segment

import (
	"math/rand/v2"
	"testing"
)

// TestBitPack round-trips every width and many lengths through the packer
// and both unpackers, fast and slow paths included.
func TestBitPack(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for bw := uint(0); bw <= 64; bw++ {
		for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 63, 64, 65, 100, 1000} {
			vals := make([]uint64, n)
			for i := range vals {
				vals[i] = rng.Uint64()
				if bw < 64 {
					vals[i] &= 1<<bw - 1
				}
			}
			packed := appendPacked(nil, vals, bw)
			if len(packed) != packedLen(n, bw) {
				t.Fatalf("bw %d n %d: %d bytes, want %d", bw, n, len(packed), packedLen(n, bw))
			}
			if !packedTailOK(packed, n, bw) {
				t.Fatalf("bw %d n %d: dirty tail", bw, n)
			}
			const base = -12345
			got := make([]int64, n)
			unpackFOR(got, packed, bw, base)
			for i := range vals {
				if got[i] != base+int64(vals[i]) {
					t.Fatalf("for bw %d n %d: value %d = %d, want %d", bw, n, i, got[i], base+int64(vals[i]))
				}
			}
			// Delta: n values from n-1 packed deltas.
			if n > 0 {
				dst := make([]int64, n+1)
				last := unpackDelta(dst, packed, bw, 7, -3)
				acc := int64(7)
				for i := range vals {
					acc += -3 + int64(vals[i])
					if dst[i+1] != acc {
						t.Fatalf("delta bw %d n %d: value %d = %d, want %d", bw, n, i+1, dst[i+1], acc)
					}
				}
				if last != acc {
					t.Fatalf("delta bw %d n %d: last %d, want %d", bw, n, last, acc)
				}
			}
			// Narrow outputs truncate.
			if bw <= 32 {
				got32 := make([]uint32, n)
				unpackFOR(got32, packed, bw, 0)
				for i := range vals {
					if got32[i] != uint32(vals[i]) {
						t.Fatalf("uint32 bw %d: value %d = %d, want %d", bw, i, got32[i], vals[i])
					}
				}
			}
		}
	}
}

func TestReadBitsAtEnd(t *testing.T) {
	// The slow path never reads past the input.
	src := []byte{0xff}
	if v := readBits(src, 3, 5); v != 0x1f {
		t.Fatalf("readBits = %x", v)
	}
}
