package exec

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// DatePart extracts a field of a DATE or DATETIME: year, quarter (1-4),
// month, day, dayofweek (1 = Sunday ... 7 = Saturday, as Doris and MySQL
// number them), hour, minute or second, as INT. The date fields are computed from the day
// number with integer arithmetic (no time.Time per row). The rarer
// parts (dayofyear, week — MySQL's mode 0, as Doris's week(x) and
// EXTRACT(WEEK) —, weekofyear — ISO 8601, mode 3 — and microsecond)
// are DatePartOf's.
type DatePart struct {
	Part string
	X    Expr
}

// Type implements Expr.
func (d *DatePart) Type() schema.Type { return schema.IntType }

func (d *DatePart) String() string { return fmt.Sprintf("%s(%s)", d.Part, d.X) }

// civil returns the proleptic Gregorian year, month and day of a day
// number (days since 1970-01-01), after Howard Hinnant's days_from_civil
// inverse.
func civil(days int64) (y, m, d int64) {
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
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

// Eval implements Expr.
func (d *DatePart) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := d.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	n := x.Len()
	var micros func(i int) int64
	switch c := x.(type) {
	case *array.Date32:
		micros = func(i int) int64 { return int64(c.Value(i)) * microsPerDay }
	case *array.Timestamp:
		micros = func(i int) int64 { return int64(c.Value(i)) }
	default:
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: %s of %s", d.Part, x.DataType())
	}
	valid, nulls := andValidity(env.Mem, n, x)
	buf := newBuffer(env.Mem, n*4)
	out := arrow.Int32Traits.CastFromBytes(buf.Bytes())
	for i := range n {
		us := micros(i)
		days := floorDiv(us, microsPerDay)
		tod := (us - days*microsPerDay) / 1_000_000
		var v int64
		switch d.Part {
		case "year":
			v, _, _ = civil(days)
		case "quarter":
			_, v, _ = civil(days)
			v = (v + 2) / 3
		case "month":
			_, v, _ = civil(days)
		case "day":
			_, _, v = civil(days)
		case "dayofweek":
			// 1970-01-01 was a Thursday (5).
			v = (days+4)%7 + 1
			if v <= 0 {
				v += 7
			}
		case "hour":
			v = tod / 3600
		case "minute":
			v = tod / 60 % 60
		case "second":
			v = tod % 60
		default:
			v = DatePartOf(d.Part, us)
		}
		out[i] = int32(v)
	}
	return makeArray(arrow.PrimitiveTypes.Int32, n, valid, nulls, buf), nil
}

// IsDatePart reports whether DatePart computes part.
func IsDatePart(part string) bool {
	switch part {
	case "year", "quarter", "month", "day", "dayofweek", "hour", "minute", "second",
		"dayofyear", "week", "weekofyear", "microsecond":
		return true
	}
	return false
}

// DatePartOf is part (a name IsDatePart accepts) of the wall-clock time
// us (microseconds since 1970-01-01 00:00:00).
func DatePartOf(part string, us int64) int64 {
	t := time.UnixMicro(us).UTC()
	switch part {
	case "year":
		return int64(t.Year())
	case "quarter":
		return int64(t.Month()+2) / 3
	case "month":
		return int64(t.Month())
	case "day":
		return int64(t.Day())
	case "dayofweek":
		return int64(t.Weekday()) + 1
	case "hour":
		return int64(t.Hour())
	case "minute":
		return int64(t.Minute())
	case "second":
		return int64(t.Second())
	case "dayofyear":
		return int64(t.YearDay())
	case "week":
		w, _ := mysqlWeek(t, weekFirstWeekday)
		return int64(w)
	case "weekofyear":
		w, _ := mysqlWeek(t, weekMondayFirst|weekYear)
		return int64(w)
	case "microsecond":
		return us - floorDiv(us, 1_000_000)*1_000_000
	}
	panic("exec: unknown date part " + part)
}

// WeekOf is MySQL's and Doris's week(t, mode) for mode 0..7: the week
// number of t under the mode's first weekday and range rules.
func WeekOf(t time.Time, mode int) int {
	behaviour := mode & 7
	if behaviour&weekMondayFirst == 0 {
		behaviour ^= weekFirstWeekday
	}
	w, _ := mysqlWeek(t, behaviour)
	return w
}

