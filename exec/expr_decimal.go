package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/schema"
)

// decimalOperand reads one side of a DECIMAL kernel as unscaled 128-bit
// values: a DECIMAL column, a BIGINT column (scale 0) or a constant.
type decimalOperand struct {
	decs   []decimal128.Num
	ints   []int64
	s      decimal128.Num
	scalar bool
}

func (o *decimalOperand) at(i int) decimal128.Num {
	switch {
	case o.scalar:
		return o.s
	case o.decs != nil:
		return o.decs[i]
	}
	return decimal128.FromI64(o.ints[i])
}

// isDecimalInput reports the types a DECIMAL kernel reads: DECIMAL, BIGINT
// (the planner widens every integer to it first) and the NULL constant.
func isDecimalInput(t schema.Type) bool {
	return t.Kind == schema.Decimal || t.Kind == schema.BigInt || t.Kind == schema.Invalid
}

func newDecimalOperand(arr arrow.Array, lit *Literal) decimalOperand {
	if lit != nil {
		if lit.Typ.Kind == schema.Decimal {
			return decimalOperand{s: lit.Val.Decimal(), scalar: true}
		}
		return decimalOperand{s: decimal128.FromI64(lit.Val.Int), scalar: true}
	}
	switch a := arr.(type) {
	case *array.Decimal128:
		return decimalOperand{decs: a.Values()}
	case *array.Int64:
		return decimalOperand{ints: a.Int64Values()}
	}
	return decimalOperand{s: decimal128.Num{}, scalar: true}
}

// evalDecimalOperands evaluates both sides; null is set when one side is
// the NULL constant, making every row NULL.
func evalDecimalOperands(env *Env, l, r Expr, b arrow.RecordBatch) (la, ra arrow.Array, lo, ro decimalOperand, null bool, err error) {
	la, ll, err := evalOperand(env, l, b)
	if err != nil {
		return nil, nil, lo, ro, false, err
	}
	ra, rl, err := evalOperand(env, r, b)
	if err != nil {
		if la != nil {
			la.Release()
		}
		return nil, nil, lo, ro, false, err
	}
	if (ll != nil && ll.Val.IsNull()) || (rl != nil && rl.Val.IsNull()) {
		return la, ra, lo, ro, true, nil
	}
	return la, ra, newDecimalOperand(la, ll), newDecimalOperand(ra, rl), false, nil
}

func releaseArrays(arrs ...arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}

// DecimalArith is + − × ÷ % or DIV with DECIMAL (or BIGINT) operands,
// exact in Doris's result types through package decimal, so that both
// engines give the same digits. LT and RT are the operands' DECIMAL types
// (an integer counts as DECIMAL(digits,0); the planner gives a constant
// the digits of the smallest integer type holding it, as Doris types
// literals). A zero divisor gives NULL; a result past its type fails.
type DecimalArith struct {
	Op     ArithOp
	L, R   Expr
	LT, RT decimal.Type
	Typ    schema.Type
	Text   string
	dop    decimal.Op
}

var decimalArithOps = map[ArithOp]decimal.Op{Add: decimal.Add, Sub: decimal.Sub, Mul: decimal.Mul, Div: decimal.Div, Mod: decimal.Mod}

// NewDecimalArith checks the operands and derives the result type: the
// Doris decimalv3 one, BIGINT for DIV.
func NewDecimalArith(op ArithOp, l, r Expr, lt, rt decimal.Type, text string) (*DecimalArith, error) {
	if !isDecimalInput(l.Type()) || !isDecimalInput(r.Type()) {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: DECIMAL %s %s %s needs DECIMAL or BIGINT operands", l.Type(), op, r.Type())
	}
	a := &DecimalArith{Op: op, L: l, R: r, LT: lt, RT: rt, Text: text}
	if op == IntDiv {
		a.Typ = schema.BigIntType
		return a, nil
	}
	dop, ok := decimalArithOps[op]
	if !ok {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "unsupported DECIMAL operator in '%s'", text)
	}
	a.dop = dop
	res := decimal.ResultType(dop, lt, rt)
	a.Typ = schema.DecimalType(res.Precision, res.Scale)
	return a, nil
}

// Type implements Expr.
func (a *DecimalArith) Type() schema.Type { return a.Typ }

func (a *DecimalArith) String() string { return fmt.Sprintf("(%s %s %s)", a.L, a.Op, a.R) }

