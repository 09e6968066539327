package sql

import (
	"errors"
	"math"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// nowValue is the statement's now as DATETIME(p) in the session zone.
func (c *compiler) nowValue(p int) schema.Value {
	return schema.IntVal(schema.TruncateMicros(schema.DatetimeFromTime(c.env.now.In(c.env.loc)), p))
}

// precisionArg reads the optional constant precision of NOW(p).
func (c *compiler) precisionArg(f *parser.FuncCall) (int, error) {
	if len(f.Args) == 0 {
		return 0, nil
	}
	if len(f.Args) > 1 {
		return 0, invalidf("%s() takes at most one argument", f.Name)
	}
	lit, ok := f.Args[0].(*parser.IntLit)
	if !ok || lit.Val < 0 || lit.Val > 6 {
		return 0, invalidf("%s(p) takes a precision between 0 and 6", f.Name)
	}
	return int(lit.Val), nil
}

func (c *compiler) nargs(f *parser.FuncCall, lo, hi int) error {
	if len(f.Args) < lo || (hi >= 0 && len(f.Args) > hi) {
		switch {
		case lo == hi:
			return invalidf("%s() takes %d argument(s), got %d", f.Name, lo, len(f.Args))
		case hi < 0:
			return invalidf("%s() takes at least %d argument(s), got %d", f.Name, lo, len(f.Args))
		}
		return invalidf("%s() takes %d to %d arguments, got %d", f.Name, lo, hi, len(f.Args))
	}
	return nil
}

// unary builds a function of one argument converted to in, NULL in NULL
// out.
func (c *compiler) unary(f *parser.FuncCall, in, out schema.Type, fn func(v schema.Value) (schema.Value, error)) (*compiled, error) {
	if err := c.nargs(f, 1, 1); err != nil {
		return nil, err
	}
	x, err := c.compile(f.Args[0])
	if err != nil {
		return nil, err
	}
	if !isNullType(in) {
		if x, err = c.convert(x, in); err != nil {
			return nil, err
		}
	}
	return &compiled{t: out, konst: x.konst, eval: func(row []schema.Value) (schema.Value, error) {
		v, err := x.eval(row)
		if err != nil || v.IsNull() {
			return schema.Null, err
		}
		return fn(v)
	}}, nil
}

// unified compiles args and converts them to their common type.
func (c *compiler) unified(args []parser.Expr) ([]*compiled, schema.Type, error) {
	xs, err := c.compileAll(args)
	if err != nil {
		return nil, nullType, err
	}
	ts := make([]schema.Type, len(xs))
	for i, x := range xs {
		ts[i] = x.t
	}
	t := unify(ts...)
	for i, x := range xs {
		if xs[i], err = c.convert(x, t); err != nil {
			return nil, nullType, err
		}
	}
	return xs, t, nil
}

func (c *compiler) compileFunc(f *parser.FuncCall) (*compiled, error) {
	if f.Star || f.Distinct {
		return nil, invalidf("%s() does not take * or DISTINCT", f.Name)
	}
	switch f.Name {
	case "now", "current_timestamp", "localtime", "localtimestamp", "sysdate":
		p, err := c.precisionArg(f)
		if err != nil {
			return nil, err
		}
		return constant(schema.DatetimeType(p), c.nowValue(p)), nil
	case "utc_timestamp":
		p, err := c.precisionArg(f)
		if err != nil {
			return nil, err
		}
		return constant(schema.DatetimeType(p), schema.IntVal(schema.TruncateMicros(c.env.now.UnixMicro(), p))), nil
	case "version":
		if err := c.nargs(f, 0, 0); err != nil {
			return nil, err
		}
		return constant(stringType, schema.BytesVal([]byte(VersionString()))), nil
	case "database", "schema":
		if err := c.nargs(f, 0, 0); err != nil {
			return nil, err
		}
		return constant(stringType, schema.BytesVal([]byte(c.env.db))), nil
	case "current_user", "user", "session_user":
		if err := c.nargs(f, 0, 0); err != nil {
			return nil, err
		}
		return constant(stringType, schema.BytesVal([]byte(c.env.user))), nil
	case "connection_id":
		if err := c.nargs(f, 0, 0); err != nil {
			return nil, err
		}
		return constant(bigintType, schema.IntVal(c.env.connID)), nil
	case "date_format":
		return c.dateFormat(f)
	case "curdate", "current_date":
		if err := c.nargs(f, 0, 0); err != nil {
			return nil, err
		}
		return constant(schema.DateType, schema.IntVal(int64(schema.DateFromTime(c.env.now.In(c.env.loc))))), nil
	case "unix_timestamp":
		if len(f.Args) == 0 {
			return constant(bigintType, schema.IntVal(c.env.now.Unix())), nil
		}
		if len(f.Args) == 2 {
			// unix_timestamp(s, format) is of str_to_date(s, format).
			return c.compile(&parser.FuncCall{Name: "unix_timestamp", Args: []parser.Expr{&parser.FuncCall{Name: "str_to_date", Args: f.Args}}})
		}
		return c.unary(f, schema.TimestampTZType(6), bigintType, func(v schema.Value) (schema.Value, error) {
			return schema.IntVal(floorDiv(v.Int, microsPerSecond)), nil
		})
	case "from_unixtime":
		return c.compileFromUnixtime(f)
	case "date", "to_date":
		return c.unary(f, schema.DateType, schema.DateType, func(v schema.Value) (schema.Value, error) { return v, nil })
	case "timestamp":
		return c.unary(f, schema.DatetimeType(6), schema.DatetimeType(6), func(v schema.Value) (schema.Value, error) { return v, nil })
	case "year", "quarter", "month", "day", "dayofmonth", "dayofweek", "hour", "minute", "second",
		"dayofyear", "weekofyear", "microsecond":
		part := f.Name
		if part == "dayofmonth" {
			part = "day"
		}
		return c.unary(f, schema.DatetimeType(6), schema.IntType, func(v schema.Value) (schema.Value, error) {
			return schema.IntVal(exec.DatePartOf(part, v.Int)), nil
		})
	case "week":
		return c.compileWeek(f)
	case "last_day":
		return c.unary(f, schema.DateType, schema.DateType, func(v schema.Value) (schema.Value, error) {
			t := time.Unix(v.Int*86400, 0).UTC()
			end := time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -1)
			return schema.IntVal(end.Unix() / 86400), nil
		})
	case "coalesce", "ifnull", "nvl":
		if f.Name == "coalesce" {
			if err := c.nargs(f, 1, -1); err != nil {
				return nil, err
			}
		} else if err := c.nargs(f, 2, 2); err != nil {
			return nil, err
		}
		xs, t, err := c.unified(f.Args)
		if err != nil {
			return nil, err
		}
		return &compiled{t: t, konst: allConst(xs...), eval: func(row []schema.Value) (schema.Value, error) {
			for _, x := range xs {
				v, err := x.eval(row)
				if err != nil || !v.IsNull() {
					return v, err
				}
			}
			return schema.Null, nil
		}}, nil
	case "if":
		if err := c.nargs(f, 3, 3); err != nil {
			return nil, err
		}
		return c.compileCase(&parser.CaseExpr{Whens: []*parser.When{{Cond: f.Args[0], Result: f.Args[1]}}, Else: f.Args[2]})
	case "nullif":
		if err := c.nargs(f, 2, 2); err != nil {
			return nil, err
		}
		a, err := c.compile(f.Args[0])
		if err != nil {
			return nil, err
		}
		b, err := c.compile(f.Args[1])
		if err != nil {
			return nil, err
		}
		eq, err := c.comparer(a, b)
		if err != nil {
			return nil, err
		}
		return &compiled{t: a.t, konst: allConst(a, b), eval: func(row []schema.Value) (schema.Value, error) {
			n, null, err := eq(row)
			if err != nil {
				return schema.Null, err
			}
			if !null && n == 0 {
				return schema.Null, nil
			}
			return a.eval(row)
		}}, nil
	case "abs":
		if err := c.nargs(f, 1, 1); err != nil {
			return nil, err
		}
		x, err := c.compile(f.Args[0])
		if err != nil {
			return nil, err
		}
		if x.t.Kind == schema.Decimal {
			return c.unary(f, x.t, x.t, func(v schema.Value) (schema.Value, error) {
				return schema.DecimalVal(decimal.Abs(v.Decimal())), nil
			})
		}
		if isIntLike(x.t) {
			t := bigintType
			return c.unary(f, t, t, func(v schema.Value) (schema.Value, error) {
				if v.Int == math.MinInt64 {
					return schema.Null, invalidf("BIGINT value is out of range in '%s'", parser.FormatExpr(f))
				}
				if v.Int < 0 {
					return schema.IntVal(-v.Int), nil
				}
				return v, nil
			})
		}
		return c.unary(f, doubleType, doubleType, func(v schema.Value) (schema.Value, error) { return schema.FloatVal(math.Abs(v.Float)), nil })
	case "floor", "ceil", "ceiling", "round", "truncate":
		return c.compileRounding(f)
	case "concat":
		if err := c.nargs(f, 1, -1); err != nil {
			return nil, err
		}
		xs, err := c.compileAll(f.Args)
		if err != nil {
			return nil, err
		}
		for i, x := range xs {
			if xs[i], err = c.convert(x, stringType); err != nil {
				return nil, err
			}
		}
		return &compiled{t: stringType, konst: allConst(xs...), eval: func(row []schema.Value) (schema.Value, error) {
			var b []byte
			for _, x := range xs {
				v, err := x.eval(row)
				if err != nil || v.IsNull() {
					return schema.Null, err
				}
				b = append(b, v.Bytes...)
			}
			return schema.BytesVal(b), nil
		}}, nil
	case "length", "octet_length":
		return c.unary(f, stringType, bigintType, func(v schema.Value) (schema.Value, error) { return schema.IntVal(int64(len(v.Bytes))), nil })
	case "char_length", "character_length":
		return c.unary(f, stringType, bigintType, func(v schema.Value) (schema.Value, error) {
			return schema.IntVal(int64(utf8.RuneCount(v.Bytes))), nil
		})
	case "upper", "ucase", "lower", "lcase", "trim", "ltrim", "rtrim":
		if strings.HasSuffix(f.Name, "trim") {
			if err := c.nargs(f, 1, 2); err != nil {
				return nil, err
			}
		}
		if len(f.Args) == 2 && strings.HasSuffix(f.Name, "trim") {
			left, right := f.Name != "rtrim", f.Name != "ltrim"
			return c.nary(f, stringType, func(v []schema.Value) (schema.Value, error) {
				return textVal(trimRepeats(string(v[0].Bytes), string(v[1].Bytes), left, right)), nil
			}, stringType, stringType)
		}
		name := map[string]string{"ucase": "upper", "lcase": "lower"}[f.Name]
		if name == "" {
			name = f.Name
		}
		return c.unary(f, stringType, stringType, func(v schema.Value) (schema.Value, error) {
			return schema.BytesVal([]byte(exec.StringFunc(name, string(v.Bytes)))), nil
		})
	case "datediff":
		if err := c.nargs(f, 2, 2); err != nil {
			return nil, err
		}
		xs, err := c.compileAll(f.Args)
		if err != nil {
			return nil, err
		}
		for i, x := range xs {
			if xs[i], err = c.convert(x, schema.DateType); err != nil {
				return nil, err
			}
		}
		return &compiled{t: schema.IntType, konst: allConst(xs...), eval: func(row []schema.Value) (schema.Value, error) {
			a, err := xs[0].eval(row)
			if err != nil || a.IsNull() {
				return schema.Null, err
			}
			b, err := xs[1].eval(row)
			if err != nil || b.IsNull() {
				return schema.Null, err
			}
			return schema.IntVal(a.Int - b.Int), nil
		}}, nil
	case "date_trunc":
		if err := c.nargs(f, 2, 2); err != nil {
			return nil, err
		}
		unit, err := c.truncUnit(f)
		if err != nil {
			return nil, err
		}
		x, err := c.compile(f.Args[0])
		if err != nil {
			return nil, err
		}
		if x.t.Kind != schema.Datetime {
			if x, err = c.convert(x, schema.DatetimeType(6)); err != nil {
				return nil, err
			}
		}
		return &compiled{t: x.t, konst: x.konst, eval: func(row []schema.Value) (schema.Value, error) {
			v, err := x.eval(row)
			if err != nil || v.IsNull() {
				return schema.Null, err
			}
			return schema.IntVal(exec.TruncDatetime(v.Int, unit)), nil
		}}, nil
	case "substring", "substr":
		return c.compileSubstring(f)
	case "split_part":
		return c.compileSplitPart(f)
	case "regexp_extract":
		return c.compileRegexpExtract(f)
	case "concat_ws":
		return c.compileConcatWs(f)
	}
	if x, ok, err := c.compileMoreFunc(f); ok {
		return x, err
	}
	if x, ok, err := c.compileBitFunc(f); ok {
		return x, err
	}
	return nil, unknownFunc(f.Name)
}

