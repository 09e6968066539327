package sql

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// stmtEnv is what one statement evaluates in: its single now (taken when
// the statement starts, used by NOW(), CURRENT_TIMESTAMP, defaults and every
// TTL check) and the session time zone.
type stmtEnv struct {
	now time.Time
	loc *time.Location
	// values, when set, streams the rows of the statement's INSERT ...
	// VALUES (see parseStream).
	values *parser.ValuesStream
	// db and user are what database() and current_user() return, connID
	// what connection_id() returns.
	db, user string
	connID   int64
	// sysvar is the value of @@name (Session.variableLocked).
	sysvar func(name string) (string, bool)
	// rowExprs has the row compiler evaluate every expression a plan
	// could give kernels (Session.rowExprs).
	rowExprs bool
}

// column is one input column an expression can name.
type column struct {
	name string
	typ  schema.Type
	// ttl marks the hidden __TTL__ column: it answers to __TTL__ and
	// __DORIS_TTL_COL__, and only when hidden columns are shown.
	ttl bool
	// In the scope of a FROM with several table references (scope.multi)
	// each column carries its own reference's qualifiers and database, and
	// merged marks the column a USING join hides from unqualified names.
	quals  []string
	db     string
	merged bool
}

// scope is the set of columns a compiler resolves names against: one
// table's visible columns, in input-row order.
type scope struct {
	cols []column
	// qualifiers are the names a column may be prefixed with (the table
	// name and its alias); db is the table's database.
	qualifiers []string
	db         string
	// showHidden lets names resolve to the __TTL__ column.
	showHidden bool
	// tableName names the table in messages.
	tableName string
	// multi is the scope of several table references (plan_join.go):
	// qualifiers and databases are the columns' own, and an unqualified
	// name two references share is ambiguous.
	multi bool
	// pre, when set, resolves a name before the columns do: a correlated
	// subquery's names are its own first.
	pre func(*parser.ColumnRef) (int, bool)
}

// resolve returns the input slot of a column reference.
func (sc *scope) resolve(ref *parser.ColumnRef) (int, error) {
	if sc == nil {
		return 0, notFoundf("Unknown column '%s' in 'field list'", ref.Name)
	}
	if sc.pre != nil {
		if slot, ok := sc.pre(ref); ok {
			return slot, nil
		}
	}
	if sc.multi {
		return sc.resolveMulti(ref)
	}
	if ref.Table != "" {
		ok := false
		for _, q := range sc.qualifiers {
			if strings.EqualFold(q, ref.Table) {
				ok = true
			}
		}
		if !ok || (ref.DB != "" && ref.DB != sc.db) {
			return 0, notFoundf("Unknown column '%s' in '%s'", parser.FormatExpr(ref), sc.tableName)
		}
	}
	if schema.IsTTLName(ref.Name) {
		for i, c := range sc.cols {
			if c.ttl && sc.showHidden {
				return i, nil
			}
		}
		return 0, notFoundf("Unknown column '%s' in 'table list'", ref.Name)
	}
	for i, c := range sc.cols {
		if !c.ttl && strings.EqualFold(c.name, ref.Name) {
			return i, nil
		}
	}
	return 0, notFoundf("Unknown column '%s' in '%s'", ref.Name, sc.tableName)
}

// compiled is an expression ready to run on input rows.
type compiled struct {
	t    schema.Type
	eval func(row []schema.Value) (schema.Value, error)
	// konst marks an expression that reads no column: it is folded to its
	// value when compiled.
	konst bool
	// folded marks a konst already folded (made by constant).
	folded bool
}

// lazyText is an expression's text for messages (formatted with %s),
// computed the first time a message needs it: formatting every node while
// compiling would make compiling quadratic in the expression's size.
type lazyText func() string

func (f lazyText) String() string { return f() }

// lazyFormat returns the lazy text of e.
func lazyFormat(e parser.Expr) lazyText {
	return sync.OnceValue(func() string { return parser.FormatExpr(e) })
}

func constant(t schema.Type, v schema.Value) *compiled {
	return &compiled{t: t, konst: true, folded: true, eval: func([]schema.Value) (schema.Value, error) { return v, nil }}
}

// compiler turns AST expressions into compiled ones.
type compiler struct {
	env *stmtEnv
	sc  *scope
	// subst, when set, is consulted before each node: the aggregation step
	// uses it to replace aggregate calls and GROUP BY expressions with the
	// columns of its output rows.
	subst func(e parser.Expr) (*compiled, bool, error)
	// used collects the input slots the compiled expressions read.
	used map[int]bool
}

func newCompiler(env *stmtEnv, sc *scope) *compiler {
	return &compiler{env: env, sc: sc, used: map[int]bool{}}
}