// YearWeekOf is MySQL's and Doris's yearweek(t, mode): the year the week
// of t belongs to, times 100, plus that week's number (weeks 1..53).
func YearWeekOf(t time.Time, mode int) int {
	behaviour := mode & 7
	if behaviour&weekMondayFirst == 0 {
		behaviour ^= weekFirstWeekday
	}
	w, y := mysqlWeek(t, behaviour|weekYear)
	return y*100 + w
}

// StrFunc is a function of one string: upper, lower, trim, ltrim, rtrim
// (StringFunc), length (bytes) or char_length (characters).
type StrFunc struct {
	Name string
	X    Expr
}

// Type implements Expr.
func (f *StrFunc) Type() schema.Type {
	if f.Name == "length" || f.Name == "char_length" {
		return schema.BigIntType
	}
	return schema.StringType
}

func (f *StrFunc) String() string { return fmt.Sprintf("%s(%s)", f.Name, f.X) }

// Eval implements Expr.
func (f *StrFunc) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := f.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	c, ok := x.(*array.String)
	if !ok {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: %s of %s", f.Name, x.DataType())
	}
	n := c.Len()
	if f.Name == "length" || f.Name == "char_length" {
		valid, nulls := andValidity(env.Mem, n, x)
		buf := newBuffer(env.Mem, n*8)
		out := arrow.Int64Traits.CastFromBytes(buf.Bytes())
		for i := range n {
			if f.Name == "length" {
				out[i] = int64(len(c.Value(i)))
			} else {
				out[i] = int64(utf8.RuneCountInString(c.Value(i)))
			}
		}
		return makeArray(arrow.PrimitiveTypes.Int64, n, valid, nulls, buf), nil
	}
	bld := array.NewStringBuilder(env.Mem)
	defer bld.Release()
	bld.Reserve(n)
	for i := range n {
		if c.IsNull(i) {
			bld.AppendNull()
			continue
		}
		bld.Append(StringFunc(f.Name, c.Value(i)))
	}
	return bld.NewArray(), nil
}

// StringFunc applies upper, lower, trim, ltrim or rtrim (which remove
// spaces, as in MySQL) to s.
func StringFunc(name, s string) string {
	switch name {
	case "upper":
		return strings.ToUpper(s)
	case "lower":
		return strings.ToLower(s)
	case "trim":
		return strings.Trim(s, " ")
	case "ltrim":
		return strings.TrimLeft(s, " ")
	case "rtrim":
		return strings.TrimRight(s, " ")
	}
	return s
}

// Concat joins strings; NULL when any argument is NULL.
type Concat struct{ Args []Expr }

// Type implements Expr.
func (c *Concat) Type() schema.Type { return schema.StringType }

func (c *Concat) String() string {
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		parts[i] = a.String()
	}
	return "concat(" + strings.Join(parts, ", ") + ")"
}

// Eval implements Expr.
func (c *Concat) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	cols := make([]*array.String, 0, len(c.Args))
	defer func() {
		for _, a := range cols {
			a.Release()
		}
	}()
	for _, e := range c.Args {
		a, err := e.Eval(env, b)
		if err != nil {
			return nil, err
		}
		s, ok := a.(*array.String)
		if !ok {
			a.Release()
			if a.DataType().ID() == arrow.NULL {
				return nullArray(env.Mem, arrow.BinaryTypes.String, n), nil
			}
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: concat of %s", a.DataType())
		}
		cols = append(cols, s)
	}
	bld := array.NewStringBuilder(env.Mem)
	defer bld.Release()
	bld.Reserve(n)
	var buf []byte
rows:
	for i := range n {
		buf = buf[:0]
		for _, s := range cols {
			if s.IsNull(i) {
				bld.AppendNull()
				continue rows
			}
			buf = append(buf, s.Value(i)...)
		}
		bld.BinaryBuilder.Append(buf)
	}
	return bld.NewArray(), nil
}

