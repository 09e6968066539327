package sql

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// The scalar functions below beyond SPEC §4's list are the ones Doris
// (and MySQL) users write every day; they run in the row compiler, which
// vectorised plans call per row (plan_rowexpr.go). Strings are measured
// in characters (UTF-8), as Doris does except for length().

// nary compiles a function of len(ts) arguments converted to ts: NULL
// when any argument is NULL, else fn of their values.
func (c *compiler) nary(f *parser.FuncCall, out schema.Type, fn func(v []schema.Value) (schema.Value, error), ts ...schema.Type) (*compiled, error) {
	if err := c.nargs(f, len(ts), len(ts)); err != nil {
		return nil, err
	}
	xs, err := c.compileAll(f.Args)
	if err != nil {
		return nil, err
	}
	if err := convertEach(c, xs, ts...); err != nil {
		return nil, err
	}
	return &compiled{t: out, konst: allConst(xs...), eval: func(row []schema.Value) (schema.Value, error) {
		vals := make([]schema.Value, len(xs))
		for i, x := range xs {
			v, err := x.eval(row)
			if err != nil || v.IsNull() {
				return schema.Null, err
			}
			vals[i] = v
		}
		return fn(vals)
	}}, nil
}

func textVal(s string) schema.Value { return schema.BytesVal([]byte(s)) }

// compileWeek compiles week(x [, mode]): MySQL's week number, mode 0
// (weeks start on Sunday, 0..53) unless mode says otherwise.
func (c *compiler) compileWeek(f *parser.FuncCall) (*compiled, error) {
	week := func(v []schema.Value) (schema.Value, error) {
		mode := int64(0)
		if len(v) == 2 {
			mode = v[1].Int
		}
		if mode < 0 || mode > 7 {
			return schema.Null, invalidf("week() takes a mode between 0 and 7, got %d", mode)
		}
		return schema.IntVal(int64(exec.WeekOf(time.UnixMicro(v[0].Int).UTC(), int(mode)))), nil
	}
	if len(f.Args) == 2 {
		return c.nary(f, schema.IntType, week, schema.DatetimeType(6), bigintType)
	}
	return c.nary(f, schema.IntType, week, schema.DatetimeType(6))
}

// compileFromUnixtime compiles from_unixtime(n [, format]): the instant n
// seconds after the epoch in the session zone, as DATETIME, or formatted
// as date_format does; NULL outside the years 0001..9999.
func (c *compiler) compileFromUnixtime(f *parser.FuncCall) (*compiled, error) {
	loc := c.env.loc
	wall := func(n int64) (int64, bool) {
		if n < -62135596800 || n > 253402300799 {
			return 0, false
		}
		return schema.InstantToWall(n*microsPerSecond, loc), true
	}
	if len(f.Args) == 2 {
		return c.nary(f, stringType, func(v []schema.Value) (schema.Value, error) {
			w, ok := wall(v[0].Int)
			if !ok {
				return schema.Null, nil
			}
			return schema.BytesVal(exec.AppendDateFormat(nil, time.UnixMicro(w).UTC(), string(v[1].Bytes))), nil
		}, bigintType, stringType)
	}
	return c.unary(f, bigintType, schema.DatetimeType(0), func(v schema.Value) (schema.Value, error) {
		w, ok := wall(v.Int)
		if !ok {
			return schema.Null, nil
		}
		return schema.IntVal(w), nil
	})
}

// runeIndex is the 1-based character position of the first sub in s at
// or after character from (1-based), 0 when there is none.
func runeIndex(s, sub string, from int64) int64 {
	if from < 1 {
		return 0
	}
	start := 0
	for k := int64(1); k < from; k++ {
		if start >= len(s) {
			return 0
		}
		_, w := utf8.DecodeRuneInString(s[start:])
		start += w
	}
	i := strings.Index(s[start:], sub)
	if i < 0 {
		return 0
	}
	return from + int64(utf8.RuneCountInString(s[start:start+i]))
}