// compile compiles e, folding constant subexpressions.
func (c *compiler) compile(e parser.Expr) (*compiled, error) {
	if c.subst != nil {
		if x, ok, err := c.subst(e); ok || err != nil {
			return x, err
		}
	}
	x, err := c.compileNode(e)
	if err != nil {
		return nil, err
	}
	if x.konst && !x.folded {
		v, err := x.eval(nil)
		if err != nil {
			return nil, err
		}
		return constant(x.t, v), nil
	}
	return x, nil
}

func (c *compiler) compileNode(e parser.Expr) (*compiled, error) {
	switch e := e.(type) {
	case *parser.NullLit:
		return constant(nullType, schema.Null), nil
	case *parser.BoolLit:
		return constant(boolType, boolVal(e.Val)), nil
	case *parser.IntLit:
		return constant(bigintType, schema.IntVal(e.Val)), nil
	case *parser.DecimalLit:
		// DECIMAL with the literal's digits; past 38 digits, a DOUBLE.
		if n, t, ok := decimal.ParseLiteral(e.Text); ok {
			return constant(schema.DecimalType(t.Precision, t.Scale), schema.DecimalVal(n)), nil
		}
		return constant(doubleType, schema.FloatVal(e.Val)), nil
	case *parser.FloatLit:
		return constant(doubleType, schema.FloatVal(e.Val)), nil
	case *parser.StringLit:
		return constant(stringType, schema.BytesVal([]byte(e.Val))), nil
	case *parser.SysVar:
		return sysVarValue(c.env, e.Name)
	case *parser.DefaultExpr:
		return nil, invalidf("DEFAULT is only allowed as a value of INSERT VALUES or UPDATE SET")
	case *parser.ColumnRef:
		slot, err := c.sc.resolve(e)
		if err != nil {
			return nil, err
		}
		c.used[slot] = true
		return &compiled{t: c.sc.cols[slot].typ, eval: func(row []schema.Value) (schema.Value, error) { return row[slot], nil }}, nil
	case *parser.UnaryExpr:
		return c.compileUnary(e)
	case *parser.BinaryExpr:
		return c.compileBinary(e)
	case *parser.IsExpr:
		return c.compileIs(e)
	case *parser.InExpr:
		return c.compileIn(e)
	case *parser.RowExpr:
		return nil, errRowOperand()
	case *parser.BetweenExpr:
		return compileBetween(c, e)
	case *parser.LikeExpr:
		return c.compileLike(e)
	case *parser.FuncCall:
		if parser.IsAggregate(e.Name) {
			return nil, invalidf("aggregate function %s() is not allowed here", e.Name)
		}
		return c.compileFunc(e)
	case *parser.CastExpr:
		x, err := c.compile(e.X)
		if err != nil {
			return nil, err
		}
		if err := e.Type.Validate(); err != nil {
			return nil, invalidf("%w", err)
		}
		return c.convert(x, e.Type)
	case *parser.CaseExpr:
		return c.compileCase(e)
	case *parser.DateArith:
		return c.compileDateArith(e)
	case *parser.TimestampDiff:
		return c.compileTimestampDiff(e)
	case *parser.ExtractExpr:
		f, err := extractCall(e)
		if err != nil {
			return nil, err
		}
		return c.compileFunc(f)
	case *parser.RegexpExpr:
		return c.compileRegexp(e)
	}
	if err := refuseNode(e); err != nil {
		return nil, err
	}
	return nil, unsupportedf("unsupported expression %s", parser.FormatExpr(e))
}

// convert wraps x in a cast to t.
func (c *compiler) convert(x *compiled, t schema.Type) (*compiled, error) {
	if x.t == t {
		return x, nil
	}
	f, err := castFunc(x.t, t, c.env.loc)
	if err != nil {
		return nil, err
	}
	return &compiled{t: t, konst: x.konst, eval: func(row []schema.Value) (schema.Value, error) {
		v, err := x.eval(row)
		if err != nil {
			return v, err
		}
		return f(v)
	}}, nil
}

