package sql

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// errRowEngine marks what no kernel computes: the row compiler evaluates
// it inside the plan (plan_rowexpr.go) where it can, and the statement is
// refused where it cannot (planError).
var errRowEngine = errors.New("evaluated by the row compiler")

// rowEngineError is what the vectorised compiler cannot compile: reason
// says why; err, when set, is the error of resolution or typing the
// statement reports.
type rowEngineError struct {
	reason string
	err    error
	// whole marks an expression too large or too deep for kernels: the
	// row compiler takes it from its root rather than node by node.
	whole bool
}

func (e *rowEngineError) Error() string { return e.reason }
func (e *rowEngineError) Unwrap() error { return errRowEngine }

func rowEnginef(format string, args ...any) error {
	return &rowEngineError{reason: fmt.Sprintf(format, args...)}
}

// rowEngineErr wraps an error of resolution or typing (the row compiler's
// words) for the statement to report.
func rowEngineErr(err error) error {
	return &rowEngineError{reason: err.Error(), err: err}
}

// maxExprNodes bounds the size of one expression compiled into kernels
// (their texts make compiling quadratic past it); a larger one goes to the
// row compiler whole, which compiles any expression the parser accepts
// (parser.MaxExprSize) in linear time.
const maxExprNodes = 10000

// vcompiler turns AST expressions into vectorised exec expressions over the
// columns of one scope. It reuses the row compiler's type rules
// (comparisonType, unify, castFunc, sameRepr) and folds every constant
// subexpression with the row compiler, so constants get exactly its
// values and errors.
type vcompiler struct {
	env *stmtEnv
	sc  *scope
	// refs are the column references made, by input slot; the planner
	// points their Index at the scan's output column once it knows the
	// projection.
	refs  map[int][]*exec.ColumnRef
	nodes int
	depth int
	// konst memoises which subexpressions are constant.
	konst map[parser.Expr]bool
	// subst, when set, is consulted before each node: over the output of
	// an aggregation it replaces aggregate calls and GROUP BY expressions
	// with the columns that hold them.
	subst func(e parser.Expr) (exec.Expr, bool, error)
	// subq compiles a scalar subquery (plan_subquery.go); nil where the
	// planner has no place for one.
	subq func(*parser.SubqueryExpr) (exec.Expr, error)
	// win compiles a window function (plan_window.go); nil where none may
	// stand.
	win func(*parser.WindowFunc) (exec.Expr, error)
	// insub compiles an IN (subquery) or EXISTS that no semi join takes
	// (plan_subquery.go); nil where the planner has no place for one.
	insub func(c *vcompiler, e parser.Expr) (exec.Expr, error)
}

func newVCompiler(env *stmtEnv, sc *scope) *vcompiler {
	return &vcompiler{env: env, sc: sc, refs: map[int][]*exec.ColumnRef{}, konst: map[parser.Expr]bool{}}
}

// maxExprDepth bounds the nesting of one vectorised expression; a deeper one
// goes to the row compiler whole.
const maxExprDepth = 1000

// markConst records in konst whether e and each of its subexpressions is
// constant, visiting every node once (the children of a node are those
// Walk visits directly below it).
func markConst(e parser.Expr, konst map[parser.Expr]bool, depth int) bool {
	if k, ok := konst[e]; ok {
		return k
	}
	k := true
	switch f := e.(type) {
	case *parser.ColumnRef, *parser.SubqueryExpr, *parser.InSubquery, *parser.ExistsExpr, *parser.QuantifiedCmp, *parser.WindowFunc:
		k = false
	case *parser.FuncCall:
		if parser.IsAggregate(f.Name) {
			k = false
		}
	}
	if depth >= maxExprDepth {
		// Too deep to compile anyway (compile refuses it): not folded.
		k = false
	} else {
		parser.Walk(e, func(x parser.Expr) bool {
			if x == e {
				return true
			}
			if !markConst(x, konst, depth+1) {
				k = false
			}
			return false
		})
	}
	konst[e] = k
	return k
}

