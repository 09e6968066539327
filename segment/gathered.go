package segment

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/internal/gather"
)

// ReadPageGathered is ReadPage followed by a filter of the rows whose bit is
// set in sel (a bitmap of the page's rows, selected of them set), in one
// pass: the selected values are decoded straight into the output array, the
// others never written. A scan returning the live half of a page then
// writes each value once instead of decoding the page into an array, reading
// it back and writing half of it again. The array holds the selected rows
// in order, offset 0, with a validity bitmap only when some of them is NULL
// (the rows, validity and null count a filter of ReadPage's array gives).
//
// Integer, date-time, floating-point, string and binary columns are
// gathered so, of every encoding (a string page's lengths and values are
// decoded into buffers of the Reader's, the selected ones copied out); for
// booleans and decimals it returns nil and no error, and the caller reads
// the page with ReadPage and filters it. Checks and errors are those of
// ReadPage.
func (r *Reader) ReadPageGathered(mem memory.Allocator, col, p int, sel []byte, selected int) (arrow.Array, error) {
	if col < 0 || col >= len(r.f.cols) || p < 0 || p >= len(r.f.pages) {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "segment %s: column %d page %d out of range (%d columns, %d pages)", r.name, col, p, len(r.f.cols), len(r.f.pages))
	}
	ct := r.f.cols[col]
	if ct.kind != kindInt && ct.kind != kindFloat && ct.kind != kindBytes {
		return nil, nil
	}
	n := r.f.pages[p]
	if len(sel) < (n+7)/8 {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "segment %s: ReadPageGathered of page %d: a selection of %d bytes for %d rows", r.name, p, len(sel), n)
	}
	if got := popcountBits(sel, n); got != selected {
		// The kernels write selected values: a wrong count would run
		// past the output or leave part of it unwritten.
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "segment %s: ReadPageGathered of page %d: %d rows selected, the selection has %d", r.name, p, selected, got)
	}
	c := r.f.chunk(col, p)
	sc := scratchPool.Get().(*scratch)
	defer sc.release()
	body, err := r.readChunk(c, sc)
	if err != nil {
		return nil, r.pageError(col, p, err)
	}
	arr, err := gatherChunk(mem, ct, n, int(c.zone.NullCount), c.enc, body, sel, selected, sc)
	if err != nil {
		return nil, r.corrupt(fmt.Sprintf("page %d column %d (%s)", p, col, r.f.schema.Field(col).Name), err)
	}
	return arr, nil
}

// gatherChunk decodes the selected rows of a chunk body of n rows of an
// integer, floating-point, string or binary column into an Arrow array;
// the body is checked as decodeChunk checks it.
func gatherChunk(mem memory.Allocator, ct colType, n, nulls int, enc encoding, body, sel []byte, selected int, sc *scratch) (arrow.Array, error) {
	var bufs [3]*memory.Buffer
	release := func() {
		for _, b := range bufs {
			if b != nil {
				b.Release()
			}
		}
	}
	outNulls := 0
	switch {
	case nulls == 0:
	case nulls == n:
		if selected > 0 {
			bufs[0] = newBuffer(mem, (selected+7)/8)
			clear(bufs[0].Bytes())
			outNulls = selected
		}
	default:
		bm, rest, err := splitValidity(body, n, nulls)
		if err != nil {
			return nil, err
		}
		body = rest
		bufs[0] = newBuffer(mem, (selected+7)/8)
		if outNulls = selected - gather.Bits(bufs[0].Bytes(), bm, 0, sel, n); outNulls == 0 {
			bufs[0].Release()
			bufs[0] = nil
		}
	}
	nbufs := 2
	var err error
	switch {
	case ct.kind == kindBytes:
		nbufs = 3
		bufs[1], bufs[2], err = gatherStrings(mem, n, enc, body, sel, selected, sc)
	case ct.kind == kindInt:
		bufs[1] = newBuffer(mem, selected*ct.width)
		err = gatherInts(bufs[1].Bytes(), selected, ct.width, n, enc, body, sel)
	case enc == encScaled && ct.width == 8:
		bufs[1] = newBuffer(mem, selected*ct.width)
		err = gatherScaled(bufs[1].Bytes(), selected, n, body, sel)
	default:
		bufs[1] = newBuffer(mem, selected*ct.width)
		err = gatherFixedWidth(bufs[1].Bytes(), selected, ct.width, n, enc, body, sel)
	}
	if err != nil {
		release()
		return nil, err
	}
	data := array.NewData(ct.dt, selected, bufs[:nbufs], nil, outNulls, 0)
	release()
	arr := array.MakeFromData(data)
	data.Release()
	return arr, nil
}

