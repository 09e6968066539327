package sql

import (
	"strings"

	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
)

// The select list and the source of a plain query block, as the planner
// resolves them.

// outItem is one column of a select list, stars expanded.
type outItem struct {
	name  string
	alias string
	expr  parser.Expr
}

// selectSource is the table a SELECT reads, or none.
type selectSource struct {
	tbl *table.Table
	sc  *scope
}

func (s *Session) selectSource(st *parser.Select) (*selectSource, error) {
	if st.From == nil {
		return &selectSource{}, nil
	}
	tbl, db, name, err := s.openTable(st.From.Table)
	if err != nil {
		return nil, err
	}
	def := tbl.SharedDefinition()
	return &selectSource{tbl: tbl, sc: s.tableScope(def, policyOf(tbl), db, name, st.From.Alias)}, nil
}

// expandItems expands stars into the visible columns.
func expandItems(st *parser.Select, sc *scope) ([]outItem, error) {
	var items []outItem
	for _, it := range st.Items {
		if !it.Star {
			name := it.Alias
			if name == "" {
				name = it.Text
			}
			items = append(items, outItem{name: name, alias: it.Alias, expr: it.Expr})
			continue
		}
		if sc == nil {
			return nil, invalidf("No tables used")
		}
		if it.StarTable != "" {
			ok := false
			for _, q := range sc.qualifiers {
				if strings.EqualFold(q, it.StarTable) {
					ok = true
				}
			}
			if !ok {
				return nil, notFoundf("Unknown table '%s'", it.StarTable)
			}
		}
		for _, c := range sc.cols {
			if c.ttl && !sc.showHidden {
				continue
			}
			items = append(items, outItem{name: c.name, expr: &parser.ColumnRef{Name: c.name}})
		}
	}
	return items, nil
}

// resolveOrderOutput maps an ORDER BY item to an output column when it is
// a position, an alias or the text of a select item.
func resolveOrderOutput(o parser.Expr, items []outItem) (int, bool, error) {
	if lit, ok := o.(*parser.IntLit); ok {
		if lit.Val < 1 || int(lit.Val) > len(items) {
			return 0, false, notFoundf("Unknown column '%d' in 'order clause'", lit.Val)
		}
		return int(lit.Val) - 1, true, nil
	}
	if ref, ok := o.(*parser.ColumnRef); ok && ref.Table == "" {
		for i, it := range items {
			if it.alias != "" && strings.EqualFold(it.alias, ref.Name) {
				return i, true, nil
			}
		}
	}
	text := parser.FormatExpr(o)
	for i, it := range items {
		if it.expr != nil && parser.FormatExpr(it.expr) == text {
			return i, true, nil
		}
	}
	return 0, false, nil
}
