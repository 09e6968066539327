package load

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql"
)

// A converter reads one field's text as a value of its field's type. The
// value may alias the text.
type converter func(text []byte) (schema.Value, error)

// nullText is how a CSV field says NULL.
var nullText = []byte(`\N`)

// converterFor returns the converter of a field. Conversions are strict,
// as Doris's strict mode: a text that is not a valid value of the type (an
// empty one included, except for strings) is an error, never NULL.
func converterFor(f sql.LoadField, loc *time.Location) (converter, error) {
	if f.TTL {
		return func(text []byte) (schema.Value, error) {
			n, ok := parseInt(bytes.TrimSpace(text))
			if !ok {
				return schema.Null, fmt.Errorf("%s takes integer epoch microseconds, not %q; to load a date or time, name the field otherwise and derive the column, e.g. %s=cast(field as datetime(6))",
					schema.TTLAlias, clip(text), schema.TTLAlias)
			}
			return schema.IntVal(n), nil
		}, nil
	}
	t := f.Type
	switch t.Kind {
	case schema.String, schema.Varchar, schema.Char:
		return func(text []byte) (schema.Value, error) { return schema.BytesVal(text), nil }, nil
	case schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt:
		return func(text []byte) (schema.Value, error) {
			n, ok := parseInt(bytes.TrimSpace(text))
			if !ok {
				return schema.Null, fmt.Errorf("invalid %s value %q", t, clip(text))
			}
			if err := schema.CheckIntRange(t, n); err != nil {
				return schema.Null, err
			}
			return schema.IntVal(n), nil
		}, nil
	case schema.Float, schema.Double:
		bits := 64
		if t.Kind == schema.Float {
			bits = 32
		}
		return func(text []byte) (schema.Value, error) {
			x, err := strconv.ParseFloat(string(bytes.TrimSpace(text)), bits)
			if err != nil {
				return schema.Null, fmt.Errorf("invalid %s value %q", t, clip(text))
			}
			return schema.FloatVal(x), nil
		}, nil
	case schema.Boolean:
		return func(text []byte) (schema.Value, error) {
			s := bytes.TrimSpace(text)
			switch {
			case bytes.EqualFold(s, []byte("true")) || bytes.Equal(s, []byte("1")):
				return schema.IntVal(1), nil
			case bytes.EqualFold(s, []byte("false")) || bytes.Equal(s, []byte("0")):
				return schema.IntVal(0), nil
			}
			return schema.Null, fmt.Errorf("invalid BOOLEAN value %q", clip(text))
		}, nil
	case schema.Date:
		return func(text []byte) (schema.Value, error) {
			s := bytes.TrimSpace(text)
			if us, ok := fastDatetime(s); ok && us%microsPerDay == 0 {
				return schema.IntVal(us / microsPerDay), nil
			}
			d, err := schema.ParseDate(string(s))
			if err != nil {
				return schema.Null, err
			}
			return schema.IntVal(int64(d)), nil
		}, nil
	case schema.Datetime:
		p := t.Precision
		return func(text []byte) (schema.Value, error) {
			s := bytes.TrimSpace(text)
			us, ok := fastDatetime(s)
			if !ok {
				var err error
				if us, err = schema.ParseDatetime(string(s)); err != nil {
					return schema.Null, err
				}
			}
			return schema.IntVal(schema.TruncateMicros(us, p)), nil
		}, nil
	}
	conv, err := sql.TextConverter(t, loc)
	if err != nil {
		return nil, err
	}
	return func(text []byte) (schema.Value, error) {
		if len(bytes.TrimSpace(text)) == 0 {
			return schema.Null, fmt.Errorf("invalid %s value %q", t, text)
		}
		return conv(text)
	}, nil
}

// clip shortens a text for a message.
func clip(b []byte) string {
	const max = 64
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

// parseInt parses an optionally signed decimal integer without allocating.
func parseInt(s []byte) (int64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	neg := false
	switch s[0] {
	case '-':
		neg = true
		s = s[1:]
	case '+':
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

const microsPerDay = 86400 * 1000000

// fastDatetime parses the canonical forms 'YYYY-MM-DD' and
// 'YYYY-MM-DD HH:MM:SS[.f…]' (up to 9 fraction digits, truncated to µs).
// It returns false for anything else, which schema.ParseDatetime then
// judges, so it only has to be right on what it accepts.
func fastDatetime(s []byte) (int64, bool) {
	if len(s) != 10 && (len(s) < 19 || len(s) == 20 || len(s) > 29) {
		return 0, false
	}
	num := func(b []byte) (int, bool) {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	if s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	y, ok1 := num(s[0:4])
	mo, ok2 := num(s[5:7])
	d, ok3 := num(s[8:10])
	if !ok1 || !ok2 || !ok3 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) {
		return 0, false
	}
	var h, mi, sec, frac int
	if len(s) > 10 {
		if s[10] != ' ' && s[10] != 'T' || s[13] != ':' || s[16] != ':' {
			return 0, false
		}
		var ok4, ok5, ok6 bool
		h, ok4 = num(s[11:13])
		mi, ok5 = num(s[14:16])
		sec, ok6 = num(s[17:19])
		if !ok4 || !ok5 || !ok6 || h > 23 || mi > 59 || sec > 59 {
			return 0, false
		}
		if len(s) > 19 {
			if s[19] != '.' {
				return 0, false
			}
			fd := s[20:]
			if len(fd) > 6 {
				if _, ok := num(fd[6:]); !ok {
					return 0, false
				}
				fd = fd[:6]
			}
			f, ok := num(fd)
			if !ok {
				return 0, false
			}
			for i := len(fd); i < 6; i++ {
				f *= 10
			}
			frac = f
		}
	}
	days := daysFromCivil(y, mo, d)
	return ((days*24+int64(h))*60+int64(mi))*60_000_000 + int64(sec)*1_000_000 + int64(frac), true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil counts days from 1970-01-01 to a proleptic Gregorian date
// (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// appender appends a value of a column's type to its builder without
// copying strings twice.
type appender func(v schema.Value)

func appenderFor(b array.Builder) appender {
	switch bb := b.(type) {
	case *array.StringBuilder:
		return func(v schema.Value) {
			if v.IsNull() {
				bb.AppendNull()
			} else {
				bb.BinaryBuilder.Append(v.Bytes)
			}
		}
	case *array.Int64Builder:
		return func(v schema.Value) {
			if v.IsNull() {
				bb.AppendNull()
			} else {
				bb.Append(v.Int)
			}
		}
	case *array.Int32Builder:
		return func(v schema.Value) {
			if v.IsNull() {
				bb.AppendNull()
			} else {
				bb.Append(int32(v.Int))
			}
		}
	case *array.TimestampBuilder:
		return func(v schema.Value) {
			if v.IsNull() {
				bb.AppendNull()
			} else {
				bb.Append(arrow.Timestamp(v.Int))
			}
		}
	}
	return func(v schema.Value) { schema.AppendValue(b, v) }
}
