package sql

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
)

// Values travel through the executor as schema.Value (the physical scalar)
// next to a static schema.Type decided when the statement is compiled:
//
//	BOOLEAN, TINYINT..BIGINT  IntValue (0/1 for BOOLEAN)
//	FLOAT, DOUBLE             FloatValue
//	DECIMAL(p,s)              DecimalValue: the 128-bit unscaled integer
//	STRING, VARCHAR, CHAR     BytesValue
//	DATE                      IntValue, days since 1970-01-01
//	DATETIME(p)               IntValue, wall clock µs (no zone)
//	TIMESTAMPTZ(p)            IntValue, instant µs since the epoch
//	TIMESTAMP_NS              IntValue, wall clock ns
//
// nullType (Kind Invalid) is the type of a bare NULL literal: it converts
// to every type.

var nullType = schema.Type{Kind: schema.Invalid}

func isNullType(t schema.Type) bool { return t.Kind == schema.Invalid }

// isIntLike reports BOOLEAN and the integer kinds.
func isIntLike(t schema.Type) bool { return t.Kind == schema.Boolean || t.IsInteger() }

// isNumeric reports the types arithmetic accepts directly.
func isNumeric(t schema.Type) bool {
	switch t.Kind {
	case schema.Float, schema.Double, schema.Decimal:
		return true
	}
	return isIntLike(t)
}

func isFloat(t schema.Type) bool { return t.Kind == schema.Float || t.Kind == schema.Double }

var (
	bigintType = schema.BigIntType
	doubleType = schema.DoubleType
	stringType = schema.StringType
	boolType   = schema.BooleanType
)

const (
	microsPerSecond = int64(1_000_000)
	microsPerDay    = 86400 * microsPerSecond
)

func invalidf(format string, args ...any) error {
	return rowttl.Errorf(rowttl.ErrInvalidArgument, format, args...)
}

func unsupportedf(format string, args ...any) error {
	return rowttl.Errorf(rowttl.ErrNotSupported, format, args...)
}

func notFoundf(format string, args ...any) error {
	return rowttl.Errorf(rowttl.ErrNotFound, format, args...)
}

// toFloat returns a numeric value as float64 (decimals scaled, to the
// nearest double).
func toFloat(v schema.Value, t schema.Type) float64 {
	switch v.Kind {
	case schema.FloatValue:
		return v.Float
	case schema.DecimalValue:
		return decimal.ToFloat64(v.Decimal(), t.Scale)
	case schema.IntValue:
		if t.Kind == schema.Decimal {
			return decimal.ToFloat64(v.Decimal(), t.Scale)
		}
		return float64(v.Int)
	}
	return 0
}

// intDigits is the number of decimal digits of an integer type: the
// precision of the DECIMAL(digits, 0) it is in arithmetic and comparisons
// with a DECIMAL.
func intDigits(t schema.Type) int {
	switch t.Kind {
	case schema.Boolean:
		return 1
	case schema.TinyInt:
		return 3
	case schema.SmallInt:
		return 5
	case schema.Int:
		return 10
	}
	return 19
}

// smallestIntType is the type Doris gives an integer literal: the smallest
// integer type that holds it.
func smallestIntType(n int64) schema.Type {
	switch {
	case n >= math.MinInt8 && n <= math.MaxInt8:
		return schema.TinyIntType
	case n >= math.MinInt16 && n <= math.MaxInt16:
		return schema.SmallIntType
	case n >= math.MinInt32 && n <= math.MaxInt32:
		return schema.IntType
	}
	return bigintType
}

// floorDiv divides rounding towards negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// parseInstant parses a TIMESTAMPTZ text: a DATETIME text optionally
// followed by a zone (Z, UTC, +HH:MM, -HH:MM, +HHMM, an IANA name after a
// space). Without a zone the text is read in loc.
func parseInstant(s string, loc *time.Location) (int64, error) {
	s = strings.TrimSpace(s)
	body, zone := s, loc
	if strings.HasSuffix(s, "Z") {
		body, zone = s[:len(s)-1], time.UTC
	} else if i := strings.LastIndexAny(s, "+-"); i > 10 {
		if off, ok := ttlcol.ParseOffset(s[i:]); ok && off > -15*3600 && off < 15*3600 {
			body, zone = s[:i], time.FixedZone(s[i:], off)
		}
	} else if i := strings.LastIndexByte(s, ' '); i > 10 && !strings.Contains(s[i:], ":") {
		if l, err := loadZone(strings.TrimSpace(s[i+1:])); err == nil {
			body, zone = s[:i], l
		}
	}
	wall, err := schema.ParseDatetime(strings.TrimSpace(body))
	if err != nil {
		return 0, invalidf("invalid TIMESTAMPTZ value %q", s)
	}
	return schema.WallToInstant(wall, zone), nil
}

