package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// When is one WHEN cond THEN result of a Case.
type When struct {
	Cond, Result Expr
}

// Case is CASE WHEN ... THEN ... [ELSE ...] END (and IF, NULLIF): each
// condition is evaluated only on the rows no earlier condition took, each
// result only on the rows its condition took, as a row-at-a-time evaluator
// would, so an error a branch would raise on rows it does not take is never
// raised. Every result has type Typ (the planner converts them).
type Case struct {
	Whens []When
	Else  Expr // nil: NULL
	Typ   schema.Type
}

// Type implements Expr.
func (c *Case) Type() schema.Type { return c.Typ }

func (c *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, w := range c.Whens {
		fmt.Fprintf(&b, " WHEN %s THEN %s", w.Cond, w.Result)
	}
	if c.Else != nil {
		fmt.Fprintf(&b, " ELSE %s", c.Else)
	}
	b.WriteString(" END")
	return b.String()
}

// Eval implements Expr.
func (c *Case) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	nbytes := int(bitutil.BytesForBits(int64(n)))
	remaining := newBuffer(env.Mem, nbytes)
	defer remaining.Release()
	rb := remaining.Bytes()
	bitutil.SetBitsTo(rb, 0, int64(n), true)
	left := n
	src, idx := make([]int32, n), make([]int32, n)
	for i := range src {
		src[i] = -1
	}
	var parts []arrow.Array
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	take := func(e Expr, mask []byte, sel int) error {
		a, err := evalOn(env, e, b, mask, sel)
		if err != nil {
			return err
		}
		k := int32(len(parts))
		parts = append(parts, a)
		j := int32(0)
		for i := range n {
			if bitutil.BitIsSet(mask, i) {
				src[i], idx[i] = k, j
				j++
			}
		}
		return nil
	}
	for _, w := range c.Whens {
		if left == 0 {
			break
		}
		cond, err := evalOnBool(env, w.Cond, b, rb, left)
		if err != nil {
			return nil, err
		}
		// Map the condition's TRUE rows back to batch rows.
		hit := newBuffer(env.Mem, nbytes)
		hb := hit.Bytes()
		hits, j := 0, 0
		for i := range n {
			if !bitutil.BitIsSet(rb, i) {
				continue
			}
			if cond.IsValid(j) && cond.Value(j) {
				bitutil.SetBit(hb, i)
				bitutil.ClearBit(rb, i)
				hits++
			}
			j++
		}
		cond.Release()
		if hits > 0 {
			left -= hits
			if err := take(w.Result, hb, hits); err != nil {
				hit.Release()
				return nil, err
			}
		}
		hit.Release()
	}
	if c.Else != nil && left > 0 {
		if err := take(c.Else, rb, left); err != nil {
			return nil, err
		}
	}
	return merge(env.Mem, c.Typ.Arrow(), n, parts, src, idx)
}

// evalOnBool evaluates a condition on the rows mask selects.
func evalOnBool(env *Env, e Expr, b arrow.RecordBatch, mask []byte, sel int) (*array.Boolean, error) {
	sub, err := subBatch(env, b, mask, sel)
	if err != nil {
		return nil, err
	}
	defer sub.Release()
	return evalBool(env, e, sub)
}

// Coalesce is the first non-NULL argument (COALESCE, IFNULL): each argument
// is evaluated only on the rows every earlier one left NULL.
type Coalesce struct {
	Args []Expr
	Typ  schema.Type
}

// Type implements Expr.
func (c *Coalesce) Type() schema.Type { return c.Typ }

func (c *Coalesce) String() string {
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		parts[i] = a.String()
	}
	return "coalesce(" + strings.Join(parts, ", ") + ")"
}

// Eval implements Expr.
func (c *Coalesce) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	nbytes := int(bitutil.BytesForBits(int64(n)))
	remaining := newBuffer(env.Mem, nbytes)
	defer remaining.Release()
	rb := remaining.Bytes()
	bitutil.SetBitsTo(rb, 0, int64(n), true)
	left := n
	src, idx := make([]int32, n), make([]int32, n)
	for i := range src {
		src[i] = -1
	}
	var parts []arrow.Array
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for _, e := range c.Args {
		if left == 0 {
			break
		}
		a, err := evalOn(env, e, b, rb, left)
		if err != nil {
			return nil, err
		}
		k := int32(len(parts))
		parts = append(parts, a)
		j := 0
		for i := range n {
			if !bitutil.BitIsSet(rb, i) {
				continue
			}
			if a.IsValid(j) {
				src[i], idx[i] = k, int32(j)
				bitutil.ClearBit(rb, i)
				left--
			}
			j++
		}
	}
	return merge(env.Mem, c.Typ.Arrow(), n, parts, src, idx)
}

// merge builds n rows of type t: row i is row idx[i] of parts[src[i]], or
// NULL when src[i] < 0.
func merge(mem memory.Allocator, t arrow.DataType, n int, parts []arrow.Array, src, idx []int32) (arrow.Array, error) {
	for _, p := range parts {
		if p.DataType().ID() != arrow.NULL && !arrow.TypeEqual(p.DataType(), t) {
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: a branch of type %s where %s is expected", p.DataType(), t)
		}
	}
	bld := array.NewBuilder(mem, t)
	defer bld.Release()
	bld.Reserve(n)
	next := func(i int) (arrow.Array, int, bool) {
		k := src[i]
		if k < 0 {
			return nil, 0, false
		}
		p := parts[k]
		j := int(idx[i])
		if p.IsNull(j) {
			return nil, 0, false
		}
		return p, j, true
	}
	switch bb := bld.(type) {
	case *array.Int64Builder:
		for i := range n {
			if p, j, ok := next(i); ok {
				bb.Append(p.(*array.Int64).Value(j))
			} else {
				bb.AppendNull()
			}
		}
	case *array.Float64Builder:
		for i := range n {
			if p, j, ok := next(i); ok {
				bb.Append(p.(*array.Float64).Value(j))
			} else {
				bb.AppendNull()
			}
		}
	case *array.StringBuilder:
		for i := range n {
			if p, j, ok := next(i); ok {
				bb.Append(p.(*array.String).Value(j))
			} else {
				bb.AppendNull()
			}
		}
	case *array.BooleanBuilder:
		for i := range n {
			if p, j, ok := next(i); ok {
				bb.Append(p.(*array.Boolean).Value(j))
			} else {
				bb.AppendNull()
			}
		}
	default:
		for i := range n {
			if p, j, ok := next(i); ok {
				schema.AppendValue(bld, schema.ValueAt(p, j))
			} else {
				bld.AppendNull()
			}
		}
	}
	return bld.NewArray(), nil
}
