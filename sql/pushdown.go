package sql

import (
	"strings"

	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// pushdown extracts from a WHERE clause the top-level conjuncts of the
// forms `col op constant`, `col IS [NOT] NULL`, `col IN (constants)`,
// `col BETWEEN constants` whose constant converts exactly to the column's
// stored domain, and `col [NOT] LIKE 'pattern'` of a string column with a
// pattern query.Like takes ('abc', 'abc%', '%abc', '%abc%'), as a query filter the scan applies on zone maps (to skip
// pages) and rows. The executor still evaluates the whole WHERE on every row
// the scan returns, so a conjunct that cannot be pushed is simply left out:
// so are IN lists of more than maxPushedIn values, which the executor tests
// with a sorted set (compileIn) while the scan would bind and test every
// value on every page.
func pushdown(env *stmtEnv, sc *scope, where parser.Expr) query.Expr {
	var out []query.Expr
	for _, e := range conjuncts(where) {
		if q := pushOne(env, sc, e); q != nil {
			out = append(out, q)
		}
	}
	return query.AllOf(out...)
}

// maxPushedIn is the longest IN list pushed into a scan.
const maxPushedIn = 1024

func conjuncts(e parser.Expr) []parser.Expr {
	if b, ok := e.(*parser.BinaryExpr); ok && b.Op == parser.OpAnd {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	if e == nil {
		return nil
	}
	return []parser.Expr{e}
}

var pushOps = map[parser.BinaryOp]query.Op{
	parser.OpEq: query.Eq, parser.OpNe: query.Ne, parser.OpLt: query.Lt, parser.OpLe: query.Le,
	parser.OpGt: query.Gt, parser.OpGe: query.Ge, parser.OpNullSafeEq: query.NullSafeEq,
}

// flipped is the operator with its operands swapped.
var flipped = map[query.Op]query.Op{
	query.Eq: query.Eq, query.Ne: query.Ne, query.Lt: query.Gt, query.Le: query.Ge,
	query.Gt: query.Lt, query.Ge: query.Le, query.NullSafeEq: query.NullSafeEq,
}

// pushColumn returns the scan name and type of a column reference.
func pushColumn(sc *scope, e parser.Expr) (string, schema.Type, bool) {
	ref, ok := e.(*parser.ColumnRef)
	if !ok {
		return "", nullType, false
	}
	slot, err := sc.resolve(ref)
	if err != nil {
		return "", nullType, false
	}
	c := sc.cols[slot]
	return c.name, c.typ, true
}

// pushConst evaluates a constant expression and converts it to the stored
// domain of a column of type col; ok is false when that is not exact.
func pushConst(env *stmtEnv, col schema.Type, e parser.Expr) (any, bool) {
	c := newCompiler(env, nil)
	x, err := c.compile(e)
	if err != nil || !x.konst {
		return nil, false
	}
	v, err := x.eval(nil)
	if err != nil {
		return nil, false
	}
	if v.IsNull() {
		return nil, true
	}
	conv := func(to schema.Type) (schema.Value, bool) {
		f, err := castFunc(x.t, to, env.loc)
		if err != nil {
			return schema.Null, false
		}
		out, err := f(v)
		return out, err == nil
	}
	switch {
	case col.IsInteger() && isIntLike(x.t) && x.t.Kind != schema.Boolean:
		return v, true
	case isFloat(col) && isNumeric(x.t):
		// The row path compares a FLOAT or DOUBLE column with any number
		// as DOUBLE, and so does the pushed filter.
		return schema.FloatVal(toFloat(v, x.t)), true
	case col.IsString() && x.t.IsString():
		return v, true
	case col.Kind == schema.Datetime && isTemporalOrString(x.t) && x.t.Kind != schema.TimestampTZ && x.t.Kind != schema.TimestampNS:
		out, ok := conv(schema.DatetimeType(6))
		return out, ok
	case col.Kind == schema.Date && isTemporalOrString(x.t) && x.t.Kind != schema.TimestampTZ && x.t.Kind != schema.TimestampNS:
		if x.t.Kind == schema.Date {
			return v, true
		}
		out, ok := conv(schema.DatetimeType(6))
		if !ok || out.Int%microsPerDay != 0 {
			return nil, false
		}
		return schema.IntVal(out.Int / microsPerDay), true
	case col.Kind == schema.TimestampTZ && isTemporalOrString(x.t) && x.t.Kind != schema.TimestampNS:
		out, ok := conv(schema.TimestampTZType(6))
		return out, ok
	}
	return nil, false
}

func pushOne(env *stmtEnv, sc *scope, e parser.Expr) query.Expr {
	switch e := e.(type) {
	case *parser.BinaryExpr:
		op, ok := pushOps[e.Op]
		if !ok {
			return nil
		}
		if name, t, ok := pushColumn(sc, e.L); ok {
			if v, ok := pushConst(env, t, e.R); ok {
				return query.Cmp{Column: name, Op: op, Value: v}
			}
		}
		if name, t, ok := pushColumn(sc, e.R); ok {
			if v, ok := pushConst(env, t, e.L); ok {
				return query.Cmp{Column: name, Op: flipped[op], Value: v}
			}
		}
	case *parser.IsExpr:
		if e.Test != parser.IsNull {
			return nil
		}
		if name, _, ok := pushColumn(sc, e.X); ok {
			return query.IsNull{Column: name, Negate: e.Not}
		}
	case *parser.InExpr:
		if e.Not || len(e.List) > maxPushedIn {
			return nil
		}
		name, t, ok := pushColumn(sc, e.X)
		if !ok {
			return nil
		}
		var vals []any
		for _, x := range e.List {
			v, ok := pushConst(env, t, x)
			if !ok {
				return nil
			}
			vals = append(vals, v)
		}
		return query.In{Column: name, Values: vals}
	case *parser.LikeExpr:
		// Only a string column against a literal pattern the scan takes
		// (query.Like), with the default escape character, which it then
		// must not hold.
		lit, ok := e.Pattern.(*parser.StringLit)
		if !ok || e.Escape != nil || !scanLikePattern(lit.Val) {
			return nil
		}
		name, t, ok := pushColumn(sc, e.X)
		if !ok || !t.IsString() {
			return nil
		}
		var q query.Expr = query.Like{Column: name, Pattern: lit.Val}
		if e.Not {
			q = query.Not{Expr: q}
		}
		return q
	case *parser.BetweenExpr:
		if e.Not {
			return nil
		}
		name, t, ok := pushColumn(sc, e.X)
		if !ok {
			return nil
		}
		lo, ok1 := pushConst(env, t, e.Lo)
		hi, ok2 := pushConst(env, t, e.Hi)
		if !ok1 || !ok2 {
			return nil
		}
		return query.AllOf(query.Cmp{Column: name, Op: query.Ge, Value: lo}, query.Cmp{Column: name, Op: query.Le, Value: hi})
	}
	return nil
}

// scanLikePattern reports whether query.Like takes pattern: % only at its
// ends, no _ and no backslash (the default escape character).
func scanLikePattern(pattern string) bool {
	core := strings.Trim(pattern, "%")
	return !strings.ContainsAny(pattern, "_\\") && !strings.Contains(core, "%")
}