// gatherStrings decodes the selected rows of a string or binary body of n
// rows (its validity split off) into new offset and value buffers. The
// page's lengths and values are decoded into sc, not into an array of the
// page: a plain page's values are copied once, from where the chunk was
// decompressed into the output.
func gatherStrings(mem memory.Allocator, n int, enc encoding, body, sel []byte, selected int, sc *scratch) (*memory.Buffer, *memory.Buffer, error) {
	sc.sel32 = grow(sc.sel32, n+1)
	offs := sc.sel32
	var vals []byte
	var err error
	if enc == encPlain {
		vals, err = plainStrings(offs, body)
	} else {
		err = decodeStrings(offs, enc, body, func(size int) []byte {
			// 16 bytes of slack for copyShortEntries.
			sc.strs = grow(sc.strs, size+16)
			return sc.strs[: size : size+16]
		}, sc)
		if err == nil {
			vals = sc.strs[:offs[n]]
		}
	}
	if err != nil {
		return nil, nil, err
	}
	ob := newBuffer(mem, (selected+1)*4)
	total := int(gather.Offsets(castSlice[int32](ob.Bytes(), selected+1), offs[:n+1], sel, n))
	db := memory.NewResizableBuffer(mem)
	if total == 0 {
		// Every value empty (a buffer resized to 0 holds no bytes).
		return ob, db, nil
	}
	db.Reserve(total + gather.Slack)
	db.Resize(total)
	gather.Bytes(db.Buf()[:total+gather.Slack], vals, offs[:n+1], sel, n)
	return ob, db, nil
}

// gatherInts decodes into out, which holds selected values of width bytes,
// the selected rows of an integer body of n rows.
func gatherInts(out []byte, selected, width, n int, enc encoding, src, sel []byte) error {
	switch width {
	case 1:
		return gatherIntsInto(castSlice[int8](out, selected), n, enc, src, sel)
	case 2:
		return gatherIntsInto(castSlice[int16](out, selected), n, enc, src, sel)
	case 4:
		return gatherIntsInto(castSlice[int32](out, selected), n, enc, src, sel)
	}
	return gatherIntsInto(castSlice[int64](out, selected), n, enc, src, sel)
}

// gatherIntsInto decodes the rows of n whose bit is set in sel, stored in
// order into dst (one slot per selected row); a nil sel selects every row
// (decodeIntsInto), so that both reads make the same checks.
func gatherIntsInto[T ~int8 | ~int16 | ~int32 | ~int64](dst []T, n int, enc encoding, src, sel []byte) error {
	width := int(unsafe.Sizeof(T(0)))
	fits := func(v int64) bool { return int64(T(v)) == v }
	switch enc {
	case encPlain:
		if len(src) != n*width {
			return errBodyLen
		}
		if sel == nil {
			copy(asBytes(dst), src)
		} else {
			gatherPlain(dst, src, sel, n)
		}
		return nil
	case encConstant:
		v, k := binary.Varint(src)
		if k <= 0 || k != len(src) {
			return errBodyLen
		}
		if !fits(v) {
			return errValue
		}
		t := T(v)
		for i := range dst {
			dst[i] = t
		}
		return nil
	case encFOR:
		base, bw, packed, err := parseFOR(src, n, width)
		if err != nil {
			return err
		}
		if !fits(base) {
			return errValue
		}
		if sel == nil {
			unpackFOR(dst, packed, bw, base)
		} else {
			unpackFORGathered(dst, packed, bw, base, sel, n)
		}
		return nil
	case encDelta:
		first, minDelta, bw, packed, err := parseDelta(src, n, fits)
		if err != nil {
			return err
		}
		if sel == nil {
			unpackDelta(dst, packed, bw, first, minDelta)
		} else {
			unpackDeltaGathered(dst, packed, bw, first, minDelta, sel, n)
		}
		return nil
	}
	return errUnknownEn
}