// loadZone resolves a session time zone: UTC, Z, a ±HH:MM offset or an IANA
// name.
func loadZone(name string) (*time.Location, error) {
	n := strings.TrimSpace(name)
	switch strings.ToUpper(n) {
	case "UTC", "Z", "GMT", "+00:00", "-00:00", "ETC/UTC":
		return time.UTC, nil
	case "CST":
		// Doris reads CST as China Standard Time.
		n = "Asia/Shanghai"
	}
	if n == "" {
		return nil, invalidf("empty time zone")
	}
	if n[0] == '+' || n[0] == '-' {
		off, ok := ttlcol.ParseOffset(n)
		if !ok || off < ttlcol.MinZoneOffset || off > ttlcol.MaxZoneOffset {
			return nil, invalidf("unknown or incorrect time zone: '%s'", name)
		}
		return time.FixedZone(formatOffset(off), off), nil
	}
	l, err := time.LoadLocation(n)
	if err != nil || strings.EqualFold(n, "local") {
		return nil, invalidf("unknown or incorrect time zone: '%s'", name)
	}
	return l, nil
}

func formatOffset(off int) string {
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%c%02d:%02d", sign, off/3600, off%3600/60)
}

// ---------------------------------------------------------------------------
// Casts

// caster converts a value of one type to another; it is built once per
// expression. Failures are errors (the dialect's casts are strict).
type caster func(v schema.Value) (schema.Value, error)

func identity(v schema.Value) (schema.Value, error) { return v, nil }

