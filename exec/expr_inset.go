package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// ValueSet is the values of one column of a subquery evaluated once (IN
// (subquery) or EXISTS outside a WHERE conjunct, where no semi join can
// stand): whoever runs the subquery Adds its values batch by batch and
// Seals the set before an InSet reads it. Its memory is charged to the
// Budget as "IN subquery". A set may be Reset and filled again when its
// plan runs again.
type ValueSet struct {
	typ schema.Type

	parts   []arrow.Array
	rows    int
	hasNull bool
	table   *joinTable
	sealed  bool
	charged int64
	budget  *Budget
}

// NewValueSet returns an empty set of values of t.
func NewValueSet(t schema.Type) *ValueSet { return &ValueSet{typ: t} }

// Type is the type of the set's values.
func (s *ValueSet) Type() schema.Type { return s.typ }

// Len is the number of values added, NULLs included.
func (s *ValueSet) Len() int { return s.rows }

// Add adds the values of a, which must be of the set's Arrow type.
func (s *ValueSet) Add(env *Env, a arrow.Array) error {
	if !arrow.TypeEqual(a.DataType(), s.typ.Arrow()) {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "ValueSet: values of %s, not %s", a.DataType(), s.typ)
	}
	if s.sealed {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "ValueSet: Add after Seal")
	}
	n := dataBytes(a.Data())
	if err := env.Budget.Grow("IN subquery", n); err != nil {
		return err
	}
	s.budget = env.Budget
	s.charged += n
	a.Retain()
	s.parts = append(s.parts, a)
	s.rows += a.Len()
	s.hasNull = s.hasNull || a.NullN() > 0
	return nil
}

// AddRows counts n rows without keeping values: an EXISTS asks no more.
func (s *ValueSet) AddRows(n int) { s.rows += n }

// Seal builds the set of the values added.
func (s *ValueSet) Seal(env *Env) error {
	if s.sealed {
		return nil
	}
	s.sealed = true
	if len(s.parts) == 0 {
		return nil
	}
	est := estimateJoinTable(s.rows)
	if err := env.Budget.Grow("IN subquery", est); err != nil {
		return err
	}
	env.Budget.Shrink(est)
	col := s.parts[0]
	if len(s.parts) > 1 {
		var err error
		if col, err = array.Concatenate(s.parts, env.Mem); err != nil {
			return rowttl.Errorf(rowttl.ErrNotSupported, "IN subquery: %w", err)
		}
	} else {
		col.Retain()
	}
	defer col.Release()
	s.table = newJoinTable(keyFormOf([]schema.Type{s.typ}), true)
	s.table.build([]arrow.Array{col})
	n := s.table.bytes()
	if err := env.Budget.Grow("IN subquery", n); err != nil {
		return err
	}
	s.charged += n
	return nil
}

// Reset empties the set and gives back its memory.
func (s *ValueSet) Reset() {
	for _, p := range s.parts {
		p.Release()
	}
	s.parts, s.table = nil, nil
	s.rows, s.hasNull, s.sealed = 0, false, false
	s.budget.Shrink(s.charged)
	s.charged = 0
}

// InSet is x [NOT] IN (the values of Set), as SQL has it: TRUE when x
// equals a value; otherwise NULL when x is NULL or the set holds a NULL
// (unless the set is empty: then FALSE); FALSE else. NOT inverts TRUE and
// FALSE. Text is the subquery as EXPLAIN shows it.
type InSet struct {
	X    Expr
	Set  *ValueSet
	Not  bool
	Text string
}

// Type implements Expr.
func (g *InSet) Type() schema.Type { return schema.BooleanType }

func (g *InSet) String() string {
	not := ""
	if g.Not {
		not = "NOT "
	}
	return fmt.Sprintf("(%s %sIN %s)", g.X, not, g.Text)
}

// Eval implements Expr.
func (g *InSet) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	if !g.Set.sealed {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: %s evaluated before its subquery ran", g)
	}
	x, err := g.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	n := x.Len()
	vals := newBuffer(env.Mem, int(bitutil.BytesForBits(int64(n))))
	found := vals.Bytes()
	if g.Set.rows == 0 {
		// Nothing is in an empty set, NULL included.
		if g.Not {
			bitutil.SetBitsTo(found, 0, int64(n), true)
		}
		return newBools(n, vals, nil, 0), nil
	}
	if g.Set.table != nil {
		if !arrow.TypeEqual(x.DataType(), g.Set.typ.Arrow()) {
			vals.Release()
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: %s compares %s with %s", g, x.DataType(), g.Set.typ)
		}
		var sc probeScratch
		first := g.Set.table.probe(nil, []arrow.Array{x}, &sc)
		for i, f := range first {
			if f >= 0 {
				found[i>>3] |= 1 << (i & 7)
			}
		}
	}
	valid, nulls := andValidity(env.Mem, n, x)
	if g.Set.hasNull {
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

// ExistsSet is [NOT] EXISTS (subquery) over the rows counted in Set: the
// same value for every row.
type ExistsSet struct {
	Set  *ValueSet
	Not  bool
	Text string
}

// Type implements Expr.
func (e *ExistsSet) Type() schema.Type { return schema.BooleanType }

func (e *ExistsSet) String() string {
	if e.Not {
		return "(NOT EXISTS " + e.Text + ")"
	}
	return "(EXISTS " + e.Text + ")"
}

// Eval implements Expr.
func (e *ExistsSet) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	if !e.Set.sealed {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: %s evaluated before its subquery ran", e)
	}
	n := int(b.NumRows())
	vals := newBuffer(env.Mem, int(bitutil.BytesForBits(int64(n))))
	if (e.Set.rows > 0) != e.Not {
		bitutil.SetBitsTo(vals.Bytes(), 0, int64(n), true)
	}
	return newBools(n, vals, nil, 0), nil
}