func (c *compiler) compileAll(es []parser.Expr) ([]*compiled, error) {
	out := make([]*compiled, len(es))
	for i, e := range es {
		x, err := c.compile(e)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func allConst(xs ...*compiled) bool {
	for _, x := range xs {
		if x != nil && !x.konst {
			return false
		}
	}
	return true
}

// asBool converts x to BOOLEAN for a logical context.
func (c *compiler) asBool(x *compiled) (*compiled, error) {
	if x.t.Kind == schema.Boolean || isNullType(x.t) {
		return x, nil
	}
	if isNumeric(x.t) || x.t.IsString() {
		return c.convert(x, boolType)
	}
	return nil, invalidf("%s value cannot be used as a condition", x.t)
}

// The compiler side of exprCompiler (expr_rules.go).

func (c *compiler) negate(b *compiled) *compiled {
	return &compiled{t: boolType, konst: b.konst, eval: func(row []schema.Value) (schema.Value, error) {
		v, err := b.eval(row)
		if err != nil || v.IsNull() {
			return v, err
		}
		return boolVal(v.Int == 0), nil
	}}
}

func (c *compiler) typeOf(x *compiled) schema.Type { return x.t }

func (c *compiler) constValue(x *compiled) (schema.Value, bool) {
	if !x.konst {
		return schema.Null, false
	}
	v, err := x.eval(nil)
	return v, err == nil
}

func (c *compiler) constNode(t schema.Type, v schema.Value) *compiled { return constant(t, v) }

func (c *compiler) compileUnary(e *parser.UnaryExpr) (*compiled, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	switch e.Op {
	case parser.OpNot:
		return compileNot(c, x)
	case parser.OpBitNot:
		return c.bitNot(x, "operator ~")
	}
	switch {
	case isIntLike(x.t) || isNullType(x.t):
		text := lazyFormat(e)
		return &compiled{t: bigintType, konst: x.konst, eval: func(row []schema.Value) (schema.Value, error) {
			v, err := x.eval(row)
			if err != nil || v.IsNull() {
				return v, err
			}
			if v.Int == math.MinInt64 {
				return schema.Null, invalidf("BIGINT value is out of range in '%s'", text)
			}
			return schema.IntVal(-v.Int), nil
		}}, nil
	case x.t.Kind == schema.Decimal:
		return &compiled{t: x.t, konst: x.konst, eval: func(row []schema.Value) (schema.Value, error) {
			v, err := x.eval(row)
			if err != nil || v.IsNull() {
				return v, err
			}
			return schema.DecimalVal(decimal.Neg(v.Decimal())), nil
		}}, nil
	case isFloat(x.t) || x.t.IsString():
		d, err := c.convert(x, doubleType)
		if err != nil {
			return nil, err
		}
		return &compiled{t: doubleType, konst: d.konst, eval: func(row []schema.Value) (schema.Value, error) {
			v, err := d.eval(row)
			if err != nil || v.IsNull() {
				return v, err
			}
			return schema.FloatVal(-v.Float), nil
		}}, nil
	}
	return nil, invalidf("cannot negate a %s value", x.t)
}

func (c *compiler) compileBinary(e *parser.BinaryExpr) (*compiled, error) {
	return compileBinary(c, e, func(l, r *compiled) (*compiled, error) {
		if e.Op.IsBit() {
			return c.bitArith(e.Op, l, r, bitWhat(e.Op))
		}
		return c.arith(e.Op, l, r, lazyFormat(e))
	})
}

// bitArith is a bit operator or function of two operands.
func (c *compiler) bitArith(op parser.BinaryOp, l, r *compiled, what string) (*compiled, error) {
	l, r, err := bitOperands(c, l, r, what)
	if err != nil {
		return nil, err
	}
	eop := bitOps[op]
	return &compiled{t: bigintType, konst: allConst(l, r), eval: func(row []schema.Value) (schema.Value, error) {
		a, err := l.eval(row)
		if err != nil || a.IsNull() {
			return schema.Null, err
		}
		b, err := r.eval(row)
		if err != nil || b.IsNull() {
			return schema.Null, err
		}
		return schema.IntVal(exec.BitArith(eop, a.Int, b.Int)), nil
	}}, nil
}

// bitNot is ~ and bitnot().
func (c *compiler) bitNot(x *compiled, what string) (*compiled, error) {
	x, err := bitOperand(c, x, what)
	if err != nil {
		return nil, err
	}
	return &compiled{t: bigintType, konst: x.konst, eval: func(row []schema.Value) (schema.Value, error) {
		v, err := x.eval(row)
		if err != nil || v.IsNull() {
			return schema.Null, err
		}
		return schema.IntVal(^v.Int), nil
	}}, nil
}

// compileBitFunc compiles bitand, bitor, bitxor, bitnot, bit_shift_left
// and bit_shift_right.
func (c *compiler) compileBitFunc(f *parser.FuncCall) (*compiled, bool, error) {
	op, binary := bitFuncs[f.Name]
	if !binary && f.Name != "bitnot" {
		return nil, false, nil
	}
	what := f.Name + "()"
	if !binary {
		if err := c.nargs(f, 1, 1); err != nil {
			return nil, true, err
		}
		x, err := c.compile(f.Args[0])
		if err != nil {
			return nil, true, err
		}
		x, err = c.bitNot(x, what)
		return x, true, err
	}
	if err := c.nargs(f, 2, 2); err != nil {
		return nil, true, err
	}
	l, r, err := compileTwo(c, f.Args[0], f.Args[1])
	if err != nil {
		return nil, true, err
	}
	x, err := c.bitArith(op, l, r, what)
	return x, true, err
}

// logic is AND / OR in three-valued logic.
func (c *compiler) logic(and bool, l, r *compiled) (*compiled, error) {
	lb, err := c.asBool(l)
	if err != nil {
		return nil, err
	}
	rb, err := c.asBool(r)
	if err != nil {
		return nil, err
	}
	// AND: FALSE wins over NULL; OR: TRUE wins over NULL.
	decisive := int64(0)
	if !and {
		decisive = 1
	}
	return &compiled{t: boolType, konst: allConst(lb, rb), eval: func(row []schema.Value) (schema.Value, error) {
		a, err := lb.eval(row)
		if err != nil {
			return a, err
		}
		if !a.IsNull() && (a.Int != 0) == (decisive == 1) {
			return boolVal(decisive == 1), nil
		}
		b, err := rb.eval(row)
		if err != nil {
			return b, err
		}
		if !b.IsNull() && (b.Int != 0) == (decisive == 1) {
			return boolVal(decisive == 1), nil
		}
		if a.IsNull() || b.IsNull() {
			return schema.Null, nil
		}
		return boolVal(decisive != 1), nil
	}}, nil
}

// comparisonType is the type both sides of a comparison are converted to.
func comparisonType(a, b schema.Type) (schema.Type, bool) {
	switch {
	case isNullType(a) || isNullType(b):
		return nullType, true
	case a.IsString() && b.IsString():
		return stringType, true
	case isIntLike(a) && isIntLike(b):
		return bigintType, true
	case a.Kind == schema.Decimal && b.Kind == schema.Decimal && a.Scale == b.Scale:
		return a, true
	case isNumeric(a) && (isNumeric(b) || b.IsString()), isNumeric(b) && a.IsString():
		return doubleType, true
	case a.Kind == schema.TimestampTZ && isTemporalOrString(b), b.Kind == schema.TimestampTZ && isTemporalOrString(a):
		return schema.TimestampTZType(6), true
	case a.Kind == schema.TimestampNS && isTemporalOrString(b), b.Kind == schema.TimestampNS && isTemporalOrString(a):
		return schema.Type{Kind: schema.TimestampNS}, true
	case a.Kind == schema.Date && b.Kind == schema.Date:
		return a, true
	case isTemporalOrString(a) && isTemporalOrString(b):
		return schema.DatetimeType(6), true
	}
	return nullType, false
}

// compareIn returns a three-way comparison of two non-null values of t.
func compareIn(t schema.Type) func(a, b schema.Value) int {
	switch {
	case t.IsString():
		return func(a, b schema.Value) int { return bytes.Compare(a.Bytes, b.Bytes) }
	case isFloat(t):
		return func(a, b schema.Value) int { return cmp.Compare(a.Float, b.Float) }
	case t.Kind == schema.Decimal:
		return func(a, b schema.Value) int { return a.Decimal().Cmp(b.Decimal()) }
	}
	return func(a, b schema.Value) int { return cmp.Compare(a.Int, b.Int) }
}

// isDecimalPair reports operands that DECIMAL arithmetic and comparison
// take exactly: a DECIMAL with a DECIMAL, an integer or NULL.
func isDecimalPair(a, b schema.Type) bool {
	exactOrNull := func(t schema.Type) bool { return isExact(t) || isNullType(t) }
	return (a.Kind == schema.Decimal || b.Kind == schema.Decimal) && exactOrNull(a) && exactOrNull(b)
}

// decimalComparer compares a DECIMAL with a DECIMAL or an integer exactly,
// whatever their scales: an integer's Value reads as an unscaled integer at
// scale 0.
func decimalComparer(l, r *compiled) func(row []schema.Value) (int, bool, error) {
	ls, rs := l.t.Scale, r.t.Scale
	if l.t.Kind != schema.Decimal {
		ls = 0
	}
	if r.t.Kind != schema.Decimal {
		rs = 0
	}
	return rowComparer(l, r, func(a, b schema.Value) int { return decimal.Cmp(a.Decimal(), ls, b.Decimal(), rs) })
}

// rowComparer compares one row's values of l and r by cmpf, reporting
// whether either was NULL (two NULLs compare 0, one NULL 1, so that <=>
// reads the order).
func rowComparer(l, r *compiled, cmpf func(a, b schema.Value) int) func(row []schema.Value) (int, bool, error) {
	return func(row []schema.Value) (int, bool, error) {
		a, err := l.eval(row)
		if err != nil {
			return 0, false, err
		}
		b, err := r.eval(row)
		if err != nil {
			return 0, false, err
		}
		if a.IsNull() || b.IsNull() {
			if a.IsNull() && b.IsNull() {
				return 0, true, nil
			}
			return 1, true, nil
		}
		return cmpf(a, b), false, nil
	}
}

// comparer converts l and r to their comparison type; the returned
// function compares one row's pair and reports whether either was NULL.
func (c *compiler) comparer(l, r *compiled) (func(row []schema.Value) (int, bool, error), error) {
	// A text constant next to a DECIMAL is read as the exact number it
	// spells, as Doris types such literals.
	l, r = decimalTextOf(c, l, r), decimalTextOf(c, r, l)
	if isDecimalPair(l.t, r.t) && !isNullType(l.t) && !isNullType(r.t) {
		return decimalComparer(l, r), nil
	}
	t, ok := comparisonType(l.t, r.t)
	if !ok {
		return nil, invalidf("cannot compare %s with %s", l.t, r.t)
	}
	lc, err := c.convert(l, t)
	if err != nil {
		return nil, err
	}
	rc, err := c.convert(r, t)
	if err != nil {
		return nil, err
	}
	return rowComparer(lc, rc, compareIn(t)), nil
}

func (c *compiler) compare(op parser.BinaryOp, l, r *compiled) (*compiled, error) {
	f, err := c.comparer(l, r)
	if err != nil {
		return nil, err
	}
	return &compiled{t: boolType, konst: allConst(l, r), eval: func(row []schema.Value) (schema.Value, error) {
		n, null, err := f(row)
		if err != nil {
			return schema.Null, err
		}
		if op == parser.OpNullSafeEq {
			return boolVal(n == 0), nil
		}
		if null {
			return schema.Null, nil
		}
		var b bool
		switch op {
		case parser.OpEq:
			b = n == 0
		case parser.OpNe:
			b = n != 0
		case parser.OpLt:
			b = n < 0
		case parser.OpLe:
			b = n <= 0
		case parser.OpGt:
			b = n > 0
		case parser.OpGe:
			b = n >= 0
		}
		return boolVal(b), nil
	}}, nil
}

// arith is + - * / % DIV.
func (c *compiler) arith(op parser.BinaryOp, l, r *compiled, text fmt.Stringer) (*compiled, error) {
	for _, x := range []*compiled{l, r} {
		if x.t.IsTemporal() {
			return nil, invalidf("%s arithmetic is not supported in '%s'; use + INTERVAL n unit, or CAST", x.t, text)
		}
		if !isNumeric(x.t) && !x.t.IsString() && !isNullType(x.t) {
			return nil, invalidf("cannot do arithmetic on a %s value in '%s'", x.t, text)
		}
	}
	intLike := func(t schema.Type) bool { return isIntLike(t) || isNullType(t) }
	konst := allConst(l, r)
	if isDecimalPair(l.t, r.t) {
		return c.decimalArith(op, l, r, text)
	}
	if intLike(l.t) && intLike(r.t) && op != parser.OpDiv {
		lb, _ := c.convert(l, bigintType)
		rb, _ := c.convert(r, bigintType)
		return &compiled{t: bigintType, konst: konst, eval: func(row []schema.Value) (schema.Value, error) {
			a, err := lb.eval(row)
			if err != nil || a.IsNull() {
				return schema.Null, err
			}
			b, err := rb.eval(row)
			if err != nil || b.IsNull() {
				return schema.Null, err
			}
			n, ok, null := intArith(op, a.Int, b.Int)
			if null {
				return schema.Null, nil
			}
			if !ok {
				return schema.Null, invalidf("BIGINT value is out of range in '%s'", text)
			}
			return schema.IntVal(n), nil
		}}, nil
	}
	ld, err := c.convert(l, doubleType)
	if err != nil {
		return nil, err
	}
	rd, err := c.convert(r, doubleType)
	if err != nil {
		return nil, err
	}
	t := doubleType
	if op == parser.OpIntDiv {
		t = bigintType
	}
	return &compiled{t: t, konst: konst, eval: func(row []schema.Value) (schema.Value, error) {
		a, err := ld.eval(row)
		if err != nil || a.IsNull() {
			return schema.Null, err
		}
		b, err := rd.eval(row)
		if err != nil || b.IsNull() {
			return schema.Null, err
		}
		x, y := a.Float, b.Float
		switch op {
		case parser.OpAdd:
			return schema.FloatVal(x + y), nil
		case parser.OpSub:
			return schema.FloatVal(x - y), nil
		case parser.OpMul:
			return schema.FloatVal(x * y), nil
		case parser.OpDiv:
			if y == 0 {
				return schema.Null, nil
			}
			return schema.FloatVal(x / y), nil
		case parser.OpMod:
			if y == 0 {
				return schema.Null, nil
			}
			return schema.FloatVal(math.Mod(x, y)), nil
		case parser.OpIntDiv:
			if y == 0 {
				return schema.Null, nil
			}
			q := math.Trunc(x / y)
			if math.IsNaN(q) || q < -9.223372036854775e18 || q >= 9.223372036854775e18 {
				return schema.Null, invalidf("BIGINT value is out of range in '%s'", text)
			}
			return schema.IntVal(int64(q)), nil
		}
		return schema.Null, nil
	}}, nil
}

var decimalOps = map[parser.BinaryOp]decimal.Op{
	parser.OpAdd: decimal.Add, parser.OpSub: decimal.Sub, parser.OpMul: decimal.Mul, parser.OpDiv: decimal.Div, parser.OpMod: decimal.Mod,
}

// decimalArith is + - * / % DIV with a DECIMAL operand and an integer or
// DECIMAL one, exact in Doris's result types (decimal.ResultType); DIV
// gives the truncated quotient as a BIGINT. A result past its type is an
// error, a zero divisor NULL.
func (c *compiler) decimalArith(op parser.BinaryOp, l, r *compiled, text fmt.Stringer) (*compiled, error) {
	lt, rt := decimalOperandOf(c, l), decimalOperandOf(c, r)
	konst := allConst(l, r)
	operands := func(row []schema.Value) (a, b schema.Value, null bool, err error) {
		if a, err = l.eval(row); err != nil || a.IsNull() {
			return a, b, true, err
		}
		if b, err = r.eval(row); err != nil || b.IsNull() {
			return a, b, true, err
		}
		return a, b, false, nil
	}
	overflow := func() error { return invalidf("DECIMAL value is out of range in '%s'", text) }
	if op == parser.OpIntDiv {
		return &compiled{t: bigintType, konst: konst, eval: func(row []schema.Value) (schema.Value, error) {
			a, b, null, err := operands(row)
			if null {
				return schema.Null, err
			}
			q, st := decimal.IntQuo(a.Decimal(), lt.Scale, b.Decimal(), rt.Scale)
			switch st {
			case decimal.StatusDivByZero:
				return schema.Null, nil
			case decimal.StatusOverflow:
				return schema.Null, invalidf("BIGINT value is out of range in '%s'", text)
			}
			return schema.IntVal(q), nil
		}}, nil
	}
	dop, ok := decimalOps[op]
	if !ok {
		return nil, invalidf("unsupported DECIMAL operator in '%s'", text)
	}
	res := decimal.ResultType(dop, lt, rt)
	return &compiled{t: schema.DecimalType(res.Precision, res.Scale), konst: konst, eval: func(row []schema.Value) (schema.Value, error) {
		a, b, null, err := operands(row)
		if null {
			return schema.Null, err
		}
		n, st := decimal.Arith(dop, a.Decimal(), lt, b.Decimal(), rt)
		switch st {
		case decimal.StatusDivByZero:
			return schema.Null, nil
		case decimal.StatusOverflow:
			return schema.Null, overflow()
		}
		return schema.DecimalVal(n), nil
	}}, nil
}

// intArith computes a op b on int64; ok is false on overflow, null for a
// zero divisor.
func intArith(op parser.BinaryOp, a, b int64) (n int64, ok, null bool) {
	switch op {
	case parser.OpAdd:
		n = a + b
		return n, (b >= 0) == (n >= a), false
	case parser.OpSub:
		n = a - b
		return n, (b >= 0) == (n <= a), false
	case parser.OpMul:
		if a == 0 || b == 0 {
			return 0, true, false
		}
		n = a * b
		if n/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
			return 0, false, false
		}
		return n, true, false
	case parser.OpMod:
		if b == 0 {
			return 0, true, true
		}
		if b == -1 {
			return 0, true, false
		}
		return a % b, true, false
	case parser.OpIntDiv:
		if b == 0 {
			return 0, true, true
		}
		if a == math.MinInt64 && b == -1 {
			return 0, false, false
		}
		return a / b, true, false
	}
	return 0, false, false
}

func (c *compiler) compileIs(e *parser.IsExpr) (*compiled, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	if e.Test != parser.IsNull {
		if x, err = c.asBool(x); err != nil {
			return nil, err
		}
	}
	return &compiled{t: boolType, konst: x.konst, eval: func(row []schema.Value) (schema.Value, error) {
		v, err := x.eval(row)
		if err != nil {
			return v, err
		}
		var b bool
		switch e.Test {
		case parser.IsNull:
			b = v.IsNull()
		case parser.IsTrue:
			b = !v.IsNull() && v.Int != 0
		case parser.IsFalse:
			b = !v.IsNull() && v.Int == 0
		}
		return boolVal(b != e.Not), nil
	}}, nil
}

// inSet holds the constant items of an IN list that compare as one type,
// sorted by that type's comparison, with the tested value converted to it:
// a list of millions of values costs a slice and a binary search, not a
// comparison (and its closures) per value.
type inSet struct {
	x    *compiled // the tested value, converted to the items' type
	cmpf func(a, b schema.Value) int
	ints []int64 // the items when they compare as integers
	vals []schema.Value
}

func (s *inSet) add(v schema.Value) {
	if s.ints != nil {
		s.ints = append(s.ints, v.Int)
	} else {
		s.vals = append(s.vals, v)
	}
}

func (s *inSet) sort() {
	slices.Sort(s.ints)
	slices.SortFunc(s.vals, s.cmpf)
}

func (s *inSet) has(v schema.Value) bool {
	if s.ints != nil {
		_, ok := slices.BinarySearch(s.ints, v.Int)
		return ok
	}
	_, ok := slices.BinarySearchFunc(s.vals, v, s.cmpf)
	return ok
}

// intCompared reports types whose values compareIn compares by Int alone.
func intCompared(t schema.Type) bool {
	switch t.Kind {
	case schema.Date, schema.Datetime, schema.TimestampTZ:
		return true
	}
	return isIntLike(t)
}

func (c *compiler) compileIn(e *parser.InExpr) (*compiled, error) {
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
	// Constant items go into one sorted set per comparison type; the rest
	// (and constants whose conversion fails, which fail as they did when
	// a row is tested) keep a comparison each.
	var (
		sets     []*inSet
		setOf    = map[schema.Type]*inSet{}
		cmps     []func([]schema.Value) (int, bool, error)
		konst    = x.konst
		nullItem bool
	)
	for _, item := range e.List {
		it, err := c.compile(item)
		if err != nil {
			return nil, err
		}
		konst = konst && it.konst
		// DECIMAL operands compare exactly (decimalComparer), not through
		// a common type: they keep their comparison.
		if it.konst && !x.konst && x.t.Kind != schema.Decimal && it.t.Kind != schema.Decimal {
			t, ok := comparisonType(x.t, it.t)
			if !ok {
				return nil, invalidf("cannot compare %s with %s", x.t, it.t)
			}
			if isNullType(t) {
				nullItem = true
				continue
			}
			if cv, err := c.convert(it, t); err == nil {
				if v, err := cv.eval(nil); err == nil {
					if v.IsNull() {
						nullItem = true
						continue
					}
					set := setOf[t]
					if set == nil {
						xc, err := c.convert(x, t)
						if err != nil {
							return nil, err
						}
						set = &inSet{x: xc, cmpf: compareIn(t)}
						if intCompared(t) {
							set.ints = []int64{}
						}
						setOf[t] = set
						sets = append(sets, set)
					}
					set.add(v)
					continue
				}
			}
		}
		f, err := c.comparer(x, it)
		if err != nil {
			return nil, err
		}
		cmps = append(cmps, f)
	}
	for _, s := range sets {
		s.sort()
	}
	return &compiled{t: boolType, konst: konst, eval: func(row []schema.Value) (schema.Value, error) {
		sawNull := nullItem
		for _, s := range sets {
			v, err := s.x.eval(row)
			if err != nil {
				return schema.Null, err
			}
			if v.IsNull() {
				sawNull = true
				continue
			}
			if s.has(v) {
				return boolVal(!e.Not), nil
			}
		}
		for _, f := range cmps {
			n, null, err := f(row)
			if err != nil {
				return schema.Null, err
			}
			if null {
				sawNull = true
				continue
			}
			if n == 0 {
				return boolVal(!e.Not), nil
			}
		}
		if sawNull {
			return schema.Null, nil
		}
		return boolVal(e.Not), nil
	}}, nil
}

func (c *compiler) compileLike(e *parser.LikeExpr) (*compiled, error) {
	x, p, err := textOperands(c, e.X, e.Pattern)
	if err != nil {
		return nil, err
	}
	esc := '\\'
	if e.Escape != nil {
		ex, err := c.compile(e.Escape)
		if err != nil {
			return nil, err
		}
		if !ex.konst || !ex.t.IsString() {
			return nil, invalidf("ESCAPE takes a constant string")
		}
		v, _ := ex.eval(nil)
		r := []rune(string(v.Bytes))
		if len(r) != 1 {
			return nil, invalidf("ESCAPE takes exactly one character")
		}
		esc = r[0]
	}
	return &compiled{t: boolType, konst: allConst(x, p), eval: func(row []schema.Value) (schema.Value, error) {
		s, err := x.eval(row)
		if err != nil || s.IsNull() {
			return schema.Null, err
		}
		pat, err := p.eval(row)
		if err != nil || pat.IsNull() {
			return schema.Null, err
		}
		return boolVal(exec.LikeMatch([]rune(string(s.Bytes)), []rune(string(pat.Bytes)), esc) != e.Not), nil
	}}, nil
}

func (c *compiler) compileCase(e *parser.CaseExpr) (*compiled, error) {
	conds, results, err := caseArms(c, e)
	if err != nil {
		return nil, err
	}
	t := unify(typesOf(c, results)...)
	if err := convertAll(c, results, t); err != nil {
		return nil, err
	}
	var elseX *compiled
	if e.Else != nil {
		elseX = results[len(results)-1]
	}
	// Each condition of a simple CASE compares its operand, so is constant
	// only when the operand is too (the parser takes at least one WHEN).
	konst := allConst(append(conds, results...)...)
	return &compiled{t: t, konst: konst, eval: func(row []schema.Value) (schema.Value, error) {
		for i, cond := range conds {
			v, err := cond.eval(row)
			if err != nil {
				return v, err
			}
			if !v.IsNull() && v.Int != 0 {
				return results[i].eval(row)
			}
		}
		if elseX != nil {
			return elseX.eval(row)
		}
		return schema.Null, nil
	}}, nil
}

func (c *compiler) compileDateArith(e *parser.DateArith) (*compiled, error) {
	x, n, err := dateArithOperands(c, e)
	if err != nil {
		return nil, err
	}
	dayUnit := e.Unit == parser.UnitDay || e.Unit == parser.UnitWeek || e.Unit == parser.UnitMonth || e.Unit == parser.UnitQuarter || e.Unit == parser.UnitYear
	if x.t.IsString() {
		// A text is read as a date when it has no time part and the unit
		// is a whole day or more, as a DATETIME otherwise.
		t := schema.DatetimeType(0)
		if x.konst {
			v, _ := x.eval(nil)
			s := strings.TrimSpace(string(v.Bytes))
			if !v.IsNull() && !strings.ContainsAny(s, " T") && dayUnit {
				t = schema.DateType
			} else if i := strings.IndexByte(s, '.'); i >= 0 {
				t = schema.DatetimeType(min(6, len(s)-i-1))
			}
		}
		if x, err = c.convert(x, t); err != nil {
			return nil, err
		}
	}
	if isNullType(x.t) {
		return constant(nullType, schema.Null), nil
	}
	text := lazyFormat(e)
	loc := c.env.loc
	sign := int64(1)
	if e.Sub {
		sign = -1
	}
	var t schema.Type
	var apply func(v, k int64) (int64, bool)
	switch x.t.Kind {
	case schema.Date:
		if dayUnit {
			t = schema.DateType
			apply = func(days, k int64) (int64, bool) {
				us, ok := addInterval(days*microsPerDay, k, e.Unit)
				return floorDiv(us, microsPerDay), ok
			}
			break
		}
		t = schema.DatetimeType(0)
		if e.Unit == parser.UnitMicrosecond {
			t = schema.DatetimeType(6)
		}
		apply = func(days, k int64) (int64, bool) { return addInterval(days*microsPerDay, k, e.Unit) }
	case schema.Datetime:
		t = x.t
		if e.Unit == parser.UnitMicrosecond {
			t = schema.DatetimeType(6)
		}
		apply = func(us, k int64) (int64, bool) { return addInterval(us, k, e.Unit) }
	case schema.TimestampTZ:
		t = x.t
		if e.Unit == parser.UnitMicrosecond {
			t = schema.TimestampTZType(6)
		}
		apply = func(us, k int64) (int64, bool) {
			if !dayUnit {
				return addInterval(us, k, e.Unit)
			}
			// Whole days move the wall clock of the session zone.
			w, ok := addInterval(schema.InstantToWall(us, loc), k, e.Unit)
			return schema.WallToInstant(w, loc), ok
		}
	default:
		return nil, invalidf("INTERVAL arithmetic needs a DATE, DATETIME or TIMESTAMPTZ value, not %s, in '%s'", x.t, text)
	}
	return &compiled{t: t, konst: allConst(x, n), eval: func(row []schema.Value) (schema.Value, error) {
		v, err := x.eval(row)
		if err != nil || v.IsNull() {
			return schema.Null, err
		}
		k, err := n.eval(row)
		if err != nil || k.IsNull() {
			return schema.Null, err
		}
		out, ok := apply(v.Int, sign*k.Int)
		if !ok {
			return schema.Null, invalidf("date/time value is out of range in '%s'", text)
		}
		return schema.IntVal(out), nil
	}}, nil
}

// addInterval adds k units to a wall clock (µs); both engines use
// exec.AddInterval.
func addInterval(us, k int64, u parser.IntervalUnit) (int64, bool) {
	return exec.AddInterval(us, k, exec.IntervalUnit(u))
}
