package query

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
)

// ttlSlot is the logical position of the hidden __TTL__ column: one past the
// user columns.
func (s *Snapshot) ttlSlot() int { return len(s.Schema.Columns) }

// resolve maps a column name to its logical slot and the type a user sees.
func (s *Snapshot) resolve(name string) (int, schema.Type, error) {
	if schema.IsTTLName(name) {
		if s.Policy.Mode == ttlcol.NoTTL {
			return 0, schema.Type{}, rowttl.Errorf(rowttl.ErrNotFound, "table has no row TTL, unknown column %s", name)
		}
		return s.ttlSlot(), s.TTLType(), nil
	}
	i := s.Schema.Index(name)
	if i < 0 {
		return 0, schema.Type{}, rowttl.Errorf(rowttl.ErrNotFound, "unknown column %s", name)
	}
	return i, s.Schema.Columns[i].Type, nil
}

// TTLType is the type __TTL__ is shown with: the source column's type in
// source mode, BIGINT in direct mode.
func (s *Snapshot) TTLType() schema.Type {
	if s.Policy.Mode == ttlcol.SourceMode {
		if c, ok := s.Schema.Column(s.Policy.SourceColumn); ok {
			return c.Type
		}
	}
	return schema.BigIntType
}

// toStoredTTL maps a value of the shown __TTL__ type to the stored domain.
// The map is monotonic, so comparisons keep their meaning.
func (s *Snapshot) toStoredTTL(v schema.Value) (schema.Value, error) {
	if v.Kind != schema.IntValue || s.Policy.Mode != ttlcol.SourceMode {
		return v, nil
	}
	var (
		out int64
		ok  bool
	)
	switch s.TTLType().Kind {
	case schema.Date:
		if v.Int < math.MinInt32 || v.Int > math.MaxInt32 {
			return v, rowttl.Errorf(rowttl.ErrInvalidArgument, "date %d out of range", v.Int)
		}
		out, ok = ttlcol.DateToMicros(int32(v.Int), s.Policy.ZoneOffset)
	case schema.Datetime:
		out, ok = ttlcol.DatetimeToMicros(v.Int, s.Policy.ZoneOffset)
	default:
		out, ok = v.Int, true
	}
	if !ok {
		// Saturate: the constant lies beyond every storable instant.
		if v.Int < 0 {
			out = math.MinInt64
		} else {
			out = math.MaxInt64
		}
	}
	return schema.IntVal(out), nil
}

// exactConst reads a Go constant compared with a DECIMAL column exactly:
// its unscaled value and scale. A schema.Value is a value of the column's
// type; integers, floats (by their shortest text), decimal128.Num (at the
// column's scale) and numeric text are accepted.
func exactConst(t schema.Type, v any) (n decimal.Num, scale int, null bool, err error) {
	bad := func() (decimal.Num, int, bool, error) {
		return n, 0, false, rowttl.Errorf(rowttl.ErrInvalidArgument, "cannot compare %s with %T %v exactly", t, v, v)
	}
	text := ""
	switch x := v.(type) {
	case nil:
		return n, 0, true, nil
	case schema.Value:
		if x.IsNull() {
			return n, 0, true, nil
		}
		if x.Kind != schema.DecimalValue && x.Kind != schema.IntValue {
			return bad()
		}
		return x.Decimal(), t.Scale, false, nil
	case decimal.Num:
		return x, t.Scale, false, nil
	case int, int8, int16, int32, int64, uint8, uint16, uint32, uint64, uint:
		text = fmt.Sprint(x)
	case float32:
		text = strconv.FormatFloat(float64(x), 'e', -1, 32)
	case float64:
		text = strconv.FormatFloat(x, 'e', -1, 64)
	case string:
		text = x
	case []byte:
		text = string(x)
	default:
		return bad()
	}
	num, typ, ok := decimal.ParseExact(text)
	if !ok {
		return bad()
	}
	return num, typ.Scale, false, nil
}

