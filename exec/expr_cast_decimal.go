package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/schema"
)

// canCastDecimal reports the DECIMAL conversions castDecimal implements:
// to DECIMAL from any number or text, and from DECIMAL to an integer.
func canCastDecimal(from, to schema.Type) bool {
	switch {
	case to.Kind == schema.Decimal:
		return isNumber(from.Kind) || from.IsString()
	case from.Kind == schema.Decimal:
		return to.IsInteger()
	}
	return false
}

// castDecimal converts x per value through package decimal, with the row
// engine's rules and texts: half away from zero where digits are dropped,
// a value past the target type an error naming it, an integer part
// truncated towards zero.
func castDecimal(env *Env, x arrow.Array, from, to schema.Type) (arrow.Array, error) {
	n := x.Len()
	valid, nulls := andValidity(env.Mem, n, x)
	vb := []byte(nil)
	if valid != nil {
		vb = valid.Bytes()
	}
	render := ColumnFormatter(x, from, env.Loc, false)
	width := 16
	if to.Kind != schema.Decimal {
		width = to.Arrow().(arrow.FixedWidthDataType).BitWidth() / 8
	}
	buf := newBuffer(env.Mem, n*width)
	fail := func(err error) (arrow.Array, error) {
		buf.Release()
		if valid != nil {
			valid.Release()
		}
		return nil, err
	}
	outOfRange := func(i int) error {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "value %s is out of range for %s", render(nil, i), to)
	}
	if to.Kind != schema.Decimal {
		src := x.(*array.Decimal128).Values()
		raw := buf.Bytes()
		for i := range n {
			if !isValid(vb, 0, i) {
				continue
			}
			v, ok := decimal.ToInt64(src[i], from.Scale)
			if !ok {
				return fail(outOfRange(i))
			}
			if err := schema.CheckIntRange(to, v); err != nil {
				return fail(rowttl.Errorf(rowttl.ErrInvalidArgument, "%v", err))
			}
			switch width {
			case 1:
				raw[i] = byte(int8(v))
			case 2:
				arrow.Int16Traits.CastFromBytes(raw)[i] = int16(v)
			case 4:
				arrow.Int32Traits.CastFromBytes(raw)[i] = int32(v)
			default:
				arrow.Int64Traits.CastFromBytes(raw)[i] = v
			}
		}
		return makeArray(to.Arrow(), n, valid, nulls, buf), nil
	}
	dt := to.Decimal()
	out := arrow.Decimal128Traits.CastFromBytes(buf.Bytes())
	var conv func(i int) (decimal.Num, error)
	switch c := x.(type) {
	case *array.Decimal128:
		src := c.Values()
		conv = func(i int) (decimal.Num, error) {
			v, ok := decimal.Convert(src[i], from.Scale, dt)
			if !ok {
				return v, outOfRange(i)
			}
			return v, nil
		}
	case *array.Float32, *array.Float64:
		fs := floats(x)
		conv = func(i int) (decimal.Num, error) {
			v, err := decimal.FromFloat64(fs(i), dt)
			if err != nil {
				return v, outOfRange(i)
			}
			return v, nil
		}
	case *array.String:
		conv = func(i int) (decimal.Num, error) {
			v, st := decimal.ParseStatus(c.Value(i), dt)
			switch st {
			case decimal.StatusOverflow:
				return v, outOfRange(i)
			case decimal.StatusInvalid:
				return v, rowttl.Errorf(rowttl.ErrInvalidArgument, "cannot convert %s value %s to %s", from, c.Value(i), to)
			}
			return v, nil
		}
	default:
		is := ints(x)
		conv = func(i int) (decimal.Num, error) {
			v, ok := decimal.FromInt64(is(i), dt)
			if !ok {
				return v, outOfRange(i)
			}
			return v, nil
		}
	}
	for i := range n {
		if !isValid(vb, 0, i) {
			continue
		}
		v, err := conv(i)
		if err != nil {
			return fail(err)
		}
		out[i] = v
	}
	return makeArray(to.Arrow(), n, valid, nulls, buf), nil
}
