package sql

import (
	"regexp"

	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// The string functions below run in the row compiler; vectorised plans
// evaluate them per row in place. Patterns are RE2, as in Doris, and
// case-sensitive.

// regexpOf compiles the pattern operand p: once when it is a constant,
// else per row.
func regexpOf(what string, p *compiled) (func(row []schema.Value) (*regexp.Regexp, bool, error), error) {
	compile := func(s string) (*regexp.Regexp, error) {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, invalidf("%s: invalid regular expression '%s': %v", what, s, err)
		}
		return re, nil
	}
	if p.konst {
		v, err := p.eval(nil)
		if err != nil {
			return nil, err
		}
		if v.IsNull() {
			return func([]schema.Value) (*regexp.Regexp, bool, error) { return nil, false, nil }, nil
		}
		re, err := compile(string(v.Bytes))
		if err != nil {
			return nil, err
		}
		return func([]schema.Value) (*regexp.Regexp, bool, error) { return re, true, nil }, nil
	}
	// A pattern that varies by row compiles per row: a cache would be
	// shared by the goroutines evaluating the expression.
	return func(row []schema.Value) (*regexp.Regexp, bool, error) {
		v, err := p.eval(row)
		if err != nil || v.IsNull() {
			return nil, false, err
		}
		re, err := compile(string(v.Bytes))
		return re, err == nil, err
	}, nil
}

// compileRegexp compiles x [NOT] REGEXP pattern: whether the pattern
// matches anywhere in x; NULL when either is NULL.
func (c *compiler) compileRegexp(e *parser.RegexpExpr) (*compiled, error) {
	x, p, err := textOperands(c, e.X, e.Pattern)
	if err != nil {
		return nil, err
	}
	re, err := regexpOf("REGEXP", p)
	if err != nil {
		return nil, err
	}
	return &compiled{t: boolType, konst: allConst(x, p), eval: func(row []schema.Value) (schema.Value, error) {
		s, err := x.eval(row)
		if err != nil || s.IsNull() {
			return schema.Null, err
		}
		r, ok, err := re(row)
		if err != nil || !ok {
			return schema.Null, err
		}
		return boolVal(r.Match(s.Bytes) != e.Not), nil
	}}, nil
}

// compileRegexpExtract compiles regexp_extract(s, pattern, group): the
// group of the first match (0: the whole match), an empty string when the
// pattern does not match or has no such group, as in Doris; NULL when an
// argument is.
func (c *compiler) compileRegexpExtract(f *parser.FuncCall) (*compiled, error) {
	return c.compileRegexp3(f, bigintType, func(r *regexp.Regexp, s []byte, g schema.Value) schema.Value {
		m := r.FindSubmatchIndex(s)
		if m == nil || g.Int < 0 || g.Int > int64(r.NumSubexp()) || m[2*g.Int] < 0 {
			return schema.BytesVal([]byte{})
		}
		return schema.BytesVal(append([]byte(nil), s[m[2*g.Int]:m[2*g.Int+1]]...))
	})
}

// compileConcatWs compiles concat_ws(sep, s1, ...): the non-NULL strings
// joined by sep; NULL only when sep is.
func (c *compiler) compileConcatWs(f *parser.FuncCall) (*compiled, error) {
	if err := c.nargs(f, 2, -1); err != nil {
		return nil, err
	}
	xs, err := c.compileAll(f.Args)
	if err != nil {
		return nil, err
	}
	for i := range xs {
		if xs[i], err = c.convert(xs[i], stringType); err != nil {
			return nil, err
		}
	}
	return &compiled{t: stringType, konst: allConst(xs...), eval: func(row []schema.Value) (schema.Value, error) {
		sep, err := xs[0].eval(row)
		if err != nil || sep.IsNull() {
			return schema.Null, err
		}
		b := []byte{}
		first := true
		for _, x := range xs[1:] {
			v, err := x.eval(row)
			if err != nil {
				return schema.Null, err
			}
			if v.IsNull() {
				continue
			}
			if !first {
				b = append(b, sep.Bytes...)
			}
			first = false
			b = append(b, v.Bytes...)
		}
		return schema.BytesVal(b), nil
	}}, nil
}

// compileRegexpReplace compiles regexp_replace(s, pattern, repl) (every
// match) and regexp_replace_one (the first): repl names groups as RE2's
// rewrite strings do, \1 … \9 (\0 the whole match), as in Doris.
func (c *compiler) compileRegexpReplace(f *parser.FuncCall) (*compiled, error) {
	all := f.Name == "regexp_replace"
	return c.compileRegexp3(f, stringType, func(r *regexp.Regexp, s []byte, rv schema.Value) schema.Value {
		tmpl := re2Template(rv.Bytes)
		var out []byte
		last := 0
		for _, m := range r.FindAllSubmatchIndex(s, -1) {
			out = append(out, s[last:m[0]]...)
			out = r.Expand(out, tmpl, s, m)
			last = m[1]
			if !all {
				break
			}
		}
		return schema.BytesVal(append(out, s[last:]...))
	})
}

// compileRegexp3 compiles a string function f(s, pattern, x) of a third
// argument of type third: NULL when an argument is, else apply of the
// pattern's expression, s and x.
func (c *compiler) compileRegexp3(f *parser.FuncCall, third schema.Type, apply func(r *regexp.Regexp, s []byte, x schema.Value) schema.Value) (*compiled, error) {
	if err := c.nargs(f, 3, 3); err != nil {
		return nil, err
	}
	xs, err := c.compileAll(f.Args)
	if err != nil {
		return nil, err
	}
	if err := convertEach(c, xs, stringType, stringType, third); err != nil {
		return nil, err
	}
	re, err := regexpOf(f.Name+"()", xs[1])
	if err != nil {
		return nil, err
	}
	return &compiled{t: stringType, konst: allConst(xs...), eval: func(row []schema.Value) (schema.Value, error) {
		s, err := xs[0].eval(row)
		if err != nil || s.IsNull() {
			return schema.Null, err
		}
		r, ok, err := re(row)
		if err != nil || !ok {
			return schema.Null, err
		}
		x, err := xs[2].eval(row)
		if err != nil || x.IsNull() {
			return schema.Null, err
		}
		return apply(r, s.Bytes, x), nil
	}}, nil
}

// re2Template turns an RE2 rewrite string (\N a group, \\ a backslash)
// into Go's Expand template (${N}, $$ a dollar).
func re2Template(repl []byte) []byte {
	var t []byte
	for i := 0; i < len(repl); i++ {
		switch ch := repl[i]; {
		case ch == '$':
			t = append(t, '$', '$')
		case ch == '\\' && i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9':
			t = append(t, '$', '{', repl[i+1], '}')
			i++
		case ch == '\\' && i+1 < len(repl) && repl[i+1] == '\\':
			t = append(t, '\\')
			i++
		default:
			t = append(t, ch)
		}
	}
	return t
}
