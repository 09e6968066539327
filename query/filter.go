package query

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/internal/gather"
)

// Filtering a page by its selection bitmap is on the path of every scan
// that returns columns, so fixed-width, boolean and string columns are
// gathered here directly from the bitmap's set bits, without building
// index arrays; other types go through Arrow's compute filter. The gathers
// avoid a branch or a call per row where they can: bitmaps (validity,
// booleans) are packed a mask word at a time, short strings moved as
// fixed-size blocks into slack past the data (never part of the array's
// length; package gather, which segment's gathered reads share),
// fixed-width values taken from two mask words at once.

// eachSet calls fn for every set bit of the first n bits of mask.
func eachSet(mask []byte, n int, fn func(i int)) {
	full := n / 64
	for w := 0; w < full; w++ {
		word := uint64(mask[w*8]) | uint64(mask[w*8+1])<<8 | uint64(mask[w*8+2])<<16 | uint64(mask[w*8+3])<<24 |
			uint64(mask[w*8+4])<<32 | uint64(mask[w*8+5])<<40 | uint64(mask[w*8+6])<<48 | uint64(mask[w*8+7])<<56
		for word != 0 {
			b := bits.TrailingZeros64(word)
			fn(w*64 + b)
			word &= word - 1
		}
	}
	for i := full * 64; i < n; i++ {
		if bitutil.BitIsSet(mask, i) {
			fn(i)
		}
	}
}

// gatherFixed copies src[i] for every set bit i, in order, into dst. The
// word loop is written out here rather than through eachSet: a closure call
// per row was most of its cost.
func gatherFixed[T any](dst, src []T, mask []byte, n int) {
	j := 0
	full := n / 64
	w := 0
	// Two words at once: the loop over a word's set bits is bound by the
	// chain of clearing its lowest bit, one row per two cycles; two
	// independent chains, the second word's rows written from where the
	// first's end, keep twice as many rows in flight.
	for ; w+1 < full; w += 2 {
		a := binary.LittleEndian.Uint64(mask[w*8:])
		b := binary.LittleEndian.Uint64(mask[w*8+8:])
		if a == ^uint64(0) || b == ^uint64(0) {
			j = gatherWord(dst, src, a, w*64, j)
			j = gatherWord(dst, src, b, w*64+64, j)
			continue
		}
		sa, sb := (*[64]T)(src[w*64:]), (*[64]T)(src[w*64+64:])
		ja, jb := j, j+bits.OnesCount64(a)
		j = jb + bits.OnesCount64(b)
		for a != 0 && b != 0 {
			dst[ja] = sa[bits.TrailingZeros64(a)&63]
			dst[jb] = sb[bits.TrailingZeros64(b)&63]
			ja++
			jb++
			a &= a - 1
			b &= b - 1
		}
		for ; a != 0; a &= a - 1 {
			dst[ja] = sa[bits.TrailingZeros64(a)&63]
			ja++
		}
		for ; b != 0; b &= b - 1 {
			dst[jb] = sb[bits.TrailingZeros64(b)&63]
			jb++
		}
	}
	for ; w < full; w++ {
		j = gatherWord(dst, src, binary.LittleEndian.Uint64(mask[w*8:]), w*64, j)
	}
	for i := full * 64; i < n; i++ {
		if bitutil.BitIsSet(mask, i) {
			dst[j] = src[i]
			j++
		}
	}
}

// gatherWord copies to dst from j on the rows of src from base on
// selected by word, and returns where it stopped.
func gatherWord[T any](dst, src []T, word uint64, base, j int) int {
	if word == ^uint64(0) {
		return j + copy(dst[j:], src[base:base+64])
	}
	for ; word != 0; word &= word - 1 {
		dst[j] = src[base+bits.TrailingZeros64(word)]
		j++
	}
	return j
}

// filterValidity returns the validity bitmap of the selected rows of a, or
// nil when none of them is NULL.
func filterValidity(mem memory.Allocator, a arrow.Array, mask []byte, n, selected int) (*memory.Buffer, int) {
	if a.NullN() == 0 {
		return nil, 0
	}
	buf := newBitsBuffer(mem, selected)
	nulls := selected - gather.Bits(buf.Bytes(), a.NullBitmapBytes(), a.Data().Offset(), mask, n)
	if nulls == 0 {
		buf.Release()
		return nil, 0
	}
	return buf, nulls
}

// newBitsBuffer returns a buffer of n bits, for gather.Bits to fill.
func newBitsBuffer(mem memory.Allocator, n int) *memory.Buffer {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	return buf
}

