package ttlcol

import (
	"encoding/binary"
	"math/bits"
)

// The live-row kernel: the one loop every scan of a TTL table runs.
//
// A row is alive at threshold t when its __TTL__ is NULL or greater than t
// (Policy.Threshold). The kernel works on 64 rows at a time: it turns the 64
// comparisons into one uint64 without a branch per row, ORs in the
// complement of the 64 matching validity bits (loaded as one unaligned
// 64-bit word and shifted to the array offset), stores the word as 8 bytes
// of the output bitmap and counts it with a POPCNT. The last len%64 rows take
// a byte-at-a-time path.

// LiveMask computes which rows are alive at threshold.
//
// ttl holds the int64 values of a __TTL__ column. validity is its Arrow
// validity bitmap (LSB-first, bit set = not NULL), or nil when the column has
// no nulls; offset is the bit position in validity of ttl[0] (an Arrow
// array's Offset()). out receives an LSB-first bitmap of len(ttl) bits: bit i
// is set when row i is alive, that is when validity bit offset+i is clear
// (NULL never expires) or ttl[i] > threshold (a value equal to the threshold
// is expired). Bits of out past len(ttl) in its last byte are cleared; bytes
// after it are left alone. The values of ttl under NULL slots are ignored,
// whatever they hold.
//
// It returns the number of live rows. It panics when out is shorter than
// (len(ttl)+7)/8 bytes, or validity (when not nil) shorter than
// (offset+len(ttl)+7)/8 bytes, or offset is negative.
func LiveMask(ttl []int64, validity []byte, offset int, threshold int64, out []byte) int {
	n := len(ttl)
	out = out[:(n+7)/8]
	checkValidity(validity, offset, n)
	live := 0
	i := 0
	if validity == nil {
		for ; i+64 <= n; i += 64 {
			m := gt64(ttl[i:i+64], threshold)
			binary.LittleEndian.PutUint64(out[i/8:], m)
			live += bits.OnesCount64(m)
		}
	} else {
		for ; i+64 <= n; i += 64 {
			m := gt64(ttl[i:i+64], threshold) | ^validity64(validity, offset+i)
			binary.LittleEndian.PutUint64(out[i/8:], m)
			live += bits.OnesCount64(m)
		}
	}
	for ; i < n; i += 8 {
		k := min(8, n-i)
		m := gtTail(ttl[i:i+k], threshold)
		if validity != nil {
			m |= ^validity8(validity, offset+i)
		}
		m &= 0xff >> (8 - k)
		out[i/8] = byte(m)
		live += bits.OnesCount8(byte(m))
	}
	return live
}

// CountLive returns the number of rows LiveMask would mark alive, without
// writing a bitmap. Arguments and panics as for LiveMask.
func CountLive(ttl []int64, validity []byte, offset int, threshold int64) int {
	n := len(ttl)
	checkValidity(validity, offset, n)
	live := 0
	i := 0
	if validity == nil {
		for ; i+64 <= n; i += 64 {
			live += bits.OnesCount64(gt64(ttl[i:i+64], threshold))
		}
	} else {
		for ; i+64 <= n; i += 64 {
			live += bits.OnesCount64(gt64(ttl[i:i+64], threshold) | ^validity64(validity, offset+i))
		}
	}
	for ; i < n; i += 8 {
		k := min(8, n-i)
		m := gtTail(ttl[i:i+k], threshold)
		if validity != nil {
			m |= ^validity8(validity, offset+i)
		}
		live += bits.OnesCount8(byte(m & (0xff >> (8 - k))))
	}
	return live
}

func checkValidity(validity []byte, offset, n int) {
	if offset < 0 {
		panic("ttlcol: negative validity offset")
	}
	if validity != nil && len(validity)*8 < offset+n {
		panic("ttlcol: validity bitmap shorter than offset+len(ttl) bits")
	}
}

// b2u is 1 for true and 0 for false. The compiler turns it into a SETcc, so
// the comparisons below carry no branch.
func b2u(b bool) uint64 {
	var x uint64
	if b {
		x = 1
	}
	return x
}

// gt64 returns bit j set when v[j] > t, for len(v) == 64: eight groups of
// eight comparisons, each group assembled into one byte.
func gt64(v []int64, t int64) uint64 {
	v = v[:64:64]
	var m uint64
	for j := 0; j < 64; j += 8 {
		w := (*[8]int64)(v[j : j+8])
		b := b2u(w[0] > t) | b2u(w[1] > t)<<1 | b2u(w[2] > t)<<2 | b2u(w[3] > t)<<3 |
			b2u(w[4] > t)<<4 | b2u(w[5] > t)<<5 | b2u(w[6] > t)<<6 | b2u(w[7] > t)<<7
		m |= b << j
	}
	return m
}

// gtTail is one group of gt64 for up to 8 values.
func gtTail(v []int64, t int64) uint64 {
	var m uint64
	for j, x := range v {
		m |= b2u(x > t) << j
	}
	return m
}

// validity64 returns the 64 validity bits starting at bit position pos.
func validity64(validity []byte, pos int) uint64 {
	idx, sh := pos>>3, uint(pos&7)
	if idx+9 <= len(validity) {
		// One unaligned load plus the spill byte; a shift by 8-sh == 8 of a
		// byte-sized value is harmless and sh == 0 makes it a shift by 64,
		// which Go defines as 0.
		return binary.LittleEndian.Uint64(validity[idx:])>>sh | uint64(validity[idx+8])<<(64-sh)
	}
	var w uint64
	for b := 0; b < 8; b++ {
		w |= validity8(validity, pos+8*b) << (8 * b)
	}
	return w
}

// validity8 returns the 8 validity bits starting at bit position pos. Bytes
// past the end of validity read as 0 (only bits past the column end can come
// from there, and the callers mask them off).
func validity8(validity []byte, pos int) uint64 {
	idx, sh := pos>>3, uint(pos&7)
	var lo, hi uint64
	if idx < len(validity) {
		lo = uint64(validity[idx])
	}
	if sh != 0 && idx+1 < len(validity) {
		hi = uint64(validity[idx+1])
	}
	return (lo>>sh | hi<<(8-sh)) & 0xff
}
