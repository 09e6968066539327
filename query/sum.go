package query

import (
	"encoding/binary"
	"github.com/rowttl/rowttl/segment"
	"math"
	"math/bits"
)

// Sum kernels over a selection bitmap (LSB-first, bit i set: row i counts).
// They take the bitmap 64 rows at a time: a full word adds the 64 values in
// a plain loop, an empty word is skipped, and a partial word selects each
// value with a mask instead of a branch, so a random half-live page costs
// no mispredictions.

// word returns the 64 selection bits of rows i..i+63 (i a multiple of 64).
func word(sel []byte, i int) uint64 { return binary.LittleEndian.Uint64(sel[i/8:]) }

// tailWord returns the selection bits of rows i..n-1 (fewer than 64).
func tailWord(sel []byte, i, n int) uint64 {
	var w uint64
	for j := i; j < n; j += 8 {
		w |= uint64(sel[j/8]) << (j - i)
	}
	return w & (1<<(n-i) - 1)
}

// sumSmallInts adds the selected values of v exactly, for values of at
// most 2^53 in magnitude (decimal-scaled doubles): blocks of 512 such
// values cannot overflow an int64, so the inner loops add without carries.
// sel nil selects every row.
func sumSmallInts(v []int64, sel []byte) segment.Int128 {
	var acc segment.Int128
	const block = 512
	for b := 0; b < len(v); b += block {
		e := min(b+block, len(v))
		var s int64
		if sel == nil {
			for _, x := range v[b:e] {
				s += x
			}
		} else {
			s = maskedSumInt(v, sel, b, e)
		}
		acc.Add(s)
	}
	return acc
}

// maskedSumInt adds the selected values of v[b:e]; b is a multiple of 64.
func maskedSumInt(v []int64, sel []byte, b, e int) int64 {
	var s int64
	i := b
	for ; i+64 <= e; i += 64 {
		w := word(sel, i)
		s += maskedWordInt(v[i:i+64], w)
	}
	if i < e {
		s += maskedWordInt(v[i:e], tailWord(sel, i, e))
	}
	return s
}

func maskedWordInt(v []int64, w uint64) int64 {
	var s0, s1 int64
	switch w {
	case 0:
		return 0
	case math.MaxUint64:
		for j := 0; j+1 < len(v); j += 2 {
			s0 += v[j]
			s1 += v[j+1]
		}
		if len(v)%2 == 1 {
			s0 += v[len(v)-1]
		}
		return s0 + s1
	}
	if bits.OnesCount64(w) <= 16 {
		// Sparse: visit the set bits only (the NULL-expiration rows of a
		// page whose other rows have expired are one in ten).
		for ; w != 0; w &= w - 1 {
			s0 += v[bits.TrailingZeros64(w)]
		}
		return s0
	}
	for j, x := range v {
		s0 += x & -int64(w>>uint(j)&1)
	}
	return s0
}

// sumInts adds the selected values of v exactly, whatever their size.
func sumInts(v []int64, sel []byte) segment.Int128 {
	var acc segment.Int128
	for i, x := range v {
		if sel == nil || sel[i/8]>>(i%8)&1 != 0 {
			acc.Add(x)
		}
	}
	return acc
}

// sumFloats adds the selected values of v in a fixed order (four running
// sums, combined at the end), so that a page sums to the same value every
// time.
func sumFloats(v []float64, sel []byte) float64 {
	var s [4]float64
	i := 0
	for ; i+64 <= len(v); i += 64 {
		w := uint64(math.MaxUint64)
		if sel != nil {
			w = word(sel, i)
		}
		maskedWordFloat(v[i:i+64], w, &s)
	}
	if i < len(v) {
		w := uint64(1)<<(len(v)-i) - 1
		if sel != nil {
			w = tailWord(sel, i, len(v))
		}
		maskedWordFloat(v[i:], w, &s)
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

func maskedWordFloat(v []float64, w uint64, s *[4]float64) {
	if w == 0 {
		return
	}
	// A deselected value becomes +0 through its bits, not a multiply, so
	// NaN and infinities under the mask leave the sum alone.
	for j, x := range v {
		m := -(w >> uint(j) & 1)
		s[j&3] += math.Float64frombits(math.Float64bits(x) & m)
	}
}