// castFunc returns the conversion from one type to another, or an error
// when no conversion exists. loc reads wall clocks as instants and back.
func castFunc(from, to schema.Type, loc *time.Location) (caster, error) {
	if isNullType(from) {
		return func(schema.Value) (schema.Value, error) { return schema.Null, nil }, nil
	}
	if isNullType(to) || sameRepr(from, to) {
		return identity, nil
	}
	bad := func(v schema.Value) error {
		return invalidf("cannot convert %s value %s to %s", from, renderValue(v, from, loc), to)
	}
	nn := func(f caster) caster {
		return func(v schema.Value) (schema.Value, error) {
			if v.IsNull() {
				return v, nil
			}
			return f(v)
		}
	}
	switch to.Kind {
	case schema.Boolean:
		switch {
		case isNumeric(from):
			return nn(func(v schema.Value) (schema.Value, error) {
				return boolVal(toFloat(v, from) != 0), nil
			}), nil
		case from.IsString():
			return nn(func(v schema.Value) (schema.Value, error) {
				switch strings.ToLower(strings.TrimSpace(string(v.Bytes))) {
				case "true", "1":
					return boolVal(true), nil
				case "false", "0":
					return boolVal(false), nil
				}
				if f, err := strconv.ParseFloat(strings.TrimSpace(string(v.Bytes)), 64); err == nil {
					return boolVal(f != 0), nil
				}
				return schema.Null, bad(v)
			}), nil
		}
	case schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt:
		check := func(n int64, v schema.Value) (schema.Value, error) {
			if err := schema.CheckIntRange(to, n); err != nil {
				return schema.Null, err
			}
			return schema.IntVal(n), nil
		}
		switch {
		case isIntLike(from):
			return nn(func(v schema.Value) (schema.Value, error) { return check(v.Int, v) }), nil
		case from.Kind == schema.Decimal:
			return nn(func(v schema.Value) (schema.Value, error) {
				n, ok := decimal.ToInt64(v.Decimal(), from.Scale)
				if !ok {
					return schema.Null, invalidf("value %s is out of range for %s", renderValue(v, from, loc), to)
				}
				return check(n, v)
			}), nil
		case isFloat(from):
			return nn(func(v schema.Value) (schema.Value, error) {
				f := math.Trunc(toFloat(v, from))
				if math.IsNaN(f) || f < -9.223372036854775e18 || f >= 9.223372036854775e18 {
					return schema.Null, invalidf("value %s is out of range for %s", renderValue(v, from, loc), to)
				}
				return check(int64(f), v)
			}), nil
		case from.IsString():
			return nn(func(v schema.Value) (schema.Value, error) {
				s := strings.TrimSpace(string(v.Bytes))
				if n, err := strconv.ParseInt(s, 10, 64); err == nil {
					return check(n, v)
				}
				if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && math.Abs(f) < 9.2e18 {
					return check(int64(math.Trunc(f)), v)
				}
				return schema.Null, bad(v)
			}), nil
		case from.Kind == schema.Date:
			return nn(func(v schema.Value) (schema.Value, error) {
				t := time.Unix(v.Int*86400, 0).UTC()
				return check(int64(t.Year())*10000+int64(t.Month())*100+int64(t.Day()), v)
			}), nil
		case from.Kind == schema.Datetime:
			return nn(func(v schema.Value) (schema.Value, error) {
				t := time.UnixMicro(v.Int).UTC()
				n := int64(t.Year())*10000000000 + int64(t.Month())*100000000 + int64(t.Day())*1000000 +
					int64(t.Hour())*10000 + int64(t.Minute())*100 + int64(t.Second())
				return check(n, v)
			}), nil
		}
	case schema.Float, schema.Double:
		switch {
		case isNumeric(from):
			return nn(func(v schema.Value) (schema.Value, error) {
				f := toFloat(v, from)
				if to.Kind == schema.Float {
					f = float64(float32(f))
				}
				return schema.FloatVal(f), nil
			}), nil
		case from.IsString():
			return nn(func(v schema.Value) (schema.Value, error) {
				f, err := strconv.ParseFloat(strings.TrimSpace(string(v.Bytes)), 64)
				if err != nil {
					return schema.Null, bad(v)
				}
				if to.Kind == schema.Float {
					f = float64(float32(f))
				}
				return schema.FloatVal(f), nil
			}), nil
		}
	case schema.Decimal:
		dt := to.Decimal()
		outOfRange := func(v schema.Value) error {
			return invalidf("value %s is out of range for %s", renderValue(v, from, loc), to)
		}
		switch {
		case from.Kind == schema.Decimal:
			return nn(func(v schema.Value) (schema.Value, error) {
				n, ok := decimal.Convert(v.Decimal(), from.Scale, dt)
				if !ok {
					return schema.Null, outOfRange(v)
				}
				return schema.DecimalVal(n), nil
			}), nil
		case isIntLike(from):
			return nn(func(v schema.Value) (schema.Value, error) {
				n, ok := decimal.FromInt64(v.Int, dt)
				if !ok {
					return schema.Null, outOfRange(v)
				}
				return schema.DecimalVal(n), nil
			}), nil
		case isFloat(from):
			return nn(func(v schema.Value) (schema.Value, error) {
				n, err := decimal.FromFloat64(v.Float, dt)
				if err != nil {
					return schema.Null, outOfRange(v)
				}
				return schema.DecimalVal(n), nil
			}), nil
		case from.IsString():
			return nn(func(v schema.Value) (schema.Value, error) {
				n, st := decimal.ParseStatus(string(v.Bytes), dt)
				switch st {
				case decimal.StatusOverflow:
					return schema.Null, outOfRange(v)
				case decimal.StatusInvalid:
					return schema.Null, bad(v)
				}
				return schema.DecimalVal(n), nil
			}), nil
		}
	case schema.String, schema.Varchar, schema.Char:
		// Lengths are checked where values are stored, never truncated.
		return nn(func(v schema.Value) (schema.Value, error) {
			return schema.BytesVal([]byte(renderValue(v, from, loc))), nil
		}), nil
	case schema.Date:
		switch from.Kind {
		case schema.Datetime:
			return nn(func(v schema.Value) (schema.Value, error) { return schema.IntVal(floorDiv(v.Int, microsPerDay)), nil }), nil
		case schema.TimestampTZ:
			return nn(func(v schema.Value) (schema.Value, error) {
				return schema.IntVal(floorDiv(schema.InstantToWall(v.Int, loc), microsPerDay)), nil
			}), nil
		case schema.TimestampNS:
			return nn(func(v schema.Value) (schema.Value, error) {
				return schema.IntVal(floorDiv(v.Int, microsPerDay*1000)), nil
			}), nil
		case schema.String, schema.Varchar, schema.Char:
			return nn(func(v schema.Value) (schema.Value, error) {
				d, err := schema.ParseDate(string(v.Bytes))
				if err != nil {
					return schema.Null, err
				}
				return schema.IntVal(int64(d)), nil
			}), nil
		case schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt:
			return nn(func(v schema.Value) (schema.Value, error) {
				us, ok := intToDatetime(v.Int)
				if !ok {
					return schema.Null, bad(v)
				}
				return schema.IntVal(floorDiv(us, microsPerDay)), nil
			}), nil
		}
	case schema.Datetime:
		p := to.Precision
		switch from.Kind {
		case schema.Date:
			return nn(func(v schema.Value) (schema.Value, error) { return schema.IntVal(v.Int * microsPerDay), nil }), nil
		case schema.Datetime:
			return nn(func(v schema.Value) (schema.Value, error) { return schema.IntVal(schema.TruncateMicros(v.Int, p)), nil }), nil
		case schema.TimestampTZ:
			return nn(func(v schema.Value) (schema.Value, error) {
				return schema.IntVal(schema.TruncateMicros(schema.InstantToWall(v.Int, loc), p)), nil
			}), nil
		case schema.TimestampNS:
			return nn(func(v schema.Value) (schema.Value, error) {
				return schema.IntVal(schema.TruncateMicros(floorDiv(v.Int, 1000), p)), nil
			}), nil
		case schema.String, schema.Varchar, schema.Char:
			return nn(func(v schema.Value) (schema.Value, error) {
				us, err := schema.ParseDatetime(string(v.Bytes))
				if err != nil {
					return schema.Null, err
				}
				return schema.IntVal(schema.TruncateMicros(us, p)), nil
			}), nil
		case schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt:
			return nn(func(v schema.Value) (schema.Value, error) {
				us, ok := intToDatetime(v.Int)
				if !ok {
					return schema.Null, bad(v)
				}
				return schema.IntVal(us), nil
			}), nil
		}
	case schema.TimestampTZ:
		p := to.Precision
		switch from.Kind {
		case schema.Date:
			return nn(func(v schema.Value) (schema.Value, error) {
				return schema.IntVal(schema.WallToInstant(v.Int*microsPerDay, loc)), nil
			}), nil
		case schema.Datetime:
			return nn(func(v schema.Value) (schema.Value, error) {
				return schema.IntVal(schema.TruncateMicros(schema.WallToInstant(v.Int, loc), p)), nil
			}), nil
		case schema.TimestampTZ:
			return nn(func(v schema.Value) (schema.Value, error) { return schema.IntVal(schema.TruncateMicros(v.Int, p)), nil }), nil
		case schema.String, schema.Varchar, schema.Char:
			return nn(func(v schema.Value) (schema.Value, error) {
				us, err := parseInstant(string(v.Bytes), loc)
				if err != nil {
					return schema.Null, err
				}
				return schema.IntVal(schema.TruncateMicros(us, p)), nil
			}), nil
		}
	case schema.TimestampNS:
		switch from.Kind {
		case schema.Date:
			return nn(func(v schema.Value) (schema.Value, error) { return schema.IntVal(v.Int * microsPerDay * 1000), nil }), nil
		case schema.Datetime:
			return nn(func(v schema.Value) (schema.Value, error) { return schema.IntVal(v.Int * 1000), nil }), nil
		case schema.TimestampTZ:
			return nn(func(v schema.Value) (schema.Value, error) {
				return schema.IntVal(schema.InstantToWall(v.Int, loc) * 1000), nil
			}), nil
		case schema.String, schema.Varchar, schema.Char:
			return nn(func(v schema.Value) (schema.Value, error) {
				ns, err := parseNanos(string(v.Bytes))
				if err != nil {
					return schema.Null, err
				}
				return schema.IntVal(ns), nil
			}), nil
		}
	}
	return nil, invalidf("cannot convert %s to %s", from, to)
}