func (c *vcompiler) compile(e parser.Expr) (exec.Expr, error) {
	if c.depth == 0 && c.nodes+countNodes(e, maxExprNodes+1) > maxExprNodes {
		// Too large for kernels: straight to the row compiler, before
		// markConst memoises every node.
		err := error(&rowEngineError{reason: fmt.Sprintf("expression of more than %d nodes", maxExprNodes), whole: true})
		if c.rowFallback(e, err) {
			return c.compileRow(e)
		}
	}
	if c.env.rowExprs && c.depth == 0 && !isPlainRef(e) && c.rowFallback(e, &rowEngineError{reason: "forced"}) {
		return c.compileRow(e)
	}
	x, err := c.compileVec(e)
	if f, ok := e.(*parser.FuncCall); ok && err != nil && !parser.IsAggregate(f.Name) {
		if re, ok := err.(*rowEngineError); ok && re.err == nil && !re.whole {
			return c.compileRowCall(f)
		}
	}
	if err != nil && c.rowFallback(e, err) {
		if re := err.(*rowEngineError); re.whole && c.depth > 0 {
			return nil, err
		}
		return c.compileRow(e)
	}
	return x, err
}

// isPlainRef reports a column reference, which the planner reads as a
// column whatever compiles expressions.
func isPlainRef(e parser.Expr) bool {
	_, ok := e.(*parser.ColumnRef)
	return ok
}

// countNodes counts the nodes of e, stopping at limit.
func countNodes(e parser.Expr, limit int) int {
	n := 0
	parser.Walk(e, func(parser.Expr) bool {
		n++
		return n < limit
	})
	return n
}

// compileVec compiles e into kernels; an error wrapping errRowEngine
// without an inner error says that e has none (see rowFallback).
func (c *vcompiler) compileVec(e parser.Expr) (exec.Expr, error) {
	c.nodes++
	if c.nodes > maxExprNodes {
		return nil, &rowEngineError{reason: fmt.Sprintf("expression of more than %d nodes", maxExprNodes), whole: true}
	}
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxExprDepth {
		return nil, &rowEngineError{reason: fmt.Sprintf("expression nested more than %d levels", maxExprDepth), whole: true}
	}
	if c.subst != nil {
		if x, ok, err := c.subst(e); ok || err != nil {
			return x, err
		}
	}
	if markConst(e, c.konst, c.depth) {
		old := newCompiler(c.env, nil)
		x, err := old.compile(e)
		if err != nil {
			return nil, rowEngineErr(err)
		}
		v, err := x.eval(nil)
		if err != nil {
			return nil, rowEngineErr(err)
		}
		return c.lit(x.t, v), nil
	}
	switch e := e.(type) {
	case *parser.ColumnRef:
		slot, err := c.sc.resolve(e)
		if err != nil {
			return nil, rowEngineErr(err)
		}
		col := c.sc.cols[slot]
		ref := &exec.ColumnRef{Index: -1, Name: col.name, Typ: col.typ}
		c.refs[slot] = append(c.refs[slot], ref)
		return ref, nil
	case *parser.UnaryExpr:
		x, err := c.compile(e.X)
		if err != nil {
			return nil, err
		}
		switch e.Op {
		case parser.OpNot:
			return compileNot(c, x)
		case parser.OpBitNot:
			if x, err = bitOperand(c, x, "operator ~"); err != nil {
				return nil, err
			}
			return &exec.BitNot{X: x}, nil
		}
		t := x.Type()
		switch {
		case isIntLike(t) || isNullType(t):
			x, err = c.convert(x, bigintType)
		case t.Kind == schema.Decimal:
			// Negation never leaves the type's digits.
		case isFloat(t):
			x, err = c.convert(x, doubleType)
		default:
			return nil, rowEnginef("negation of %s", t)
		}
		if err != nil {
			return nil, err
		}
		return &exec.Neg{X: x, Text: parser.FormatExpr(e)}, nil
	case *parser.BinaryExpr:
		return compileBinary(c, e, func(l, r exec.Expr) (exec.Expr, error) {
			if e.Op.IsBit() {
				l, r, err := bitOperands(c, l, r, bitWhat(e.Op))
				if err != nil {
					return nil, err
				}
				return exec.NewArith(bitOps[e.Op], l, r, parser.FormatExpr(e))
			}
			return c.arith(e.Op, l, r, parser.FormatExpr(e))
		})
	case *parser.IsExpr:
		x, err := c.compile(e.X)
		if err != nil {
			return nil, err
		}
		test := exec.TestNull
		if e.Test != parser.IsNull {
			if x, err = c.asBool(x); err != nil {
				return nil, err
			}
			test = exec.TestTrue
			if e.Test == parser.IsFalse {
				test = exec.TestFalse
			}
		}
		return &exec.Is{X: x, Test: test, Not: e.Not}, nil
	case *parser.InExpr:
		return c.in(e)
	case *parser.BetweenExpr:
		return compileBetween(c, e)
	case *parser.LikeExpr:
		return c.like(e)
	case *parser.CastExpr:
		x, err := c.compile(e.X)
		if err != nil {
			return nil, err
		}
		if err := e.Type.Validate(); err != nil {
			return nil, rowEngineErr(err)
		}
		return c.convert(x, e.Type)
	case *parser.DateArith:
		return c.dateArith(e)
	case *parser.CaseExpr:
		return c.caseExpr(e)
	case *parser.FuncCall:
		return c.funcCall(e)
	case *parser.ExtractExpr:
		f, err := extractCall(e)
		if err != nil {
			return nil, err
		}
		return c.funcCall(f)
	case *parser.SubqueryExpr:
		if c.subq != nil {
			return c.subq(e)
		}
	case *parser.WindowFunc:
		if c.win != nil {
			return c.win(e)
		}
	case *parser.InSubquery:
		if c.insub != nil {
			return c.insub(c, e)
		}
		return nil, rowEnginef("IN (subquery) other than a WHERE conjunct")
	case *parser.ExistsExpr:
		if c.insub != nil {
			return c.insub(c, e)
		}
		return nil, rowEnginef("EXISTS other than a WHERE conjunct or its negation")
	case *parser.RowExpr:
		return nil, errRowOperand()
	case *parser.QuantifiedCmp:
		if c.insub != nil {
			return c.insub(c, e)
		}
		return nil, rowEnginef("%s %s (subquery) here", e.Op, quantWord(e.All))
	}
	return nil, rowEnginef("expression %s", parser.FormatExpr(e))
}