// filterArray returns the rows of a (n long) whose bits are set in mask.
func filterArray(ctx context.Context, mem memory.Allocator, a arrow.Array, mask []byte, n, selected int) (arrow.Array, error) {
	d := a.Data()
	off := d.Offset()
	var width int
	switch a.DataType().ID() {
	case arrow.INT64, arrow.TIMESTAMP, arrow.FLOAT64:
		width = 8
	case arrow.INT32, arrow.DATE32, arrow.FLOAT32:
		width = 4
	case arrow.INT16:
		width = 2
	case arrow.INT8:
		width = 1
	case arrow.STRING, arrow.BINARY:
		return filterBytes(mem, a, mask, n, selected), nil
	case arrow.BOOL:
		// Not through compute: arrow-go's filter of booleans with NULLs
		// drops the validity of the rows after the first it keeps.
		return filterBools(mem, a.(*array.Boolean), mask, n, selected), nil
	default:
		m := array.NewBoolean(n, memory.NewBufferBytes(mask), nil, 0)
		defer m.Release()
		return compute.FilterArray(ctx, a, m, *compute.DefaultFilterOptions())
	}
	valid, nulls := filterValidity(mem, a, mask, n, selected)
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(selected * width)
	var src []byte
	if b := d.Buffers()[1]; b != nil { // nil in an array of no rows
		src = b.Bytes()
	}
	dst := vals.Bytes()
	switch width {
	case 8:
		gatherFixed(arrow.Int64Traits.CastFromBytes(dst), arrow.Int64Traits.CastFromBytes(src)[off:off+n], mask, n)
	case 4:
		gatherFixed(arrow.Int32Traits.CastFromBytes(dst), arrow.Int32Traits.CastFromBytes(src)[off:off+n], mask, n)
	case 2:
		gatherFixed(arrow.Int16Traits.CastFromBytes(dst), arrow.Int16Traits.CastFromBytes(src)[off:off+n], mask, n)
	case 1:
		gatherFixed(dst, src[off:off+n], mask, n)
	}
	out := array.NewData(a.DataType(), selected, []*memory.Buffer{valid, vals}, nil, nulls, 0)
	if valid != nil {
		valid.Release()
	}
	vals.Release()
	defer out.Release()
	return array.MakeFromData(out), nil
}

// filterBools gathers the selected values of a boolean array.
func filterBools(mem memory.Allocator, a *array.Boolean, mask []byte, n, selected int) arrow.Array {
	valid, nulls := filterValidity(mem, a, mask, n, selected)
	vals := newBitsBuffer(mem, selected)
	var src []byte
	if b := a.Data().Buffers()[1]; b != nil { // nil in an array of no rows
		src = b.Bytes()
	}
	gather.Bits(vals.Bytes(), src, a.Data().Offset(), mask, n)
	d := array.NewData(a.DataType(), selected, []*memory.Buffer{valid, vals}, nil, nulls, 0)
	if valid != nil {
		valid.Release()
	}
	vals.Release()
	defer d.Release()
	return array.MakeFromData(d)
}

// filterBytes gathers the selected values of a string or binary array.
func filterBytes(mem memory.Allocator, a arrow.Array, mask []byte, n, selected int) arrow.Array {
	var offs []int32
	var src []byte
	switch x := a.(type) {
	case *array.String:
		offs, src = x.ValueOffsets(), x.ValueBytes()
	case *array.Binary:
		offs, src = x.ValueOffsets(), x.ValueBytes()
	}
	valid, nulls := filterValidity(mem, a, mask, n, selected)
	ob := memory.NewResizableBuffer(mem)
	ob.Resize((selected + 1) * 4)
	newOffs := arrow.Int32Traits.CastFromBytes(ob.Bytes())
	total := gather.Offsets(newOffs, offs, mask, n)
	db := memory.NewResizableBuffer(mem)
	db.Reserve(int(total) + gather.Slack)
	db.ResizeNoShrink(int(total))
	// The capacity of src past its values is memory of the same buffer:
	// blocks may be read from it.
	gather.Bytes(db.Buf(), src[:cap(src)], offs, mask, n)
	out := array.NewData(a.DataType(), selected, []*memory.Buffer{valid, ob, db}, nil, nulls, 0)
	if valid != nil {
		valid.Release()
	}
	ob.Release()
	db.Release()
	defer out.Release()
	return array.MakeFromData(out)
}

// FilterBatch returns the rows of rec whose bit is set in mask (an
// LSB-first bitmap of rec's rows), every column gathered here rather than
// by arrow-go's compute filter, which loses the validity of booleans.
func FilterBatch(ctx context.Context, mem memory.Allocator, rec arrow.RecordBatch, mask []byte) (arrow.RecordBatch, error) {
	return FilterBatchInto(ctx, mem, mem, rec, mask)
}

// FilterBatchInto is FilterBatch whose own gathers write into pageMem,
// which may hand out buffers unzeroed (see Snapshot.PageMem), as a scan's
// gathers do; the compute kernels of the other types allocate from mem.
func FilterBatchInto(ctx context.Context, mem, pageMem memory.Allocator, rec arrow.RecordBatch, mask []byte) (arrow.RecordBatch, error) {
	n := int(rec.NumRows())
	selected := countBits(mask, n)
	ctx = compute.WithAllocator(ctx, mem)
	cols := make([]arrow.Array, 0, rec.NumCols())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, c := range rec.Columns() {
		f, err := filterArray(ctx, pageMem, c, mask, n, selected)
		if err != nil {
			return nil, fmt.Errorf("filter batch: %w", err)
		}
		cols = append(cols, f)
	}
	return array.NewRecordBatch(rec.Schema(), cols, int64(selected)), nil
}

// MaskOf returns the bitmap of the rows a boolean array selects: TRUE, not
// FALSE or NULL.
func MaskOf(b *array.Boolean) []byte {
	n := b.Len()
	mask := make([]byte, (n+7)/8)
	for i := 0; i < n; i++ {
		if b.IsValid(i) && b.Value(i) {
			mask[i/8] |= 1 << (i % 8)
		}
	}
	return mask
}