// Eval implements Expr.
func (a *DecimalArith) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	la, ra, l, r, null, err := evalDecimalOperands(env, a.L, a.R, b)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(la, ra)
	if null {
		return nullArray(env.Mem, a.Typ.Arrow(), n), nil
	}
	valid, nulls := andValidity(env.Mem, n, la, ra)
	z := &nuller{mem: env.Mem, n: n, valid: valid, nulls: nulls}
	width := 16
	if a.Op == IntDiv {
		width = 8
	}
	buf := newBuffer(env.Mem, n*width)
	fail := func(format string) (arrow.Array, error) {
		buf.Release()
		z.release()
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, format, a.Text)
	}
	if a.Op == IntDiv {
		out := arrow.Int64Traits.CastFromBytes(buf.Bytes())
		for i := range n {
			if !isValid(z.bits(), 0, i) {
				continue
			}
			q, st := decimal.IntQuo(l.at(i), a.LT.Scale, r.at(i), a.RT.Scale)
			switch st {
			case decimal.StatusDivByZero:
				z.setNull(i)
			case decimal.StatusOverflow:
				return fail("BIGINT value is out of range in '%s'")
			}
			out[i] = q
		}
		return makeArray(a.Typ.Arrow(), n, z.valid, z.nulls, buf), nil
	}
	out := arrow.Decimal128Traits.CastFromBytes(buf.Bytes())
	for i := range n {
		if !isValid(z.bits(), 0, i) {
			continue
		}
		v, st := decimal.Arith(a.dop, l.at(i), a.LT, r.at(i), a.RT)
		switch st {
		case decimal.StatusDivByZero:
			z.setNull(i)
		case decimal.StatusOverflow:
			return fail("DECIMAL value is out of range in '%s'")
		}
		out[i] = v
	}
	return makeArray(a.Typ.Arrow(), n, z.valid, z.nulls, buf), nil
}

// DecimalCompare compares a DECIMAL with a DECIMAL of any scale or with a
// BIGINT exactly (decimal.Cmp), never through a rescale that could
// overflow or a double that could round.
type DecimalCompare struct {
	Op     CmpOp
	L, R   Expr
	LS, RS int
}

// NewDecimalCompare checks the operands; an integer side reads at scale 0.
func NewDecimalCompare(op CmpOp, l, r Expr) (*DecimalCompare, error) {
	if !isDecimalInput(l.Type()) || !isDecimalInput(r.Type()) {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: cannot compare %s with %s exactly", l.Type(), r.Type())
	}
	c := &DecimalCompare{Op: op, L: l, R: r}
	if l.Type().Kind == schema.Decimal {
		c.LS = l.Type().Scale
	}
	if r.Type().Kind == schema.Decimal {
		c.RS = r.Type().Scale
	}
	return c, nil
}

// Type implements Expr.
func (c *DecimalCompare) Type() schema.Type { return schema.BooleanType }

func (c *DecimalCompare) String() string { return fmt.Sprintf("(%s %s %s)", c.L, c.Op, c.R) }

// Eval implements Expr.
func (c *DecimalCompare) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	la, ra, l, r, null, err := evalDecimalOperands(env, c.L, c.R, b)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(la, ra)
	if null {
		if c.Op != NullSafeEq {
			return nullArray(env.Mem, arrow.FixedWidthTypes.Boolean, n), nil
		}
		// NULL <=> x is x IS NULL.
		x := la
		if x == nil {
			x = ra
		}
		vals := newBuffer(env.Mem, int(bitutil.BytesForBits(int64(n))))
		out := vals.Bytes()
		for i := range n {
			bitutil.SetBitTo(out, i, x == nil || x.IsNull(i))
		}
		return newBools(n, vals, nil, 0), nil
	}
	vals := newBuffer(env.Mem, int(bitutil.BytesForBits(int64(n))))
	out := vals.Bytes()
	for i := range n {
		if c.Op.holds(decimal.Cmp(l.at(i), c.LS, r.at(i), c.RS)) {
			bitutil.SetBit(out, i)
		}
	}
	if c.Op == NullSafeEq {
		return nullSafeFix(env.Mem, n, vals, la, ra), nil
	}
	valid, nulls := andValidity(env.Mem, n, la, ra)
	return newBools(n, vals, valid, nulls), nil
}