// Substring is substr(s, pos[, n]) of the dialect (MySQL's): characters
// from pos (1-based; negative counts from the end; 0 gives ”), at most n
// of them (n <= 0 gives ”).
func Substring(s string, pos, n int64, hasN bool) string {
	r := []rune(s)
	switch {
	case pos > 0:
		pos--
	case pos < 0:
		pos += int64(len(r))
	default:
		return ""
	}
	if pos < 0 || pos >= int64(len(r)) {
		return ""
	}
	end := int64(len(r))
	if hasN {
		if n <= 0 {
			return ""
		}
		end = min(end, pos+n)
	}
	return string(r[pos:end])
}

// Substr is substr(x, pos[, n]) over a string column; pos and n are
// BIGINT. NULL when any argument is.
type Substr struct {
	X, Pos, N Expr // N nil: to the end
}

// Type implements Expr.
func (f *Substr) Type() schema.Type { return schema.StringType }

func (f *Substr) String() string {
	if f.N == nil {
		return fmt.Sprintf("substr(%s, %s)", f.X, f.Pos)
	}
	return fmt.Sprintf("substr(%s, %s, %s)", f.X, f.Pos, f.N)
}

// Eval implements Expr.
func (f *Substr) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	x, err := f.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	args := []Expr{f.Pos}
	if f.N != nil {
		args = append(args, f.N)
	}
	ops := make([]operand[int64], len(args))
	var arrs []arrow.Array
	defer func() {
		for _, a := range arrs {
			a.Release()
		}
	}()
	for i, e := range args {
		a, l, err := evalOperand(env, e, b)
		if err != nil {
			return nil, err
		}
		if l != nil {
			if l.Val.IsNull() {
				return nullArray(env.Mem, arrow.BinaryTypes.String, n), nil
			}
			ops[i] = operand[int64]{scalar: true, s: l.Val.Int}
			continue
		}
		arrs = append(arrs, a)
		c, ok := a.(*array.Int64)
		if !ok {
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: substr position of %s", a.DataType())
		}
		ops[i] = operand[int64]{vals: c.Int64Values()}
	}
	s, ok := x.(*array.String)
	if !ok {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: substr of %s", x.DataType())
	}
	bld := array.NewStringBuilder(env.Mem)
	defer bld.Release()
	bld.Reserve(n)
	for i := range n {
		if s.IsNull(i) || anyNull(arrs, i) {
			bld.AppendNull()
			continue
		}
		var ln int64
		if f.N != nil {
			ln = ops[1].at(i)
		}
		bld.Append(Substring(s.Value(i), ops[0].at(i), ln, f.N != nil))
	}
	return bld.NewArray(), nil
}

func anyNull(arrs []arrow.Array, i int) bool {
	for _, a := range arrs {
		if a.IsNull(i) {
			return true
		}
	}
	return false
}

// TruncUnits are the units of date_trunc.
var TruncUnits = map[string]bool{"second": true, "minute": true, "hour": true, "day": true, "week": true,
	"month": true, "quarter": true, "year": true}

// TruncDatetime truncates a DATETIME wall clock (µs) to the start of its
// unit (see TruncUnits); weeks start on Monday, as in Doris.
func TruncDatetime(us int64, unit string) int64 {
	days := floorDiv(us, microsPerDay)
	tod := us - days*microsPerDay
	switch unit {
	case "second":
		return us - floorMod(us, 1_000_000)
	case "minute":
		return us - floorMod(us, 60_000_000)
	case "hour":
		return days*microsPerDay + tod - tod%3600_000_000
	case "day":
		return days * microsPerDay
	case "week":
		// 1970-01-01 was a Thursday: Monday is day 4 of its week.
		return (days - floorMod(days+3, 7)) * microsPerDay
	}
	y, m, _ := civil(days)
	switch unit {
	case "month":
	case "quarter":
		m = (m-1)/3*3 + 1
	default:
		m = 1
	}
	return daysFromCivil(y, m, 1) * microsPerDay
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// DateTrunc is date_trunc(x, 'unit') over a DATETIME x.
type DateTrunc struct {
	X    Expr
	Unit string
}

// Type implements Expr.
func (d *DateTrunc) Type() schema.Type { return d.X.Type() }

func (d *DateTrunc) String() string { return fmt.Sprintf("date_trunc(%s, '%s')", d.X, d.Unit) }

// Eval implements Expr.
func (d *DateTrunc) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := d.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	c, ok := x.(*array.Timestamp)
	if !ok {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: date_trunc of %s", x.DataType())
	}
	n := c.Len()
	valid, nulls := andValidity(env.Mem, n, x)
	buf := newBuffer(env.Mem, n*8)
	out := arrow.TimestampTraits.CastFromBytes(buf.Bytes())
	for i, v := range c.TimestampValues() {
		out[i] = arrow.Timestamp(TruncDatetime(int64(v), d.Unit))
	}
	return makeArray(x.DataType(), n, valid, nulls, buf), nil
}

