package exec

import (
	"fmt"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// AppendDateFormat appends t (a wall clock: its fields are read as they
// are, in UTC) formatted by the MySQL/Doris DATE_FORMAT specifiers:
//
//	%a Sun..Sat   %b Jan..Dec   %c month 1..12   %D 1st, 2nd, ...
//	%d day 00..31  %e day 0..31  %f microseconds   %H hour 00..23
//	%h, %I hour 01..12  %i minutes 00..59  %j day of year 001..366
//	%k hour 0..23  %l hour 1..12  %M January..December  %m month 00..12
//	%p AM/PM  %r hh:mm:ss AM  %S, %s seconds  %T hh:mm:ss
//	%U week 00..53 (Sunday first)  %u week 00..53 (Monday first)
//	%V, %X week 01..53 and its year (Sunday first, with %X)
//	%v, %x week 01..53 and its year (Monday first, ISO 8601)
//	%W Sunday..Saturday  %w day of week 0 (Sunday)..6  %Y year  %y year 00..99
//	%% a %; %x for any other x is x
//
// Both engines call it, so that they agree.
func AppendDateFormat(dst []byte, t time.Time, format string) []byte {
	pad := func(dst []byte, n, width int) []byte {
		s := strconv.Itoa(n)
		for i := len(s); i < width; i++ {
			dst = append(dst, '0')
		}
		return append(dst, s...)
	}
	hour12 := func() int {
		h := t.Hour() % 12
		if h == 0 {
			h = 12
		}
		return h
	}
	ampm := func() string {
		if t.Hour() < 12 {
			return "AM"
		}
		return "PM"
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			dst = append(dst, c)
			continue
		}
		i++
		switch f := format[i]; f {
		case 'a':
			dst = append(dst, t.Weekday().String()[:3]...)
		case 'b':
			dst = append(dst, t.Month().String()[:3]...)
		case 'c':
			dst = strconv.AppendInt(dst, int64(t.Month()), 10)
		case 'D':
			d := t.Day()
			dst = strconv.AppendInt(dst, int64(d), 10)
			switch {
			case d >= 11 && d <= 13:
				dst = append(dst, "th"...)
			case d%10 == 1:
				dst = append(dst, "st"...)
			case d%10 == 2:
				dst = append(dst, "nd"...)
			case d%10 == 3:
				dst = append(dst, "rd"...)
			default:
				dst = append(dst, "th"...)
			}
		case 'd':
			dst = pad(dst, t.Day(), 2)
		case 'e':
			dst = strconv.AppendInt(dst, int64(t.Day()), 10)
		case 'f':
			dst = pad(dst, t.Nanosecond()/1000, 6)
		case 'H':
			dst = pad(dst, t.Hour(), 2)
		case 'h', 'I':
			dst = pad(dst, hour12(), 2)
		case 'i':
			dst = pad(dst, t.Minute(), 2)
		case 'j':
			dst = pad(dst, t.YearDay(), 3)
		case 'k':
			dst = strconv.AppendInt(dst, int64(t.Hour()), 10)
		case 'l':
			dst = strconv.AppendInt(dst, int64(hour12()), 10)
		case 'M':
			dst = append(dst, t.Month().String()...)
		case 'm':
			dst = pad(dst, int(t.Month()), 2)
		case 'p':
			dst = append(dst, ampm()...)
		case 'r':
			dst = pad(dst, hour12(), 2)
			dst = append(dst, ':')
			dst = pad(dst, t.Minute(), 2)
			dst = append(dst, ':')
			dst = pad(dst, t.Second(), 2)
			dst = append(dst, ' ')
			dst = append(dst, ampm()...)
		case 'S', 's':
			dst = pad(dst, t.Second(), 2)
		case 'T':
			dst = pad(dst, t.Hour(), 2)
			dst = append(dst, ':')
			dst = pad(dst, t.Minute(), 2)
			dst = append(dst, ':')
			dst = pad(dst, t.Second(), 2)
		case 'U':
			w, _ := mysqlWeek(t, weekFirstWeekday)
			dst = pad(dst, w, 2)
		case 'u':
			w, _ := mysqlWeek(t, weekMondayFirst)
			dst = pad(dst, w, 2)
		case 'V':
			w, _ := mysqlWeek(t, weekYear|weekFirstWeekday)
			dst = pad(dst, w, 2)
		case 'v':
			w, _ := mysqlWeek(t, weekYear|weekMondayFirst)
			dst = pad(dst, w, 2)
		case 'X':
			_, y := mysqlWeek(t, weekYear|weekFirstWeekday)
			dst = pad(dst, y, 4)
		case 'x':
			_, y := mysqlWeek(t, weekYear|weekMondayFirst)
			dst = pad(dst, y, 4)
		case 'W':
			dst = append(dst, t.Weekday().String()...)
		case 'w':
			dst = strconv.AppendInt(dst, int64(t.Weekday()), 10)
		case 'Y':
			dst = pad(dst, t.Year(), 4)
		case 'y':
			dst = pad(dst, t.Year()%100, 2)
		default:
			dst = append(dst, f)
		}
	}
	return dst
}

