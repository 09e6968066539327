package exec

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/schema"
)

// Cast converts X to type To with the dialect's strict rules: an integer
// that does not fit its type is an error, not NULL. CanCast says which
// conversions it implements; the planner leaves the others to the row
// engine.
type Cast struct {
	X  Expr
	To schema.Type
}

// Type implements Expr.
func (c *Cast) Type() schema.Type { return c.To }

func (c *Cast) String() string { return fmt.Sprintf("CAST(%s AS %s)", c.X, c.To) }

func isIntLike(k schema.Kind) bool {
	switch k {
	case schema.Boolean, schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt:
		return true
	}
	return false
}

func isNumber(k schema.Kind) bool {
	return isIntLike(k) || k == schema.Float || k == schema.Double || k == schema.Decimal
}

// CanCast reports whether Cast implements the conversion.
func CanCast(from, to schema.Type) bool {
	f, t := from.Kind, to.Kind
	switch {
	case f == schema.Invalid:
		return true
	case canCastDecimal(from, to):
		return true
	case from.IsString() && !to.IsString():
		switch t {
		case schema.Boolean, schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt, schema.Float, schema.Double,
			schema.Date, schema.Datetime:
			return true
		}
		return false
	case arrow.TypeEqual(from.Arrow(), to.Arrow()) && !(f == schema.Datetime || f == schema.TimestampTZ):
		return true
	case t == schema.Boolean:
		return isNumber(f)
	case t == schema.TinyInt || t == schema.SmallInt || t == schema.Int || t == schema.BigInt:
		return isIntLike(f)
	case t == schema.Float || t == schema.Double:
		return isNumber(f)
	case t == schema.Date:
		return f == schema.Datetime || f == schema.TimestampTZ
	case t == schema.Datetime || t == schema.TimestampTZ:
		return f == schema.Date || f == schema.Datetime || f == schema.TimestampTZ
	case to.IsString():
		return f != schema.TimestampNS
	}
	return false
}

