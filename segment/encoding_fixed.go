package segment

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Fixed-width encodings without arithmetic, for float32/64 and decimal128
// (W = 4, 8 or 16 bytes, little-endian as in Arrow), and booleans.
//
//	plain    := | value (W B) | value | ... |          n values
//	constant := | value (W B) |
//
//	bool bitmap   := | bits (⌈n/8⌉B, LSB first, unused high bits zero) |
//	bool constant := | value (1B, 0 or 1) |
//
// Null slots hold the nearest earlier value, as for integers, so a column
// whose non-null values are all equal is constant.

// encodeFixed appends the encoding of n values of width bytes held in raw.
func encodeFixed(dst, raw []byte, width int) ([]byte, encoding) {
	first := raw[:width]
	for i := width; i < len(raw); i += width {
		if !bytes.Equal(raw[i:i+width], first) {
			return append(dst, raw...), encPlain
		}
	}
	return append(dst, first...), encConstant
}

// decodeFixed decodes into out, which holds len(out)/width values.
func decodeFixed(out []byte, width int, enc encoding, src []byte) error {
	n := len(out) / width
	return gatherFixedWidth(out, n, width, n, enc, src, nil)
}

// encodeBools appends the encoding of vals (0 or 1 each).
func encodeBools(dst []byte, vals []int64) ([]byte, encoding) {
	constant := true
	for _, v := range vals[1:] {
		if v != vals[0] {
			constant = false
			break
		}
	}
	if constant {
		return append(dst, byte(vals[0])), encConstant
	}
	return appendBitmap(dst, len(vals), func(i int) bool { return vals[i] != 0 }), encBitmap
}

// appendBitmap appends n bits, LSB first.
func appendBitmap(dst []byte, n int, bit func(i int) bool) []byte {
	for i := 0; i < n; i += 8 {
		var b byte
		for j := 0; j < 8 && i+j < n; j++ {
			if bit(i + j) {
				b |= 1 << j
			}
		}
		dst = append(dst, b)
	}
	return dst
}

// bitmapTailOK reports whether the bits past n of a bitmap are zero.
func bitmapTailOK(bm []byte, n int) bool {
	if n%8 == 0 {
		return true
	}
	return bm[len(bm)-1]>>(n%8) == 0
}

// popcount counts the set bits of bm.
func popcount(bm []byte) int {
	c := 0
	for len(bm) >= 8 {
		c += bits.OnesCount64(binary.LittleEndian.Uint64(bm))
		bm = bm[8:]
	}
	for _, b := range bm {
		c += bits.OnesCount8(b)
	}
	return c
}

// decodeBools decodes n booleans into the bitmap out (⌈n/8⌉ bytes).
func decodeBools(out []byte, n int, enc encoding, src []byte) error {
	switch enc {
	case encBitmap:
		if len(src) != len(out) {
			return errBodyLen
		}
		if !bitmapTailOK(src, n) {
			return errPadding
		}
		copy(out, src)
		return nil
	case encConstant:
		if len(src) != 1 {
			return errBodyLen
		}
		switch src[0] {
		case 0:
			clear(out)
		case 1:
			setBits(out, n)
		default:
			return errValue
		}
		return nil
	}
	return errUnknownEn
}

// setBits sets the first n bits of bm and clears the rest.
func setBits(bm []byte, n int) {
	clear(bm)
	full := n / 8
	for i := range bm[:full] {
		bm[i] = 0xff
	}
	if n%8 != 0 {
		bm[full] = 1<<(n%8) - 1
	}
}