// unknownFuncErr is the error of a call of no function of the dialect.
type unknownFuncErr struct{ err error }

func (e *unknownFuncErr) Error() string { return e.err.Error() }
func (e *unknownFuncErr) Unwrap() error { return e.err }

func unknownFunc(name string) error {
	return &unknownFuncErr{err: unsupportedf("unknown function %s()", name)}
}

func isUnknownFunc(err error) bool {
	var u *unknownFuncErr
	return errors.As(err, &u)
}

func (c *compiler) compileRounding(f *parser.FuncCall) (*compiled, error) {
	if err := c.nargs(f, 1, 2); err != nil {
		return nil, err
	}
	x, err := c.compile(f.Args[0])
	if err != nil {
		return nil, err
	}
	digits := int64(0)
	if len(f.Args) == 2 {
		d, err := c.compile(f.Args[1])
		if err != nil {
			return nil, err
		}
		if !d.konst || !isIntLike(d.t) {
			return nil, invalidf("%s(x, d) takes a constant integer d", f.Name)
		}
		v, _ := d.eval(nil)
		digits = v.Int
	}
	if isIntLike(x.t) && digits >= 0 {
		return c.convert(x, bigintType)
	}
	if x.t.Kind == schema.Decimal {
		return decimalRounding(f, x, int(max(min(digits, 2*decimal.MaxPrecision), -2*decimal.MaxPrecision)))
	}
	if x, err = c.convert(x, doubleType); err != nil {
		return nil, err
	}
	name := f.Name
	scale := math.Pow10(int(digits))
	t := doubleType
	if digits == 0 && name != "round" && name != "truncate" {
		t = bigintType
	}
	return &compiled{t: t, konst: x.konst, eval: func(row []schema.Value) (schema.Value, error) {
		v, err := x.eval(row)
		if err != nil || v.IsNull() {
			return schema.Null, err
		}
		var r float64
		switch name {
		case "floor":
			r = math.Floor(v.Float*scale) / scale
		case "ceil", "ceiling":
			r = math.Ceil(v.Float*scale) / scale
		case "round":
			r = math.Round(v.Float*scale) / scale
		case "truncate":
			r = math.Trunc(v.Float*scale) / scale
		}
		if t.Kind == schema.BigInt {
			if math.IsNaN(r) || r < -9.223372036854775e18 || r >= 9.223372036854775e18 {
				return schema.Null, invalidf("BIGINT value is out of range in '%s'", parser.FormatExpr(f))
			}
			return schema.IntVal(int64(r)), nil
		}
		return schema.FloatVal(r), nil
	}}, nil
}

