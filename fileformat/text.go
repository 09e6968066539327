package fileformat

import (
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/schema"
)

// The text of values, as rowttl's SQL prints them and package load reads
// them back: DATE as YYYY-MM-DD, DATETIME(p) with p fraction digits,
// TIMESTAMPTZ in UTC with "+00:00", BOOLEAN as true/false, floats in the
// shortest form that reads back exactly, DECIMAL with its scale's digits.

// appendText appends the text of a non-null value of type t.
func appendText(b []byte, v schema.Value, t schema.Type) []byte {
	switch t.Kind {
	case schema.Boolean:
		return appendBool(b, v.Int != 0)
	case schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt:
		return strconv.AppendInt(b, v.Int, 10)
	case schema.Float:
		return strconv.AppendFloat(b, v.Float, 'g', -1, 32)
	case schema.Double:
		return strconv.AppendFloat(b, v.Float, 'g', -1, 64)
	case schema.Decimal:
		return appendDecimal(b, v.Decimal(), t.Scale)
	case schema.String, schema.Varchar, schema.Char:
		return append(b, v.Bytes...)
	case schema.Date:
		return appendDate(b, v.Int)
	case schema.Datetime:
		return appendDatetime(b, v.Int, t.Precision)
	case schema.TimestampTZ:
		return append(appendDatetime(b, v.Int, t.Precision), "+00:00"...)
	case schema.TimestampNS:
		us := floorDiv(v.Int, 1000)
		b = appendDatetime(b, us, 6)
		return appendDigits(b, v.Int-us*1000, 3)
	}
	switch v.Kind {
	case schema.IntValue:
		return strconv.AppendInt(b, v.Int, 10)
	case schema.FloatValue:
		return strconv.AppendFloat(b, v.Float, 'g', -1, 64)
	}
	return append(b, v.Bytes...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// appendDecimal appends an unscaled decimal with scale fraction digits.
func appendDecimal(b []byte, n decimal128.Num, scale int) []byte {
	return append(b, decimal.Format(n, scale)...)
}

// civil returns the proleptic Gregorian date of a day count from
// 1970-01-01 (Howard Hinnant's algorithm).
func civil(days int64) (y, m, d int64) {
	z := days + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func appendDigits(b []byte, n int64, width int) []byte {
	var buf [20]byte
	i := len(buf)
	for n > 0 || width > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		width--
	}
	return append(b, buf[i:]...)
}

func appendDate(b []byte, days int64) []byte {
	y, m, d := civil(days)
	if y < 0 || y > 9999 {
		// Outside what DATE texts carry; still readable by people.
		b = strconv.AppendInt(b, y, 10)
	} else {
		b = appendDigits(b, y, 4)
	}
	b = append(b, '-')
	b = appendDigits(b, m, 2)
	b = append(b, '-')
	return appendDigits(b, d, 2)
}

func appendDatetime(b []byte, us int64, p int) []byte {
	days := floorDiv(us, microsPerDay)
	rem := us - days*microsPerDay
	b = appendDate(b, days)
	secs := rem / 1_000_000
	frac := rem % 1_000_000
	b = append(b, ' ')
	b = appendDigits(b, secs/3600, 2)
	b = append(b, ':')
	b = appendDigits(b, secs/60%60, 2)
	b = append(b, ':')
	b = appendDigits(b, secs%60, 2)
	if p > 0 {
		b = append(b, '.')
		b = appendDigits(b, frac/pow10i(6-min(p, 6)), min(p, 6))
	}
	return b
}

func pow10i(n int) int64 {
	p := int64(1)
	for ; n > 0; n-- {
		p *= 10
	}
	return p
}
