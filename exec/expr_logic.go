package exec

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
)

// Logic is AND or OR in three-valued logic over BOOLEAN operands. The
// right operand is evaluated only on the rows the left one does not
// decide (FALSE for AND, TRUE for OR), as a row-at-a-time evaluator would:
// an error the right side would raise on a decided row is never raised.
type Logic struct {
	And  bool
	L, R Expr
}

// Type implements Expr.
func (g *Logic) Type() schema.Type { return schema.BooleanType }

func (g *Logic) String() string {
	op := "OR"
	if g.And {
		op = "AND"
	}
	return fmt.Sprintf("(%s %s %s)", g.L, op, g.R)
}

// evalBool evaluates a BOOLEAN (or NULL-typed) expression into a
// *array.Boolean.
func evalBool(env *Env, e Expr, b arrow.RecordBatch) (*array.Boolean, error) {
	a, err := e.Eval(env, b)
	if err != nil {
		return nil, err
	}
	if bb, ok := a.(*array.Boolean); ok {
		return bb, nil
	}
	n := a.Len()
	a.Release()
	if a.DataType().ID() == arrow.NULL {
		return nullArray(env.Mem, arrow.FixedWidthTypes.Boolean, n).(*array.Boolean), nil
	}
	return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: %s is not a BOOLEAN expression", e)
}

// subBatch returns the rows of b that mask selects; sel is their count.
func subBatch(env *Env, b arrow.RecordBatch, mask []byte, sel int) (arrow.RecordBatch, error) {
	if sel == int(b.NumRows()) {
		b.Retain()
		return b, nil
	}
	if b.NumCols() == 0 {
		return array.NewRecordBatch(b.Schema(), nil, int64(sel)), nil
	}
	return query.FilterBatch(context.Background(), env.Mem, b, mask)
}

// evalOn evaluates e on the rows of b that mask selects.
func evalOn(env *Env, e Expr, b arrow.RecordBatch, mask []byte, sel int) (arrow.Array, error) {
	sub, err := subBatch(env, b, mask, sel)
	if err != nil {
		return nil, err
	}
	defer sub.Release()
	return e.Eval(env, sub)
}

// Eval implements Expr.
func (g *Logic) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	l, err := evalBool(env, g.L, b)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	// need: rows whose result the left side does not decide.
	need := newBuffer(env.Mem, int(bitutil.BytesForBits(int64(n))))
	defer need.Release()
	nb := need.Bytes()
	sel := 0
	for i := range n {
		if l.IsNull(i) || l.Value(i) == g.And {
			bitutil.SetBit(nb, i)
			sel++
		}
	}
	vals := newBuffer(env.Mem, int(bitutil.BytesForBits(int64(n))))
	valid := newBuffer(env.Mem, int(bitutil.BytesForBits(int64(n))))
	vb, db := vals.Bytes(), valid.Bytes()
	// Decided rows: FALSE for AND, TRUE for OR.
	for i := range n {
		if !bitutil.BitIsSet(nb, i) {
			bitutil.SetBit(db, i)
			bitutil.SetBitTo(vb, i, !g.And)
		}
	}
	if sel > 0 {
		ra, err := evalOn(env, g.R, b, nb, sel)
		if err != nil {
			vals.Release()
			valid.Release()
			return nil, err
		}
		r, ok := ra.(*array.Boolean)
		if !ok {
			vals.Release()
			valid.Release()
			defer ra.Release()
			if ra.DataType().ID() != arrow.NULL {
				return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: %s is not a BOOLEAN expression", g.R)
			}
			r = nullArray(env.Mem, arrow.FixedWidthTypes.Boolean, ra.Len()).(*array.Boolean)
		}
		defer r.Release()
		j := 0
		for i := range n {
			if !bitutil.BitIsSet(nb, i) {
				continue
			}
			lNull := l.IsNull(i)
			rNull := r.IsNull(j)
			switch {
			case !rNull && r.Value(j) != g.And:
				// The right side decides.
				bitutil.SetBit(db, i)
				bitutil.SetBitTo(vb, i, !g.And)
			case lNull || rNull:
				// NULL.
			default:
				bitutil.SetBit(db, i)
				bitutil.SetBitTo(vb, i, g.And)
			}
			j++
		}
	}
	nulls := n - bitutil.CountSetBits(db, 0, n)
	return newBools(n, vals, valid, nulls), nil
}

// Not is logical NOT: NULL stays NULL.
type Not struct{ X Expr }

// Type implements Expr.
func (g *Not) Type() schema.Type { return schema.BooleanType }

func (g *Not) String() string { return fmt.Sprintf("(NOT %s)", g.X) }

// Eval implements Expr.
func (g *Not) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := evalBool(env, g.X, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	n := x.Len()
	vals := newBuffer(env.Mem, int(bitutil.BytesForBits(int64(n))))
	bitutil.InvertBitmap(x.Data().Buffers()[1].Bytes(), x.Data().Offset(), n, vals.Bytes(), 0)
	valid, nulls := andValidity(env.Mem, n, x)
	return newBools(n, vals, valid, nulls), nil
}

// IsTest is what an IsExpr checks.
type IsTest uint8

const (
	TestNull IsTest = iota + 1
	TestTrue
	TestFalse
)

// Is is x IS [NOT] NULL|TRUE|FALSE; it is never NULL.
type Is struct {
	X    Expr
	Test IsTest
	Not  bool
}

// Type implements Expr.
func (g *Is) Type() schema.Type { return schema.BooleanType }

func (g *Is) String() string {
	t := [...]string{TestNull: "NULL", TestTrue: "TRUE", TestFalse: "FALSE"}[g.Test]
	if g.Not {
		return fmt.Sprintf("(%s IS NOT %s)", g.X, t)
	}
	return fmt.Sprintf("(%s IS %s)", g.X, t)
}

// Eval implements Expr.
func (g *Is) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := g.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	n := x.Len()
	vals := newBuffer(env.Mem, int(bitutil.BytesForBits(int64(n))))
	out := vals.Bytes()
	switch g.Test {
	case TestNull:
		setIsNull(out, x, n)
	default:
		bx, ok := x.(*array.Boolean)
		if !ok && x.DataType().ID() != arrow.NULL {
			vals.Release()
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: %s is not a BOOLEAN expression", g.X)
		}
		if ok {
			for i := range n {
				if bx.IsValid(i) && bx.Value(i) == (g.Test == TestTrue) {
					bitutil.SetBit(out, i)
				}
			}
		}
	}
	if g.Not {
		bitutil.InvertBitmap(out, 0, n, out, 0)
	}
	return newBools(n, vals, nil, 0), nil
}

func setIsNull(out []byte, x arrow.Array, n int) {
	if x.DataType().ID() == arrow.NULL {
		bitutil.SetBitsTo(out, 0, int64(n), true)
		return
	}
	if x.NullN() == 0 {
		return
	}
	bitutil.InvertBitmap(x.NullBitmapBytes(), x.Data().Offset(), n, out, 0)
}

var _ = memory.DefaultAllocator
