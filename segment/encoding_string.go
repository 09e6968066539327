package segment

import (
	"bytes"
	"encoding/binary"
	"errors"
	"unsafe"
)

// String encodings, for string and binary columns. Null slots are empty
// (plain), index 0 (dict) or the constant.
//
//	plain    := | lengths | bytes (sum of lengths) |
//	constant := | length (uvarint) | bytes |
//	dict     := | entries (uvarint) | lengths of the entries | entry bytes |
//	            | index bw (1B) | indexes packed (⌈n*bw/8⌉B) |
//	lengths  := | min (uvarint) | bw (1B) | packed (length - min) |
//
// Dictionary entries are in order of first appearance and the index width is
// exactly the bits needed for entries-1. The writer builds a dictionary only
// while the distinct values stay at most half the rows, and keeps the smaller
// of dict and plain (plain on a tie).

var (
	errDict    = errors.New("bad dictionary")
	errTooBig  = errors.New("decoded page too large")
	errOffsets = errors.New("lengths do not add up to the bytes")
)

// stringsView is a page of strings: row i is data[ends[i-1]:ends[i]]
// (ends[-1] = 0).
type stringsView struct {
	data []byte
	ends []int32
}

func (s stringsView) value(i int) []byte {
	start := int32(0)
	if i > 0 {
		start = s.ends[i-1]
	}
	return s.data[start:s.ends[i]]
}

// lengthsSize returns the encoded size of lengths whose min and max are lo, hi.
func lengthsSize(n int, lo, hi uint64) int {
	return uvarintLen(lo) + 1 + packedLen(n, bitWidth(hi-lo))
}

func uvarintLen(v uint64) int {
	var b [binary.MaxVarintLen64]byte
	return len(binary.AppendUvarint(b[:0], v))
}

// appendLengths appends lens as "lengths".
func appendLengths(dst []byte, lens []uint64) []byte {
	lo, hi := lens[0], lens[0]
	for _, l := range lens[1:] {
		lo = min(lo, l)
		hi = max(hi, l)
	}
	for i := range lens {
		lens[i] -= lo
	}
	bw := bitWidth(hi - lo)
	dst = binary.AppendUvarint(dst, lo)
	dst = append(dst, byte(bw))
	return appendPacked(dst, lens, bw)
}

// stringEncoder holds the scratch state of string encoding between pages.
type stringEncoder struct {
	dict    map[string]uint32
	entries [][]byte
	idx     []uint64
	lens    []uint64
}

// encodeStrings appends the smallest encoding of s (n ≥ 1 rows).
func (e *stringEncoder) encodeStrings(dst []byte, s stringsView, valid []bool) ([]byte, encoding) {
	n := len(s.ends)
	// constant: all non-null values equal.
	var first []byte
	constant, seen := true, false
	for i := 0; i < n && constant; i++ {
		if !valid[i] {
			continue
		}
		v := s.value(i)
		if !seen {
			first, seen = v, true
		} else if !bytes.Equal(v, first) {
			constant = false
		}
	}
	if constant {
		dst = binary.AppendUvarint(dst, uint64(len(first)))
		return append(dst, first...), encConstant
	}

	// plain size: lengths (0 for nulls) and the bytes.
	var plainLo, plainHi uint64
	total := 0
	for i := 0; i < n; i++ {
		l := uint64(0)
		if valid[i] {
			l = uint64(len(s.value(i)))
		}
		if i == 0 {
			plainLo, plainHi = l, l
		}
		plainLo, plainHi = min(plainLo, l), max(plainHi, l)
		total += int(l)
	}
	plainSize := lengthsSize(n, plainLo, plainHi) + total

	if dictSize, ok := e.buildDict(s, valid); ok && dictSize < plainSize {
		dst = binary.AppendUvarint(dst, uint64(len(e.entries)))
		e.lens = e.lens[:0]
		for _, v := range e.entries {
			e.lens = append(e.lens, uint64(len(v)))
		}
		dst = appendLengths(dst, e.lens)
		for _, v := range e.entries {
			dst = append(dst, v...)
		}
		bw := bitWidth(uint64(len(e.entries) - 1))
		dst = append(dst, byte(bw))
		return appendPacked(dst, e.idx, bw), encDict
	}

	e.lens = e.lens[:0]
	for i := 0; i < n; i++ {
		l := uint64(0)
		if valid[i] {
			l = uint64(len(s.value(i)))
		}
		e.lens = append(e.lens, l)
	}
	dst = appendLengths(dst, e.lens)
	for i := 0; i < n; i++ {
		if valid[i] {
			dst = append(dst, s.value(i)...)
		}
	}
	return dst, encPlain
}