// caseExpr compiles CASE as the row compiler does: with an operand, each
// WHEN is operand = value; the results are converted to their unified type.
func (c *vcompiler) caseExpr(e *parser.CaseExpr) (exec.Expr, error) {
	conds, results, err := caseArms(c, e)
	if err != nil {
		return nil, err
	}
	t, err := c.unifyAll(results)
	if err != nil {
		return nil, err
	}
	whens := make([]exec.When, len(conds))
	for i, cond := range conds {
		whens[i] = exec.When{Cond: cond, Result: results[i]}
	}
	out := &exec.Case{Whens: whens, Typ: t}
	if e.Else != nil {
		out.Else = results[len(results)-1]
	}
	return out, nil
}

// The vcompiler side of exprCompiler (expr_rules.go).

func (c *vcompiler) negate(b exec.Expr) exec.Expr { return &exec.Not{X: b} }

func (c *vcompiler) typeOf(x exec.Expr) schema.Type { return x.Type() }

// constValue reads a Literal: compile folds every constant subexpression
// into one.
func (c *vcompiler) constValue(x exec.Expr) (schema.Value, bool) {
	if l, ok := x.(*exec.Literal); ok {
		return l.Val, true
	}
	return schema.Null, false
}

func (c *vcompiler) constNode(t schema.Type, v schema.Value) exec.Expr { return c.lit(t, v) }

// unifyAll converts xs in place to their unified type.
func (c *vcompiler) unifyAll(xs []exec.Expr) (schema.Type, error) {
	t := unify(typesOf(c, xs)...)
	if isNullType(t) {
		return t, rowEnginef("every branch is NULL")
	}
	return t, convertAll(c, xs, t)
}