// Eval implements Expr.
func (c *Cast) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := c.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	n := x.Len()
	from, to := c.X.Type(), c.To
	if from.Kind == schema.Invalid || x.DataType().ID() == arrow.NULL {
		return nullArray(env.Mem, to.Arrow(), n), nil
	}
	if arrow.TypeEqual(x.DataType(), to.Arrow()) && !(to.Kind == schema.Datetime || to.Kind == schema.TimestampTZ) {
		x.Retain()
		return x, nil
	}
	if canCastDecimal(from, to) {
		return castDecimal(env, x, from, to)
	}
	valid, nulls := andValidity(env.Mem, n, x)
	vb := []byte(nil)
	if valid != nil {
		vb = valid.Bytes()
	}
	var out arrow.Array
	fail := func(err error) (arrow.Array, error) {
		if valid != nil {
			valid.Release()
		}
		return nil, err
	}
	if sa, ok := x.(*array.String); ok && !to.IsString() {
		if valid != nil {
			valid.Release()
		}
		return castString(env, sa, from, to)
	}
	switch {
	case to.IsString():
		if valid != nil {
			valid.Release()
		}
		f := ColumnFormatter(x, from, env.Loc, false)
		bld := array.NewStringBuilder(env.Mem)
		defer bld.Release()
		bld.Reserve(n)
		var buf []byte
		for i := range n {
			if x.IsNull(i) {
				bld.AppendNull()
				continue
			}
			buf = f(buf[:0], i)
			bld.BinaryBuilder.Append(buf)
		}
		return bld.NewArray(), nil
	case to.Kind == schema.Boolean:
		vals := newBuffer(env.Mem, int(bitutil.BytesForBits(int64(n))))
		out := vals.Bytes()
		fs := floats(x)
		for i := range n {
			if fs(i) != 0 {
				bitutil.SetBit(out, i)
			}
		}
		return newBools(n, vals, valid, nulls), nil
	case to.Kind == schema.Double && x.DataType().ID() != arrow.DECIMAL128 && x.DataType().ID() != arrow.BOOL:
		if out = widenFloat(x, env, valid, nulls); out != nil {
			return out, nil
		}
		fallthrough
	case to.Kind == schema.Float || to.Kind == schema.Double:
		fs := floats(x)
		if to.Kind == schema.Float {
			buf := newBuffer(env.Mem, n*4)
			out := arrow.Float32Traits.CastFromBytes(buf.Bytes())
			for i := range n {
				out[i] = float32(fs(i))
			}
			return makeArray(to.Arrow(), n, valid, nulls, buf), nil
		}
		buf := newBuffer(env.Mem, n*8)
		out := arrow.Float64Traits.CastFromBytes(buf.Bytes())
		for i := range n {
			out[i] = fs(i)
		}
		return makeArray(to.Arrow(), n, valid, nulls, buf), nil
	case to.Kind == schema.BigInt && x.DataType().ID() != arrow.BOOL && widenable(x):
		return widenInt(x, env, valid, nulls), nil
	case to.IsInteger():
		is := ints(x)
		width := to.Arrow().(arrow.FixedWidthDataType).BitWidth() / 8
		buf := newBuffer(env.Mem, n*width)
		raw := buf.Bytes()
		for i := range n {
			v := is(i)
			if err := schema.CheckIntRange(to, v); err != nil && isValid(vb, 0, i) {
				buf.Release()
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
	case to.Kind == schema.Date:
		buf := newBuffer(env.Mem, n*4)
		out := arrow.Date32Traits.CastFromBytes(buf.Bytes())
		src := x.(*array.Timestamp).TimestampValues()
		for i := range n {
			w := int64(src[i])
			if from.Kind == schema.TimestampTZ {
				w = schema.InstantToWall(w, env.Loc)
			}
			out[i] = arrow.Date32(floorDiv(w, microsPerDay))
		}
		return makeArray(to.Arrow(), n, valid, nulls, buf), nil
	case to.Kind == schema.Datetime || to.Kind == schema.TimestampTZ:
		buf := newBuffer(env.Mem, n*8)
		out := arrow.TimestampTraits.CastFromBytes(buf.Bytes())
		p := to.Precision
		for i := range n {
			var v int64
			switch from.Kind {
			case schema.Date:
				v = int64(x.(*array.Date32).Value(i)) * microsPerDay
				if to.Kind == schema.TimestampTZ {
					v = schema.WallToInstant(v, env.Loc)
				}
			default:
				v = int64(x.(*array.Timestamp).Value(i))
				switch {
				case from.Kind == schema.Datetime && to.Kind == schema.TimestampTZ:
					v = schema.WallToInstant(v, env.Loc)
				case from.Kind == schema.TimestampTZ && to.Kind == schema.Datetime:
					v = schema.InstantToWall(v, env.Loc)
				}
				v = schema.TruncateMicros(v, p)
			}
			out[i] = arrow.Timestamp(v)
		}
		return makeArray(to.Arrow(), n, valid, nulls, buf), nil
	}
	return fail(rowttl.Errorf(rowttl.ErrInvalidArgument, "cannot convert %s to %s", from, to))
}

const microsPerDay = 86400 * 1_000_000

// floats reads a numeric array as float64 (decimals scaled).
func floats(a arrow.Array) func(i int) float64 {
	switch c := a.(type) {
	case *array.Boolean:
		return func(i int) float64 {
			if c.Value(i) {
				return 1
			}
			return 0
		}
	case *array.Int8:
		return func(i int) float64 { return float64(c.Value(i)) }
	case *array.Int16:
		return func(i int) float64 { return float64(c.Value(i)) }
	case *array.Int32:
		return func(i int) float64 { return float64(c.Value(i)) }
	case *array.Int64:
		return func(i int) float64 { return float64(c.Value(i)) }
	case *array.Float32:
		return func(i int) float64 { return float64(c.Value(i)) }
	case *array.Float64:
		return func(i int) float64 { return c.Value(i) }
	case *array.Decimal128:
		// decimal.ToFloat64 rounds once, as the row engine does: an
		// int64 above 2^53 divided by a power of ten rounds twice.
		scale := int(c.DataType().(*arrow.Decimal128Type).Scale)
		vals := c.Values()
		return func(i int) float64 { return decimal.ToFloat64(vals[i], scale) }
	}
	return func(int) float64 { return 0 }
}

// ints reads an integer-like array as int64.
func ints(a arrow.Array) func(i int) int64 {
	switch c := a.(type) {
	case *array.Boolean:
		return func(i int) int64 {
			if c.Value(i) {
				return 1
			}
			return 0
		}
	case *array.Int8:
		return func(i int) int64 { return int64(c.Value(i)) }
	case *array.Int16:
		return func(i int) int64 { return int64(c.Value(i)) }
	case *array.Int32:
		return func(i int) int64 { return int64(c.Value(i)) }
	case *array.Int64:
		return func(i int) int64 { return c.Value(i) }
	}
	return func(int) int64 { return 0 }
}

// castString parses texts strictly, as the row engine's castFunc does: a
// text that is not a valid value of the target type is an error naming it.
func castString(env *Env, x *array.String, from, to schema.Type) (arrow.Array, error) {
	n := x.Len()
	bld := array.NewBuilder(env.Mem, to.Arrow())
	defer bld.Release()
	bld.Reserve(n)
	bad := func(s string) error {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "cannot convert %s value %s to %s", from, s, to)
	}
	for i := range n {
		if x.IsNull(i) {
			bld.AppendNull()
			continue
		}
		raw := x.Value(i)
		s := strings.TrimSpace(raw)
		switch to.Kind {
		case schema.Boolean:
			var v bool
			switch strings.ToLower(s) {
			case "true", "1":
				v = true
			case "false", "0":
			default:
				f, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return nil, bad(raw)
				}
				v = f != 0
			}
			bld.(*array.BooleanBuilder).Append(v)
		case schema.Float, schema.Double:
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, bad(raw)
			}
			if to.Kind == schema.Float {
				bld.(*array.Float32Builder).Append(float32(f))
			} else {
				bld.(*array.Float64Builder).Append(f)
			}
		case schema.Date:
			d, err := schema.ParseDate(raw)
			if err != nil {
				return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "%v", err)
			}
			bld.(*array.Date32Builder).Append(arrow.Date32(d))
		case schema.Datetime:
			us, err := schema.ParseDatetime(raw)
			if err != nil {
				return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "%v", err)
			}
			bld.(*array.TimestampBuilder).Append(arrow.Timestamp(schema.TruncateMicros(us, to.Precision)))
		default:
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				f, ferr := strconv.ParseFloat(s, 64)
				if ferr != nil || math.IsNaN(f) || math.Abs(f) >= 9.2e18 {
					return nil, bad(raw)
				}
				v = int64(math.Trunc(f))
			}
			if err := schema.CheckIntRange(to, v); err != nil {
				return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "%v", err)
			}
			schema.AppendValue(bld, schema.IntVal(v))
		}
	}
	return bld.NewArray(), nil
}

