package exec

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// ArithOp is a binary arithmetic operator.
type ArithOp uint8

const (
	Add ArithOp = iota + 1
	Sub
	Mul
	// Div is /, always DOUBLE.
	Div
	Mod
	// IntDiv is DIV: the quotient truncated, BIGINT.
	IntDiv
	// BitAnd, BitOr and BitXor are & | ^ on the 64 bits of two BIGINTs.
	BitAnd
	BitOr
	BitXor
	// ShiftLeft and ShiftRight are << and >>: logical shifts of the 64
	// bits of a BIGINT by a count, 0 for a count outside 0..63 (MySQL's
	// unsigned count).
	ShiftLeft
	ShiftRight
)

var arithNames = [...]string{Add: "+", Sub: "-", Mul: "*", Div: "/", Mod: "%", IntDiv: "DIV",
	BitAnd: "&", BitOr: "|", BitXor: "^", ShiftLeft: "<<", ShiftRight: ">>"}

// IsBitOp reports the operators of BIGINTs only (& | ^ << >>).
func (o ArithOp) IsBitOp() bool { return o >= BitAnd && o <= ShiftRight }

// BitArith is the BIGINT result of x op y for a bit operator op.
func BitArith(op ArithOp, x, y int64) int64 {
	switch op {
	case BitAnd:
		return x & y
	case BitOr:
		return x | y
	case BitXor:
		return x ^ y
	case ShiftLeft:
		if uint64(y) > 63 {
			return 0
		}
		return int64(uint64(x) << uint64(y))
	case ShiftRight:
		if uint64(y) > 63 {
			return 0
		}
		return int64(uint64(x) >> uint64(y))
	}
	panic("exec: BitArith of " + op.String())
}

func (o ArithOp) String() string { return arithNames[o] }

// Arith computes L op R. Both operands are BIGINT (the integer path: + - *
// % DIV in BIGINT, an error on overflow) or both DOUBLE; division or modulo
// by zero is NULL. Text is the expression as written, for errors.
type Arith struct {
	Op   ArithOp
	L, R Expr
	Typ  schema.Type
	Text string
}

// NewArith checks the operand types and returns the kernel.
func NewArith(op ArithOp, l, r Expr, text string) (*Arith, error) {
	lk, rk := l.Type().Kind, r.Type().Kind
	switch {
	case lk == schema.BigInt && rk == schema.BigInt && op != Div:
		return &Arith{Op: op, L: l, R: r, Typ: schema.BigIntType, Text: text}, nil
	case op.IsBitOp():
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: %s %s %s needs two BIGINT operands", l.Type(), op, r.Type())
	case lk == schema.Double && rk == schema.Double:
		t := schema.DoubleType
		if op == IntDiv {
			t = schema.BigIntType
		}
		return &Arith{Op: op, L: l, R: r, Typ: t, Text: text}, nil
	}
	return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: %s %s %s needs two BIGINT or two DOUBLE operands", l.Type(), op, r.Type())
}

// Type implements Expr.
func (a *Arith) Type() schema.Type { return a.Typ }

func (a *Arith) String() string { return fmt.Sprintf("(%s %s %s)", a.L, a.Op, a.R) }

// operand is one side of a binary kernel: a whole column or a scalar.
type operand[T any] struct {
	vals   []T
	s      T
	scalar bool
}

func (o *operand[T]) at(i int) T {
	if o.scalar {
		return o.s
	}
	return o.vals[i]
}

// evalOperand evaluates e; a Literal comes back as nil with lit set.
func evalOperand(env *Env, e Expr, b arrow.RecordBatch) (arrow.Array, *Literal, error) {
	if l, ok := literalOf(e); ok {
		return nil, l, nil
	}
	arr, err := e.Eval(env, b)
	return arr, nil, err
}

func (a *Arith) outOfRange() error {
	return rowttl.Errorf(rowttl.ErrInvalidArgument, "BIGINT value is out of range in '%s'", a.Text)
}