// pad is lpad/rpad(s, n, p): s cut or padded with repeats of p to n
// characters; NULL for a negative n, or when padding is needed and p is
// empty (as MySQL).
func padText(s string, n int64, p string, left bool) (string, bool) {
	if n < 0 {
		return "", false
	}
	rs := []rune(s)
	if int64(len(rs)) >= n {
		return string(rs[:n]), true
	}
	if p == "" {
		return "", false
	}
	if n > maxPadChars {
		return "", false
	}
	need := int(n) - len(rs)
	pr := []rune(p)
	fill := make([]rune, 0, need)
	for len(fill) < need {
		fill = append(fill, pr[:min(len(pr), need-len(fill))]...)
	}
	if left {
		return string(fill) + s, true
	}
	return s + string(fill), true
}

// maxPadChars bounds what lpad, rpad and repeat build, so that one call
// cannot ask for gigabytes.
const maxPadChars = 1 << 20

func (c *compiler) compileMoreFunc(f *parser.FuncCall) (*compiled, bool, error) {
	str := func(fn func(v []schema.Value) (schema.Value, error), ts ...schema.Type) (*compiled, bool, error) {
		x, err := c.nary(f, stringType, fn, ts...)
		return x, true, err
	}
	num := func(out schema.Type, fn func(v []schema.Value) (schema.Value, error), ts ...schema.Type) (*compiled, bool, error) {
		x, err := c.nary(f, out, fn, ts...)
		return x, true, err
	}
	// real is a DOUBLE function NULL outside its domain (MySQL and Doris
	// return NULL for sqrt(-1), ln(0)).
	real := func(fn func(x float64) float64) (*compiled, bool, error) {
		return num(doubleType, func(v []schema.Value) (schema.Value, error) {
			r := fn(v[0].Float)
			if math.IsNaN(r) || math.IsInf(r, 0) {
				return schema.Null, nil
			}
			return schema.FloatVal(r), nil
		}, doubleType)
	}
	positive := func(fn func(x float64) float64) func(x float64) float64 {
		return func(x float64) float64 {
			if x <= 0 {
				return math.NaN()
			}
			return fn(x)
		}
	}
	dt := schema.DatetimeType(6)
	day := func(v schema.Value) time.Time { return time.UnixMicro(v.Int).UTC() }
	switch f.Name {
	case "regexp_replace", "regexp_replace_one":
		x, err := c.compileRegexpReplace(f)
		return x, true, err
	case "str_to_date":
		x, err := c.compileStrToDate(f)
		return x, true, err
	case "years_diff", "months_diff", "weeks_diff", "days_diff", "hours_diff", "minutes_diff", "seconds_diff":
		// Doris: x_diff(end, start) is TIMESTAMPDIFF(x, start, end).
		if err := c.nargs(f, 2, 2); err != nil {
			return nil, true, err
		}
		unit := map[string]parser.IntervalUnit{"years_diff": parser.UnitYear, "months_diff": parser.UnitMonth,
			"weeks_diff": parser.UnitWeek, "days_diff": parser.UnitDay, "hours_diff": parser.UnitHour,
			"minutes_diff": parser.UnitMinute, "seconds_diff": parser.UnitSecond}[f.Name]
		x, err := c.compile(&parser.TimestampDiff{Unit: unit, From: f.Args[1], To: f.Args[0]})
		return x, true, err
	case "dayname":
		return str(func(v []schema.Value) (schema.Value, error) { return textVal(day(v[0]).Weekday().String()), nil }, dt)
	case "monthname":
		return str(func(v []schema.Value) (schema.Value, error) { return textVal(day(v[0]).Month().String()), nil }, dt)
	case "weekday":
		// 0 is Monday, as MySQL and Doris number them.
		return num(schema.IntType, func(v []schema.Value) (schema.Value, error) {
			return schema.IntVal(int64(day(v[0]).Weekday()+6) % 7), nil
		}, dt)
	case "yearweek":
		yw := func(v []schema.Value) (schema.Value, error) {
			mode := int64(0)
			if len(v) == 2 {
				mode = v[1].Int
			}
			if mode < 0 || mode > 7 {
				return schema.Null, invalidf("yearweek() takes a mode between 0 and 7, got %d", mode)
			}
			return schema.IntVal(int64(exec.YearWeekOf(day(v[0]), int(mode)))), nil
		}
		if len(f.Args) == 2 {
			return num(schema.IntType, yw, dt, bigintType)
		}
		return num(schema.IntType, yw, dt)
	case "to_days":
		// Days since year 0, as MySQL counts them: 1970-01-01 is 719528.
		return num(bigintType, func(v []schema.Value) (schema.Value, error) { return schema.IntVal(v[0].Int + 719528), nil }, schema.DateType)
	case "from_days":
		return num(schema.DateType, func(v []schema.Value) (schema.Value, error) {
			// Before 0001-01-01 (or past 9999-12-31) there is no DATE.
			if v[0].Int < 366 || v[0].Int > 3652424 {
				return schema.Null, nil
			}
			return schema.IntVal(v[0].Int - 719528), nil
		}, bigintType)
	case "makedate":
		return num(schema.DateType, func(v []schema.Value) (schema.Value, error) {
			y, d := v[0].Int, v[1].Int
			if y < 1 || y > 9999 || d < 1 {
				return schema.Null, nil
			}
			t := time.Date(int(y), 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(min(d, 4000000))-1)
			if t.Year() > 9999 {
				return schema.Null, nil
			}
			return schema.IntVal(t.Unix() / 86400), nil
		}, bigintType, bigintType)
	case "substring_index":
		return str(func(v []schema.Value) (schema.Value, error) {
			s, d, n := string(v[0].Bytes), string(v[1].Bytes), v[2].Int
			if d == "" || n == 0 {
				return textVal(""), nil
			}
			parts := strings.Split(s, d)
			if n > 0 {
				if n >= int64(len(parts)) {
					return v[0], nil
				}
				return textVal(strings.Join(parts[:n], d)), nil
			}
			if -n >= int64(len(parts)) {
				return v[0], nil
			}
			return textVal(strings.Join(parts[int64(len(parts))+n:], d)), nil
		}, stringType, stringType, bigintType)
	case "starts_with", "ends_with":
		prefix := f.Name == "starts_with"
		return num(boolType, func(v []schema.Value) (schema.Value, error) {
			if prefix {
				return boolVal(bytes.HasPrefix(v[0].Bytes, v[1].Bytes)), nil
			}
			return boolVal(bytes.HasSuffix(v[0].Bytes, v[1].Bytes)), nil
		}, stringType, stringType)
	case "null_or_empty":
		if err := c.nargs(f, 1, 1); err != nil {
			return nil, true, err
		}
		x, err := c.compile(f.Args[0])
		if err == nil {
			x, err = c.convert(x, stringType)
		}
		if err != nil {
			return nil, true, err
		}
		return &compiled{t: boolType, konst: x.konst, eval: func(row []schema.Value) (schema.Value, error) {
			v, err := x.eval(row)
			if err != nil {
				return schema.Null, err
			}
			return boolVal(v.IsNull() || len(v.Bytes) == 0), nil
		}}, true, nil
	case "ascii":
		return num(schema.IntType, func(v []schema.Value) (schema.Value, error) {
			if len(v[0].Bytes) == 0 {
				return schema.IntVal(0), nil
			}
			return schema.IntVal(int64(v[0].Bytes[0])), nil
		}, stringType)
	case "md5":
		return str(func(v []schema.Value) (schema.Value, error) {
			sum := md5.Sum(v[0].Bytes)
			return textVal(hex.EncodeToString(sum[:])), nil
		}, stringType)
	case "space":
		return str(func(v []schema.Value) (schema.Value, error) {
			if v[0].Int > maxPadChars {
				return schema.Null, invalidf("space() result longer than %d characters", maxPadChars)
			}
			return textVal(strings.Repeat(" ", int(max(v[0].Int, 0)))), nil
		}, bigintType)
	case "strcmp":
		return num(schema.IntType, func(v []schema.Value) (schema.Value, error) {
			return schema.IntVal(int64(bytes.Compare(v[0].Bytes, v[1].Bytes))), nil
		}, stringType, stringType)
	case "find_in_set":
		return num(bigintType, func(v []schema.Value) (schema.Value, error) {
			if bytes.IndexByte(v[0].Bytes, ',') >= 0 {
				return schema.IntVal(0), nil
			}
			for i, p := range strings.Split(string(v[1].Bytes), ",") {
				if p == string(v[0].Bytes) {
					return schema.IntVal(int64(i + 1)), nil
				}
			}
			return schema.IntVal(0), nil
		}, stringType, stringType)
	case "hex":
		if err := c.nargs(f, 1, 1); err != nil {
			return nil, true, err
		}
		x, err := c.compile(f.Args[0])
		if err != nil {
			return nil, true, err
		}
		if isIntLike(x.t) {
			// An integer is written as its 64-bit two's complement.
			return str(func(v []schema.Value) (schema.Value, error) {
				return textVal(strings.ToUpper(strconv.FormatUint(uint64(v[0].Int), 16))), nil
			}, bigintType)
		}
		return str(func(v []schema.Value) (schema.Value, error) {
			return textVal(strings.ToUpper(hex.EncodeToString(v[0].Bytes))), nil
		}, stringType)
	case "replace":
		return str(func(v []schema.Value) (schema.Value, error) {
			if len(v[1].Bytes) == 0 {
				return v[0], nil
			}
			return textVal(strings.ReplaceAll(string(v[0].Bytes), string(v[1].Bytes), string(v[2].Bytes))), nil
		}, stringType, stringType, stringType)
	case "lpad", "rpad":
		left := f.Name == "lpad"
		return str(func(v []schema.Value) (schema.Value, error) {
			s, ok := padText(string(v[0].Bytes), v[1].Int, string(v[2].Bytes), left)
			if !ok {
				return schema.Null, nil
			}
			return textVal(s), nil
		}, stringType, bigintType, stringType)
	case "left", "strleft", "right", "strright":
		right := strings.HasSuffix(f.Name, "right")
		return str(func(v []schema.Value) (schema.Value, error) {
			rs := []rune(string(v[0].Bytes))
			n := v[1].Int
			switch {
			case n <= 0:
				return textVal(""), nil
			case n >= int64(len(rs)):
				return v[0], nil
			case right:
				return textVal(string(rs[int64(len(rs))-n:])), nil
			}
			return textVal(string(rs[:n])), nil
		}, stringType, bigintType)
	case "reverse":
		return str(func(v []schema.Value) (schema.Value, error) {
			rs := []rune(string(v[0].Bytes))
			for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
				rs[i], rs[j] = rs[j], rs[i]
			}
			return textVal(string(rs)), nil
		}, stringType)
	case "repeat":
		return str(func(v []schema.Value) (schema.Value, error) {
			if v[1].Int <= 0 {
				return textVal(""), nil
			}
			if int64(utf8.RuneCount(v[0].Bytes))*v[1].Int > maxPadChars {
				return schema.Null, invalidf("repeat() result longer than %d characters", maxPadChars)
			}
			return textVal(strings.Repeat(string(v[0].Bytes), int(v[1].Int))), nil
		}, stringType, bigintType)
	case "instr":
		return num(bigintType, func(v []schema.Value) (schema.Value, error) {
			return schema.IntVal(runeIndex(string(v[0].Bytes), string(v[1].Bytes), 1)), nil
		}, stringType, stringType)
	case "locate":
		if len(f.Args) == 3 {
			return num(bigintType, func(v []schema.Value) (schema.Value, error) {
				return schema.IntVal(runeIndex(string(v[1].Bytes), string(v[0].Bytes), v[2].Int)), nil
			}, stringType, stringType, bigintType)
		}
		return num(bigintType, func(v []schema.Value) (schema.Value, error) {
			return schema.IntVal(runeIndex(string(v[1].Bytes), string(v[0].Bytes), 1)), nil
		}, stringType, stringType)
	case "mod":
		if err := c.nargs(f, 2, 2); err != nil {
			return nil, true, err
		}
		x, err := c.compile(&parser.BinaryExpr{Op: parser.OpMod, L: f.Args[0], R: f.Args[1]})
		return x, true, err
	case "pow", "power":
		return num(doubleType, func(v []schema.Value) (schema.Value, error) {
			r := math.Pow(v[0].Float, v[1].Float)
			if math.IsNaN(r) || math.IsInf(r, 0) {
				return schema.Null, nil
			}
			return schema.FloatVal(r), nil
		}, doubleType, doubleType)
	case "sqrt":
		return real(func(x float64) float64 {
			if x < 0 {
				return math.NaN()
			}
			return math.Sqrt(x)
		})
	case "exp":
		return real(math.Exp)
	case "ln":
		return real(positive(math.Log))
	case "log10":
		return real(positive(math.Log10))
	case "log2":
		return real(positive(math.Log2))
	case "log":
		if len(f.Args) == 1 {
			return real(positive(math.Log))
		}
		// log(b, x): the logarithm of x to the base b.
		return num(doubleType, func(v []schema.Value) (schema.Value, error) {
			b, x := v[0].Float, v[1].Float
			if b <= 0 || b == 1 || x <= 0 {
				return schema.Null, nil
			}
			return schema.FloatVal(math.Log(x) / math.Log(b)), nil
		}, doubleType, doubleType)
	case "sign":
		return num(schema.TinyIntType, func(v []schema.Value) (schema.Value, error) {
			switch x := v[0].Float; {
			case x > 0:
				return schema.IntVal(1), nil
			case x < 0:
				return schema.IntVal(-1), nil
			}
			return schema.IntVal(0), nil
		}, doubleType)
	case "pi":
		if err := c.nargs(f, 0, 0); err != nil {
			return nil, true, err
		}
		return constant(doubleType, schema.FloatVal(math.Pi)), true, nil
	case "greatest", "least":
		if err := c.nargs(f, 2, -1); err != nil {
			return nil, true, err
		}
		xs, t, err := c.unified(f.Args)
		if err != nil {
			return nil, true, err
		}
		if isNullType(t) {
			return constant(t, schema.Null), true, nil
		}
		cmpf := compareIn(t)
		sign := 1
		if f.Name == "least" {
			sign = -1
		}
		return &compiled{t: t, konst: allConst(xs...), eval: func(row []schema.Value) (schema.Value, error) {
			var best schema.Value
			for i, x := range xs {
				v, err := x.eval(row)
				if err != nil || v.IsNull() {
					return schema.Null, err
				}
				if i == 0 || sign*cmpf(v, best) > 0 {
					best = v
				}
			}
			return best, nil
		}}, true, nil
	}
	return nil, false, nil
}