// funcCall compiles the scalar functions the vectorised engine has.
func (c *vcompiler) funcCall(f *parser.FuncCall) (exec.Expr, error) {
	if f.Star || f.Distinct {
		return nil, rowEnginef("%s() with * or DISTINCT", f.Name)
	}
	args := make([]exec.Expr, len(f.Args))
	for i, a := range f.Args {
		x, err := c.compile(a)
		if err != nil {
			return nil, err
		}
		args[i] = x
	}
	nargs := func(lo, hi int) error {
		if len(args) < lo || (hi >= 0 && len(args) > hi) {
			return rowEnginef("%s() with %d arguments", f.Name, len(args))
		}
		return nil
	}
	// one converts the single argument to t.
	one := func(t schema.Type) (exec.Expr, error) {
		if err := nargs(1, 1); err != nil {
			return nil, err
		}
		return c.convert(args[0], t)
	}
	if op, ok := bitFuncs[f.Name]; ok {
		if err := nargs(2, 2); err != nil {
			return nil, err
		}
		l, r, err := bitOperands(c, args[0], args[1], f.Name+"()")
		if err != nil {
			return nil, err
		}
		return exec.NewArith(bitOps[op], l, r, parser.FormatExpr(f))
	}
	switch f.Name {
	case "bitnot":
		if err := nargs(1, 1); err != nil {
			return nil, err
		}
		x, err := bitOperand(c, args[0], "bitnot()")
		if err != nil {
			return nil, err
		}
		return &exec.BitNot{X: x}, nil
	case "year", "quarter", "month", "day", "dayofmonth", "dayofweek", "hour", "minute", "second",
		"dayofyear", "weekofyear", "microsecond", "week":
		if f.Name == "week" && len(args) != 1 {
			return nil, rowEnginef("week() with a mode")
		}
		x, err := one(schema.DatetimeType(6))
		if err != nil {
			return nil, err
		}
		part := f.Name
		if part == "dayofmonth" {
			part = "day"
		}
		return &exec.DatePart{Part: part, X: x}, nil
	case "date", "to_date":
		return one(schema.DateType)
	case "datediff":
		if err := nargs(2, 2); err != nil {
			return nil, err
		}
		a, err := c.convert(args[0], schema.DateType)
		if err != nil {
			return nil, err
		}
		b, err := c.convert(args[1], schema.DateType)
		if err != nil {
			return nil, err
		}
		return &exec.DateDiff{A: a, B: b}, nil
	case "date_trunc":
		if err := nargs(2, 2); err != nil {
			return nil, err
		}
		unit, err := newCompiler(c.env, c.sc).truncUnit(f)
		if err != nil {
			return nil, rowEngineErr(err)
		}
		x := args[0]
		if x.Type().Kind != schema.Datetime {
			if x, err = c.convert(x, schema.DatetimeType(6)); err != nil {
				return nil, err
			}
		}
		return &exec.DateTrunc{X: x, Unit: unit}, nil
	case "date_format":
		if err := nargs(2, 2); err != nil {
			return nil, err
		}
		x, err := c.convert(args[0], schema.DatetimeType(6))
		if err != nil {
			return nil, err
		}
		format, err := c.convert(args[1], stringType)
		if err != nil {
			return nil, err
		}
		return &exec.DateFormat{X: x, Format: format}, nil
	case "upper", "ucase", "lower", "lcase", "trim", "ltrim", "rtrim", "length", "octet_length", "char_length", "character_length":
		x, err := one(stringType)
		if err != nil {
			return nil, err
		}
		name := map[string]string{"ucase": "upper", "lcase": "lower", "octet_length": "length", "character_length": "char_length"}[f.Name]
		if name == "" {
			name = f.Name
		}
		return &exec.StrFunc{Name: name, X: x}, nil
	case "concat":
		if err := nargs(1, -1); err != nil {
			return nil, err
		}
		for i, a := range args {
			x, err := c.convert(a, stringType)
			if err != nil {
				return nil, err
			}
			args[i] = x
		}
		return &exec.Concat{Args: args}, nil
	case "substring", "substr":
		if err := nargs(2, 3); err != nil {
			return nil, err
		}
		x, err := c.convert(args[0], stringType)
		if err != nil {
			return nil, err
		}
		out := &exec.Substr{X: x}
		if out.Pos, err = c.convert(args[1], bigintType); err != nil {
			return nil, err
		}
		if len(args) == 3 {
			if out.N, err = c.convert(args[2], bigintType); err != nil {
				return nil, err
			}
		}
		return out, nil
	case "split_part":
		if err := nargs(3, 3); err != nil {
			return nil, err
		}
		x, err := c.convert(args[0], stringType)
		if err != nil {
			return nil, err
		}
		delim, ok1 := args[1].(*exec.Literal)
		field, ok2 := args[2].(*exec.Literal)
		if !ok1 || !ok2 || delim.Val.IsNull() || field.Val.IsNull() || !delim.Typ.IsString() || !isIntLike(field.Typ) {
			return nil, rowEnginef("split_part() without a constant delimiter and field")
		}
		return &exec.SplitPartConst{X: x, Delim: string(delim.Val.Bytes), Field: field.Val.Int}, nil
	case "coalesce", "ifnull", "nvl":
		lo, hi := 2, 2
		if f.Name == "coalesce" {
			lo, hi = 1, -1
		}
		if err := nargs(lo, hi); err != nil {
			return nil, err
		}
		t, err := c.unifyAll(args)
		if err != nil {
			return nil, err
		}
		return &exec.Coalesce{Args: args, Typ: t}, nil
	case "if":
		if err := nargs(3, 3); err != nil {
			return nil, err
		}
		cond, err := c.asBool(args[0])
		if err != nil {
			return nil, err
		}
		res := args[1:]
		t, err := c.unifyAll(res)
		if err != nil {
			return nil, err
		}
		return &exec.Case{Whens: []exec.When{{Cond: cond, Result: res[0]}}, Else: res[1], Typ: t}, nil
	case "nullif":
		if err := nargs(2, 2); err != nil {
			return nil, err
		}
		eq, err := c.compare(parser.OpEq, args[0], args[1])
		if err != nil {
			return nil, err
		}
		t := args[0].Type()
		if isNullType(t) {
			return nil, rowEnginef("nullif of NULL")
		}
		return &exec.Case{Whens: []exec.When{{Cond: eq, Result: c.lit(t, schema.Null)}}, Else: args[0], Typ: t}, nil
	}
	return nil, rowEnginef("function %s()", f.Name)
}