// decimalRounding is floor, ceil, round and truncate of a DECIMAL(p,s) to
// d digits, exact: a DECIMAL of scale min(max(d, 0), s) with one more
// integer digit for the carry (capped at 38). round rounds half away from
// zero.
func decimalRounding(f *parser.FuncCall, x *compiled, digits int) (*compiled, error) {
	mode := map[string]decimal.RoundMode{
		"floor": decimal.Floor, "ceil": decimal.Ceil, "ceiling": decimal.Ceil,
		"round": decimal.HalfAwayFromZero, "truncate": decimal.Truncate,
	}[f.Name]
	in := x.t.Decimal()
	scale := decimal.RoundScale(in.Scale, digits)
	p := min(in.Precision-in.Scale+scale+1, decimal.MaxPrecision)
	if mode == decimal.Truncate || digits >= in.Scale {
		p = min(in.Precision-in.Scale+scale, decimal.MaxPrecision)
	}
	t := schema.DecimalType(max(p, scale, 1), scale)
	return &compiled{t: t, konst: x.konst, eval: func(row []schema.Value) (schema.Value, error) {
		v, err := x.eval(row)
		if err != nil || v.IsNull() {
			return schema.Null, err
		}
		n, ok := decimal.RoundTo(v.Decimal(), in.Scale, digits, mode, t.Precision)
		if !ok {
			return schema.Null, invalidf("DECIMAL value is out of range in '%s'", parser.FormatExpr(f))
		}
		return schema.DecimalVal(n), nil
	}}, nil
}

