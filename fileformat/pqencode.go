package fileformat

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// The encoders of this file write the pieces of Parquet data pages that
// the flat column writer (pqfast.go) assembles: DELTA_BINARY_PACKED
// integers, PLAIN values, RLE/bit-packed definition levels and the Thrift
// page header. Each appends to a byte slice, touches its input once and
// allocates nothing but the growth of the slice it appends to.

// Parquet encodings and page types, as the Thrift enums number them.
const (
	encPlain       = 0
	encRLE         = 3
	encDeltaBP     = 5
	encDeltaLength = 6 // DELTA_LENGTH_BYTE_ARRAY
	encBSS         = 9 // BYTE_STREAM_SPLIT
	pageTypeData   = 0
	deltaBlock     = 128 // values of a DELTA_BINARY_PACKED block
	deltaMinis     = 4   // miniblocks of a block
	deltaMiniSize  = deltaBlock / deltaMinis
)

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendZigzag(b []byte, v int64) []byte {
	return appendUvarint(b, uint64(v<<1)^uint64(v>>63))
}

// deltaInt is what DELTA_BINARY_PACKED encodes: INT32 columns take their
// deltas in 32-bit arithmetic, as the readers decode them, so that no
// miniblock is wider than 32 bits.
type deltaInt interface{ ~int32 | ~int64 }

// appendDelta appends vs as one DELTA_BINARY_PACKED run (header, then
// blocks of 128 values in 4 miniblocks), and returns the smallest and
// largest of vs, the statistics taken in the same pass. A miniblock's bit
// width is that of its largest delta above the block's smallest one; the
// last block writes only the miniblocks it needs, with zero widths for
// the others, and pads its last miniblock with zeros.
func appendDelta[T deltaInt](b []byte, vs []T) (_ []byte, lo, hi T) {
	b = appendUvarint(b, deltaBlock)
	b = appendUvarint(b, deltaMinis)
	b = appendUvarint(b, uint64(len(vs)))
	if len(vs) == 0 {
		return appendZigzag(b, 0), 0, 0
	}
	b = appendZigzag(b, int64(vs[0]))
	lo, hi = vs[0], vs[0]
	mask := ^uint64(0)
	if unsafe.Sizeof(vs[0]) == 4 {
		mask = 1<<32 - 1
	}
	// The deltas as uint64s: their differences from the block's smallest
	// are then taken in uint64 arithmetic, which agrees with T's in the
	// bits that mask keeps.
	var d [deltaBlock]uint64
	for start := 1; start < len(vs); start += deltaBlock {
		n := min(deltaBlock, len(vs)-start)
		// One pass over a miniblock's values takes their deltas, the
		// deltas' smallest and largest and the values' own: a
		// miniblock's width is that of its largest delta less the
		// block's smallest, as (d - minD) grows with d.
		minis := (n + deltaMiniSize - 1) / deltaMiniSize
		minD := vs[start] - vs[start-1]
		var maxD [deltaMinis]T
		for m := range minis {
			from := start + m*deltaMiniSize
			src := vs[from-1 : min(start+n, from+deltaMiniSize)]
			prev, next := src[0], src[1:]
			out := d[m*deltaMiniSize:]
			out = out[:len(next)]
			mn, mx := next[0]-prev, next[0]-prev
			for i, v := range next {
				x := v - prev
				prev = v
				out[i] = uint64(x)
				mn, mx = min(mn, x), max(mx, x)
				lo, hi = min(lo, v), max(hi, v)
			}
			minD, maxD[m] = min(minD, mn), mx
		}
		b = appendZigzag(b, int64(minD))
		var widths [deltaMinis]uint8
		for m := range minis {
			widths[m] = uint8(bits.Len64(uint64(maxD[m]-minD) & mask))
		}
		b = append(b, widths[:]...)
		u := uint64(minD)
		for i := range d[:n] {
			d[i] = (d[i] - u) & mask
		}
		// The padding of the last miniblock packs as zeros.
		clear(d[n : minis*deltaMiniSize])
		for m := range minis {
			b = appendPacked32(b, d[m*deltaMiniSize:(m+1)*deltaMiniSize], uint(widths[m]))
		}
	}
	return b, lo, hi
}

//go:generate go run genpack.go

// appendPacked32 appends 32 values of w bits each (every value below
// 1<<w), least significant bit first: 4*w bytes.
func appendPacked32(b []byte, vs []uint64, w uint) []byte {
	if w == 0 {
		return b
	}
	at := len(b)
	b = slicesGrow(b, 4*int(w))[:at+4*int(w)]
	pack32(b[at:], (*[32]uint64)(vs), w)
	return b
}

// appendLevels appends the definition levels of n values, present where
// valid is set (nil: all present), as the RLE/bit-packed hybrid of bit
// width 1 behind its 4-byte length, as a v1 data page holds them: one
// repeated run when every value is present, else one bit-packed run, whose
// bytes are the validity bitmap itself (both number bits from the least
// significant). valid holds n bits from bit 0, its bits past n zero.
func appendLevels(b []byte, n int, valid []byte) []byte {
	at := len(b)
	b = append(b, 0, 0, 0, 0)
	if valid == nil {
		b = appendUvarint(b, uint64(n)<<1)
		b = append(b, 1)
	} else {
		groups := (n + 7) / 8
		b = appendUvarint(b, uint64(groups)<<1|1)
		b = append(b, valid[:groups]...)
	}
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	return b
}

