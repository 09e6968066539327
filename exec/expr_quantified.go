package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl/schema"
)

// QuantStats is what a quantified comparison knows of its subquery's
// values: how many there are and how many are not NULL. The plan fills it,
// with the extremes that Quantified.Test reads, before the first row.
type QuantStats struct {
	Rows, NonNull int64
}

// Quantified is x op ANY (subquery) or x op ALL (subquery) in SQL's
// three-valued logic, for an op whose answer the extremes of the
// subquery's non-NULL values decide: Test is x compared with them (x > min
// for > ANY, x > max for > ALL, x = min AND x = max for = ALL, x <> min OR
// x <> max for <> ANY). Over no row, ANY is FALSE and ALL TRUE; otherwise
// a NULL x is NULL; a TRUE Test makes ANY TRUE and a FALSE one makes ALL
// FALSE; failing that, a NULL among the values makes the answer NULL (it
// might have matched), and no NULL makes ANY FALSE and ALL TRUE.
type Quantified struct {
	X, Test Expr
	// Op is the comparison, for EXPLAIN.
	Op    CmpOp
	All   bool
	Stats *QuantStats
	Text  string
}

// Type implements Expr.
func (q *Quantified) Type() schema.Type { return schema.BooleanType }

func (q *Quantified) String() string {
	if q.All {
		return fmt.Sprintf("(%s %s ALL %s)", q.X, q.Op, q.Text)
	}
	return fmt.Sprintf("(%s %s ANY %s)", q.X, q.Op, q.Text)
}

// Eval implements Expr.
func (q *Quantified) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	st := q.Stats
	if st.Rows == 0 {
		return schema.ConstArray(env.Mem, arrow.FixedWidthTypes.Boolean, schema.IntVal(b2i64(q.All)), n), nil
	}
	x, err := q.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	t, err := q.Test.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	test := t.(*array.Boolean)
	hasNull := st.Rows > st.NonNull
	out := array.NewBooleanBuilder(env.Mem)
	defer out.Release()
	out.Reserve(n)
	for i := range n {
		switch {
		case x.IsNull(i):
			out.AppendNull()
		case st.NonNull > 0 && test.IsValid(i) && test.Value(i) != q.All:
			out.UnsafeAppend(!q.All)
		case hasNull:
			out.AppendNull()
		default:
			out.UnsafeAppend(q.All)
		}
	}
	return out.NewArray(), nil
}

func b2i64(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
