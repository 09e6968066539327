package exec

import (
	"cmp"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// CmpOp is a comparison operator.
type CmpOp uint8

const (
	Eq CmpOp = iota + 1
	Ne
	Lt
	Le
	Gt
	Ge
	// NullSafeEq is <=>: NULL <=> NULL is TRUE, never NULL.
	NullSafeEq
)

var cmpNames = [...]string{Eq: "=", Ne: "<>", Lt: "<", Le: "<=", Gt: ">", Ge: ">=", NullSafeEq: "<=>"}

func (o CmpOp) String() string { return cmpNames[o] }

// flip is the operator with its operands swapped.
func (o CmpOp) flip() CmpOp {
	switch o {
	case Lt:
		return Gt
	case Le:
		return Ge
	case Gt:
		return Lt
	case Ge:
		return Le
	}
	return o
}

// holds says whether a three-way comparison result satisfies the operator.
func (o CmpOp) holds(c int) bool {
	switch o {
	case Eq, NullSafeEq:
		return c == 0
	case Ne:
		return c != 0
	case Lt:
		return c < 0
	case Le:
		return c <= 0
	case Gt:
		return c > 0
	}
	return c >= 0
}

// Compare compares two operands of the same Arrow type (the planner casts
// both to their comparison type first): BIGINT, DOUBLE, strings, DECIMAL
// of one scale, DATE, DATETIME, TIMESTAMPTZ, TIMESTAMP_NS.
type Compare struct {
	Op   CmpOp
	L, R Expr
}

// NewCompare checks that both sides have one comparable representation.
func NewCompare(op CmpOp, l, r Expr) (*Compare, error) {
	lt, rt := l.Type().Arrow(), r.Type().Arrow()
	if !arrow.TypeEqual(lt, rt) && lt.ID() != arrow.NULL && rt.ID() != arrow.NULL {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: cannot compare %s with %s", l.Type(), r.Type())
	}
	switch lt.ID() {
	case arrow.INT64, arrow.FLOAT64, arrow.STRING, arrow.DECIMAL128, arrow.DATE32, arrow.TIMESTAMP, arrow.NULL:
		return &Compare{Op: op, L: l, R: r}, nil
	}
	return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: cannot compare %s values", l.Type())
}

// Type implements Expr.
func (c *Compare) Type() schema.Type { return schema.BooleanType }

func (c *Compare) String() string { return fmt.Sprintf("(%s %s %s)", c.L, c.Op, c.R) }

// Eval implements Expr.
func (c *Compare) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	la, ll, err := evalOperand(env, c.L, b)
	if err != nil {
		return nil, err
	}
	if la != nil {
		defer la.Release()
	}
	ra, rl, err := evalOperand(env, c.R, b)
	if err != nil {
		return nil, err
	}
	if ra != nil {
		defer ra.Release()
	}
	op := c.Op
	// Put a scalar on the right.
	if ll != nil {
		la, ll, ra, rl = ra, rl, la, ll
		op = op.flip()
	}
	vals := newBuffer(env.Mem, int(bitutil.BytesForBits(int64(n))))
	out := vals.Bytes()
	if rl != nil && rl.Val.IsNull() {
		if op == NullSafeEq {
			// x <=> NULL is x IS NULL.
			for i := range n {
				if la.IsNull(i) {
					bitutil.SetBit(out, i)
				}
			}
			return newBools(n, vals, nil, 0), nil
		}
		vals.Release()
		return nullArray(env.Mem, arrow.FixedWidthTypes.Boolean, n), nil
	}
	if la.DataType().ID() == arrow.NULL || (ra != nil && ra.DataType().ID() == arrow.NULL) {
		vals.Release()
		if op == NullSafeEq {
			return c.nullSafeWithNull(env, n, la, ra)
		}
		return nullArray(env.Mem, arrow.FixedWidthTypes.Boolean, n), nil
	}
	switch l := la.(type) {
	case *array.Int64:
		cmpKernel(op, out, l.Int64Values(), sliceOr(ra, rl, func(a arrow.Array) []int64 { return a.(*array.Int64).Int64Values() }), scalarOr(rl, func(v schema.Value) int64 { return v.Int }))
	case *array.Float64:
		cmpKernel(op, out, l.Float64Values(), sliceOr(ra, rl, func(a arrow.Array) []float64 { return a.(*array.Float64).Float64Values() }), scalarOr(rl, func(v schema.Value) float64 { return v.Float }))
	case *array.Date32:
		cmpKernel(op, out, l.Date32Values(), sliceOr(ra, rl, func(a arrow.Array) []arrow.Date32 { return a.(*array.Date32).Date32Values() }), scalarOr(rl, func(v schema.Value) arrow.Date32 { return arrow.Date32(v.Int) }))
	case *array.Timestamp:
		cmpKernel(op, out, l.TimestampValues(), sliceOr(ra, rl, func(a arrow.Array) []arrow.Timestamp { return a.(*array.Timestamp).TimestampValues() }), scalarOr(rl, func(v schema.Value) arrow.Timestamp { return arrow.Timestamp(v.Int) }))
	case *array.String:
		if rl != nil {
			s := string(rl.Val.Bytes)
			for i := range n {
				if op.holds(cmp.Compare(l.Value(i), s)) {
					bitutil.SetBit(out, i)
				}
			}
		} else {
			r := ra.(*array.String)
			for i := range n {
				if op.holds(cmp.Compare(l.Value(i), r.Value(i))) {
					bitutil.SetBit(out, i)
				}
			}
		}
	case *array.Decimal128:
		lv := l.Values()
		if rl != nil {
			s := decimal128.FromI64(rl.Val.Int)
			for i := range n {
				if op.holds(lv[i].Cmp(s)) {
					bitutil.SetBit(out, i)
				}
			}
		} else {
			rv := ra.(*array.Decimal128).Values()
			for i := range n {
				if op.holds(lv[i].Cmp(rv[i])) {
					bitutil.SetBit(out, i)
				}
			}
		}
	default:
		vals.Release()
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: cannot compare %s values", la.DataType())
	}
	if op == NullSafeEq {
		return nullSafeFix(env.Mem, n, vals, la, ra), nil
	}
	valid, nulls := andValidity(env.Mem, n, la, ra)
	return newBools(n, vals, valid, nulls), nil
}