// sameRepr reports types whose values need no conversion between them.
func sameRepr(a, b schema.Type) bool {
	if a == b {
		return true
	}
	switch {
	case a.IsString() && b.IsString():
		return true
	case a.Kind == b.Kind && (a.Kind == schema.Float || a.Kind == schema.Double):
		return true
	case b.Kind == schema.BigInt && (a.Kind == schema.TinyInt || a.Kind == schema.SmallInt || a.Kind == schema.Int):
		return true
	case a.Kind == schema.Float && b.Kind == schema.Double:
		return true
	case (a.Kind == schema.Datetime || a.Kind == schema.TimestampTZ) && a.Kind == b.Kind && a.Precision <= b.Precision:
		return true
	case a.Kind == schema.Decimal && b.Kind == schema.Decimal && a.Scale == b.Scale && a.Precision <= b.Precision:
		return true
	}
	return false
}

// intToDatetime reads YYYYMMDD or YYYYMMDDHHMMSS.
func intToDatetime(n int64) (int64, bool) {
	s := strconv.FormatInt(n, 10)
	var text string
	switch len(s) {
	case 8:
		text = s[:4] + "-" + s[4:6] + "-" + s[6:]
	case 14:
		text = s[:4] + "-" + s[4:6] + "-" + s[6:8] + " " + s[8:10] + ":" + s[10:12] + ":" + s[12:]
	default:
		return 0, false
	}
	us, err := schema.ParseDatetime(text)
	return us, err == nil
}