// The week behaviour bits of MySQL's calc_week.
const (
	weekMondayFirst  = 1
	weekYear         = 2
	weekFirstWeekday = 4
)

// mysqlWeek is MySQL's calc_week: the week of t and the year it belongs
// to, under behaviour (the bits above).
func mysqlWeek(t time.Time, behaviour int) (week, year int) {
	daynr := func(y int, m time.Month, d int) int {
		return int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
	}
	daysInYear := func(y int) int {
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 366
		}
		return 365
	}
	mondayFirst := behaviour&weekMondayFirst != 0
	weekYearMode := behaviour&weekYear != 0
	firstWeekday := behaviour&weekFirstWeekday != 0
	year = t.Year()
	day := daynr(year, t.Month(), t.Day())
	first := daynr(year, 1, 1)
	// weekday of January 1st: 0 is Monday, or Sunday when Sunday is first.
	wd := func(dn int) int {
		w := int(time.Unix(int64(dn)*86400, 0).UTC().Weekday()) // 0 Sunday
		if mondayFirst {
			return (w + 6) % 7
		}
		return w
	}
	weekday := wd(first)
	if t.Month() == time.January && t.Day() <= 7-weekday {
		if !weekYearMode && ((firstWeekday && weekday != 0) || (!firstWeekday && weekday >= 4)) {
			return 0, year
		}
		weekYearMode = true
		year--
		days := daysInYear(year)
		first -= days
		weekday = (weekday + 53*7 - days) % 7
	}
	var days int
	if (firstWeekday && weekday != 0) || (!firstWeekday && weekday >= 4) {
		days = day - (first + (7 - weekday))
	} else {
		days = day - (first - weekday)
	}
	if weekYearMode && days >= 52*7 {
		weekday = (weekday + daysInYear(year)) % 7
		if (!firstWeekday && weekday < 4) || (firstWeekday && weekday == 0) {
			return 1, year + 1
		}
	}
	return days/7 + 1, year
}

// DateFormat is date_format(X, Format): X (a DATE or DATETIME) formatted
// by AppendDateFormat; NULL when either is NULL.
type DateFormat struct {
	X, Format Expr
}

// Type implements Expr.
func (d *DateFormat) Type() schema.Type { return schema.StringType }

func (d *DateFormat) String() string { return fmt.Sprintf("date_format(%s, %s)", d.X, d.Format) }

// Eval implements Expr.
func (d *DateFormat) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := d.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	f, err := d.Format.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer f.Release()
	n := x.Len()
	if x.DataType().ID() == arrow.NULL || f.DataType().ID() == arrow.NULL {
		return nullArray(env.Mem, arrow.BinaryTypes.String, n), nil
	}
	var micros func(i int) int64
	switch c := x.(type) {
	case *array.Date32:
		micros = func(i int) int64 { return int64(c.Value(i)) * microsPerDay }
	case *array.Timestamp:
		micros = func(i int) int64 { return int64(c.Value(i)) }
	default:
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: date_format of %s", x.DataType())
	}
	fs, ok := f.(*array.String)
	if !ok {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: date_format with a format of %s", f.DataType())
	}
	bld := array.NewStringBuilder(env.Mem)
	defer bld.Release()
	bld.Reserve(n)
	var buf []byte
	for i := range n {
		if x.IsNull(i) || fs.IsNull(i) {
			bld.AppendNull()
			continue
		}
		buf = AppendDateFormat(buf[:0], time.UnixMicro(micros(i)).UTC(), fs.Value(i))
		bld.BinaryBuilder.Append(buf)
	}
	return bld.NewArray(), nil
}
