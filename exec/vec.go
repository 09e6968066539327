package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The helpers below build result arrays from raw buffers: kernels write a
// whole column of values and its validity bitmap in tight loops, never
// through a builder call per row.

// newBuffer returns a zeroed buffer of n bytes from mem.
func newBuffer(mem memory.Allocator, n int) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(n)
	clear(b.Bytes())
	return b
}

// andValidity returns the validity bitmap of the n rows valid in every
// array (nil when all are valid) and the number of NULL rows.
func andValidity(mem memory.Allocator, n int, arrs ...arrow.Array) (*memory.Buffer, int) {
	var out *memory.Buffer
	for _, a := range arrs {
		if a == nil || a.NullN() == 0 {
			continue
		}
		if a.DataType().ID() == arrow.NULL {
			if out == nil {
				out = newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
			} else {
				clear(out.Bytes())
			}
			return out, n
		}
		if out == nil {
			out = newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
			bitutil.CopyBitmap(a.NullBitmapBytes(), a.Data().Offset(), n, out.Bytes(), 0)
			continue
		}
		bitutil.BitmapAnd(out.Bytes(), a.NullBitmapBytes(), 0, int64(a.Data().Offset()), out.Bytes(), 0, int64(n))
	}
	if out == nil {
		return nil, 0
	}
	return out, n - bitutil.CountSetBits(out.Bytes(), 0, n)
}

// makeArray wraps buffers into an array of type t and n rows, taking over
// the caller's references to the buffers.
func makeArray(t arrow.DataType, n int, valid *memory.Buffer, nulls int, bufs ...*memory.Buffer) arrow.Array {
	if nulls == 0 && valid != nil {
		valid.Release()
		valid = nil
	}
	all := append([]*memory.Buffer{valid}, bufs...)
	d := array.NewData(t, n, all, nil, nulls, 0)
	for _, b := range all {
		if b != nil {
			b.Release()
		}
	}
	a := array.MakeFromData(d)
	d.Release()
	return a
}

// isValid reports whether row i of a bitmap-with-offset is set; a nil
// bitmap means every row is valid.
func isValid(bm []byte, off, i int) bool {
	return bm == nil || bitutil.BitIsSet(bm, off+i)
}

// validityOf returns a's validity bitmap and offset, nil when it has no
// NULL.
func validityOf(a arrow.Array) ([]byte, int) {
	if a.NullN() == 0 {
		return nil, 0
	}
	return a.NullBitmapBytes(), a.Data().Offset()
}

// newBools builds a BOOLEAN array of n rows from a values bitmap and a
// validity bitmap (nil: all valid).
func newBools(n int, vals, valid *memory.Buffer, nulls int) arrow.Array {
	return makeArray(arrow.FixedWidthTypes.Boolean, n, valid, nulls, vals)
}

// nullArray returns n NULLs of type t.
func nullArray(mem memory.Allocator, t arrow.DataType, n int) arrow.Array {
	b := array.NewBuilder(mem, t)
	defer b.Release()
	b.AppendNulls(n)
	return b.NewArray()
}

// maskBytes returns the bitmap of rows a BOOLEAN array selects (TRUE, not
// FALSE or NULL), how many, and whether it is every row.
func maskBytes(mem memory.Allocator, a *array.Boolean) (*memory.Buffer, int) {
	n := a.Len()
	out := newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
	bitutil.CopyBitmap(a.Data().Buffers()[1].Bytes(), a.Data().Offset(), n, out.Bytes(), 0)
	if a.NullN() > 0 {
		bitutil.BitmapAnd(out.Bytes(), a.NullBitmapBytes(), 0, int64(a.Data().Offset()), out.Bytes(), 0, int64(n))
	}
	return out, bitutil.CountSetBits(out.Bytes(), 0, n)
}
