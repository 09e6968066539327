// Package gather owns the copies of the rows that a selection bitmap (LSB
// first, a bit a row) picks out of the buffers of a variable-length column
// in Arrow's layout: the offsets of the selected values, from 0, and their
// bytes one after the other. Scans gather a page's live rows with it, both
// from a decoded Arrow array (package query) and straight from a decoded
// segment page (package segment).
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