// gatherScaled decodes the selected rows of n of a scaled body, stored in
// order into out (selected float64 values); a nil sel selects every row
// (decodeScaled).
func gatherScaled(out []byte, selected, n int, src, sel []byte) error {
	if len(src) < 2 {
		return errBodyLen
	}
	e, inner := int(src[0]), encoding(src[1])
	if e > maxScaleExp {
		return errValue
	}
	switch inner {
	case encPlain, encConstant, encFOR, encDelta:
	default:
		return errUnknownEn
	}
	ints := castSlice[int64](out, selected)
	if err := gatherIntsInto(ints, n, inner, src[2:], sel); err != nil {
		return err
	}
	// In place, over the selected values alone, which the gather has
	// just left in the core's cache.
	floats := castSlice[float64](out, selected)
	p := pow10[e]
	for i, v := range ints {
		floats[i] = float64(v) / p
	}
	return nil
}

// gatherFixedWidth decodes the selected rows of n of a plain or constant body
// of fixed-width values, stored in order into out. A nil sel selects every
// row (decodeFixed), of any width; a selection gathers 4- and 8-byte
// values (FLOAT, DOUBLE).
func gatherFixedWidth(out []byte, selected, width, n int, enc encoding, src, sel []byte) error {
	switch enc {
	case encPlain:
		if len(src) != n*width {
			return errBodyLen
		}
		if sel == nil {
			copy(out, src)
		} else if width == 4 {
			gatherPlain(castSlice[uint32](out, selected), src, sel, n)
		} else {
			gatherPlain(castSlice[uint64](out, selected), src, sel, n)
		}
		return nil
	case encConstant:
		if len(src) != width {
			return errBodyLen
		}
		fillRepeat(out, src)
		return nil
	}
	return errUnknownEn
}

// gatherPlain copies into dst, in order, value i of the little-endian values
// of src (n of them, of dst's width, at any alignment) for every row i whose
// bit is set in sel.
func gatherPlain[T integer](dst []T, src, sel []byte, n int) {
	if len(dst) == 0 {
		return
	}
	w := int(unsafe.Sizeof(T(0)))
	out := asBytes(dst)
	p := unsafe.Pointer(unsafe.SliceData(src))
	j := 0
	for i0 := 0; i0 < n; i0 += 64 {
		m := min(64, n-i0)
		word := gather.Word(sel, i0, m)
		if word == ^uint64(0) {
			j += copy(out[j*w:], src[i0*w:(i0+64)*w]) / w
			continue
		}
		for ; word != 0; word &= word - 1 {
			i := i0 + bits.TrailingZeros64(word)
			dst[j] = *(*T)(unsafe.Add(p, i*w))
			j++
		}
	}
}