// lit returns a constant; its text is how EXPLAIN shows it.
func (c *vcompiler) lit(t schema.Type, v schema.Value) *exec.Literal {
	text := "NULL"
	if !v.IsNull() {
		text = renderValue(v, t, c.env.loc)
		if t.IsString() || t.IsTemporal() {
			text = parser.QuoteString(text)
		}
	}
	return &exec.Literal{Typ: t, Val: v, Text: text}
}

// convert returns x as a value of type t: constants are converted now, by
// the row compiler's castFunc; columns through an exec.Cast when it
// implements the conversion.
func (c *vcompiler) convert(x exec.Expr, t schema.Type) (exec.Expr, error) {
	from := x.Type()
	if from == t {
		return x, nil
	}
	if l, ok := x.(*exec.Literal); ok {
		f, err := castFunc(from, t, c.env.loc)
		if err != nil {
			return nil, rowEngineErr(err)
		}
		v, err := f(l.Val)
		if err != nil {
			return nil, rowEngineErr(err)
		}
		return c.lit(t, v), nil
	}
	if sameRepr(from, t) && arrow.TypeEqual(from.Arrow(), t.Arrow()) && !(from.Kind == schema.Datetime || from.Kind == schema.TimestampTZ) {
		return x, nil
	}
	if from.Kind == t.Kind && (t.Kind == schema.Datetime || t.Kind == schema.TimestampTZ) && from.Precision <= t.Precision {
		// Widening the precision changes no value.
		return x, nil
	}
	if _, err := castFunc(from, t, c.env.loc); err != nil {
		return nil, rowEngineErr(err)
	}
	if !exec.CanCast(from, t) {
		return nil, rowEnginef("conversion of %s to %s", from, t)
	}
	return &exec.Cast{X: x, To: t}, nil
}

// asBool converts x for a logical context, as the row compiler's asBool.
func (c *vcompiler) asBool(x exec.Expr) (exec.Expr, error) {
	t := x.Type()
	if t.Kind == schema.Boolean || isNullType(t) {
		return x, nil
	}
	if isNumeric(t) || t.IsString() {
		return c.convert(x, boolType)
	}
	return nil, rowEnginef("%s value used as a condition", t)
}

func (c *vcompiler) logic(and bool, l, r exec.Expr) (exec.Expr, error) {
	l, err := c.asBool(l)
	if err != nil {
		return nil, err
	}
	r, err = c.asBool(r)
	if err != nil {
		return nil, err
	}
	return &exec.Logic{And: and, L: l, R: r}, nil
}

var cmpOps = map[parser.BinaryOp]exec.CmpOp{
	parser.OpEq: exec.Eq, parser.OpNe: exec.Ne, parser.OpLt: exec.Lt, parser.OpLe: exec.Le, parser.OpGt: exec.Gt, parser.OpGe: exec.Ge, parser.OpNullSafeEq: exec.NullSafeEq,
}

