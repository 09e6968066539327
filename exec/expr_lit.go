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