// Eval implements Expr.
func (a *Arith) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	la, ll, err := evalOperand(env, a.L, b)
	if err != nil {
		return nil, err
	}
	if la != nil {
		defer la.Release()
	}
	ra, rl, err := evalOperand(env, a.R, b)
	if err != nil {
		return nil, err
	}
	if ra != nil {
		defer ra.Release()
	}
	if (ll != nil && ll.Val.IsNull()) || (rl != nil && rl.Val.IsNull()) {
		return nullArray(env.Mem, a.Typ.Arrow(), n), nil
	}
	valid, nulls := andValidity(env.Mem, n, la, ra)
	if a.L.Type().Kind == schema.BigInt {
		l := operand[int64]{scalar: ll != nil}
		r := operand[int64]{scalar: rl != nil}
		if ll != nil {
			l.s = ll.Val.Int
		} else {
			l.vals = la.(*array.Int64).Int64Values()
		}
		if rl != nil {
			r.s = rl.Val.Int
		} else {
			r.vals = ra.(*array.Int64).Int64Values()
		}
		return a.intKernel(env, n, &l, &r, valid, nulls)
	}
	l := operand[float64]{scalar: ll != nil}
	r := operand[float64]{scalar: rl != nil}
	if ll != nil {
		l.s = ll.Val.Float
	} else {
		l.vals = la.(*array.Float64).Float64Values()
	}
	if rl != nil {
		r.s = rl.Val.Float
	} else {
		r.vals = ra.(*array.Float64).Float64Values()
	}
	return a.floatKernel(env, n, &l, &r, valid, nulls)
}

// nuller clears validity bits, making the bitmap on first use.
type nuller struct {
	mem   memory.Allocator
	n     int
	valid *memory.Buffer
	nulls int
}

func (z *nuller) bits() []byte {
	if z.valid == nil {
		return nil
	}
	return z.valid.Bytes()
}

func (z *nuller) setNull(i int) {
	if z.valid == nil {
		z.valid = newBuffer(z.mem, int(bitutil.BytesForBits(int64(z.n))))
		bitutil.SetBitsTo(z.valid.Bytes(), 0, int64(z.n), true)
	}
	if bitutil.BitIsSet(z.valid.Bytes(), i) {
		bitutil.ClearBit(z.valid.Bytes(), i)
		z.nulls++
	}
}

func (z *nuller) release() {
	if z.valid != nil {
		z.valid.Release()
	}
}

func (a *Arith) intKernel(env *Env, n int, l, r *operand[int64], valid *memory.Buffer, nulls int) (arrow.Array, error) {
	z := &nuller{mem: env.Mem, n: n, valid: valid, nulls: nulls}
	buf := newBuffer(env.Mem, n*8)
	out := arrow.Int64Traits.CastFromBytes(buf.Bytes())
	fail := func() (arrow.Array, error) {
		buf.Release()
		z.release()
		return nil, a.outOfRange()
	}
	vb := z.bits()
	switch a.Op {
	case Add:
		for i := range n {
			x, y := l.at(i), r.at(i)
			s := x + y
			out[i] = s
			if (y >= 0) != (s >= x) && isValid(vb, 0, i) {
				return fail()
			}
		}
	case Sub:
		for i := range n {
			x, y := l.at(i), r.at(i)
			s := x - y
			out[i] = s
			if (y >= 0) != (s <= x) && isValid(vb, 0, i) {
				return fail()
			}
		}
	case Mul:
		for i := range n {
			x, y := l.at(i), r.at(i)
			s := x * y
			out[i] = s
			if x != 0 && y != 0 && (s/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64)) && isValid(vb, 0, i) {
				return fail()
			}
		}
	case BitAnd, BitOr, BitXor, ShiftLeft, ShiftRight:
		for i := range n {
			out[i] = BitArith(a.Op, l.at(i), r.at(i))
		}
	case Mod, IntDiv:
		for i := range n {
			x, y := l.at(i), r.at(i)
			switch {
			case y == 0:
				z.setNull(i)
				vb = z.bits()
			case y == -1:
				if a.Op == IntDiv {
					if x == math.MinInt64 && isValid(vb, 0, i) {
						return fail()
					}
					out[i] = -x
				}
			case a.Op == Mod:
				out[i] = x % y
			default:
				out[i] = x / y
			}
		}
	}
	return makeArray(arrow.PrimitiveTypes.Int64, n, z.valid, z.nulls, buf), nil
}