// parseNanos parses a DATETIME text keeping up to 9 fractional digits.
func parseNanos(s string) (int64, error) {
	s = strings.TrimSpace(s)
	frac := ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		frac = s[i+1:]
		s = s[:i]
	}
	us, err := schema.ParseDatetime(s)
	if err != nil {
		return 0, err
	}
	if len(frac) > 9 {
		return 0, invalidf("invalid TIMESTAMP_NS fraction %q", frac)
	}
	for len(frac) < 9 {
		frac += "0"
	}
	n, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, invalidf("invalid TIMESTAMP_NS fraction %q", frac)
	}
	return us*1000 + n, nil
}

func boolVal(b bool) schema.Value {
	if b {
		return schema.IntVal(1)
	}
	return schema.IntVal(0)
}

// ---------------------------------------------------------------------------
// Common types

// unify returns the type that values of every given type convert to, for
// CASE, COALESCE, IF, IN lists and UNION-like positions. NULL types are
// ignored; all NULL gives nullType.
func unify(ts ...schema.Type) schema.Type {
	out := nullType
	for _, t := range ts {
		if isNullType(t) {
			continue
		}
		if isNullType(out) {
			out = t
			continue
		}
		out = unify2(out, t)
	}
	return out
}

func unify2(a, b schema.Type) schema.Type {
	switch {
	case a == b:
		return a
	case a.IsString() && b.IsString():
		return stringType
	case isIntLike(a) && isIntLike(b):
		if a.Kind == schema.Boolean && b.Kind == schema.Boolean {
			return boolType
		}
		return bigintType
	case isExact(a) && isExact(b):
		// DECIMAL next to DECIMAL or an integer: enough integer and
		// fractional digits for both, capped at 38.
		da, db := exactType(a), exactType(b)
		s := max(da.Scale, db.Scale)
		p := min(max(da.Precision-da.Scale, db.Precision-db.Scale)+s, decimal.MaxPrecision)
		return schema.DecimalType(max(p, s), s)
	case isNumeric(a) && isNumeric(b):
		return doubleType
	case a.Kind == schema.TimestampTZ || b.Kind == schema.TimestampTZ:
		if isTemporalOrString(a) && isTemporalOrString(b) {
			return schema.TimestampTZType(max(a.Precision, b.Precision))
		}
	case isTemporalOrString(a) && isTemporalOrString(b):
		if a.Kind == schema.Date && b.Kind == schema.Date {
			return a
		}
		if a.Kind == schema.TimestampNS || b.Kind == schema.TimestampNS {
			return schema.Type{Kind: schema.TimestampNS}
		}
		if a.IsString() || b.IsString() {
			// A text next to a date/time is read as that date/time.
			if a.IsString() {
				return b
			}
			return a
		}
		pa, pb := a.Precision, b.Precision
		return schema.DatetimeType(max(pa, pb))
	}
	return stringType
}

func isTemporalOrString(t schema.Type) bool { return t.IsTemporal() || t.IsString() }

// isExact reports DECIMAL and the integer kinds: the types whose values
// DECIMAL arithmetic and comparisons take exactly.
func isExact(t schema.Type) bool { return t.Kind == schema.Decimal || isIntLike(t) }

// exactType is the DECIMAL type of an exact type: itself, or DECIMAL(digits,
// 0) for an integer type.
func exactType(t schema.Type) decimal.Type {
	if t.Kind == schema.Decimal {
		return t.Decimal()
	}
	return decimal.IntegerType(intDigits(t))
}