// parseDelta reads and checks the header of a delta body of n values, whose
// first value must fit the column (fits), and returns its first value,
// minimum delta, bit width and packed deltas.
func parseDelta(src []byte, n int, fits func(int64) bool) (first, minDelta int64, bw uint, packed []byte, err error) {
	d := decoder{src: src}
	first = d.varint()
	minDelta = d.varint()
	bw = uint(d.byte())
	if d.err != nil {
		return 0, 0, 0, nil, d.err
	}
	if bw > 64 {
		return 0, 0, 0, nil, errBitWidth
	}
	if n == 0 || !fits(first) {
		return 0, 0, 0, nil, errValue
	}
	if len(d.src) != packedLen(n-1, bw) {
		return 0, 0, 0, nil, errBodyLen
	}
	if !packedTailOK(d.src, n-1, bw) {
		return 0, 0, 0, nil, errPadding
	}
	return first, minDelta, bw, d.src, nil
}

// unpackFORGathered is unpackFOR of the rows below n whose bit is set in sel,
// stored in order into dst (one slot per selected row): each is loaded
// where it lies in src, and a word of 64 rows all selected takes unpackFOR's
// loop straight into dst.
func unpackFORGathered[T integer](dst []T, src []byte, bw uint, base int64, sel []byte, n int) {
	if bw == 0 {
		v := T(base)
		for i := range dst {
			dst[i] = v
		}
		return
	}
	nf := fastCount(n, len(src), bw)
	var p unsafe.Pointer
	if len(src) > 0 {
		p = unsafe.Pointer(unsafe.SliceData(src))
	}
	var mask uint64 = 1<<bw - 1
	if bw == 64 {
		mask = ^uint64(0)
	}
	out := unsafe.Pointer(unsafe.SliceData(dst))
	size := unsafe.Sizeof(T(0))
	// Eight values take bw bytes (see rangeFOR).
	o1, o2, o3, o4, o5, o6, o7 := bw>>3, 2*bw>>3, 3*bw>>3, 4*bw>>3, 5*bw>>3, 6*bw>>3, 7*bw>>3
	s1, s2, s3, s4, s5, s6, s7 := bw&7, 2*bw&7, 3*bw&7, 4*bw&7, 5*bw&7, 6*bw&7, 7*bw&7
	j := 0
	for i0 := 0; i0 < n; i0 += 64 {
		m := min(64, n-i0)
		word := gather.Word(sel, i0, m)
		if word == ^uint64(0) {
			// 64 values from a byte: i0 is a multiple of 8.
			unpackFOR(dst[j:j+64:j+64], src[uint(i0)*bw>>3:], bw, base)
			j += 64
			continue
		}
		bit0 := uint(i0) * bw
		if i0+m <= nf {
			if c := bits.OnesCount64(word); c > denseWord && j+c < len(dst) {
				// Dense: every row stored, j advanced by its bit, as
				// unpackDeltaGathered's loop does.
				q := unsafe.Add(p, bit0>>3)
				w := word
				for range 8 {
					*(*T)(unsafe.Add(out, uintptr(j)*size)) = T(base + int64(*(*uint64)(q)&mask))
					j += int(w & 1)
					*(*T)(unsafe.Add(out, uintptr(j)*size)) = T(base + int64(*(*uint64)(unsafe.Add(q, o1))>>s1&mask))
					j += int(w >> 1 & 1)
					*(*T)(unsafe.Add(out, uintptr(j)*size)) = T(base + int64(*(*uint64)(unsafe.Add(q, o2))>>s2&mask))
					j += int(w >> 2 & 1)
					*(*T)(unsafe.Add(out, uintptr(j)*size)) = T(base + int64(*(*uint64)(unsafe.Add(q, o3))>>s3&mask))
					j += int(w >> 3 & 1)
					*(*T)(unsafe.Add(out, uintptr(j)*size)) = T(base + int64(*(*uint64)(unsafe.Add(q, o4))>>s4&mask))
					j += int(w >> 4 & 1)
					*(*T)(unsafe.Add(out, uintptr(j)*size)) = T(base + int64(*(*uint64)(unsafe.Add(q, o5))>>s5&mask))
					j += int(w >> 5 & 1)
					*(*T)(unsafe.Add(out, uintptr(j)*size)) = T(base + int64(*(*uint64)(unsafe.Add(q, o6))>>s6&mask))
					j += int(w >> 6 & 1)
					*(*T)(unsafe.Add(out, uintptr(j)*size)) = T(base + int64(*(*uint64)(unsafe.Add(q, o7))>>s7&mask))
					j += int(w >> 7 & 1)
					w >>= 8
					q = unsafe.Add(q, bw)
				}
				continue
			}
			for ; word != 0; word &= word - 1 {
				b := bit0 + uint(bits.TrailingZeros64(word))*bw
				dst[j] = T(base + int64(*(*uint64)(unsafe.Add(p, b>>3))>>(b&7)&mask))
				j++
			}
			continue
		}
		for ; word != 0; word &= word - 1 {
			i := i0 + bits.TrailingZeros64(word)
			b := uint(i) * bw
			if i < nf {
				dst[j] = T(base + int64(*(*uint64)(unsafe.Add(p, b>>3))>>(b&7)&mask))
			} else {
				dst[j] = T(base + int64(readBits(src, b, bw)))
			}
			j++
		}
	}
}