// nullSafeFix turns the values of an = into those of <=>: a row with a
// NULL on one side is FALSE, on both TRUE; the result has no NULL.
func nullSafeFix(mem memory.Allocator, n int, vals *memory.Buffer, la, ra arrow.Array) arrow.Array {
	out := vals.Bytes()
	if la.NullN() > 0 || (ra != nil && ra.NullN() > 0) {
		for i := range n {
			ln := la.IsNull(i)
			rn := ra != nil && ra.IsNull(i)
			if ln || rn {
				bitutil.SetBitTo(out, i, ln && rn)
			}
		}
	}
	return newBools(n, vals, nil, 0)
}

// nullSafeWithNull is x <=> y where one side is of the NULL type.
func (c *Compare) nullSafeWithNull(env *Env, n int, la, ra arrow.Array) (arrow.Array, error) {
	vals := newBuffer(env.Mem, int(bitutil.BytesForBits(int64(n))))
	other := la
	if la.DataType().ID() == arrow.NULL {
		other = ra
	}
	for i := range n {
		if other == nil || other.IsNull(i) {
			bitutil.SetBit(vals.Bytes(), i)
		}
	}
	return newBools(n, vals, nil, 0), nil
}

func sliceOr[T any](a arrow.Array, lit *Literal, f func(arrow.Array) []T) []T {
	if lit != nil {
		return nil
	}
	return f(a)
}

func scalarOr[T any](lit *Literal, f func(schema.Value) T) *T {
	if lit == nil {
		return nil
	}
	v := f(lit.Val)
	return &v
}

// cmpKernel sets bit i of out where l[i] op r[i] (or l[i] op *s) holds,
// with cmp.Compare's order (NaN below every number, equal to itself).
func cmpKernel[T cmp.Ordered](op CmpOp, out []byte, l, r []T, s *T) {
	if s != nil {
		v := *s
		switch op {
		case Eq, NullSafeEq:
			for i, x := range l {
				if cmp.Compare(x, v) == 0 {
					out[i>>3] |= 1 << (i & 7)
				}
			}
		case Ne:
			for i, x := range l {
				if cmp.Compare(x, v) != 0 {
					out[i>>3] |= 1 << (i & 7)
				}
			}
		case Lt:
			for i, x := range l {
				if cmp.Compare(x, v) < 0 {
					out[i>>3] |= 1 << (i & 7)
				}
			}
		case Le:
			for i, x := range l {
				if cmp.Compare(x, v) <= 0 {
					out[i>>3] |= 1 << (i & 7)
				}
			}
		case Gt:
			for i, x := range l {
				if cmp.Compare(x, v) > 0 {
					out[i>>3] |= 1 << (i & 7)
				}
			}
		case Ge:
			for i, x := range l {
				if cmp.Compare(x, v) >= 0 {
					out[i>>3] |= 1 << (i & 7)
				}
			}
		}
		return
	}
	r = r[:len(l)]
	switch op {
	case Eq, NullSafeEq:
		for i, x := range l {
			if cmp.Compare(x, r[i]) == 0 {
				out[i>>3] |= 1 << (i & 7)
			}
		}
	case Ne:
		for i, x := range l {
			if cmp.Compare(x, r[i]) != 0 {
				out[i>>3] |= 1 << (i & 7)
			}
		}
	case Lt:
		for i, x := range l {
			if cmp.Compare(x, r[i]) < 0 {
				out[i>>3] |= 1 << (i & 7)
			}
		}
	case Le:
		for i, x := range l {
			if cmp.Compare(x, r[i]) <= 0 {
				out[i>>3] |= 1 << (i & 7)
			}
		}
	case Gt:
		for i, x := range l {
			if cmp.Compare(x, r[i]) > 0 {
				out[i>>3] |= 1 << (i & 7)
			}
		}
	case Ge:
		for i, x := range l {
			if cmp.Compare(x, r[i]) >= 0 {
				out[i>>3] |= 1 << (i & 7)
			}
		}
	}
}
