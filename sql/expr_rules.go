package sql

import (
	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// The row compiler (eval.go) and the vectorised compiler (plan_expr.go)
// compile the same AST shapes. What they decide alike — the order in which
// operands are compiled, how they are typed and converted, which node a
// shape comes down to — is written here once, over exprCompiler; each
// compiler then builds its own node (a closure over rows, an exec.Expr).
// These functions run once per expression when a statement is compiled,
// never per row.

// exprCompiler is what both compilers offer the shared rules. N is the
// compiled node: *compiled or exec.Expr.
type exprCompiler[N any] interface {
	compile(e parser.Expr) (N, error)
	convert(x N, t schema.Type) (N, error)
	asBool(x N) (N, error)
	logic(and bool, l, r N) (N, error)
	compare(op parser.BinaryOp, l, r N) (N, error)
	// negate is NOT of a node already typed BOOLEAN (or NULL).
	negate(b N) N
	typeOf(x N) schema.Type
	// constValue is the value of a constant node; false for any other
	// node, or a constant whose value is an error.
	constValue(x N) (schema.Value, bool)
	constNode(t schema.Type, v schema.Value) N
}

// compileTwo compiles a then b.
func compileTwo[N any](c exprCompiler[N], a, b parser.Expr) (x, y N, err error) {
	var zero N
	if x, err = c.compile(a); err != nil {
		return zero, zero, err
	}
	if y, err = c.compile(b); err != nil {
		return zero, zero, err
	}
	return x, y, nil
}

// compileBinary is AND, OR and the comparisons; arith builds the other
// operators, whose nodes the compilers type differently.
func compileBinary[N any](c exprCompiler[N], e *parser.BinaryExpr, arith func(l, r N) (N, error)) (N, error) {
	l, r, err := compileTwo(c, e.L, e.R)
	if err != nil {
		var zero N
		return zero, err
	}
	switch {
	case e.Op == parser.OpAnd || e.Op == parser.OpOr:
		return c.logic(e.Op == parser.OpAnd, l, r)
	case e.Op.IsComparison():
		return c.compare(e.Op, l, r)
	}
	return arith(l, r)
}

// compileNot is NOT x in three-valued logic.
func compileNot[N any](c exprCompiler[N], x N) (N, error) {
	b, err := c.asBool(x)
	if err != nil {
		var zero N
		return zero, err
	}
	return c.negate(b), nil
}

// compileBetween is x [NOT] BETWEEN lo AND hi: x >= lo AND x <= hi, with x
// compiled once.
func compileBetween[N any](c exprCompiler[N], e *parser.BetweenExpr) (N, error) {
	var zero N
	x, lo, err := compileTwo(c, e.X, e.Lo)
	if err != nil {
		return zero, err
	}
	hi, err := c.compile(e.Hi)
	if err != nil {
		return zero, err
	}
	ge, err := c.compare(parser.OpGe, x, lo)
	if err != nil {
		return zero, err
	}
	le, err := c.compare(parser.OpLe, x, hi)
	if err != nil {
		return zero, err
	}
	both, err := c.logic(true, ge, le)
	if err != nil {
		return zero, err
	}
	if !e.Not {
		return both, nil
	}
	return c.negate(both), nil
}

// textOperands compiles a then b, both converted to text (LIKE's operand
// and pattern).
func textOperands[N any](c exprCompiler[N], a, b parser.Expr) (x, y N, err error) {
	var zero N
	if x, y, err = compileTwo(c, a, b); err != nil {
		return zero, zero, err
	}
	if x, err = c.convert(x, stringType); err != nil {
		return zero, zero, err
	}
	if y, err = c.convert(y, stringType); err != nil {
		return zero, zero, err
	}
	return x, y, nil
}

// dateArithOperands compiles the operand and the count of x ± INTERVAL n
// unit, the count as a BIGINT.
func dateArithOperands[N any](c exprCompiler[N], e *parser.DateArith) (x, n N, err error) {
	var zero N
	if x, n, err = compileTwo(c, e.X, e.N); err != nil {
		return zero, zero, err
	}
	if n, err = c.convert(n, bigintType); err != nil {
		return zero, zero, err
	}
	return x, n, nil
}

// caseArms compiles the arms of a CASE: each WHEN as a condition (compared
// with the operand of a simple CASE), then its result; the ELSE result
// last in results when there is one.
func caseArms[N any](c exprCompiler[N], e *parser.CaseExpr) (conds, results []N, err error) {
	var operand N
	if e.Operand != nil {
		if operand, err = c.compile(e.Operand); err != nil {
			return nil, nil, err
		}
	}
	conds = make([]N, len(e.Whens))
	results = make([]N, 0, len(e.Whens)+1)
	for i, w := range e.Whens {
		cond, err := c.compile(w.Cond)
		if err != nil {
			return nil, nil, err
		}
		if e.Operand != nil {
			cond, err = c.compare(parser.OpEq, operand, cond)
		} else {
			cond, err = c.asBool(cond)
		}
		if err != nil {
			return nil, nil, err
		}
		conds[i] = cond
		res, err := c.compile(w.Result)
		if err != nil {
			return nil, nil, err
		}
		results = append(results, res)
	}
	if e.Else != nil {
		res, err := c.compile(e.Else)
		if err != nil {
			return nil, nil, err
		}
		results = append(results, res)
	}
	return conds, results, nil
}

// convertAll converts xs in place to t.
func convertAll[N any](c exprCompiler[N], xs []N, t schema.Type) error {
	for i, x := range xs {
		var err error
		if xs[i], err = c.convert(x, t); err != nil {
			return err
		}
	}
	return nil
}

// convertEach converts xs[i] to ts[i], for functions whose arguments each
// have a type of their own.
func convertEach[N any](c exprCompiler[N], xs []N, ts ...schema.Type) error {
	for i, t := range ts {
		var err error
		if xs[i], err = c.convert(xs[i], t); err != nil {
			return err
		}
	}
	return nil
}

// typesOf is the types of xs.
func typesOf[N any](c exprCompiler[N], xs []N) []schema.Type {
	ts := make([]schema.Type, len(xs))
	for i, x := range xs {
		ts[i] = c.typeOf(x)
	}
	return ts
}

// decimalTextOf returns x as a DECIMAL constant when it is a text constant
// spelling a number of at most 38 digits and other is a DECIMAL (as Doris
// types such literals); x otherwise.
func decimalTextOf[N any](c exprCompiler[N], x, other N) N {
	if !c.typeOf(x).IsString() || c.typeOf(other).Kind != schema.Decimal {
		return x
	}
	v, ok := c.constValue(x)
	if !ok || v.IsNull() {
		return x
	}
	n, t, ok := decimal.ParseExact(string(v.Bytes))
	if !ok {
		return x
	}
	return c.constNode(schema.DecimalType(t.Precision, t.Scale), schema.DecimalVal(n))
}

// decimalOperandOf is the DECIMAL type an operand of DECIMAL arithmetic
// has: its own, DECIMAL(digits, 0) for an integer (a constant integer
// counts the digits of the smallest integer type holding it, as Doris
// types integer literals), DECIMAL(1,0) for NULL.
func decimalOperandOf[N any](c exprCompiler[N], x N) decimal.Type {
	t := c.typeOf(x)
	switch {
	case t.Kind == schema.Decimal:
		return t.Decimal()
	case isNullType(t):
		return decimal.IntegerType(1)
	case t.Kind != schema.Boolean:
		if v, ok := c.constValue(x); ok && !v.IsNull() {
			return decimal.IntegerType(intDigits(smallestIntType(v.Int)))
		}
	}
	return exactType(t)
}

// bitOps are the bit operators and the Doris functions beside them.
var bitOps = map[parser.BinaryOp]exec.ArithOp{
	parser.OpBitAnd: exec.BitAnd, parser.OpBitOr: exec.BitOr, parser.OpBitXor: exec.BitXor,
	parser.OpShl: exec.ShiftLeft, parser.OpShr: exec.ShiftRight,
}

var bitFuncs = map[string]parser.BinaryOp{
	"bitand": parser.OpBitAnd, "bitor": parser.OpBitOr, "bitxor": parser.OpBitXor,
	"bit_shift_left": parser.OpShl, "bit_shift_right": parser.OpShr,
}

// bitOperand converts an operand of a bit operator or function to BIGINT:
// integers, booleans and NULL only, as Doris has them for integer types
// alone (a DOUBLE or a string would have to be rounded first, silently).
func bitOperand[N any](c exprCompiler[N], x N, what string) (N, error) {
	if t := c.typeOf(x); !isIntLike(t) && !isNullType(t) {
		var zero N
		return zero, invalidf("%s takes integer arguments, not %s", what, t)
	}
	return c.convert(x, bigintType)
}

// bitOperands is bitOperand of both operands of a binary bit operator.
func bitOperands[N any](c exprCompiler[N], l, r N, what string) (N, N, error) {
	l, err := bitOperand(c, l, what)
	if err == nil {
		r, err = bitOperand(c, r, what)
	}
	return l, r, err
}

// bitWhat names a bit operator in messages.
func bitWhat(op parser.BinaryOp) string { return "operator " + op.String() }

// rowIn expands (a, b) [NOT] IN ((1, 2), ...) into the OR of one
// conjunction of column equalities per row of the list: SQL's row
// comparison, TRUE when every column is equal, FALSE when one is not,
// NULL otherwise, which the AND and OR of three-valued logic give. It
// returns nil for the IN of a single value.
func rowIn(e *parser.InExpr) (parser.Expr, error) {
	row, ok := e.X.(*parser.RowExpr)
	if !ok {
		for _, it := range e.List {
			if _, ok := it.(*parser.RowExpr); ok {
				return nil, invalidf("Operand should contain 1 column(s)")
			}
		}
		return nil, nil
	}
	var or parser.Expr
	for _, it := range e.List {
		r, ok := it.(*parser.RowExpr)
		if !ok || len(r.Items) != len(row.Items) {
			return nil, invalidf("Operand should contain %d column(s)", len(row.Items))
		}
		var and parser.Expr
		for i, x := range row.Items {
			var eq parser.Expr = &parser.BinaryExpr{Op: parser.OpEq, L: x, R: r.Items[i]}
			if and != nil {
				eq = &parser.BinaryExpr{Op: parser.OpAnd, L: and, R: eq}
			}
			and = eq
		}
		if or != nil {
			and = &parser.BinaryExpr{Op: parser.OpOr, L: or, R: and}
		}
		or = and
	}
	if e.Not {
		or = &parser.UnaryExpr{Op: parser.OpNot, X: or}
	}
	return or, nil
}

// errRowOperand is the error of a row constructor where one value stands.
func errRowOperand() error { return invalidf("Operand should contain 1 column(s)") }
