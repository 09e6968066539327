package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rowttl/rowttl/schema"
)

// Literal is a constant. Kernels that take a Literal operand use its value
// directly (broadcast as a scalar); Eval builds the constant array only for
// a consumer that needs one.
type Literal struct {
	Typ schema.Type
	Val schema.Value
	// Text is the value as EXPLAIN prints it.
	Text string
}

// Type implements Expr.
func (l *Literal) Type() schema.Type { return l.Typ }

// Eval implements Expr.
func (l *Literal) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	return schema.ConstArray(env.Mem, l.Typ.Arrow(), l.Val, int(b.NumRows())), nil
}

func (l *Literal) String() string { return l.Text }

// literalOf returns e as a Literal when it is one.
func literalOf(e Expr) (*Literal, bool) {
	l, ok := e.(*Literal)
	return l, ok
}

// ScalarCell is the value of an uncorrelated scalar subquery that the plan
// runs once, before the first row that reads it, and sets in Val; it is
// not a Literal, so that no planning step reads its value early.
type ScalarCell struct {
	Typ schema.Type
	Val schema.Value
	// Text is the subquery as EXPLAIN prints it.
	Text string
}

// Type implements Expr.
func (c *ScalarCell) Type() schema.Type { return c.Typ }

// Eval implements Expr.
func (c *ScalarCell) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	return schema.ConstArray(env.Mem, c.Typ.Arrow(), c.Val, int(b.NumRows())), nil
}

func (c *ScalarCell) String() string { return c.Text }
