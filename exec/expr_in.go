package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// In is x [NOT] IN (constants): a hash set built once, probed per row.
// NULL when x is NULL, or when x matches nothing and the list holds a NULL.
type In struct {
	X    Expr
	List []*Literal
	Not  bool

	hasNull bool
	ints    map[int64]struct{}
	floats  map[float64]struct{}
	strs    map[string]struct{}
	decs    map[decimal128.Num]struct{}
}

// NewIn builds the set; every literal must have X's Arrow type or be NULL.
func NewIn(x Expr, list []*Literal, not bool) (*In, error) {
	g := &In{X: x, List: list, Not: not}
	t := x.Type().Arrow()
	switch t.ID() {
	case arrow.INT64, arrow.DATE32, arrow.TIMESTAMP:
		g.ints = map[int64]struct{}{}
	case arrow.FLOAT64:
		g.floats = map[float64]struct{}{}
	case arrow.STRING:
		g.strs = map[string]struct{}{}
	case arrow.DECIMAL128:
		g.decs = map[decimal128.Num]struct{}{}
	case arrow.NULL:
	default:
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: IN over %s values", x.Type())
	}
	for _, l := range list {
		if l.Val.IsNull() {
			g.hasNull = true
			continue
		}
		if !arrow.TypeEqual(l.Typ.Arrow(), t) {
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: IN list value %s of type %s, not %s", l.Text, l.Typ, x.Type())
		}
		switch {
		case g.ints != nil:
			g.ints[l.Val.Int] = struct{}{}
		case g.floats != nil:
			g.floats[l.Val.Float] = struct{}{}
		case g.strs != nil:
			g.strs[string(l.Val.Bytes)] = struct{}{}
		case g.decs != nil:
			g.decs[decimal128.FromI64(l.Val.Int)] = struct{}{}
		}
	}
	return g, nil
}

// Type implements Expr.
func (g *In) Type() schema.Type { return schema.BooleanType }

func (g *In) String() string {
	items := make([]string, len(g.List))
	for i, l := range g.List {
		items[i] = l.Text
	}
	not := ""
	if g.Not {
		not = "NOT "
	}
	return fmt.Sprintf("(%s %sIN (%s))", g.X, not, strings.Join(items, ", "))
}

// Eval implements Expr.
func (g *In) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := g.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	n := x.Len()
	if x.DataType().ID() == arrow.NULL {
		return nullArray(env.Mem, arrow.FixedWidthTypes.Boolean, n), nil
	}
	vals := newBuffer(env.Mem, int(bitutil.BytesForBits(int64(n))))
	found := vals.Bytes()
	switch c := x.(type) {
	case *array.Int64:
		for i, v := range c.Int64Values() {
			if _, ok := g.ints[v]; ok {
				found[i>>3] |= 1 << (i & 7)
			}
		}
	case *array.Date32:
		for i, v := range c.Date32Values() {
			if _, ok := g.ints[int64(v)]; ok {
				found[i>>3] |= 1 << (i & 7)
			}
		}
	case *array.Timestamp:
		for i, v := range c.TimestampValues() {
			if _, ok := g.ints[int64(v)]; ok {
				found[i>>3] |= 1 << (i & 7)
			}
		}
	case *array.Float64:
		for i, v := range c.Float64Values() {
			if _, ok := g.floats[v]; ok {
				found[i>>3] |= 1 << (i & 7)
			}
		}
	case *array.String:
		for i := range n {
			if _, ok := g.strs[c.Value(i)]; ok {
				found[i>>3] |= 1 << (i & 7)
			}
		}
	case *array.Decimal128:
		for i, v := range c.Values() {
			if _, ok := g.decs[v]; ok {
				found[i>>3] |= 1 << (i & 7)
			}
		}
	default:
		vals.Release()
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: IN over %s values", x.DataType())
	}
	valid, nulls := andValidity(env.Mem, n, x)
	if g.hasNull {
		// A row that matched nothing is NULL.
		if valid == nil {
			valid = newBuffer(env.Mem, len(found))
			bitutil.SetBitsTo(valid.Bytes(), 0, int64(n), true)
		}
		vb := valid.Bytes()
		for i := range n {
			if !bitutil.BitIsSet(found, i) && bitutil.BitIsSet(vb, i) {
				bitutil.ClearBit(vb, i)
				nulls++
			}
		}
	}
	if g.Not {
		bitutil.InvertBitmap(found, 0, n, found, 0)
	}
	return newBools(n, vals, valid, nulls), nil
}
