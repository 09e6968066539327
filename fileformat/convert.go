package fileformat

import (
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/schema"
)

// A Conversion reads the values of a file column as values of a rowttl
// type. Values are physical schema.Values as the engine holds them:
// integers, BOOLEAN (0/1), DATE (days), DATETIME (wall-clock µs),
// TIMESTAMPTZ (instant µs) and TIMESTAMP_NS (ns) as Int, DECIMAL as its
// 128-bit unscaled integer at the target's scale, floats as Float,
// strings as Bytes aliasing the array.
type Conversion struct {
	from  schema.Type // the column's type in the file (FileType)
	to    schema.Type
	value func(v schema.Value) (schema.Value, error)
}

// ValueFunc returns element i of the array it was bound to; a non-nil
// error says why that value does not fit the target type (the caller
// filters its row).
type ValueFunc func(i int) (schema.Value, error)

// IsText reports a column of strings or binary: loads read such columns
// with the text conversions of CSV fields, not with a Conversion.
func IsText(dt arrow.DataType) bool {
	switch valueType(dt).ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return true
	}
	return false
}

// NewConversion returns the conversion of the file column f into type to;
// loc is the zone that turns wall clocks (DATE, DATETIME) into instants
// (TIMESTAMPTZ) and back. A pair of types that does not convert is a
// schema mismatch: an error wrapping rowttl.ErrInvalidArgument that names
// the column and both types.
func NewConversion(f arrow.Field, to schema.Type, loc *time.Location) (*Conversion, error) {
	from, err := FileType(f)
	if err != nil {
		return nil, err
	}
	if loc == nil {
		loc = time.UTC
	}
	fn := mapping(from, to, loc)
	if fn == nil {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "column %s: the file's type %s (%s) cannot be loaded into %s", f.Name, f.Type, from, to)
	}
	return &Conversion{from: from, to: to, value: fn}, nil
}

// From returns the rowttl type the column has in the file.
func (c *Conversion) From() schema.Type { return c.from }

// Bind returns the reader of arr's values. arr must have the field's type.
func (c *Conversion) Bind(arr arrow.Array) ValueFunc {
	raw := rawReader(arr)
	value := c.value
	return func(i int) (schema.Value, error) {
		if arr.IsNull(i) {
			return schema.Null, nil
		}
		v, err := raw(i)
		if err != nil {
			return schema.Null, err
		}
		return value(v)
	}
}

// rawReader reads an array's non-null elements as values of its FileType.
func rawReader(arr arrow.Array) func(i int) (schema.Value, error) {
	switch a := arr.(type) {
	case *array.Dictionary:
		inner := rawReader(a.Dictionary())
		return func(i int) (schema.Value, error) { return inner(a.GetValueIndex(i)) }
	case *array.Boolean:
		return func(i int) (schema.Value, error) {
			if a.Value(i) {
				return schema.IntVal(1), nil
			}
			return schema.IntVal(0), nil
		}
	case *array.Int8:
		return func(i int) (schema.Value, error) { return schema.IntVal(int64(a.Value(i))), nil }
	case *array.Int16:
		return func(i int) (schema.Value, error) { return schema.IntVal(int64(a.Value(i))), nil }
	case *array.Int32:
		return func(i int) (schema.Value, error) { return schema.IntVal(int64(a.Value(i))), nil }
	case *array.Int64:
		return func(i int) (schema.Value, error) { return schema.IntVal(a.Value(i)), nil }
	case *array.Uint8:
		return func(i int) (schema.Value, error) { return schema.IntVal(int64(a.Value(i))), nil }
	case *array.Uint16:
		return func(i int) (schema.Value, error) { return schema.IntVal(int64(a.Value(i))), nil }
	case *array.Uint32:
		return func(i int) (schema.Value, error) { return schema.IntVal(int64(a.Value(i))), nil }
	case *array.Uint64:
		return func(i int) (schema.Value, error) {
			u := a.Value(i)
			if u > math.MaxInt64 {
				return schema.Null, fmt.Errorf("value %d is out of range for BIGINT", u)
			}
			return schema.IntVal(int64(u)), nil
		}
	case *array.Float32:
		return func(i int) (schema.Value, error) { return schema.FloatVal(float64(a.Value(i))), nil }
	case *array.Float64:
		return func(i int) (schema.Value, error) { return schema.FloatVal(a.Value(i)), nil }
	case *array.Decimal128:
		return func(i int) (schema.Value, error) { return schema.DecimalVal(a.Value(i)), nil }
	case *array.String:
		return func(i int) (schema.Value, error) {
			return schema.BytesVal(stringBytes(a.Value(i))), nil
		}
	case *array.LargeString:
		return func(i int) (schema.Value, error) { return schema.BytesVal(stringBytes(a.Value(i))), nil }
	case *array.StringView:
		return func(i int) (schema.Value, error) { return schema.BytesVal(stringBytes(a.Value(i))), nil }
	case *array.Binary:
		return func(i int) (schema.Value, error) { return schema.BytesVal(a.Value(i)), nil }
	case *array.LargeBinary:
		return func(i int) (schema.Value, error) { return schema.BytesVal(a.Value(i)), nil }
	case *array.BinaryView:
		return func(i int) (schema.Value, error) { return schema.BytesVal(a.Value(i)), nil }
	case *array.Date32:
		return func(i int) (schema.Value, error) { return schema.IntVal(int64(a.Value(i))), nil }
	case *array.Date64:
		return func(i int) (schema.Value, error) { return schema.IntVal(int64(a.Value(i)) * 1000), nil }
	case *array.Timestamp:
		ts := a.DataType().(*arrow.TimestampType)
		unit := ts.Unit
		if ts.TimeZone == "" && unit == arrow.Nanosecond {
			return func(i int) (schema.Value, error) { return schema.IntVal(int64(a.Value(i))), nil }
		}
		return func(i int) (schema.Value, error) {
			us, ok := toMicros(int64(a.Value(i)), unit)
			if !ok {
				return schema.Null, fmt.Errorf("timestamp %d %s is out of range", a.Value(i), unit)
			}
			return schema.IntVal(us), nil
		}
	}
	return func(int) (schema.Value, error) {
		return schema.Null, fmt.Errorf("unsupported array type %s", arr.DataType())
	}
}

