package exec

import (
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// IntervalUnit is the unit of an INTERVAL (numbered as sql's).
type IntervalUnit uint8

const (
	Microsecond IntervalUnit = iota + 1
	Second
	Minute
	Hour
	Day
	Week
	Month
	Year
	Quarter // three months
)

var unitNames = [...]string{Microsecond: "MICROSECOND", Second: "SECOND", Minute: "MINUTE", Hour: "HOUR",
	Day: "DAY", Week: "WEEK", Month: "MONTH", Year: "YEAR", Quarter: "QUARTER"}

func (u IntervalUnit) String() string { return unitNames[u] }

// DayOrMore reports the units that move the calendar date.
func (u IntervalUnit) DayOrMore() bool {
	return u == Day || u == Week || u == Month || u == Quarter || u == Year
}

func (u IntervalUnit) micros() int64 {
	switch u {
	case Microsecond:
		return 1
	case Second:
		return 1_000_000
	case Minute:
		return 60_000_000
	case Hour:
		return 3600_000_000
	case Day:
		return microsPerDay
	case Week:
		return 7 * microsPerDay
	}
	return 0
}

// The wall clocks of date/time arithmetic stay within the years 0000..9999.
var (
	minWallMicros = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	maxWallMicros = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro() - 1
)

// AddInterval adds k units to a wall clock (µs); ok is false when the
// result leaves the years 0000..9999. Months, quarters and years keep the
// day of the month, clamped to the month's last day.
func AddInterval(us, k int64, u IntervalUnit) (int64, bool) {
	var out int64
	switch u {
	case Month, Quarter, Year:
		months := k
		if u != Month {
			if k > 80000 || k < -80000 {
				return 0, false
			}
			months = k * 12
			if u == Quarter {
				months = k * 3
			}
		}
		if months > 240000 || months < -240000 {
			return 0, false
		}
		days := floorDiv(us, microsPerDay)
		tod := us - days*microsPerDay
		y, m, d := civil(days)
		total := y*12 + (m - 1) + months
		ny := floorDiv(total, 12)
		nm := total - ny*12 + 1
		last := int64(time.Date(int(ny), time.Month(nm)+1, 0, 0, 0, 0, 0, time.UTC).Day())
		out = daysFromCivil(ny, nm, min(d, last))*microsPerDay + tod
	default:
		step := u.micros()
		if k > math.MaxInt64/step || k < math.MinInt64/step {
			return 0, false
		}
		d := k * step
		out = us + d
		if (d >= 0) != (out >= us) {
			return 0, false
		}
	}
	if out < minWallMicros || out > maxWallMicros {
		return 0, false
	}
	return out, true
}

// daysFromCivil is the day number of a proleptic Gregorian date.
func daysFromCivil(y, m, d int64) int64 {
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
	return era*146097 + doe - 719468
}

// DateAdd is x ± INTERVAL n unit over a DATE, DATETIME or TIMESTAMPTZ x
// (the planner settles the result type, Typ: a DATE plus whole days stays
// a DATE, plus a finer unit becomes a DATETIME). On TIMESTAMPTZ, day units
// move the wall clock of the session zone. A result outside the years
// 0000..9999 is an error naming Text.
type DateAdd struct {
	X, N Expr
	Unit IntervalUnit
	Sub  bool
	Typ  schema.Type
	Text string
}

// Type implements Expr.
func (d *DateAdd) Type() schema.Type { return d.Typ }

func (d *DateAdd) String() string {
	op := "+"
	if d.Sub {
		op = "-"
	}
	return fmt.Sprintf("(%s %s INTERVAL %s %s)", d.X, op, d.N, d.Unit)
}

// Eval implements Expr.
func (d *DateAdd) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	x, err := d.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	na, nl, err := evalOperand(env, d.N, b)
	if err != nil {
		return nil, err
	}
	if na != nil {
		defer na.Release()
	}
	if nl != nil && nl.Val.IsNull() {
		return nullArray(env.Mem, d.Typ.Arrow(), n), nil
	}
	k := operand[int64]{scalar: nl != nil}
	if nl != nil {
		k.s = nl.Val.Int
	} else {
		k.vals = na.(*array.Int64).Int64Values()
	}
	sign := int64(1)
	if d.Sub {
		sign = -1
	}
	valid, nulls := andValidity(env.Mem, n, x, na)
	vb := []byte(nil)
	if valid != nil {
		vb = valid.Bytes()
	}
	width := 8
	if d.Typ.Kind == schema.Date {
		width = 4
	}
	buf := newBuffer(env.Mem, n*width)
	fail := func() (arrow.Array, error) {
		buf.Release()
		if valid != nil {
			valid.Release()
		}
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "date/time value is out of range in '%s'", d.Text)
	}
	var in func(i int) int64
	switch c := x.(type) {
	case *array.Date32:
		in = func(i int) int64 { return int64(c.Value(i)) * microsPerDay }
	case *array.Timestamp:
		in = func(i int) int64 { return int64(c.Value(i)) }
	default:
		buf.Release()
		if valid != nil {
			valid.Release()
		}
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: INTERVAL arithmetic on %s", x.DataType())
	}
	tzDays := d.X.Type().Kind == schema.TimestampTZ && d.Unit.DayOrMore()
	for i := range n {
		if !isValid(vb, 0, i) {
			continue
		}
		us := in(i)
		if tzDays {
			us = schema.InstantToWall(us, env.Loc)
		}
		out, ok := AddInterval(us, sign*k.at(i), d.Unit)
		if !ok {
			return fail()
		}
		if tzDays {
			out = schema.WallToInstant(out, env.Loc)
		}
		if width == 4 {
			arrow.Date32Traits.CastFromBytes(buf.Bytes())[i] = arrow.Date32(floorDiv(out, microsPerDay))
		} else {
			arrow.TimestampTraits.CastFromBytes(buf.Bytes())[i] = arrow.Timestamp(out)
		}
	}
	return makeArray(d.Typ.Arrow(), n, valid, nulls, buf), nil
}