// buildDict fills e.entries and e.idx and returns the dict encoding size, or
// false when there are too many distinct values.
func (e *stringEncoder) buildDict(s stringsView, valid []bool) (int, bool) {
	n := len(s.ends)
	if e.dict == nil {
		e.dict = make(map[string]uint32)
	}
	clear(e.dict)
	e.entries = e.entries[:0]
	e.idx = e.idx[:0]
	limit := n / 2
	entryBytes := 0
	var lo, hi uint64
	for i := 0; i < n; i++ {
		if i == n/8 && n >= 1024 && len(e.entries) > i*7/8 {
			// Nearly every value so far was new (ids, messages): building
			// the rest of the map would be wasted work.
			return 0, false
		}
		if !valid[i] {
			e.idx = append(e.idx, 0)
			continue
		}
		v := s.value(i)
		// The key aliases the staged bytes, which stay unchanged until the
		// map is cleared for the next page: no allocation per value.
		key := unsafe.String(unsafe.SliceData(v), len(v))
		id, ok := e.dict[key]
		if !ok {
			if len(e.entries) >= limit {
				return 0, false
			}

			id = uint32(len(e.entries))
			e.dict[key] = id
			e.entries = append(e.entries, v)
			l := uint64(len(v))
			if id == 0 {
				lo, hi = l, l
			}
			lo, hi = min(lo, l), max(hi, l)
			entryBytes += len(v)
		}
		e.idx = append(e.idx, uint64(id))
	}
	k := len(e.entries)
	if k == 0 {
		return 0, false
	}
	size := uvarintLen(uint64(k)) + lengthsSize(k, lo, hi) + entryBytes + 1 + packedLen(n, bitWidth(uint64(k-1)))
	return size, true
}

// decodeLengths reads "lengths" of n values into offsets (n+1 values,
// offsets[0] = 0) and returns the total.
func decodeLengths(d *decoder, offsets []int32) (int64, error) {
	base := d.uvarint()
	bw := uint(d.byte())
	if d.err != nil {
		return 0, d.err
	}
	if base > maxPageBytes || bw > 32 {
		return 0, errBitWidth
	}
	n := len(offsets) - 1
	packed := d.bytes(packedLen(n, bw))
	if d.err != nil {
		return 0, d.err
	}
	if !packedTailOK(packed, n, bw) {
		return 0, errPadding
	}
	// Lengths are non-negative, so the running sum only grows; it stays far
	// below int64 overflow (n ≤ 2^20 lengths below 2^33). A total within
	// maxPageBytes means every offset fits int32.
	total := unpackDelta(offsets, packed, bw, 0, int64(base))
	if total > maxPageBytes {
		return 0, errTooBig
	}
	return total, nil
}

// plainStrings reads the lengths of a plain string body into offsets (n+1
// values) and returns the values, the rest of src.
func plainStrings(offsets []int32, src []byte) ([]byte, error) {
	d := decoder{src: src}
	total, err := decodeLengths(&d, offsets)
	if err != nil {
		return nil, err
	}
	if total != int64(len(d.src)) {
		return nil, errOffsets
	}
	return d.src, nil
}

