package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// rowRef names one row of one of several source arrays (or batches):
// source batch, row row. A negative batch stands for NULL, which is how
// outer joins extend a row and lag/lead fall off a partition.
type rowRef struct {
	batch int32
	row   int32
}

// nullRef is the rowRef of a NULL value.
var nullRef = rowRef{batch: -1}

// gatherColumn builds a new array of typ holding, in order, the values
// refs name in srcs (every source of type typ). The copy is what lets an
// operator release its inputs batch by batch while its output lives on.
func gatherColumn(mem memory.Allocator, typ arrow.DataType, srcs []arrow.Array, refs []rowRef) arrow.Array {
	n := len(refs)
	srcNulls := false
	for _, s := range srcs {
		srcNulls = srcNulls || s.NullN() > 0
	}
	nulls := 0
	for _, r := range refs {
		if r.batch < 0 || srcNulls && srcs[r.batch].IsNull(int(r.row)) {
			nulls++
		}
	}
	var validity *memory.Buffer
	if nulls > 0 {
		validity = memory.NewResizableBuffer(mem)
		validity.Resize(int(bitutil.BytesForBits(int64(n))))
		bits := validity.Bytes()
		clear(bits)
		for i, r := range refs {
			if r.batch >= 0 && (!srcNulls || srcs[r.batch].IsValid(int(r.row))) {
				bitutil.SetBit(bits, i)
			}
		}
	}
	var data *array.Data
	switch typ.ID() {
	case arrow.BOOL:
		values := memory.NewResizableBuffer(mem)
		values.Resize(int(bitutil.BytesForBits(int64(n))))
		bits := values.Bytes()
		clear(bits)
		for i, r := range refs {
			if r.batch >= 0 && srcs[r.batch].(*array.Boolean).Value(int(r.row)) {
				bitutil.SetBit(bits, i)
			}
		}
		data = array.NewData(typ, n, []*memory.Buffer{validity, values}, nil, nulls, 0)
		values.Release()
	case arrow.STRING:
		total := 0
		for _, r := range refs {
			if r.batch >= 0 {
				total += srcs[r.batch].(*array.String).ValueLen(int(r.row))
			}
		}
		offsets := memory.NewResizableBuffer(mem)
		offsets.Resize((n + 1) * 4)
		offs := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
		values := memory.NewResizableBuffer(mem)
		values.Resize(total)
		buf := values.Bytes()[:0]
		offs[0] = 0
		for i, r := range refs {
			if r.batch >= 0 {
				buf = append(buf, srcs[r.batch].(*array.String).Value(int(r.row))...)
			}
			offs[i+1] = int32(len(buf))
		}
		data = array.NewData(typ, n, []*memory.Buffer{validity, offsets, values}, nil, nulls, 0)
		offsets.Release()
		values.Release()
	default:
		fw, ok := typ.(arrow.FixedWidthDataType)
		if !ok || fw.BitWidth()%8 != 0 {
			panic(fmt.Sprintf("exec: gather of unsupported type %s", typ))
		}
		w := fw.BitWidth() / 8
		raws := make([][]byte, len(srcs))
		for i, s := range srcs {
			d := s.Data()
			raws[i] = d.Buffers()[1].Bytes()[d.Offset()*w:]
		}
		values := memory.NewResizableBuffer(mem)
		values.Resize(n * w)
		out := values.Bytes()
		if w == 8 {
			// The common width, copied a word at a time.
			words := make([][]uint64, len(raws))
			for i, r := range raws {
				words[i] = arrow.Uint64Traits.CastFromBytes(r[:len(r)/8*8])
			}
			dst := arrow.Uint64Traits.CastFromBytes(out)
			for i, r := range refs {
				if r.batch < 0 {
					dst[i] = 0
				} else {
					dst[i] = words[r.batch][r.row]
				}
			}
		} else {
			for i, r := range refs {
				if r.batch < 0 {
					clear(out[i*w : (i+1)*w])
					continue
				}
				o := int(r.row) * w
				copy(out[i*w:(i+1)*w], raws[r.batch][o:o+w])
			}
		}
		data = array.NewData(typ, n, []*memory.Buffer{validity, values}, nil, nulls, 0)
		values.Release()
	}
	if validity != nil {
		validity.Release()
	}
	defer data.Release()
	return array.MakeFromData(data)
}

// gatherBatch builds a batch of schema whose columns are gathered from
// the given columns of srcs: column i of the result takes column cols[i]
// of every source.
func gatherBatch(mem memory.Allocator, schema *arrow.Schema, srcs []arrow.RecordBatch, cols []int, refs []rowRef) arrow.RecordBatch {
	arrs := make([]arrow.Array, len(cols))
	col := make([]arrow.Array, len(srcs))
	for i, c := range cols {
		for j, s := range srcs {
			col[j] = s.Column(c)
		}
		arrs[i] = gatherColumn(mem, schema.Field(i).Type, col, refs)
	}
	return newBatchOwning(schema, arrs, int64(len(refs)))
}

