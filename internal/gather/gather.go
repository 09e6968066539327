// Package gather owns the copies of the rows that a selection bitmap (LSB
// first, a bit a row) picks out of buffers in Arrow's layout: the bits of
// a bitmap (validity, booleans), and of a variable-length column the
// offsets of the selected values, from 0, and their bytes one after the
// other; and the loads of a bitmap's words that such loops, and segment's
// unpacking under a selection, read selections with. Scans gather a
// page's live rows with it, both from a decoded Arrow array (package
// query) and straight from a decoded segment page (package segment).
//
// It must never allocate, nor know of arrays, pages or encodings: callers
// size the buffers (Offsets gives the bytes to hold, Slack the room past
// them) and own them.
package gather

import (
	"encoding/binary"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// Slack is the room dst must have past the gathered bytes of Bytes: values
// up to this long are moved as one fixed-size block, which may write past
// their end into the room the next value (or the slack) takes.
const Slack = 32

// Offsets writes into dst (one more than the rows selected) the
// offsets, from 0, of the values offs bounds whose bit is set in mask, and
// returns their total length.
func Offsets(dst, offs []int32, mask []byte, n int) int32 {
	j, pos := 0, int32(0)
	dst[0] = 0
	full := n / 64
	for w := 0; w < full; w++ {
		word := binary.LittleEndian.Uint64(mask[w*8:])
		ow := offs[w*64 : w*64+65]
		if word == ^uint64(0) {
			// 64 rows in a row: their offsets shifted at once.
			shift := pos - ow[0]
			out := dst[j+1 : j+65]
			for k, o := range ow[1:65] {
				out[k] = o + shift
			}
			j += 64
			pos = out[63]
			continue
		}
		out := dst[j+1 : j+1+bits.OnesCount64(word)]
		for k := range out {
			b := bits.TrailingZeros64(word) & 63
			pos += ow[b+1] - ow[b]
			out[k] = pos
			word &= word - 1
		}
		j += len(out)
	}
	for i := full * 64; i < n; i++ {
		if bitutil.BitIsSet(mask, i) {
			pos += offs[i+1] - offs[i]
			j++
			dst[j] = pos
		}
	}
	return pos
}

// Bytes copies into dst, one after the other, the values of src
// (bounded by offs, from offs[0]) whose bit is set in mask. dst holds
// Slack bytes past their total: a short value is moved as one block
// of that size, as a copy call per value costs more than the copy. A block
// read never passes the end of src, which may run past the values; a
// value nearer its end is copied exactly.
func Bytes(dst, src []byte, offs []int32, mask []byte, n int) {
	base := offs[0]
	// A block may be read from src and written to dst at or before these.
	// Testing them in full (sign included) lets the compiler drop the
	// bounds checks of the block moves, which were most of their cost.
	lastRead, lastWrite := len(src)-Slack, len(dst)-Slack
	pos := 0
	full := n / 64
	for w := 0; w < full; w++ {
		word := binary.LittleEndian.Uint64(mask[w*8:])
		ow := offs[w*64 : w*64+65]
		if word == ^uint64(0) {
			s, e := ow[0]-base, ow[64]-base
			pos += copy(dst[pos:], src[s:e])
			continue
		}
		for ; word != 0; word &= word - 1 {
			b := bits.TrailingZeros64(word) & 63
			s, l := int(ow[b]-base), int(ow[b+1]-ow[b])
			if l <= Slack && s >= 0 && s <= lastRead && pos >= 0 && pos <= lastWrite {
				// Two 16-byte moves: the compiler turns one of 32
				// bytes into a memmove call, or a trip through the
				// stack.
				d := (*[Slack]byte)(dst[pos : pos+Slack])
				v := (*[Slack]byte)(src[s : s+Slack])
				*(*[16]byte)(d[:16]) = *(*[16]byte)(v[:16])
				*(*[16]byte)(d[16:]) = *(*[16]byte)(v[16:])
			} else {
				copy(dst[pos:pos+l], src[s:s+l])
			}
			pos += l
		}
	}
	for i := full * 64; i < n; i++ {
		if bitutil.BitIsSet(mask, i) {
			s, e := offs[i]-base, offs[i+1]-base
			pos += copy(dst[pos:], src[s:e])
		}
	}
}

// Bits writes to out the bits of bm (from bit off on) whose bit is set in
// the first n bits of mask, packed, and returns how many of them are set.
// out must hold the packed bits, a byte for each eight or fewer: every one
// of those bytes is written (out need not be cleared), the bits past the
// last clear, and nothing past them. The output is built a word at a
// time: the bits under each mask word are packed together (compressBits)
// and appended to acc, which holds k bits not yet stored; a word is
// stored once 64 of them are, all of them bits of the output.
func Bits(out, bm []byte, off int, mask []byte, n int) int {
	var acc uint64
	k, o, ones := 0, 0, 0
	for w := 0; w*64 < n; w++ {
		m := Word(mask, w*64, min(64, n-w*64))
		if m == 0 {
			continue
		}
		v := From(bm, off+w*64, 64)
		c := bits.OnesCount64(m)
		ones += bits.OnesCount64(m & v)
		cw := compressBits(v, m, c)
		acc |= cw << k
		if k += c; k >= 64 {
			binary.LittleEndian.PutUint64(out[o:], acc)
			o += 8
			k -= 64
			acc = cw >> (c - k) // the bits that did not fit; 0 when all did
		}
	}
	for ; k > 0; k -= 8 {
		out[o] = byte(acc)
		acc >>= 8
		o++
	}
	return ones
}

// compressBits returns the bits of v under the c set bits of m, packed
// into the low c bits: bit p of the result is the bit of v at the p-th set
// bit of m. It visits the rarer of the valid and the NULL rows under m,
// which for columns of few NULLs (or few values) is a handful a word, and
// none when all are valid: a branch per row on its validity bit mispredicts
// as often as NULLs come.
func compressBits(v, m uint64, c int) uint64 {
	valid, null := m&v, m&^v
	if null == 0 {
		return 1<<c - 1 // c = 64 shifts out to all ones
	}
	if bits.OnesCount64(null) <= c/2 {
		cw := uint64(1)<<c - 1
		for ; null != 0; null &= null - 1 {
			cw &^= 1 << bits.OnesCount64(m&(null&-null-1))
		}
		return cw
	}
	var cw uint64
	for ; valid != 0; valid &= valid - 1 {
		cw |= 1 << bits.OnesCount64(m&(valid&-valid-1))
	}
	return cw
}

// Word returns the m (at most 64) bits of bm from bit i0, a multiple of 64
// (a byte at least); bm holds bit i0+m-1.
func Word(bm []byte, i0, m int) uint64 {
	if m == 64 {
		return binary.LittleEndian.Uint64(bm[i0>>3:])
	}
	var w uint64
	for k := 0; k*8 < m; k++ {
		w |= uint64(bm[i0>>3+k]) << (8 * k)
	}
	return w & (1<<m - 1)
}

// From returns the m (at most 64) bits of bm from bit i, any bit; those
// past the end of bm are clear.
func From(bm []byte, i, m int) uint64 {
	b, s := i>>3, uint(i&7)
	var w uint64
	if b+8 <= len(bm) {
		w = binary.LittleEndian.Uint64(bm[b:]) >> s
		if s != 0 && b+8 < len(bm) {
			w |= uint64(bm[b+8]) << (64 - s)
		}
	} else {
		for k := 0; b+k < len(bm); k++ {
			w |= uint64(bm[b+k]) << (8 * k)
		}
		w >>= s
	}
	if m < 64 {
		w &= 1<<m - 1
	}
	return w
}
