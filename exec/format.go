package exec

import (
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/rowttl/rowttl/schema"
)

// ColumnFormatter returns a function appending the SPEC §4 text of row i
// of a (of SQL type t) to dst: NULL, true/false, integers, DOUBLE in the
// shortest text that reads back exactly, DECIMAL with its scale, DATE,
// DATETIME(p) with p fractional digits, TIMESTAMPTZ(p) as the wall clock of
// loc followed by its offset. With escape, strings are written as `mysql
// -B` writes them: backslash, TAB, newline, carriage return and NUL become
// \\, \t, \n, \r and \0, so that a TSV line reads back field by field.
func ColumnFormatter(a arrow.Array, t schema.Type, loc *time.Location, escape bool) func(dst []byte, i int) []byte {
	null := func(dst []byte) []byte { return append(dst, "NULL"...) }
	switch c := a.(type) {
	case *array.Null:
		return func(dst []byte, _ int) []byte { return null(dst) }
	case *array.Boolean:
		return func(dst []byte, i int) []byte {
			switch {
			case c.IsNull(i):
				return null(dst)
			case c.Value(i):
				return append(dst, "true"...)
			}
			return append(dst, "false"...)
		}
	case *array.Int8:
		return intFormatter(c, func(i int) int64 { return int64(c.Value(i)) })
	case *array.Int16:
		return intFormatter(c, func(i int) int64 { return int64(c.Value(i)) })
	case *array.Int32:
		return intFormatter(c, func(i int) int64 { return int64(c.Value(i)) })
	case *array.Int64:
		return intFormatter(c, func(i int) int64 { return c.Value(i) })
	case *array.Float32:
		return func(dst []byte, i int) []byte {
			if c.IsNull(i) {
				return null(dst)
			}
			return AppendFloat(dst, float64(c.Value(i)), 32)
		}
	case *array.Float64:
		return func(dst []byte, i int) []byte {
			if c.IsNull(i) {
				return null(dst)
			}
			return AppendFloat(dst, c.Value(i), 64)
		}
	case *array.Decimal128:
		scale := int(c.DataType().(*arrow.Decimal128Type).Scale)
		return func(dst []byte, i int) []byte {
			if c.IsNull(i) {
				return null(dst)
			}
			return AppendDecimal(dst, c.Value(i), scale)
		}
	case *array.String:
		return func(dst []byte, i int) []byte {
			if c.IsNull(i) {
				return null(dst)
			}
			if escape {
				return AppendEscaped(dst, c.Value(i))
			}
			return append(dst, c.Value(i)...)
		}
	case *array.Binary:
		return func(dst []byte, i int) []byte {
			if c.IsNull(i) {
				return null(dst)
			}
			if escape {
				return AppendEscaped(dst, string(c.Value(i)))
			}
			return append(dst, c.Value(i)...)
		}
	case *array.Date32:
		return func(dst []byte, i int) []byte {
			if c.IsNull(i) {
				return null(dst)
			}
			return appendDate(dst, int64(c.Value(i)))
		}
	case *array.Timestamp:
		unit := c.DataType().(*arrow.TimestampType).Unit
		return func(dst []byte, i int) []byte {
			if c.IsNull(i) {
				return null(dst)
			}
			v := int64(c.Value(i))
			switch {
			case unit == arrow.Nanosecond:
				us := floorDiv(v, 1000)
				dst = AppendDatetime(dst, us, 6)
				ns := v - us*1000
				return append(dst, byte('0'+ns/100), byte('0'+ns/10%10), byte('0'+ns%10))
			case t.Kind == schema.TimestampTZ:
				tm := time.UnixMicro(v).In(loc)
				_, off := tm.Zone()
				dst = AppendDatetime(dst, schema.DatetimeFromTime(tm), t.Precision)
				return appendOffset(dst, off)
			}
			return AppendDatetime(dst, v, t.Precision)
		}
	}
	return func(dst []byte, i int) []byte {
		if a.IsNull(i) {
			return null(dst)
		}
		return append(dst, a.ValueStr(i)...)
	}
}

func intFormatter(a arrow.Array, v func(i int) int64) func(dst []byte, i int) []byte {
	return func(dst []byte, i int) []byte {
		if a.IsNull(i) {
			return append(dst, "NULL"...)
		}
		return strconv.AppendInt(dst, v(i), 10)
	}
}

// AppendEscaped appends s with backslash, TAB, newline, carriage return and
// NUL escaped as `mysql -B` does.
func AppendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case 0:
			dst = append(dst, '\\', '0')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// AppendFloat appends the shortest text that reads back to f, without an
// exponent for magnitudes in [1e-6, 1e16).
func AppendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	a := math.Abs(f)
	if a == 0 || (a >= 1e-6 && a < 1e16) {
		return strconv.AppendFloat(dst, f, 'f', -1, bits)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

// AppendDecimal appends an unscaled 128-bit decimal with scale digits
// after the point.
func AppendDecimal(dst []byte, v decimal128.Num, scale int) []byte {
	var digits []byte
	neg := v.Sign() < 0
	if v.FitsInPrecision(18) {
		n := v.LowBits()
		if neg {
			n = uint64(-int64(n))
		}
		digits = strconv.AppendUint(nil, n, 10)
	} else {
		b := v.BigInt()
		digits = b.Abs(b).Append(nil, 10)
		_ = big.NewInt
	}
	if neg {
		dst = append(dst, '-')
	}
	if scale <= 0 {
		return append(dst, digits...)
	}
	if len(digits) <= scale {
		dst = append(dst, '0', '.')
		for range scale - len(digits) {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-scale]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-scale:]...)
}

func appendDate(dst []byte, days int64) []byte {
	y, m, d := time.Unix(days*86400, 0).UTC().Date()
	return appendYMD(dst, y, int(m), d)
}

func appendYMD(dst []byte, y, m, d int) []byte {
	if y < 0 || y > 9999 {
		return append(dst, time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Format("2006-01-02")...)
	}
	return append(dst, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
}

// AppendDatetime appends DATETIME µs as YYYY-MM-DD HH:MM:SS, with p
// fractional digits when p > 0.
func AppendDatetime(dst []byte, us int64, p int) []byte {
	t := time.UnixMicro(us).UTC()
	y, m, d := t.Date()
	h, mi, s := t.Clock()
	dst = appendYMD(dst, y, int(m), d)
	dst = append(dst, ' ', byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+s/10), byte('0'+s%10))
	if p > 0 {
		frac := t.Nanosecond() / 1000
		var buf [6]byte
		for k := 5; k >= 0; k-- {
			buf[k] = byte('0' + frac%10)
			frac /= 10
		}
		dst = append(dst, '.')
		dst = append(dst, buf[:min(p, 6)]...)
	}
	return dst
}

func appendOffset(dst []byte, off int) []byte {
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	h, m := off/3600, off%3600/60
	return append(dst, sign, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