func (c *compiler) compileSubstring(f *parser.FuncCall) (*compiled, error) {
	if err := c.nargs(f, 2, 3); err != nil {
		return nil, err
	}
	ts := []schema.Type{stringType, bigintType, bigintType}[:len(f.Args)]
	return c.nary(f, stringType, func(vals []schema.Value) (schema.Value, error) {
		var n int64
		if len(vals) == 3 {
			n = vals[2].Int
		}
		return schema.BytesVal([]byte(exec.Substring(string(vals[0].Bytes), vals[1].Int, n, len(vals) == 3))), nil
	}, ts...)
}

func (c *compiler) compileSplitPart(f *parser.FuncCall) (*compiled, error) {
	return c.nary(f, stringType, func(vals []schema.Value) (schema.Value, error) {
		p, ok := exec.SplitPart(string(vals[0].Bytes), string(vals[1].Bytes), vals[2].Int)
		if !ok {
			return schema.Null, nil
		}
		return schema.BytesVal([]byte(p)), nil
	}, stringType, stringType, bigintType)
}

// truncUnit reads the constant unit of date_trunc(x, 'unit').
func (c *compiler) truncUnit(f *parser.FuncCall) (string, error) {
	u, err := c.compile(f.Args[1])
	if err != nil {
		return "", err
	}
	if !u.konst || !u.t.IsString() {
		return "", invalidf("date_trunc() takes a constant unit, as in date_trunc(x, 'day')")
	}
	v, _ := u.eval(nil)
	unit := strings.ToLower(strings.TrimSpace(string(v.Bytes)))
	if !exec.TruncUnits[unit] {
		return "", invalidf("date_trunc() does not know the unit '%s'", string(v.Bytes))
	}
	return unit, nil
}