// decodeStrings decodes n strings. offsets must hold n+1 values; allocData
// returns the value buffer once its size is known.
func decodeStrings(offsets []int32, enc encoding, src []byte, allocData func(int) []byte, sc *scratch) error {
	n := len(offsets) - 1
	switch enc {
	case encPlain:
		vals, err := plainStrings(offsets, src)
		if err != nil {
			return err
		}
		copy(allocData(len(vals)), vals)
		return nil
	case encConstant:
		d := decoder{src: src}
		l := d.uvarint()
		if d.err != nil {
			return d.err
		}
		if l != uint64(len(d.src)) {
			return errBodyLen
		}
		if uint64(n)*l > maxPageBytes {
			return errTooBig
		}
		for i := range offsets {
			offsets[i] = int32(uint64(i) * l)
		}
		fillRepeat(allocData(n*int(l)), d.src)
		return nil
	case encDict:
		d := decoder{src: src}
		k := d.uvarint()
		if d.err != nil {
			return d.err
		}
		if k == 0 || k > uint64(n) {
			return errDict
		}
		dictOff := sc.int32s(int(k) + 1)
		total, err := decodeLengths(&d, dictOff)
		if err != nil {
			return err
		}
		entries := d.bytes(int(total))
		bw := uint(d.byte())
		if d.err != nil {
			return d.err
		}
		if bw != bitWidth(k-1) {
			return errDict
		}
		if len(d.src) != packedLen(n, bw) {
			return errBodyLen
		}
		if !packedTailOK(d.src, n, bw) {
			return errPadding
		}
		idx := sc.uint32s(n)
		unpackFOR(idx, d.src, bw, 0)
		var acc int64
		offsets[0] = 0
		kk := uint32(k)
		for i, j := range idx {
			if j >= kk {
				return errDict
			}
			acc += int64(dictOff[j+1] - dictOff[j])
			offsets[i+1] = int32(acc)
		}
		if acc > maxPageBytes {
			return errTooBig
		}
		data := allocData(int(acc))
		if maxLen := maxEntryLen(dictOff); maxLen <= 16 {
			copyShortEntries(data, offsets, idx, dictOff, entries, sc)
			return nil
		}
		for i, j := range idx {
			copy(data[offsets[i]:offsets[i+1]], entries[dictOff[j]:dictOff[j+1]])
		}
		return nil
	}
	return errUnknownEn
}

// fillRepeat fills dst with copies of v (len(dst) a multiple of len(v)).
func fillRepeat(dst, v []byte) {
	if len(v) == 0 || len(dst) == 0 {
		return
	}
	n := copy(dst, v)
	for n < len(dst) {
		n += copy(dst[n:], dst[:n])
	}
}

func maxEntryLen(off []int32) int32 {
	var m int32
	for i := 1; i < len(off); i++ {
		m = max(m, off[i]-off[i-1])
	}
	return m
}

// copyShortEntries materialises dictionary entries of at most 16 bytes with
// one 16-byte move each instead of a call to memmove: a move may write past
// the value, into the next one (written afterwards) or into the 16 bytes of
// slack that allocData leaves after the data, and reads from a copy of the
// entries padded likewise.
func copyShortEntries(data []byte, offsets []int32, idx []uint32, dictOff []int32, entries []byte, sc *scratch) {
	if cap(data)-len(data) < 16 || len(data) == 0 {
		for i, j := range idx {
			copy(data[offsets[i]:offsets[i+1]], entries[dictOff[j]:dictOff[j+1]])
		}
		return
	}
	// entries may live in sc.body (a decompressed chunk): pad a copy in a
	// buffer of its own.
	sc.pad = grow(sc.pad, len(entries)+16)
	padded := sc.pad
	copy(padded, entries)
	clear(padded[len(entries):])
	dst := unsafe.Pointer(unsafe.SliceData(data))
	src := unsafe.Pointer(unsafe.SliceData(padded))
	for i, j := range idx {
		*(*[16]byte)(unsafe.Add(dst, offsets[i])) = *(*[16]byte)(unsafe.Add(src, dictOff[j]))
	}
}
