package segment

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
)

// colStage buffers the rows of one column of the page being filled, in a
// form the encoders read directly. Only the fields of the column's kind are
// used.
type colStage struct {
	ct    colType
	valid []bool
	nulls int
	ints  []int64 // kindInt, kindBool (0/1)
	fixed []byte  // kindFloat, kindDecimal: raw little-endian values
	data  []byte  // kindBytes: value bytes
	ends  []int32 // kindBytes: end offset of each value in data
}

func (s *colStage) reset() {
	s.valid = s.valid[:0]
	s.nulls = 0
	s.ints = s.ints[:0]
	s.fixed = s.fixed[:0]
	s.data = s.data[:0]
	s.ends = s.ends[:0]
}

// appendRows stages rows [off, off+n) of arr, whose type has been checked.
func (s *colStage) appendRows(arr arrow.Array, off, n int) error {
	end := off + n
	if arr.NullN() == 0 {
		for range n {
			s.valid = append(s.valid, true)
		}
	} else {
		for i := off; i < end; i++ {
			v := arr.IsValid(i)
			s.valid = append(s.valid, v)
			if !v {
				s.nulls++
			}
		}
	}
	switch a := arr.(type) {
	case *array.Boolean:
		for i := off; i < end; i++ {
			b := int64(0)
			if a.Value(i) {
				b = 1
			}
			s.ints = append(s.ints, b)
		}
	case *array.Int8:
		s.ints = appendInts(s.ints, a.Int8Values()[off:end])
	case *array.Int16:
		s.ints = appendInts(s.ints, a.Int16Values()[off:end])
	case *array.Int32:
		s.ints = appendInts(s.ints, a.Int32Values()[off:end])
	case *array.Int64:
		s.ints = append(s.ints, a.Int64Values()[off:end]...)
	case *array.Date32:
		s.ints = appendInts(s.ints, a.Date32Values()[off:end])
	case *array.Timestamp:
		s.ints = appendInts(s.ints, a.TimestampValues()[off:end])
	case *array.Float32:
		for _, v := range a.Float32Values()[off:end] {
			s.fixed = binary.LittleEndian.AppendUint32(s.fixed, math.Float32bits(v))
		}
	case *array.Float64:
		for _, v := range a.Float64Values()[off:end] {
			s.fixed = binary.LittleEndian.AppendUint64(s.fixed, math.Float64bits(v))
		}
	case *array.Decimal128:
		for _, v := range a.Values()[off:end] {
			s.fixed = binary.LittleEndian.AppendUint64(s.fixed, v.LowBits())
			s.fixed = binary.LittleEndian.AppendUint64(s.fixed, uint64(v.HighBits()))
		}
	case *array.String:
		for i := off; i < end; i++ {
			if err := appendBytes(s, a.IsValid(i), a.Value(i)); err != nil {
				return err
			}
		}
	case *array.Binary:
		for i := off; i < end; i++ {
			if err := appendBytes(s, a.IsValid(i), a.Value(i)); err != nil {
				return err
			}
		}
	default:
		return rowttl.Errorf(rowttl.ErrNotSupported, "segment: array of type %s", arr.DataType())
	}
	return nil
}

func appendInts[T ~int8 | ~int16 | ~int32 | ~int64](dst []int64, src []T) []int64 {
	for _, v := range src {
		dst = append(dst, int64(v))
	}
	return dst
}

// appendBytes stages one string or binary value; nulls stage as empty.
func appendBytes[B ~string | ~[]byte](s *colStage, valid bool, v B) error {
	if valid {
		if len(s.data)+len(v) > maxPageBytes {
			return rowttl.Errorf(rowttl.ErrInvalidArgument, "segment: a page of column values exceeds %d bytes; use fewer rows per page", maxPageBytes)
		}
		s.data = append(s.data, v...)
	}
	s.ends = append(s.ends, int32(len(s.data)))
	return nil
}

// firstValid returns the index of the first valid slot, or -1.
func firstValid(valid []bool) int {
	for i, v := range valid {
		if v {
			return i
		}
	}
	return -1
}

// fillNulls makes every null slot repeat the nearest earlier value (the
// first valid value for leading nulls, the zero value when all are null).
func fillNulls[E any](vals []E, valid []bool, nulls int) {
	if nulls == 0 {
		return
	}
	first := firstValid(valid)
	if first < 0 {
		clear(vals)
		return
	}
	for i := 0; i < first; i++ {
		vals[i] = vals[first]
	}
	for i := first + 1; i < len(vals); i++ {
		if !valid[i] {
			vals[i] = vals[i-1]
		}
	}
}

// fillNullInts fills the null slots of an integer column: a run of nulls
// between two values takes the values of the straight line between them,
// others repeat the nearest value, as fillNulls. On a column that grows at
// a steady pace, like an expiration derived from event time, the nulls then
// neither widen the delta encoding's bit width nor its frame: a repeated
// value would make a delta of zero and one of twice the step.
func fillNullInts(vals []int64, valid []bool, nulls int) {
	fillNulls(vals, valid, nulls)
	if nulls == 0 || nulls == len(vals) {
		return
	}
	last := -1 // the latest valid slot
	for i, ok := range valid {
		if !ok {
			continue
		}
		if gap := i - last - 1; last >= 0 && gap > 0 {
			interpolate(vals[last:i+1], gap)
		}
		last = i
	}
}

// interpolate sets v[1..gap] on the line from v[0] to v[gap+1], unless the
// difference of the ends overflows.
func interpolate(v []int64, gap int) {
	a, b := v[0], v[gap+1]
	diff := b - a
	if (b >= a) != (diff >= 0) {
		return
	}
	steps := int64(gap + 1)
	step, rem := diff/steps, diff%steps
	for k := int64(1); k <= int64(gap); k++ {
		// rem*k < steps^2 <= (MaxPageRows+1)^2: no overflow.
		v[k] = a + step*k + rem*k/steps
	}
}

// fillNullsRaw is fillNulls for values of width bytes held in raw.
func fillNullsRaw(raw []byte, width int, valid []bool, nulls int) {
	if nulls == 0 {
		return
	}
	first := firstValid(valid)
	if first < 0 {
		clear(raw)
		return
	}
	src := raw[first*width : (first+1)*width]
	for i := 0; i < first; i++ {
		copy(raw[i*width:], src)
	}
	for i := first + 1; i < len(valid); i++ {
		if !valid[i] {
			copy(raw[i*width:(i+1)*width], raw[(i-1)*width:i*width])
		}
	}
}

// zone computes the statistics of the staged values (before null filling).
func (s *colStage) zone(z *zoneAcc) {
	z.reset()
	z.rows = int64(len(s.valid))
	z.nulls = int64(s.nulls)
	switch s.ct.kind {
	case kindBool, kindInt:
		for i, v := range s.ints {
			if s.valid[i] {
				z.addInt(v)
			}
		}
	case kindFloat:
		w := s.ct.width
		for i := range s.valid {
			if !s.valid[i] {
				continue
			}
			if w == 4 {
				z.addFloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(s.fixed[i*4:]))))
			} else {
				z.addFloat(math.Float64frombits(binary.LittleEndian.Uint64(s.fixed[i*8:])))
			}
		}
	case kindBytes:
		view := stringsView{s.data, s.ends}
		for i := range s.valid {
			if s.valid[i] {
				z.addBytes(view.value(i))
			}
		}
	}
}