func widenable(x arrow.Array) bool {
	switch x.(type) {
	case *array.Int8, *array.Int16, *array.Int32:
		return true
	}
	return false
}

// widenInt converts narrower integers to BIGINT in a typed loop (the
// common conversion of comparisons and arithmetic); nil for other inputs.
// It takes over valid only when it returns an array.
func widenInt(x arrow.Array, env *Env, valid *memory.Buffer, nulls int) arrow.Array {
	switch c := x.(type) {
	case *array.Int8:
		return widenInto[int8, int64](c.Int8Values(), env, arrow.PrimitiveTypes.Int64, valid, nulls)
	case *array.Int16:
		return widenInto[int16, int64](c.Int16Values(), env, arrow.PrimitiveTypes.Int64, valid, nulls)
	case *array.Int32:
		return widenInto[int32, int64](c.Int32Values(), env, arrow.PrimitiveTypes.Int64, valid, nulls)
	}
	return nil
}

// widenFloat converts integers and FLOAT to DOUBLE in a typed loop; nil for
// other inputs. It takes over valid only when it returns an array.
func widenFloat(x arrow.Array, env *Env, valid *memory.Buffer, nulls int) arrow.Array {
	t := arrow.PrimitiveTypes.Float64
	switch c := x.(type) {
	case *array.Int8:
		return widenInto[int8, float64](c.Int8Values(), env, t, valid, nulls)
	case *array.Int16:
		return widenInto[int16, float64](c.Int16Values(), env, t, valid, nulls)
	case *array.Int32:
		return widenInto[int32, float64](c.Int32Values(), env, t, valid, nulls)
	case *array.Int64:
		return widenInto[int64, float64](c.Int64Values(), env, t, valid, nulls)
	case *array.Float32:
		return widenInto[float32, float64](c.Float32Values(), env, t, valid, nulls)
	}
	return nil
}

// widenInto copies numbers into an array of 8-byte values of type t.
func widenInto[S int8 | int16 | int32 | int64 | float32, D int64 | float64](src []S, env *Env, t arrow.DataType, valid *memory.Buffer, nulls int) arrow.Array {
	n := len(src)
	buf := newBuffer(env.Mem, n*8)
	var dst []D
	switch any(dst).(type) {
	case []int64:
		dst = any(arrow.Int64Traits.CastFromBytes(buf.Bytes())).([]D)
	default:
		dst = any(arrow.Float64Traits.CastFromBytes(buf.Bytes())).([]D)
	}
	for i, v := range src {
		dst[i] = D(v)
	}
	return makeArray(t, n, valid, nulls, buf)
}