// compileStrToDate compiles str_to_date(s, format): s read by the MySQL
// format specifiers (those of date_format that name a field), as a
// DATETIME when the format has a time of day (DATETIME(6) with %f, or
// when the format is not a constant), else a DATE; NULL when s does not
// match the format or names no valid date.
func (c *compiler) compileStrToDate(f *parser.FuncCall) (*compiled, error) {
	if err := c.nargs(f, 2, 2); err != nil {
		return nil, err
	}
	xs, err := c.compileAll(f.Args)
	if err != nil {
		return nil, err
	}
	if err := convertEach(c, xs, stringType, stringType); err != nil {
		return nil, err
	}
	t := schema.DatetimeType(6)
	if xs[1].konst {
		v, err := xs[1].eval(nil)
		if err != nil {
			return nil, err
		}
		if !v.IsNull() {
			fm := string(v.Bytes)
			switch {
			case strings.Contains(fm, "%f"):
			case hasTimeSpec(fm):
				t = schema.DatetimeType(0)
			default:
				t = schema.DateType
			}
		}
	}
	return &compiled{t: t, konst: allConst(xs...), eval: func(row []schema.Value) (schema.Value, error) {
		s, err := xs[0].eval(row)
		if err != nil || s.IsNull() {
			return schema.Null, err
		}
		fv, err := xs[1].eval(row)
		if err != nil || fv.IsNull() {
			return schema.Null, err
		}
		us, ok := parseMySQLTime(string(s.Bytes), string(fv.Bytes))
		if !ok {
			return schema.Null, nil
		}
		if t.Kind == schema.Date {
			return schema.IntVal(floorDiv(us, 86400*microsPerSecond)), nil
		}
		return schema.IntVal(us), nil
	}}, nil
}