func (c *vcompiler) compare(op parser.BinaryOp, l, r exec.Expr) (exec.Expr, error) {
	// A text constant next to a DECIMAL is read as the exact number it
	// spells, as Doris types such literals.
	l, r = decimalTextOf(c, l, r), decimalTextOf(c, r, l)
	if isDecimalPair(l.Type(), r.Type()) && !isNullType(l.Type()) && !isNullType(r.Type()) {
		l, err := c.widenExact(l)
		if err != nil {
			return nil, err
		}
		r, err := c.widenExact(r)
		if err != nil {
			return nil, err
		}
		return exec.NewDecimalCompare(cmpOps[op], l, r)
	}
	t, ok := comparisonType(l.Type(), r.Type())
	if !ok {
		return nil, rowEnginef("comparison of %s with %s", l.Type(), r.Type())
	}
	if isNullType(t) {
		// One side is a NULL constant: <=> tests the other for NULL, every
		// other comparison is NULL.
		if op != parser.OpNullSafeEq {
			return c.lit(boolType, schema.Null), nil
		}
		x := l
		if isNullType(l.Type()) {
			x = r
		}
		return &exec.Is{X: x, Test: exec.TestNull}, nil
	}
	l, err := c.convert(l, t)
	if err != nil {
		return nil, err
	}
	if r, err = c.convert(r, t); err != nil {
		return nil, err
	}
	return exec.NewCompare(cmpOps[op], l, r)
}

var arithOps = map[parser.BinaryOp]exec.ArithOp{
	parser.OpAdd: exec.Add, parser.OpSub: exec.Sub, parser.OpMul: exec.Mul, parser.OpDiv: exec.Div, parser.OpMod: exec.Mod, parser.OpIntDiv: exec.IntDiv,
}

func (c *vcompiler) arith(op parser.BinaryOp, l, r exec.Expr, text string) (exec.Expr, error) {
	for _, x := range []exec.Expr{l, r} {
		t := x.Type()
		if t.IsTemporal() || (!isNumeric(t) && !t.IsString() && !isNullType(t)) {
			return nil, rowEnginef("arithmetic on %s", t)
		}
	}
	if isDecimalPair(l.Type(), r.Type()) {
		return c.decimalArith(op, l, r, text)
	}
	intLike := func(t schema.Type) bool { return isIntLike(t) || isNullType(t) }
	to := doubleType
	if intLike(l.Type()) && intLike(r.Type()) && op != parser.OpDiv {
		to = bigintType
	}
	l, err := c.convert(l, to)
	if err != nil {
		return nil, err
	}
	if r, err = c.convert(r, to); err != nil {
		return nil, err
	}
	return exec.NewArith(arithOps[op], l, r, text)
}

func (c *vcompiler) in(e *parser.InExpr) (exec.Expr, error) {
	if or, err := rowIn(e); or != nil || err != nil {
		if err != nil {
			return nil, err
		}
		return c.compile(or)
	}
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	var t schema.Type
	haveT, mixed, allConst := false, false, true
	var items []exec.Expr
	for _, it := range e.List {
		allConst = allConst && markConst(it, c.konst, c.depth)
		v, err := c.compile(it)
		if err != nil {
			return nil, err
		}
		items = append(items, v)
		ct, ok := comparisonType(x.Type(), v.Type())
		if !ok {
			return nil, rowEnginef("IN list comparing %s with %s", x.Type(), v.Type())
		}
		if isNullType(ct) {
			continue
		}
		mixed = mixed || (haveT && ct != t)
		t, haveT = ct, true
	}
	if !haveT {
		return c.lit(nullType, schema.Null), nil
	}
	// A set needs constants of one comparison type; any other list is the
	// OR of its comparisons, each pair compared as the row compiler does.
	if !allConst || mixed || decimalIn(x, items) {
		return c.inByComparisons(x, items, e.Not)
	}
	lits := make([]*exec.Literal, 0, len(items))
	for _, it := range items {
		l := it.(*exec.Literal)
		if isNullType(l.Typ) || l.Val.IsNull() {
			lits = append(lits, c.lit(t, schema.Null))
			continue
		}
		cv, err := c.convert(l, t)
		if err != nil {
			return nil, err
		}
		lits = append(lits, cv.(*exec.Literal))
	}
	if x, err = c.convert(x, t); err != nil {
		return nil, err
	}
	g, err := exec.NewIn(x, lits, e.Not)
	if err != nil {
		return nil, rowEngineErr(err)
	}
	return g, nil
}