// appendPageHeader appends the Thrift (compact protocol) PageHeader of a
// v1 data page: type, both sizes, and the DataPageHeader with the value
// count (NULLs included), the values' encoding and RLE levels.
func appendPageHeader(b []byte, raw, compressed, values int, enc int32) []byte {
	i32 := func(b []byte, delta byte, v int32) []byte {
		b = append(b, delta<<4|5) // field id delta, type i32
		return appendZigzag(b, int64(v))
	}
	b = i32(b, 1, pageTypeData)
	b = i32(b, 1, int32(raw))
	b = i32(b, 1, int32(compressed))
	b = append(b, 2<<4|12) // field 5 (data_page_header), a struct
	b = i32(b, 1, int32(values))
	b = i32(b, 1, enc)
	b = i32(b, 1, encRLE)
	b = i32(b, 1, encRLE)
	return append(b, 0, 0) // the ends of both structs
}

// Masks of the byte transposition: the low and high 4, 2 and 1 bytes of
// each 8, 4 and 2.
const (
	lo32, hi32 = 0x00000000ffffffff, 0xffffffff00000000
	lo16, hi16 = 0x0000ffff0000ffff, 0xffff0000ffff0000
	lo8, hi8   = 0x00ff00ff00ff00ff, 0xff00ff00ff00ff00
)

// appendStreamSplit appends the BYTE_STREAM_SPLIT encoding of the PLAIN
// values plain, each width bytes: the first bytes of all values, then the
// second bytes, and so on. The high bytes of numbers near each other (a
// double's sign and exponent) then lie side by side, where a codec's
// entropy coder shrinks them, and the random low bytes no longer break
// up its matches.
func appendStreamSplit(dst, plain []byte, width int) []byte {
	n := len(plain) / width
	at := len(dst)
	dst = slicesGrow(dst, len(plain))[:at+len(plain)]
	out := dst[at:]
	switch width {
	case 8:
		o0, o1, o2, o3 := out[:n], out[n:2*n], out[2*n:3*n], out[3*n:4*n]
		o4, o5, o6, o7 := out[4*n:5*n], out[5*n:6*n], out[6*n:7*n], out[7*n:8*n]
		// Eight values at a time are an 8x8 matrix of bytes, transposed in
		// registers (blocks of 4, 2 and 1 bytes swapped across the
		// diagonal) into a word of each stream: 33 instructions a value
		// under cachegrind where a byte at a time took 43.
		i := 0
		for ; i+8 <= n; i += 8 {
			p := plain[i*8 : i*8+64]
			w0, w1, w2, w3 := binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint64(p[8:]), binary.LittleEndian.Uint64(p[16:]), binary.LittleEndian.Uint64(p[24:])
			w4, w5, w6, w7 := binary.LittleEndian.Uint64(p[32:]), binary.LittleEndian.Uint64(p[40:]), binary.LittleEndian.Uint64(p[48:]), binary.LittleEndian.Uint64(p[56:])
			w0, w4 = w0&lo32|w4<<32, w0>>32|w4&hi32
			w1, w5 = w1&lo32|w5<<32, w1>>32|w5&hi32
			w2, w6 = w2&lo32|w6<<32, w2>>32|w6&hi32
			w3, w7 = w3&lo32|w7<<32, w3>>32|w7&hi32
			w0, w2 = w0&lo16|(w2&lo16)<<16, (w0>>16)&lo16|w2&hi16
			w1, w3 = w1&lo16|(w3&lo16)<<16, (w1>>16)&lo16|w3&hi16
			w4, w6 = w4&lo16|(w6&lo16)<<16, (w4>>16)&lo16|w6&hi16
			w5, w7 = w5&lo16|(w7&lo16)<<16, (w5>>16)&lo16|w7&hi16
			w0, w1 = w0&lo8|(w1&lo8)<<8, (w0>>8)&lo8|w1&hi8
			w2, w3 = w2&lo8|(w3&lo8)<<8, (w2>>8)&lo8|w3&hi8
			w4, w5 = w4&lo8|(w5&lo8)<<8, (w4>>8)&lo8|w5&hi8
			w6, w7 = w6&lo8|(w7&lo8)<<8, (w6>>8)&lo8|w7&hi8
			binary.LittleEndian.PutUint64(o0[i:], w0)
			binary.LittleEndian.PutUint64(o1[i:], w1)
			binary.LittleEndian.PutUint64(o2[i:], w2)
			binary.LittleEndian.PutUint64(o3[i:], w3)
			binary.LittleEndian.PutUint64(o4[i:], w4)
			binary.LittleEndian.PutUint64(o5[i:], w5)
			binary.LittleEndian.PutUint64(o6[i:], w6)
			binary.LittleEndian.PutUint64(o7[i:], w7)
		}
		for ; i < n; i++ {
			v := binary.LittleEndian.Uint64(plain[i*8:])
			o0[i], o1[i], o2[i], o3[i] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
			o4[i], o5[i], o6[i], o7[i] = byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
		}
	case 4:
		o0, o1, o2, o3 := out[:n], out[n:2*n], out[2*n:3*n], out[3*n:4*n]
		for i := range n {
			v := binary.LittleEndian.Uint32(plain[i*4:])
			o0[i], o1[i], o2[i], o3[i] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		}
	default:
		for i := range n {
			for k := range width {
				out[k*n+i] = plain[i*width+k]
			}
		}
	}
	return dst
}