// hasTimeSpec reports whether a MySQL format names a time-of-day field.
func hasTimeSpec(format string) bool {
	for i := 0; i+1 < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		if strings.IndexByte("HkhIlisSfpTr", format[i]) >= 0 {
			return true
		}
	}
	return false
}

// parseMySQLTime reads s by format (MySQL's str_to_date): the wall-clock
// microseconds it names.
func parseMySQLTime(s, format string) (int64, bool) {
	year, month, day := 0, 1, 1
	hour, minute, sec, micro := 0, 0, 0, 0
	pm, twelve := false, false
	num := func(maxDigits int) (int, bool) {
		j := 0
		for j < len(s) && j < maxDigits && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == 0 {
			return 0, false
		}
		n, _ := strconv.Atoi(s[:j])
		s = s[j:]
		return n, true
	}
	name := func(names []string, short bool) (int, bool) {
		for i, n := range names {
			if short {
				n = n[:3]
			}
			if len(s) >= len(n) && strings.EqualFold(s[:len(n)], n) {
				s = s[len(n):]
				return i, true
			}
		}
		return 0, false
	}
	months := []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	var ok bool
	for i := 0; i < len(format); i++ {
		ch := format[i]
		if ch != '%' || i+1 == len(format) {
			if len(s) == 0 || s[0] != ch {
				// Spaces in the format match any run of spaces.
				if ch == ' ' {
					continue
				}
				return 0, false
			}
			s = s[1:]
			continue
		}
		i++
		switch format[i] {
		case 'Y':
			year, ok = num(4)
		case 'y':
			year, ok = num(2)
			if year < 70 {
				year += 2000
			} else {
				year += 1900
			}
		case 'm', 'c':
			month, ok = num(2)
		case 'd', 'e':
			day, ok = num(2)
		case 'H', 'k':
			hour, ok = num(2)
		case 'h', 'I', 'l':
			hour, ok = num(2)
			twelve = true
		case 'i':
			minute, ok = num(2)
		case 's', 'S':
			sec, ok = num(2)
		case 'f':
			j := 0
			for j < len(s) && j < 6 && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == 0 {
				return 0, false
			}
			micro, _ = strconv.Atoi(s[:j] + strings.Repeat("0", 6-j))
			s, ok = s[j:], true
		case 'p':
			switch {
			case len(s) >= 2 && strings.EqualFold(s[:2], "PM"):
				pm, ok = true, true
			case len(s) >= 2 && strings.EqualFold(s[:2], "AM"):
				ok = true
			default:
				ok = false
			}
			if ok {
				s = s[2:]
			}
		case 'M':
			var m int
			m, ok = name(months, false)
			month = m + 1
		case 'b':
			var m int
			m, ok = name(months, true)
			month = m + 1
		case 'T':
			if hour, ok = num(2); ok && strings.HasPrefix(s, ":") {
				s = s[1:]
				if minute, ok = num(2); ok && strings.HasPrefix(s, ":") {
					s = s[1:]
					sec, ok = num(2)
				} else {
					ok = false
				}
			} else {
				ok = false
			}
		case '%':
			ok = strings.HasPrefix(s, "%")
			if ok {
				s = s[1:]
			}
		default:
			return 0, false
		}
		if !ok {
			return 0, false
		}
	}
	if twelve {
		if hour < 1 || hour > 12 {
			return 0, false
		}
		hour %= 12
		if pm {
			hour += 12
		}
	}
	if year < 1 || year > 9999 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return 0, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, micro*1000, time.UTC)
	if t.Day() != day {
		return 0, false // 2023-02-30 and the like
	}
	return t.UnixMicro(), true
}
