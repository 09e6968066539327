package segment

import (
	"math"
)

// Decimal-scaled doubles. Event data stores amounts, prices and
// measurements that are decimals at heart (12.34 is 1234 / 10^2), which
// plain 8-byte floats hide from bit packing and leave to zstd, the slowest
// decoder here. When every value v of a page satisfies
// float64(n) / 10^e == v exactly for n = round(v × 10^e) and one e in
// 0..maxScaleExp, the page stores e and the integers n with the integer
// encodings (frame of reference, delta, bit packing):
//
//	scaled := | e (1B) | inner encoding (1B) | inner integer body |
//
// Decoding divides by the same power of ten the encoder checked with, so the
// doubles come back bit for bit. NaN, infinities, -0 and values beyond 2^53
// never qualify and keep the plain encoding.

const maxScaleExp = 9

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// scaleInts finds the smallest exponent that turns every value into an
// integer exactly, filling ints; ok false when there is none.
func scaleInts(vals []float64, ints []int64) (e int, ok bool) {
	for e = 0; e <= maxScaleExp; e++ {
		p := pow10[e]
		ok = true
		for i, v := range vals {
			x := math.Round(v * p)
			if !(math.Abs(x) <= 1<<53) || x/p != v || (v == 0 && math.Signbit(v)) {
				ok = false
				break
			}
			ints[i] = int64(x)
		}
		if ok {
			return e, true
		}
	}
	return 0, false
}

// encodeScaled appends a scaled encoding of vals if one exists and is
// smaller than limit bytes.
func encodeScaled(dst []byte, vals []float64, limit int, scratch *[]uint64, ints *[]int64) ([]byte, bool) {
	if cap(*ints) < len(vals) {
		*ints = make([]int64, len(vals))
	}
	iv := (*ints)[:len(vals)]
	e, ok := scaleInts(vals, iv)
	if !ok {
		return dst, false
	}
	start := len(dst)
	dst = append(dst, byte(e), 0)
	dst, inner := encodeInts(dst, iv, 8, scratch)
	dst[start+1] = byte(inner)
	if len(dst)-start >= limit {
		return dst[:start], false
	}
	return dst, true
}

// decodeScaled decodes a scaled body into out (n float64 values).
func decodeScaled(out []byte, n int, src []byte) error {
	return gatherScaled(out, n, n, src, nil)
}