// decimalIn reports an IN list with a DECIMAL on either side: the row
// engine compares each such pair exactly (decimalComparer), never in a
// common type, so neither does a set.
func decimalIn(x exec.Expr, items []exec.Expr) bool {
	if x.Type().Kind == schema.Decimal {
		return true
	}
	for _, it := range items {
		if it.Type().Kind == schema.Decimal {
			return true
		}
	}
	return false
}

// inByComparisons is x IN (items) as the OR of x = item in three-valued
// logic (TRUE on a match, else NULL if a comparison was NULL), each pair
// compared as the row compiler compares it.
func (c *vcompiler) inByComparisons(x exec.Expr, items []exec.Expr, not bool) (exec.Expr, error) {
	var or exec.Expr
	for _, it := range items {
		eq, err := c.compare(parser.OpEq, x, it)
		if err != nil {
			return nil, err
		}
		if or == nil {
			or = eq
			continue
		}
		or = &exec.Logic{And: false, L: or, R: eq}
	}
	if not {
		return &exec.Not{X: or}, nil
	}
	return or, nil
}

func (c *vcompiler) like(e *parser.LikeExpr) (exec.Expr, error) {
	if e.Escape != nil && !markConst(e.Escape, c.konst, c.depth) {
		return nil, rowEnginef("ESCAPE takes a constant string")
	}
	x, pl, err := textOperands(c, e.X, e.Pattern)
	if err != nil {
		return nil, err
	}
	esc := '\\'
	if e.Escape != nil {
		ex, err := c.compile(e.Escape)
		if err != nil {
			return nil, err
		}
		l := ex.(*exec.Literal)
		if !l.Typ.IsString() || l.Val.IsNull() {
			return nil, rowEnginef("ESCAPE takes a constant string")
		}
		r := []rune(string(l.Val.Bytes))
		if len(r) != 1 {
			return nil, rowEnginef("ESCAPE takes exactly one character")
		}
		esc = r[0]
	}
	lit, ok := pl.(*exec.Literal)
	if !ok {
		return exec.NewLikeRows(x, pl, esc, e.Not)
	}
	pv := lit.Val
	if pv.IsNull() {
		return c.lit(nullType, schema.Null), nil
	}
	return exec.NewLike(x, string(pv.Bytes), esc, e.Not)
}

// dateArith types x ± INTERVAL n unit as the row compiler's compileDateArith
// does.
func (c *vcompiler) dateArith(e *parser.DateArith) (exec.Expr, error) {
	x, n, err := dateArithOperands(c, e)
	if err != nil {
		return nil, err
	}
	unit := exec.IntervalUnit(e.Unit)
	if x.Type().IsString() {
		return nil, rowEnginef("INTERVAL arithmetic on a text")
	}
	if isNullType(x.Type()) {
		return c.lit(nullType, schema.Null), nil
	}
	t := x.Type()
	switch t.Kind {
	case schema.Date:
		switch {
		case unit.DayOrMore():
		case unit == exec.Microsecond:
			t = schema.DatetimeType(6)
		default:
			t = schema.DatetimeType(0)
		}
	case schema.Datetime:
		if unit == exec.Microsecond {
			t = schema.DatetimeType(6)
		}
	case schema.TimestampTZ:
		if unit == exec.Microsecond {
			t = schema.TimestampTZType(6)
		}
	default:
		return nil, rowEnginef("INTERVAL arithmetic on %s", t)
	}
	return &exec.DateAdd{X: x, N: n, Unit: unit, Sub: e.Sub, Typ: t, Text: parser.FormatExpr(e)}, nil
}

// widenExact gives an integer operand of a DECIMAL kernel as BIGINT, the
// one integer representation the kernels read; DECIMAL and NULL stay.
func (c *vcompiler) widenExact(x exec.Expr) (exec.Expr, error) {
	if t := x.Type(); t.Kind == schema.Decimal || isNullType(t) {
		return x, nil
	}
	return c.convert(x, bigintType)
}

// decimalArith is + - * / % DIV with a DECIMAL operand and an integer or
// DECIMAL one, exact in Doris's result types, as the row compiler computes
// it.
func (c *vcompiler) decimalArith(op parser.BinaryOp, l, r exec.Expr, text string) (exec.Expr, error) {
	lt, rt := decimalOperandOf(c, l), decimalOperandOf(c, r)
	l, err := c.widenExact(l)
	if err != nil {
		return nil, err
	}
	if r, err = c.widenExact(r); err != nil {
		return nil, err
	}
	return exec.NewDecimalArith(arithOps[op], l, r, lt, rt, text)
}
