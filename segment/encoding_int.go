package segment

import (
	"encoding/binary"
	"errors"
	"unsafe"
)

// Integer encodings, for int8..int64, date32 and timestamps (width W bytes).
// Null slots hold values that widen no frame and add no odd delta: a run of
// nulls between two values lies on the line between them, leading nulls
// repeat the first value, trailing ones the last, all-null pages hold zero.
// Readers ignore them.
//
//	plain    := | value (W B, LE) | value | ... |                  n values
//	constant := | value (varint) |
//	for      := | min (varint) | bw (1B) | packed (⌈n*bw/8⌉B) |
//	            value[i] = min + packed[i]
//	delta    := | first (varint) | min delta (varint) | bw (1B) |
//	            | packed (⌈(n-1)*bw/8⌉B) |
//	            value[0] = first, value[i] = value[i-1] + min delta + packed[i-1]
//
// The writer computes the size of each and keeps the smallest (plain on a
// tie, as it decodes fastest; then for, then delta). Arithmetic wraps at 64
// bits, so every int64 range packs.

var (
	errBodyLen   = errors.New("body length does not match its encoding")
	errBitWidth  = errors.New("bit width out of range")
	errPadding   = errors.New("non-zero padding bits")
	errValue     = errors.New("value out of range for its type")
	errUnknownEn = errors.New("unknown encoding")
)

func varintLen(v int64) int {
	var b [binary.MaxVarintLen64]byte
	return len(binary.AppendVarint(b[:0], v))
}

// encodeInts appends the smallest encoding of vals (at least one value, null
// slots already filled) to dst. scratch is reused between calls.
func encodeInts(dst []byte, vals []int64, width int, scratch *[]uint64) ([]byte, encoding) {
	n := len(vals)
	lo, hi := vals[0], vals[0]
	for _, v := range vals[1:] {
		lo = min(lo, v)
		hi = max(hi, v)
	}
	if lo == hi {
		return binary.AppendVarint(dst, lo), encConstant
	}
	forBW := bitWidth(uint64(hi) - uint64(lo))
	forSize := varintLen(lo) + 1 + packedLen(n, forBW)

	dlo, dhi := vals[1]-vals[0], vals[1]-vals[0]
	for i := 2; i < n; i++ {
		d := vals[i] - vals[i-1]
		dlo = min(dlo, d)
		dhi = max(dhi, d)
	}
	deltaBW := bitWidth(uint64(dhi) - uint64(dlo))
	deltaSize := varintLen(vals[0]) + varintLen(dlo) + 1 + packedLen(n-1, deltaBW)

	best, size := encPlain, n*width
	if forSize < size {
		best, size = encFOR, forSize
	}
	if deltaSize < size {
		best = encDelta
	}

	s := (*scratch)[:0]
	switch best {
	case encPlain:
		for _, v := range vals {
			dst = appendLE(dst, uint64(v), width)
		}
	case encFOR:
		for _, v := range vals {
			s = append(s, uint64(v)-uint64(lo))
		}
		dst = binary.AppendVarint(dst, lo)
		dst = append(dst, byte(forBW))
		dst = appendPacked(dst, s, forBW)
	case encDelta:
		for i := 1; i < n; i++ {
			s = append(s, uint64(vals[i]-vals[i-1])-uint64(dlo))
		}
		dst = binary.AppendVarint(dst, vals[0])
		dst = binary.AppendVarint(dst, dlo)
		dst = append(dst, byte(deltaBW))
		dst = appendPacked(dst, s, deltaBW)
	}
	*scratch = s
	return dst, best
}

func appendLE(dst []byte, v uint64, width int) []byte {
	switch width {
	case 1:
		return append(dst, byte(v))
	case 2:
		return binary.LittleEndian.AppendUint16(dst, uint16(v))
	case 4:
		return binary.LittleEndian.AppendUint32(dst, uint32(v))
	}
	return binary.LittleEndian.AppendUint64(dst, v)
}

// castSlice views the first n elements of b as a []T. b must be aligned for
// T and hold n elements.
func castSlice[T any](b []byte, n int) []T {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// asBytes views s as bytes.
func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// decodeInts decodes n values of an integer column into out, which holds n
// values of width bytes.
func decodeInts(out []byte, n, width int, enc encoding, src []byte) error {
	switch width {
	case 1:
		return decodeIntsInto(castSlice[int8](out, n), enc, src)
	case 2:
		return decodeIntsInto(castSlice[int16](out, n), enc, src)
	case 4:
		return decodeIntsInto(castSlice[int32](out, n), enc, src)
	}
	return decodeIntsInto(castSlice[int64](out, n), enc, src)
}

func decodeIntsInto[T ~int8 | ~int16 | ~int32 | ~int64](dst []T, enc encoding, src []byte) error {
	return gatherIntsInto(dst, len(dst), enc, src, nil)
}

// parseFOR reads and checks the header of a frame-of-reference body of n
// values of width bytes, and returns its base, bit width and packed values.
func parseFOR(src []byte, n, width int) (base int64, bw uint, packed []byte, err error) {
	d := decoder{src: src}
	base = d.varint()
	bw = uint(d.byte())
	if d.err != nil {
		return 0, 0, nil, d.err
	}
	if bw > uint(width)*8 {
		return 0, 0, nil, errBitWidth
	}
	if len(d.src) != packedLen(n, bw) {
		return 0, 0, nil, errBodyLen
	}
	if !packedTailOK(d.src, n, bw) {
		return 0, 0, nil, errPadding
	}
	return base, bw, d.src, nil
}

// decodeSelected decodes into dst (n int64 values) the values whose bit is
// set in sel from a body of encoding enc: frame-of-reference bodies only
// those, by random access into the packed run; other encodings all of them.
func decodeSelected(dst []int64, enc encoding, src []byte, sel []byte) error {
	if enc != encFOR {
		return decodeIntsInto(dst, enc, src)
	}
	base, bw, packed, err := parseFOR(src, len(dst), 8)
	if err != nil {
		return err
	}
	unpackFORSelected(dst, packed, bw, base, sel)
	return nil
}
