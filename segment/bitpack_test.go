package segment

import (
	"fmt"
	"math"
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

// naiveFOR decodes a packed run value by value.
func naiveFOR(src []byte, n int, bw uint, base int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		var u uint64
		if bw > 0 {
			u = readBits(src, uint(i)*bw, bw)
		}
		out[i] = base + int64(u)
	}
	return out
}

func checkRangeFOR(src []byte, n int, bw uint, base, a int64, span uint64, negate bool) error {
	vals := naiveFOR(src, n, bw, base)
	bl := (n + 7) / 8
	// Bits already set stay set: start from a pattern.
	t, f := make([]byte, bl+1), make([]byte, bl+1)
	t[bl], f[bl] = 0xa5, 0x5a
	rangeFOR(src, n, bw, base, a, span, negate, t, f)
	for i, v := range vals {
		in := uint64(v-a) <= span != negate
		if t[i/8]>>(i%8)&1 == 1 != in || f[i/8]>>(i%8)&1 == 1 == in {
			return fmt.Errorf("row %d (%d) in [%d, +%d] negate %t: t %t f %t", i, v, a, span, negate, !in, in)
		}
	}
	if n%8 != 0 && (t[n/8]>>(n%8) != 0 || f[n/8]>>(n%8) != 0) || t[bl] != 0xa5 || f[bl] != 0x5a {
		return fmt.Errorf("bits past row %d written", n)
	}
	// The selected rows alone: every other bit stays clear.
	sel := make([]byte, bl+1)
	for i := range n {
		// Rows 64 to 127 none: a word of the selection with no bit set.
		if (i*7+n)%5 < 2 && (i < 64 || i >= 128) {
			sel[i/8] |= 1 << (i % 8)
		}
	}
	clear(t)
	clear(f)
	t[bl], f[bl] = 0xa5, 0x5a
	rangeFORSelected(src, n, bw, base, a, span, negate, sel, t, f)
	for i, v := range vals {
		in := uint64(v-a) <= span != negate
		on := sel[i/8]>>(i%8)&1 == 1
		if t[i/8]>>(i%8)&1 == 1 != (in && on) || f[i/8]>>(i%8)&1 == 1 != (!in && on) {
			return fmt.Errorf("selected row %t %d (%d) in [%d, +%d] negate %t: t %t f %t", on, i, v, a, span, negate, !in, in)
		}
	}
	if n%8 != 0 && (t[n/8]>>(n%8) != 0 || f[n/8]>>(n%8) != 0) || t[bl] != 0xa5 || f[bl] != 0x5a {
		return fmt.Errorf("bits past row %d written", n)
	}
	return nil
}

func checkSumFOR(src []byte, n int, bw uint, base int64, sel []byte) error {
	var want Int128
	k := 0
	for i, v := range naiveFOR(src, n, bw, base) {
		if sel == nil || sel[i/8]>>(i%8)&1 == 1 {
			want.Add(v)
			k++
		}
	}
	got, gk := sumFOR(src, n, bw, base, sel)
	if got != want || gk != k {
		return fmt.Errorf("sum %s of %d, want %s of %d", got, gk, want, k)
	}
	return nil
}

func packRandom(rng *rand.Rand, n int, bw uint) []byte {
	vals := make([]uint64, n)
	for i := range vals {
		vals[i] = rng.Uint64()
		if bw < 64 {
			vals[i] &= 1<<bw - 1
		}
	}
	return appendPacked(nil, vals, bw)
}

func TestRangeAndSumFOR(t *testing.T) {
	max56 := appendPacked(nil, []uint64{1<<56 - 1, 0, 1<<56 - 1}, 56)
	ones := appendPacked(nil, []uint64{1, 1, 1, 1, 1, 1, 1, 1, 1}, 1)
	for _, tc := range []struct {
		name     string
		src      []byte
		n        int
		bw       uint
		base, a  int64
		span     uint64
		negate   bool
		selFirst bool // sum the first row alone
	}{
		{"width zero", nil, 20, 0, 7, 7, 0, false, false},
		{"width zero outside", nil, 20, 0, 7, 8, 5, false, true},
		{"width zero negated", nil, 9, 0, -3, -3, 0, true, false},
		{"one-bit values", ones, 9, 1, 0, 1, 0, false, false},
		{"widest fast width", max56, 3, 56, math.MinInt64, math.MinInt64, 1<<56 - 2, false, false},
		{"base wraps", max56, 3, 56, math.MaxInt64, math.MinInt64, 1 << 56, false, true},
		{"everything", ones, 9, 1, 5, math.MinInt64, math.MaxUint64, false, false},
		{"nothing", ones, 9, 1, 5, math.MinInt64, math.MaxUint64, true, false},
	} {
		if err := checkRangeFOR(tc.src, tc.n, tc.bw, tc.base, tc.a, tc.span, tc.negate); err != nil {
			t.Errorf("%s: rangeFOR: %v", tc.name, err)
		}
		var sel []byte
		if tc.selFirst {
			sel = make([]byte, (tc.n+7)/8)
			sel[0] = 1
		}
		if err := checkSumFOR(tc.src, tc.n, tc.bw, tc.base, sel); err != nil {
			t.Errorf("%s: sumFOR: %v", tc.name, err)
		}
	}
}