// decimalValue converts a Go value written into a DECIMAL column: exact,
// rounded half away from zero to the column's scale as SQL and loads do,
// an error when it does not fit.
func decimalValue(t schema.Type, v any) (schema.Value, error) {
	dt := t.Decimal()
	outOfRange := func() (schema.Value, error) {
		return schema.Null, rowttl.Errorf(rowttl.ErrInvalidArgument, "value %v is out of range for %s", v, t)
	}
	switch x := v.(type) {
	case nil:
		return schema.Null, nil
	case schema.Value:
		return x, nil
	case decimal.Num:
		if !decimal.Fits(x, dt.Precision) {
			return outOfRange()
		}
		return schema.DecimalVal(x), nil
	case float32, float64:
		f, _ := x.(float64)
		if g, ok := x.(float32); ok {
			f = float64(g)
		}
		n, err := decimal.FromFloat64(f, dt)
		if err != nil {
			return outOfRange()
		}
		return schema.DecimalVal(n), nil
	case string, []byte:
		s, _ := x.(string)
		if b, ok := x.([]byte); ok {
			s = string(b)
		}
		n, err := decimal.Parse(s, dt)
		if err != nil {
			return schema.Null, err
		}
		return schema.DecimalVal(n), nil
	}
	if n, ok := toInt64(v); ok {
		d, ok := decimal.FromInt64(n, dt)
		if !ok {
			return outOfRange()
		}
		return schema.DecimalVal(d), nil
	}
	return schema.Null, rowttl.Errorf(rowttl.ErrInvalidArgument, "cannot write %T %v into %s", v, v, t)
}

func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// ToValue converts a Go value to the physical Value of a column type. For
// a DECIMAL column it is the value written (rounded half away from zero to
// the column's scale, an error past its precision); comparisons with a
// DECIMAL column do not round their constant (see exactConst).
func ToValue(t schema.Type, v any) (schema.Value, error) {
	bad := func() (schema.Value, error) {
		return schema.Null, rowttl.Errorf(rowttl.ErrInvalidArgument, "cannot compare %s with %T %v", t, v, v)
	}
	if t.Kind == schema.Decimal {
		return decimalValue(t, v)
	}
	switch x := v.(type) {
	case nil:
		return schema.Null, nil
	case schema.Value:
		return x, nil
	case bool:
		if x {
			return schema.IntVal(1), nil
		}
		return schema.IntVal(0), nil
	case int:
		return numeric(t, int64(x))
	case int8:
		return numeric(t, int64(x))
	case int16:
		return numeric(t, int64(x))
	case int32:
		return numeric(t, int64(x))
	case int64:
		return numeric(t, x)
	case uint8:
		return numeric(t, int64(x))
	case uint16:
		return numeric(t, int64(x))
	case uint32:
		return numeric(t, int64(x))
	case float32:
		return schema.FloatVal(float64(x)), nil
	case float64:
		return schema.FloatVal(x), nil
	case []byte:
		if !t.IsString() {
			return bad()
		}
		return schema.BytesVal(x), nil
	case string:
		switch {
		case t.IsString():
			return schema.BytesVal([]byte(x)), nil
		case t.IsInteger():
			n, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				return bad()
			}
			return schema.IntVal(n), nil
		}
		val, err := schema.ParseLiteral(t, x)
		if err != nil {
			return schema.Null, err
		}
		return val, nil
	case time.Time:
		switch t.Kind {
		case schema.Date:
			return schema.IntVal(int64(schema.DateFromTime(x))), nil
		case schema.Datetime:
			return schema.IntVal(schema.DatetimeFromTime(x)), nil
		case schema.TimestampTZ:
			return schema.IntVal(x.UnixMicro()), nil
		case schema.TimestampNS:
			return schema.IntVal(schema.DatetimeFromTime(x)*1000 + int64(x.Nanosecond()%1000)), nil
		case schema.BigInt:
			return schema.IntVal(x.UnixMicro()), nil
		}
		return bad()
	}
	return bad()
}

func numeric(t schema.Type, n int64) (schema.Value, error) {
	if t.Kind == schema.Float || t.Kind == schema.Double {
		return schema.FloatVal(float64(n)), nil
	}
	return schema.IntVal(n), nil
}
