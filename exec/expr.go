package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rowttl/rowttl/schema"
)

// Expr is a vectorised scalar expression: it maps a batch to one value per
// row, computed over whole arrays rather than row by row.
type Expr interface {
	// Type is the SQL type of the result.
	Type() schema.Type
	// Eval returns an array of b.NumRows() values of Type().Arrow(); the
	// caller releases it. A failure (overflow, a bad conversion) names the
	// expression and the offending value.
	Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error)
	// String is the expression as EXPLAIN prints it.
	String() string
}

// ColumnRef is an input column, passed through without copying.
type ColumnRef struct {
	Index int
	Name  string
	Typ   schema.Type
}

// Type implements Expr.
func (c *ColumnRef) Type() schema.Type { return c.Typ }

// Eval implements Expr.
func (c *ColumnRef) Eval(_ *Env, b arrow.RecordBatch) (arrow.Array, error) {
	if c.Index < 0 || c.Index >= int(b.NumCols()) {
		return nil, fmt.Errorf("exec: column %d (%s) of a batch of %d columns", c.Index, c.Name, b.NumCols())
	}
	a := b.Column(c.Index)
	a.Retain()
	return a, nil
}

func (c *ColumnRef) String() string {
	if c.Name != "" {
		return c.Name
	}
	return fmt.Sprintf("#%d", c.Index)
}