// TestRangeAndSumFORRandom checks the kernels on packed values against
// comparisons and sums of the decoded values, for every width.
func TestRangeAndSumFORRandom(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	for trial := range 3000 {
		bw := uint(rng.IntN(65))
		n := rng.IntN(700)
		src := packRandom(rng, n, bw)
		base := int64(rng.Uint64())
		if rng.IntN(2) == 0 {
			base = rng.Int64N(2000) - 1000
		}
		vals := naiveFOR(src, n, bw, base)
		a := int64(rng.Uint64())
		if n > 0 && rng.IntN(3) > 0 {
			a = vals[rng.IntN(n)] + rng.Int64N(3) - 1
		}
		span := []uint64{0, 1, rng.Uint64() >> rng.IntN(64), math.MaxUint64}[rng.IntN(4)]
		if err := checkRangeFOR(src, n, bw, base, a, span, rng.IntN(2) == 0); err != nil {
			t.Fatalf("seed %d trial %d: width %d, %d values: %v", seed, trial, bw, n, err)
		}
		var sel []byte
		if rng.IntN(5) > 0 {
			sel = make([]byte, (n+7)/8)
			density := []int{0, 1, 5, 50, 100}[rng.IntN(5)]
			for i := range n {
				if rng.IntN(100) < density {
					sel[i/8] |= 1 << (i % 8)
				}
			}
		}
		if err := checkSumFOR(src, n, bw, base, sel); err != nil {
			t.Fatalf("seed %d trial %d: width %d, %d values: %v", seed, trial, bw, n, err)
		}
	}
}

// TestRangeFORStaged checks rangeFOR on runs long enough to be tested a
// part at a time (rangeFORStaged) against the decoded values: every width
// it stages, counts of values that end a part exactly, one past it, or
// mid-byte, and a run just too short to be staged.
func TestRangeFORStaged(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 4))
	for bw := uint(1); bw <= 56; bw++ {
		per := 8 * max(1, stageLen/int(bw)) // values in a part
		for _, n := range []int{
			3 * per, 3*per + 1, 5*per - 3, 2*per + rng.IntN(3*per),
			(2*stageLen*8)/int(bw) - 8, // packed bytes: at most 2*stageLen
		} {
			src, base, _, a := randomFORRun(rng, n, bw)
			span := uint64(1) << (bw - 1) >> rng.IntN(int(bw))
			if err := checkRangeFOR(src, n, bw, base, a, span, rng.IntN(2) == 0); err != nil {
				t.Fatalf("seed %d: width %d, %d values (%d bytes): %v", seed, bw, n, len(src), err)
			}
		}
	}
}

// randomFORRun packs n random values of bw bits over a small or a random
// base, and returns them decoded with a range start next to one of them.
func randomFORRun(rng *rand.Rand, n int, bw uint) (src []byte, base int64, vals []int64, a int64) {
	src = packRandom(rng, n, bw)
	base = rng.Int64N(2000) - 1000
	if rng.IntN(2) == 0 {
		base = int64(rng.Uint64())
	}
	vals = naiveFOR(src, n, bw, base)
	return src, base, vals, vals[rng.IntN(n)] + rng.Int64N(3) - 1
}

// TestRangeFOR2 checks rangeFOR2 against the decoded values, on runs short
// and long enough to be staged, for every width: each of its two ranges
// must give the rows rangeFOR gives.
func TestRangeFOR2(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 5))
	for bw := uint(0); bw <= 64; bw++ {
		per := 8 * max(1, stageLen/max(1, int(bw)))
		for _, n := range []int{1, 7, 8, 9, 100 + rng.IntN(100), 3*per + 1, 2*per + rng.IntN(per)} {
			if n > 200_000 {
				continue
			}
			src, base, vals, a := randomFORRun(rng, n, bw)
			spans := []uint64{0, 1, uint64(rng.Int64N(1 << 20)), math.MaxInt64, math.MaxUint64}
			span, span2 := spans[rng.IntN(len(spans))], spans[rng.IntN(len(spans))]
			if bw > 0 && bw < 64 {
				span2 = uint64(1) << (bw - 1) >> rng.IntN(int(bw))
			}
			bl := (n + 7) / 8
			t1, t2 := make([]byte, bl), make([]byte, bl)
			rangeFOR2(src, n, bw, base, a, span, span2, t1, t2)
			for i, v := range vals {
				if t1[i/8]>>(i%8)&1 == 1 != (uint64(v-a) <= span) || t2[i/8]>>(i%8)&1 == 1 != (uint64(v-a) <= span2) {
					t.Fatalf("seed %d: width %d, %d values: row %d (%d) wrong for [%d, +%d], [%d, +%d]", seed, bw, n, i, v, a, span, a, span2)
				}
			}
		}
	}
}