// toMicros converts a timestamp of a unit to microseconds, flooring
// nanoseconds.
func toMicros(v int64, u arrow.TimeUnit) (int64, bool) {
	switch u {
	case arrow.Second:
		if v > math.MaxInt64/1_000_000 || v < math.MinInt64/1_000_000 {
			return 0, false
		}
		return v * 1_000_000, true
	case arrow.Millisecond:
		if v > math.MaxInt64/1000 || v < math.MinInt64/1000 {
			return 0, false
		}
		return v * 1000, true
	case arrow.Nanosecond:
		return floorDiv(v, 1000), true
	}
	return v, true
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

const microsPerDay = 86400 * 1_000_000

// wallToInstant reads a wall clock (µs) in loc.
func wallToInstant(wall int64, loc *time.Location) int64 {
	if loc == time.UTC {
		return wall
	}
	t := time.UnixMicro(wall).UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc).UnixMicro()
}

// instantToWall returns the wall clock (µs) of an instant in loc.
func instantToWall(us int64, loc *time.Location) int64 {
	if loc == time.UTC {
		return us
	}
	return schema.DatetimeFromTime(time.UnixMicro(us).In(loc))
}

// mapping returns the conversion of values of type from into type to, or
// nil when there is none.
func mapping(from, to schema.Type, loc *time.Location) func(schema.Value) (schema.Value, error) {
	id := func(v schema.Value) (schema.Value, error) { return v, nil }
	outOfRange := func(v schema.Value) error {
		return fmt.Errorf("value %s is out of range for %s", render(v, from), to)
	}
	switch {
	case to.IsInteger():
		if !from.IsInteger() {
			return nil
		}
		return func(v schema.Value) (schema.Value, error) {
			if err := schema.CheckIntRange(to, v.Int); err != nil {
				return schema.Null, err
			}
			return v, nil
		}
	case to.Kind == schema.Float || to.Kind == schema.Double:
		round := func(f float64) float64 { return f }
		if to.Kind == schema.Float {
			round = func(f float64) float64 { return float64(float32(f)) }
		}
		switch {
		case from.IsInteger():
			return func(v schema.Value) (schema.Value, error) { return schema.FloatVal(round(float64(v.Int))), nil }
		case from.Kind == schema.Float || from.Kind == schema.Double:
			return func(v schema.Value) (schema.Value, error) { return schema.FloatVal(round(v.Float)), nil }
		case from.Kind == schema.Decimal:
			return func(v schema.Value) (schema.Value, error) {
				return schema.FloatVal(round(decimal.ToFloat64(v.Decimal(), from.Scale))), nil
			}
		}
	case to.Kind == schema.Decimal:
		dt := decimal.Type{Precision: to.Precision, Scale: to.Scale}
		switch {
		case from.IsInteger():
			return func(v schema.Value) (schema.Value, error) {
				n, ok := decimal.FromInt64(v.Int, dt)
				if !ok {
					return schema.Null, outOfRange(v)
				}
				return schema.DecimalVal(n), nil
			}
		case from.Kind == schema.Decimal:
			return func(v schema.Value) (schema.Value, error) {
				// Half away from zero, as every DECIMAL rounding in rowttl.
				n, ok := decimal.Convert(v.Decimal(), from.Scale, dt)
				if !ok {
					return schema.Null, outOfRange(v)
				}
				return schema.DecimalVal(n), nil
			}
		case from.Kind == schema.Float || from.Kind == schema.Double:
			return func(v schema.Value) (schema.Value, error) {
				n, err := decimal.FromFloat64(v.Float, dt)
				if err != nil {
					return schema.Null, outOfRange(v)
				}
				return schema.DecimalVal(n), nil
			}
		}
	case to.Kind == schema.Boolean:
		if from.Kind == schema.Boolean {
			return id
		}
	case to.IsString():
		if from.IsString() {
			return id
		}
	case to.Kind == schema.Date:
		switch from.Kind {
		case schema.Date:
			return id
		case schema.Datetime:
			return func(v schema.Value) (schema.Value, error) { return schema.IntVal(floorDiv(v.Int, microsPerDay)), nil }
		case schema.TimestampTZ:
			return func(v schema.Value) (schema.Value, error) {
				return schema.IntVal(floorDiv(instantToWall(v.Int, loc), microsPerDay)), nil
			}
		}
	case to.Kind == schema.Datetime:
		p := to.Precision
		switch from.Kind {
		case schema.Date:
			return func(v schema.Value) (schema.Value, error) { return schema.IntVal(v.Int * microsPerDay), nil }
		case schema.Datetime:
			if from.Precision <= p {
				return id
			}
			return func(v schema.Value) (schema.Value, error) { return schema.IntVal(schema.TruncateMicros(v.Int, p)), nil }
		case schema.TimestampTZ:
			return func(v schema.Value) (schema.Value, error) {
				return schema.IntVal(schema.TruncateMicros(instantToWall(v.Int, loc), p)), nil
			}
		case schema.TimestampNS:
			return func(v schema.Value) (schema.Value, error) {
				return schema.IntVal(schema.TruncateMicros(floorDiv(v.Int, 1000), p)), nil
			}
		}
	case to.Kind == schema.TimestampTZ:
		p := to.Precision
		switch from.Kind {
		case schema.Date:
			return func(v schema.Value) (schema.Value, error) {
				return schema.IntVal(wallToInstant(v.Int*microsPerDay, loc)), nil
			}
		case schema.Datetime:
			return func(v schema.Value) (schema.Value, error) {
				return schema.IntVal(schema.TruncateMicros(wallToInstant(v.Int, loc), p)), nil
			}
		case schema.TimestampTZ:
			if from.Precision <= p {
				return id
			}
			return func(v schema.Value) (schema.Value, error) { return schema.IntVal(schema.TruncateMicros(v.Int, p)), nil }
		case schema.TimestampNS:
			return func(v schema.Value) (schema.Value, error) {
				return schema.IntVal(schema.TruncateMicros(wallToInstant(floorDiv(v.Int, 1000), loc), p)), nil
			}
		}
	case to.Kind == schema.TimestampNS:
		switch from.Kind {
		case schema.TimestampNS:
			return id
		case schema.Date, schema.Datetime:
			per := int64(1000)
			if from.Kind == schema.Date {
				per = microsPerDay * 1000
			}
			return func(v schema.Value) (schema.Value, error) {
				if v.Int > math.MaxInt64/per || v.Int < math.MinInt64/per {
					return schema.Null, outOfRange(v)
				}
				return schema.IntVal(v.Int * per), nil
			}
		}
	}
	return nil
}

// render writes a value of type t for a message.
func render(v schema.Value, t schema.Type) string {
	var b []byte
	b = appendText(b, v, t)
	return string(b)
}

// stringBytes aliases the bytes of an array's string: values are never
// written through it, and the array outlives the value's use.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// TextValues returns the bytes of element i of a text column (IsText);
// they alias the array. The caller checks nulls.
func TextValues(arr arrow.Array) func(i int) []byte {
	raw := rawReader(arr)
	return func(i int) []byte {
		v, _ := raw(i)
		return v.Bytes
	}
}