// newBatchOwning makes a batch of arrs and gives up the caller's
// references to them, so that the batch is their only owner.
func newBatchOwning(schema *arrow.Schema, arrs []arrow.Array, n int64) arrow.RecordBatch {
	b := array.NewRecordBatch(schema, arrs, n)
	for _, a := range arrs {
		a.Release()
	}
	return b
}

// rebatch gives b the schema s (the same Arrow types; other names or
// nullability), taking over the caller's reference to b.
func rebatch(s *arrow.Schema, b arrow.RecordBatch) arrow.RecordBatch {
	out := array.NewRecordBatch(s, b.Columns(), b.NumRows())
	b.Release()
	return out
}

// batchBytes is what a held batch costs a Budget: its buffers, whole,
// since a slice keeps its parent's buffers alive.
func batchBytes(b arrow.RecordBatch) int64 {
	var n int64
	for _, c := range b.Columns() {
		n += dataBytes(c.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, buf := range d.Buffers() {
		if buf != nil {
			n += int64(buf.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	return n
}

// gatherIndexed is gatherColumn from one source array by row index, -1
// for NULL: what a hash join gathers a probe or build column with, without
// a rowRef per row. src may be nil when every index is -1.
func gatherIndexed(mem memory.Allocator, typ arrow.DataType, src arrow.Array, idx []int32) arrow.Array {
	n := len(idx)
	srcNulls := src != nil && src.NullN() > 0
	nulls := 0
	for _, r := range idx {
		if r < 0 || srcNulls && src.IsNull(int(r)) {
			nulls++
		}
	}
	var validity *memory.Buffer
	if nulls > 0 {
		validity = memory.NewResizableBuffer(mem)
		validity.Resize(int(bitutil.BytesForBits(int64(n))))
		bits := validity.Bytes()
		clear(bits)
		for i, r := range idx {
			if r >= 0 && (!srcNulls || src.IsValid(int(r))) {
				bitutil.SetBit(bits, i)
			}
		}
	}
	fw, fixed := typ.(arrow.FixedWidthDataType)
	if src == nil || typ.ID() == arrow.BOOL || !fixed && typ.ID() != arrow.STRING || fixed && fw.BitWidth()%8 != 0 {
		if validity != nil {
			validity.Release()
		}
		refs := make([]rowRef, n)
		for i, r := range idx {
			refs[i] = rowRef{batch: 0, row: r}
			if r < 0 {
				refs[i] = nullRef
			}
		}
		var srcs []arrow.Array
		if src != nil {
			srcs = []arrow.Array{src}
		}
		return gatherColumn(mem, typ, srcs, refs)
	}
	var data *array.Data
	if typ.ID() == arrow.STRING {
		s := src.(*array.String)
		total := 0
		for _, r := range idx {
			if r >= 0 {
				total += s.ValueLen(int(r))
			}
		}
		offsets := memory.NewResizableBuffer(mem)
		offsets.Resize((n + 1) * 4)
		offs := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
		values := memory.NewResizableBuffer(mem)
		values.Resize(total)
		buf := values.Bytes()[:0]
		offs[0] = 0
		for i, r := range idx {
			if r >= 0 {
				buf = append(buf, s.Value(int(r))...)
			}
			offs[i+1] = int32(len(buf))
		}
		data = array.NewData(typ, n, []*memory.Buffer{validity, offsets, values}, nil, nulls, 0)
		offsets.Release()
		values.Release()
	} else {
		w := fw.BitWidth() / 8
		d := src.Data()
		raw := d.Buffers()[1].Bytes()[d.Offset()*w:]
		values := memory.NewResizableBuffer(mem)
		values.Resize(n * w)
		out := values.Bytes()
		switch w {
		case 8:
			words := arrow.Uint64Traits.CastFromBytes(raw[:len(raw)/8*8])
			dst := arrow.Uint64Traits.CastFromBytes(out)
			for i, r := range idx {
				if r < 0 {
					dst[i] = 0
				} else {
					dst[i] = words[r]
				}
			}
		case 4:
			words := arrow.Uint32Traits.CastFromBytes(raw[:len(raw)/4*4])
			dst := arrow.Uint32Traits.CastFromBytes(out)
			for i, r := range idx {
				if r < 0 {
					dst[i] = 0
				} else {
					dst[i] = words[r]
				}
			}
		default:
			for i, r := range idx {
				if r < 0 {
					clear(out[i*w : (i+1)*w])
					continue
				}
				o := int(r) * w
				copy(out[i*w:(i+1)*w], raw[o:o+w])
			}
		}
		data = array.NewData(typ, n, []*memory.Buffer{validity, values}, nil, nulls, 0)
		values.Release()
	}
	if validity != nil {
		validity.Release()
	}
	defer data.Release()
	return array.MakeFromData(data)
}