// unpackDeltaGathered is unpackDelta of the rows below n whose bit is set in
// sel, stored in order into dst (one slot per selected row). The prefix sum
// runs over every row. Where one load reads a value, every row's value is
// stored at dst[j] and j advances by the row's bit, with no branch: the
// next row overwrites an unselected one, so a word's stores reach one slot
// past its selected rows, and a word runs so only while that slot lies
// within dst. The rest go 64 rows at a time through unpackDelta into a
// buffer on the stack, whose selected values are copied out.
func unpackDeltaGathered[T integer](dst []T, src []byte, bw uint, first, minDelta int64, sel []byte, n int) {
	if bw == 0 {
		// An arithmetic sequence (a key, a clock's ticks): row i is
		// first + i × minDelta, as the repeated sum wraps.
		j := 0
		for i0 := 0; i0 < n; i0 += 64 {
			m := min(64, n-i0)
			word := gather.Word(sel, i0, m)
			if word == ^uint64(0) {
				d := dst[j : j+64 : j+64]
				v := first + int64(i0)*minDelta
				for k := range d {
					d[k] = T(v)
					v += minDelta
				}
				j += 64
				continue
			}
			for ; word != 0; word &= word - 1 {
				dst[j] = T(first + int64(i0+bits.TrailingZeros64(word))*minDelta)
				j++
			}
		}
		return
	}
	j := 0
	if sel[0]&1 != 0 {
		dst[0] = T(first)
		j = 1
	}
	acc := first
	// Row k+1 is packed value k: a block of rows k0+1 to k0+64 has its
	// packed values from a byte, as k0 is a multiple of 64.
	k0 := 0
	if nf := fastCount(n-1, len(src), bw); bw > 0 && nf >= 64 && len(dst) > 0 {
		p := unsafe.Pointer(unsafe.SliceData(src))
		out := unsafe.Pointer(unsafe.SliceData(dst))
		size := unsafe.Sizeof(T(0))
		mask := uint64(1)<<bw - 1
		// Eight values take bw bytes (see rangeFOR).
		o1, o2, o3, o4, o5, o6, o7 := bw>>3, 2*bw>>3, 3*bw>>3, 4*bw>>3, 5*bw>>3, 6*bw>>3, 7*bw>>3
		s1, s2, s3, s4, s5, s6, s7 := bw&7, 2*bw&7, 3*bw&7, 4*bw&7, 5*bw&7, 6*bw&7, 7*bw&7
		for ; k0+64 <= nf; k0 += 64 {
			word := gather.From(sel, k0+1, 64)
			if word == 0 {
				acc = sumDeltas(acc, src[uint(k0)*bw>>3:], bw, minDelta)
				continue
			}
			if j+bits.OnesCount64(word) >= len(dst) {
				break // the last selected rows: no slot past them
			}
			q := unsafe.Add(p, uint(k0)*bw>>3)
			for range 8 {
				acc += minDelta + int64(*(*uint64)(q)&mask)
				*(*T)(unsafe.Add(out, uintptr(j)*size)) = T(acc)
				j += int(word & 1)
				acc += minDelta + int64(*(*uint64)(unsafe.Add(q, o1))>>s1&mask)
				*(*T)(unsafe.Add(out, uintptr(j)*size)) = T(acc)
				j += int(word >> 1 & 1)
				acc += minDelta + int64(*(*uint64)(unsafe.Add(q, o2))>>s2&mask)
				*(*T)(unsafe.Add(out, uintptr(j)*size)) = T(acc)
				j += int(word >> 2 & 1)
				acc += minDelta + int64(*(*uint64)(unsafe.Add(q, o3))>>s3&mask)
				*(*T)(unsafe.Add(out, uintptr(j)*size)) = T(acc)
				j += int(word >> 3 & 1)
				acc += minDelta + int64(*(*uint64)(unsafe.Add(q, o4))>>s4&mask)
				*(*T)(unsafe.Add(out, uintptr(j)*size)) = T(acc)
				j += int(word >> 4 & 1)
				acc += minDelta + int64(*(*uint64)(unsafe.Add(q, o5))>>s5&mask)
				*(*T)(unsafe.Add(out, uintptr(j)*size)) = T(acc)
				j += int(word >> 5 & 1)
				acc += minDelta + int64(*(*uint64)(unsafe.Add(q, o6))>>s6&mask)
				*(*T)(unsafe.Add(out, uintptr(j)*size)) = T(acc)
				j += int(word >> 6 & 1)
				acc += minDelta + int64(*(*uint64)(unsafe.Add(q, o7))>>s7&mask)
				*(*T)(unsafe.Add(out, uintptr(j)*size)) = T(acc)
				j += int(word >> 7 & 1)
				word >>= 8
				q = unsafe.Add(q, bw)
			}
		}
	}
	var tmp [65]T // tmp[0] is row k0's value, tmp[1:] rows k0+1 to k0+64
	for ; k0 < n-1; k0 += 64 {
		m := min(64, n-1-k0)
		word := gather.From(sel, k0+1, m)
		if word == 0 {
			if m < 64 {
				break // the last rows, none kept
			}
			acc = sumDeltas(acc, src[uint(k0)*bw>>3:], bw, minDelta)
			continue
		}
		acc = unpackDelta(tmp[:m+1], src[uint(k0)*bw>>3:], bw, acc, minDelta)
		if word == ^uint64(0) {
			j += copy(dst[j:], tmp[1:65])
			continue
		}
		for ; word != 0; word &= word - 1 {
			dst[j] = tmp[1+bits.TrailingZeros64(word)]
			j++
		}
	}
}

// sumDeltas returns acc plus 64 deltas of minDelta plus the packed values
// of src (at least 64 of bw bits), wrapping: 64 rows of a delta body none of
// which is selected.
func sumDeltas(acc int64, src []byte, bw uint, minDelta int64) int64 {
	acc += 64 * minDelta
	if bw == 0 {
		return acc
	}
	if fastCount(64, len(src), bw) == 64 {
		p := unsafe.Pointer(unsafe.SliceData(src))
		mask := uint64(1)<<bw - 1
		var s0, s1 uint64
		for b := uint(0); b < 64*bw; b += 2 * bw {
			s0 += *(*uint64)(unsafe.Add(p, b>>3)) >> (b & 7) & mask
			b1 := b + bw
			s1 += *(*uint64)(unsafe.Add(p, b1>>3)) >> (b1 & 7) & mask
		}
		return acc + int64(s0+s1)
	}
	for i := uint(0); i < 64; i++ {
		acc += int64(readBits(src, i*bw, bw))
	}
	return acc
}

// denseWord is the number of selected rows of 64 above which a word of a
// frame-of-reference page is unpacked whole rather than row by row.
const denseWord = 24
