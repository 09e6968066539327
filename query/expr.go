package query

import (
	"fmt"
	"strings"
)

// Expr is a filter over a table's rows, in SQL's three-valued logic: a row
// passes when the expression is TRUE (not FALSE, not NULL).
type Expr interface {
	String() string
	expr()
}

// Op is a comparison operator.
type Op uint8

// Comparison operators. NullSafeEq is SQL's <=>: NULL <=> NULL is TRUE and
// NULL <=> x is FALSE.
const (
	Eq Op = iota
	Ne
	Lt
	Le
	Gt
	Ge
	NullSafeEq
)

var opNames = [...]string{Eq: "=", Ne: "<>", Lt: "<", Le: "<=", Gt: ">", Ge: ">=", NullSafeEq: "<=>"}

func (o Op) String() string { return opNames[o] }

// Cmp compares a column with a constant. Value is a Go value: nil, bool, an
// integer, a float, a string, []byte, time.Time or a schema.Value; it is
// converted to the column's type when the scan starts.
type Cmp struct {
	Column string
	Op     Op
	Value  any
}

// And is true when every operand is.
type And struct{ Exprs []Expr }

// Or is true when any operand is.
type Or struct{ Exprs []Expr }

// Not negates.
type Not struct{ Expr Expr }

// IsNull tests a column for NULL (or, with Negate, for not NULL).
type IsNull struct {
	Column string
	Negate bool
}

// In is true when the column equals one of the values.
type In struct {
	Column string
	Values []any
}

// Like matches a string column against a LIKE pattern of one of the forms
// 'abc', 'abc%', '%abc' and '%abc%' (any number of % at either end, none
// inside, no _ and no escape character), byte for byte; a NULL is NULL.
// A pattern of another form is refused with ErrNotSupported when the scan
// starts. Contains patterns search a decoded page's bytes as a whole.
type Like struct {
	Column  string
	Pattern string
}

func (Like) expr()   {}
func (Cmp) expr()    {}
func (And) expr()    {}
func (Or) expr()     {}
func (Not) expr()    {}
func (IsNull) expr() {}
func (In) expr()     {}

func (c Cmp) String() string { return fmt.Sprintf("%s %s %v", c.Column, c.Op, c.Value) }
func (a And) String() string { return join(a.Exprs, " AND ") }
func (o Or) String() string  { return join(o.Exprs, " OR ") }
func (n Not) String() string { return "NOT (" + n.Expr.String() + ")" }
func (i IsNull) String() string {
	if i.Negate {
		return i.Column + " IS NOT NULL"
	}
	return i.Column + " IS NULL"
}
func (i In) String() string { return fmt.Sprintf("%s IN %v", i.Column, i.Values) }
func (l Like) String() string {
	return fmt.Sprintf("%s LIKE '%s'", l.Column, strings.ReplaceAll(l.Pattern, "'", "''"))
}

func join(es []Expr, sep string) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = "(" + e.String() + ")"
	}
	return strings.Join(parts, sep)
}

// Compare returns column op value.
func Compare(column string, op Op, value any) Expr { return Cmp{Column: column, Op: op, Value: value} }

// AllOf returns the conjunction of its operands (nil ones are left out).
func AllOf(es ...Expr) Expr {
	var keep []Expr
	for _, e := range es {
		if e != nil {
			keep = append(keep, e)
		}
	}
	switch len(keep) {
	case 0:
		return nil
	case 1:
		return keep[0]
	}
	return And{Exprs: keep}
}