// DateDiff is datediff(a, b) over two DATEs: the days from b to a, INT.
type DateDiff struct{ A, B Expr }

// Type implements Expr.
func (d *DateDiff) Type() schema.Type { return schema.IntType }

func (d *DateDiff) String() string { return fmt.Sprintf("datediff(%s, %s)", d.A, d.B) }

// Eval implements Expr.
func (d *DateDiff) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	var vals [2]operand[arrow.Date32]
	var arrs []arrow.Array
	defer func() {
		for _, a := range arrs {
			a.Release()
		}
	}()
	for i, e := range []Expr{d.A, d.B} {
		a, l, err := evalOperand(env, e, b)
		if err != nil {
			return nil, err
		}
		if l != nil {
			if l.Val.IsNull() {
				return nullArray(env.Mem, arrow.PrimitiveTypes.Int32, n), nil
			}
			vals[i] = operand[arrow.Date32]{scalar: true, s: arrow.Date32(l.Val.Int)}
			continue
		}
		arrs = append(arrs, a)
		c, ok := a.(*array.Date32)
		if !ok {
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: datediff of %s", a.DataType())
		}
		vals[i] = operand[arrow.Date32]{vals: c.Date32Values()}
	}
	valid, nulls := andValidity(env.Mem, n, arrs...)
	buf := newBuffer(env.Mem, n*4)
	out := arrow.Int32Traits.CastFromBytes(buf.Bytes())
	for i := range n {
		out[i] = int32(vals[0].at(i)) - int32(vals[1].at(i))
	}
	return makeArray(arrow.PrimitiveTypes.Int32, n, valid, nulls, buf), nil
}

// SplitPart is split_part(s, delim, field) of the dialect (Doris's): the
// field-th piece of s cut at every delim, counted from 1, or from the end
// when field is negative; ok is false (the answer is NULL) for field 0, an
// empty delim, or a field past the pieces, where DuckDB answers an empty
// string.
func SplitPart(s, delim string, field int64) (part string, ok bool) {
	if field == 0 || delim == "" {
		return "", false
	}
	pieces := strings.Split(s, delim)
	if field < 0 {
		field += int64(len(pieces)) + 1
	}
	if field < 1 || field > int64(len(pieces)) {
		return "", false
	}
	return pieces[field-1], true
}

// SplitPartConst is split_part(x, delim, field) over a string column with
// a constant delimiter and field (the planner sends other forms to the row
// engine).
type SplitPartConst struct {
	X     Expr
	Delim string
	Field int64
}

// Type implements Expr.
func (f *SplitPartConst) Type() schema.Type { return schema.StringType }

func (f *SplitPartConst) String() string {
	return fmt.Sprintf("split_part(%s, '%s', %d)", f.X, strings.ReplaceAll(f.Delim, "'", "''"), f.Field)
}

// Eval implements Expr.
func (f *SplitPartConst) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := f.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	s, ok := x.(*array.String)
	if !ok {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: split_part of %s", x.DataType())
	}
	bld := array.NewStringBuilder(env.Mem)
	defer bld.Release()
	bld.Reserve(s.Len())
	for i := range s.Len() {
		if s.IsNull(i) {
			bld.AppendNull()
			continue
		}
		if p, ok := SplitPart(s.Value(i), f.Delim, f.Field); ok {
			bld.Append(p)
		} else {
			bld.AppendNull()
		}
	}
	return bld.NewArray(), nil
}