func (a *Arith) floatKernel(env *Env, n int, l, r *operand[float64], valid *memory.Buffer, nulls int) (arrow.Array, error) {
	z := &nuller{mem: env.Mem, n: n, valid: valid, nulls: nulls}
	buf := newBuffer(env.Mem, n*8)
	switch a.Op {
	case Add, Sub, Mul:
		out := arrow.Float64Traits.CastFromBytes(buf.Bytes())
		switch a.Op {
		case Add:
			for i := range n {
				out[i] = l.at(i) + r.at(i)
			}
		case Sub:
			for i := range n {
				out[i] = l.at(i) - r.at(i)
			}
		case Mul:
			for i := range n {
				out[i] = l.at(i) * r.at(i)
			}
		}
		return makeArray(arrow.PrimitiveTypes.Float64, n, z.valid, z.nulls, buf), nil
	case Div, Mod:
		out := arrow.Float64Traits.CastFromBytes(buf.Bytes())
		for i := range n {
			x, y := l.at(i), r.at(i)
			switch {
			case y == 0:
				z.setNull(i)
			case a.Op == Div:
				out[i] = x / y
			default:
				out[i] = math.Mod(x, y)
			}
		}
		return makeArray(arrow.PrimitiveTypes.Float64, n, z.valid, z.nulls, buf), nil
	}
	out := arrow.Int64Traits.CastFromBytes(buf.Bytes())
	for i := range n {
		x, y := l.at(i), r.at(i)
		if y == 0 {
			z.setNull(i)
			continue
		}
		q := math.Trunc(x / y)
		if math.IsNaN(q) || q < -9.223372036854775e18 || q >= 9.223372036854775e18 {
			if isValid(z.bits(), 0, i) {
				buf.Release()
				z.release()
				return nil, a.outOfRange()
			}
			continue
		}
		out[i] = int64(q)
	}
	return makeArray(arrow.PrimitiveTypes.Int64, n, z.valid, z.nulls, buf), nil
}

// BitNot is ~ on the 64 bits of a BIGINT.
type BitNot struct{ X Expr }

// Type implements Expr.
func (g *BitNot) Type() schema.Type { return schema.BigIntType }

func (g *BitNot) String() string { return fmt.Sprintf("(~%s)", g.X) }

// Eval implements Expr.
func (g *BitNot) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := g.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	xa, ok := x.(*array.Int64)
	if !ok {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: ~ of %s", x.DataType())
	}
	n := x.Len()
	valid, nulls := andValidity(env.Mem, n, x)
	buf := newBuffer(env.Mem, n*8)
	out := arrow.Int64Traits.CastFromBytes(buf.Bytes())
	for i, v := range xa.Int64Values() {
		out[i] = ^v
	}
	return makeArray(arrow.PrimitiveTypes.Int64, n, valid, nulls, buf), nil
}

// Neg is unary minus: BIGINT (an error for the smallest BIGINT), DECIMAL
// or DOUBLE.
type Neg struct {
	X    Expr
	Text string
}

// Type implements Expr.
func (g *Neg) Type() schema.Type { return g.X.Type() }

func (g *Neg) String() string { return fmt.Sprintf("(-%s)", g.X) }

// Eval implements Expr.
func (g *Neg) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := g.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	n := x.Len()
	valid, nulls := andValidity(env.Mem, n, x)
	vb := []byte(nil)
	if valid != nil {
		vb = valid.Bytes()
	}
	switch xa := x.(type) {
	case *array.Int64:
		buf := newBuffer(env.Mem, n*8)
		out := arrow.Int64Traits.CastFromBytes(buf.Bytes())
		for i, v := range xa.Int64Values() {
			if v == math.MinInt64 && isValid(vb, 0, i) {
				buf.Release()
				if valid != nil {
					valid.Release()
				}
				return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "BIGINT value is out of range in '%s'", g.Text)
			}
			out[i] = -v
		}
		return makeArray(x.DataType(), n, valid, nulls, buf), nil
	case *array.Float64:
		buf := newBuffer(env.Mem, n*8)
		out := arrow.Float64Traits.CastFromBytes(buf.Bytes())
		for i, v := range xa.Float64Values() {
			out[i] = -v
		}
		return makeArray(x.DataType(), n, valid, nulls, buf), nil
	case *array.Decimal128:
		buf := newBuffer(env.Mem, n*16)
		out := arrow.Decimal128Traits.CastFromBytes(buf.Bytes())
		for i, v := range xa.Values() {
			out[i] = v.Negate()
		}
		return makeArray(x.DataType(), n, valid, nulls, buf), nil
	}
	if valid != nil {
		valid.Release()
	}
	return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: cannot negate %s", x.DataType())
}
