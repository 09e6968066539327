package schema

import (
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/decimal"
)

// ValueAt returns element i of an array as a physical Value.
func ValueAt(arr arrow.Array, i int) Value {
	if arr.IsNull(i) {
		return Null
	}
	switch a := arr.(type) {
	case *array.Boolean:
		if a.Value(i) {
			return IntVal(1)
		}
		return IntVal(0)
	case *array.Int8:
		return IntVal(int64(a.Value(i)))
	case *array.Int16:
		return IntVal(int64(a.Value(i)))
	case *array.Int32:
		return IntVal(int64(a.Value(i)))
	case *array.Int64:
		return IntVal(a.Value(i))
	case *array.Date32:
		return IntVal(int64(a.Value(i)))
	case *array.Timestamp:
		return IntVal(int64(a.Value(i)))
	case *array.Float32:
		return FloatVal(float64(a.Value(i)))
	case *array.Float64:
		return FloatVal(a.Value(i))
	case *array.String:
		return BytesVal([]byte(a.Value(i)))
	case *array.Binary:
		return BytesVal(a.Value(i))
	case *array.Decimal128:
		return DecimalVal(a.Value(i))
	}
	return Null
}

// AppendValue appends a physical Value to a builder of the matching type.
func AppendValue(b array.Builder, v Value) {
	if v.IsNull() {
		b.AppendNull()
		return
	}
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		bb.Append(v.asInt() != 0)
	case *array.Int8Builder:
		bb.Append(int8(v.asInt()))
	case *array.Int16Builder:
		bb.Append(int16(v.asInt()))
	case *array.Int32Builder:
		bb.Append(int32(v.asInt()))
	case *array.Int64Builder:
		bb.Append(v.asInt())
	case *array.Date32Builder:
		bb.Append(arrow.Date32(v.asInt()))
	case *array.TimestampBuilder:
		bb.Append(arrow.Timestamp(v.asInt()))
	case *array.Float32Builder:
		bb.Append(float32(v.asFloat()))
	case *array.Float64Builder:
		bb.Append(v.asFloat())
	case *array.StringBuilder:
		bb.Append(string(v.Bytes))
	case *array.BinaryBuilder:
		bb.Append(v.Bytes)
	case *array.Decimal128Builder:
		bb.Append(v.Decimal())
	default:
		b.AppendNull()
	}
}

func (v Value) asInt() int64 {
	if v.Kind == FloatValue {
		return int64(v.Float)
	}
	return v.Int
}

func (v Value) asFloat() float64 {
	if v.Kind == IntValue {
		return float64(v.Int)
	}
	return v.Float
}

// ConstArray returns an array of n copies of v, of type typ.
func ConstArray(mem memory.Allocator, typ arrow.DataType, v Value, n int) arrow.Array {
	b := array.NewBuilder(mem, typ)
	defer b.Release()
	b.Reserve(n)
	if v.IsNull() {
		b.AppendNulls(n)
	} else {
		for i := 0; i < n; i++ {
			AppendValue(b, v)
		}
	}
	return b.NewArray()
}

// ParseLiteral converts the text of a literal (a DEFAULT clause, a CSV
// field) to a physical Value of type t.
func ParseLiteral(t Type, text string) (Value, error) {
	s := strings.TrimSpace(text)
	switch t.Kind {
	case Boolean:
		switch strings.ToLower(s) {
		case "true", "1":
			return IntVal(1), nil
		case "false", "0":
			return IntVal(0), nil
		}
	case TinyInt, SmallInt, Int, BigInt:
		n, err := strconv.ParseInt(s, 10, 64)
		if err == nil {
			if err := CheckIntRange(t, n); err != nil {
				return Null, err
			}
			return IntVal(n), nil
		}
	case Float, Double:
		f, err := strconv.ParseFloat(s, 64)
		if err == nil {
			return FloatVal(f), nil
		}
	case Decimal:
		// Exact, rounded half away from zero, as SQL literals and loads.
		n, err := decimal.Parse(s, t.Decimal())
		if err != nil {
			return Null, err
		}
		return DecimalVal(n), nil
	case String, Varchar, Char:
		if t.Length > 0 && len([]rune(text)) > t.Length {
			return Null, rowttl.Errorf(rowttl.ErrInvalidArgument, "value %q is longer than %s", text, t)
		}
		return BytesVal([]byte(text)), nil
	case Date:
		d, err := ParseDate(s)
		if err != nil {
			return Null, err
		}
		return IntVal(int64(d)), nil
	case Datetime, TimestampTZ:
		us, err := ParseDatetime(s)
		if err != nil {
			return Null, err
		}
		return IntVal(TruncateMicros(us, t.Precision)), nil
	case TimestampNS:
		us, err := ParseDatetime(s)
		if err != nil {
			return Null, err
		}
		return IntVal(us * 1000), nil
	}
	return Null, rowttl.Errorf(rowttl.ErrInvalidArgument, "invalid %s value %q", t, text)
}

// CheckIntRange reports an integer that does not fit an integer type.
func CheckIntRange(t Type, n int64) error {
	var lo, hi int64
	switch t.Kind {
	case TinyInt:
		lo, hi = math.MinInt8, math.MaxInt8
	case SmallInt:
		lo, hi = math.MinInt16, math.MaxInt16
	case Int:
		lo, hi = math.MinInt32, math.MaxInt32
	default:
		return nil
	}
	if n < lo || n > hi {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "value %d is out of range for %s", n, t)
	}
	return nil
}
