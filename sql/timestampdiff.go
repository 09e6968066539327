package sql

import (
	"time"

	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// compileTimestampDiff compiles TIMESTAMPDIFF(unit, from, to): the whole
// units from from to to (negative when to is earlier), counted as MySQL
// and Doris count them: a unit of fixed length divides the elapsed time,
// truncating toward zero; MONTH, QUARTER and YEAR count calendar months,
// less one when the day and time of to have not reached those of from.
// Both sides are read as DATETIME(6); NULL when either is NULL.
func (c *compiler) compileTimestampDiff(e *parser.TimestampDiff) (*compiled, error) {
	from, err := c.compile(e.From)
	if err != nil {
		return nil, err
	}
	to, err := c.compile(e.To)
	if err != nil {
		return nil, err
	}
	if from, err = c.convert(from, schema.DatetimeType(6)); err != nil {
		return nil, err
	}
	if to, err = c.convert(to, schema.DatetimeType(6)); err != nil {
		return nil, err
	}
	unit := e.Unit
	if unit < parser.UnitMicrosecond || unit > parser.UnitQuarter {
		return nil, invalidf("TIMESTAMPDIFF does not know the unit %s", unit)
	}
	return &compiled{t: bigintType, konst: allConst(from, to), eval: func(row []schema.Value) (schema.Value, error) {
		a, err := from.eval(row)
		if err != nil || a.IsNull() {
			return schema.Null, err
		}
		b, err := to.eval(row)
		if err != nil || b.IsNull() {
			return schema.Null, err
		}
		return schema.IntVal(timestampDiff(unit, a.Int, b.Int)), nil
	}}, nil
}

// timestampDiff is TIMESTAMPDIFF over two DATETIME wall clocks in µs.
func timestampDiff(unit parser.IntervalUnit, from, to int64) int64 {
	var per int64
	switch unit {
	case parser.UnitMicrosecond:
		per = 1
	case parser.UnitSecond:
		per = int64(time.Second / time.Microsecond)
	case parser.UnitMinute:
		per = int64(time.Minute / time.Microsecond)
	case parser.UnitHour:
		per = int64(time.Hour / time.Microsecond)
	case parser.UnitDay:
		per = int64(24 * time.Hour / time.Microsecond)
	case parser.UnitWeek:
		per = int64(7 * 24 * time.Hour / time.Microsecond)
	}
	if per > 0 {
		return (to - from) / per // Go's division truncates toward zero
	}
	months := monthsBetween(from, to)
	switch unit {
	case parser.UnitQuarter:
		return months / 3
	case parser.UnitYear:
		return months / 12
	}
	return months
}

// monthsBetween counts the whole calendar months from from to to.
func monthsBetween(from, to int64) int64 {
	a, b := time.UnixMicro(from).UTC(), time.UnixMicro(to).UTC()
	m := int64(b.Year()-a.Year())*12 + int64(b.Month()-a.Month())
	// The rest of each within its month: day, then time of day.
	rest := func(t time.Time) int64 {
		return int64(t.Day())*int64(24*time.Hour/time.Microsecond) + t.Sub(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)).Microseconds()
	}
	switch {
	case m > 0 && rest(b) < rest(a):
		m--
	case m < 0 && rest(b) > rest(a):
		m++
	}
	return m
}