// dateFormat compiles date_format(date, format): the date read as
// DATETIME(6) (a TIMESTAMPTZ in the session zone), formatted by the MySQL
// specifiers of exec.AppendDateFormat; NULL when either is NULL.
func (c *compiler) dateFormat(f *parser.FuncCall) (*compiled, error) {
	if err := c.nargs(f, 2, 2); err != nil {
		return nil, err
	}
	xs, err := c.compileAll(f.Args)
	if err != nil {
		return nil, err
	}
	if xs[0], err = c.convert(xs[0], schema.DatetimeType(6)); err != nil {
		return nil, err
	}
	if xs[1], err = c.convert(xs[1], stringType); err != nil {
		return nil, err
	}
	d, format := xs[0], xs[1]
	return &compiled{t: stringType, konst: allConst(xs...), eval: func(row []schema.Value) (schema.Value, error) {
		v, err := d.eval(row)
		if err != nil || v.IsNull() {
			return schema.Null, err
		}
		fv, err := format.eval(row)
		if err != nil || fv.IsNull() {
			return schema.Null, err
		}
		return schema.BytesVal(exec.AppendDateFormat(nil, time.UnixMicro(v.Int).UTC(), string(fv.Bytes))), nil
	}}, nil
}

// VersionString is what version() returns: the MySQL version Doris
// reports (clients check it), then rowttl's own.
func VersionString() string { return "5.7.99-rowttl-" + Version() }

// Version is the version of the rowttl module in the running binary: a
// release tag, a pseudo-version, or "(devel)" when built in its source
// tree.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	if bi.Main.Path == "github.com/rowttl/rowttl" {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/rowttl/rowttl" {
			return d.Version
		}
	}
	return "(devel)"
}

// extractCall is EXTRACT(unit FROM x) as the date-part function of its
// unit, so that both compilers (and the DatePart kernel) compute it the
// one way they compute year(x), hour(x), ...
func extractCall(e *parser.ExtractExpr) (*parser.FuncCall, error) {
	var name string
	switch e.Unit {
	case parser.UnitYear:
		name = "year"
	case parser.UnitMonth:
		name = "month"
	case parser.UnitDay:
		name = "day"
	case parser.UnitHour:
		name = "hour"
	case parser.UnitMinute:
		name = "minute"
	case parser.UnitSecond:
		name = "second"
	case parser.UnitQuarter:
		name = "quarter"
	case parser.UnitWeek:
		// Doris: week(x), MySQL's mode 0.
		name = "week"
	case parser.UnitMicrosecond:
		name = "microsecond"
	default:
		return nil, notYet("EXTRACT(" + e.Unit.String() + " FROM ...)")
	}
	return &parser.FuncCall{Name: name, Args: []parser.Expr{e.X}}, nil
}

// trimRepeats removes whole repeats of cut from the start (left) and the
// end (right) of s: trim(s, cut) of MySQL's TRIM(cut FROM s) and Doris.
func trimRepeats(s, cut string, left, right bool) string {
	if cut == "" {
		return s
	}
	for left && strings.HasPrefix(s, cut) {
		s = s[len(cut):]
	}
	for right && strings.HasSuffix(s, cut) {
		s = s[:len(s)-len(cut)]
	}
	return s
}
