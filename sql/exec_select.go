package sql

import (
	"context"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
)

// rowSet is a typed result set, before formatting.
type rowSet struct {
	names []string
	types []schema.Type
	rows  [][]schema.Value
}

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
	def := tbl.Definition()
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

// orderKey is one ORDER BY key: an output column or an extra expression.
type orderKey struct {
	out   int // output column, or -1
	expr  *compiled
	desc  bool
	nulls parser.NullsOrder
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

// runSelect runs a SELECT and returns its typed rows.
func (s *Session) runSelect(ctx context.Context, env *stmtEnv, st *parser.Select) (*rowSet, error) {
	if err := refuseQuery(st); err != nil {
		return nil, err
	}
	src, err := s.selectSource(st)
	if err != nil {
		return nil, err
	}
	items, err := expandItems(st, src.sc)
	if err != nil {
		return nil, err
	}
	base := newCompiler(env, src.sc)
	var where *compiled
	if st.Where != nil {
		if parser.ContainsAggregate(st.Where) {
			return nil, invalidf("aggregate functions are not allowed in WHERE")
		}
		if where, err = base.compile(st.Where); err != nil {
			return nil, err
		}
		if where, err = base.asBool(where); err != nil {
			return nil, err
		}
	}
	aggMode := len(st.GroupBy) > 0 || st.Having != nil
	for _, it := range items {
		aggMode = aggMode || parser.ContainsAggregate(it.expr)
	}
	for _, o := range st.OrderBy {
		aggMode = aggMode || parser.ContainsAggregate(o.Expr)
	}
	if aggMode {
		return s.runAggregate(ctx, env, st, src, items, base, where)
	}

	rs := &rowSet{}
	outs := make([]*compiled, len(items))
	for i, it := range items {
		if outs[i], err = base.compile(it.expr); err != nil {
			return nil, err
		}
		rs.names = append(rs.names, it.name)
		rs.types = append(rs.types, outs[i].t)
	}
	keys, extra, err := compileOrder(st, items, base)
	if err != nil {
		return nil, err
	}
	limit := int64(-1)
	if st.Limit != nil && len(keys) == 0 && !st.Distinct {
		limit = st.Limit.Offset + st.Limit.Count
	}
	var rows [][]schema.Value
	err = s.scanRows(ctx, env, src, base, st.Where, func(row []schema.Value) (bool, error) {
		if keep, err := where.keeps(row); !keep || err != nil {
			return err == nil, err
		}
		out, err := projectRow(row, outs, extra)
		if err != nil {
			return false, err
		}
		rows = append(rows, out)
		return limit < 0 || int64(len(rows)) < limit, nil
	})
	if err != nil {
		return nil, err
	}
	rs.finish(rows, len(outs), extra, keys, st)
	return rs, nil
}

// projectRow evaluates the output expressions, then the extra ones ORDER
// BY needs, on one input row.
func projectRow(row []schema.Value, outs, extra []*compiled) ([]schema.Value, error) {
	out := make([]schema.Value, len(outs)+len(extra))
	for i, x := range append(outs[:len(outs):len(outs)], extra...) {
		v, err := x.eval(row)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// finish applies DISTINCT, ORDER BY and LIMIT to rows (outputs followed by
// the extra ORDER BY values) and keeps the nOut outputs.
func (rs *rowSet) finish(rows [][]schema.Value, nOut int, extra []*compiled, keys []orderKey, st *parser.Select) {
	types := append(append([]schema.Type{}, rs.types...), typesOf(extra)...)
	if st.Distinct {
		rows = distinctRows(rows, nOut)
	}
	sortRows(rows, keys, types)
	rows = applyLimit(rows, st.Limit)
	for i := range rows {
		rows[i] = rows[i][:nOut]
	}
	rs.rows = rows
}

func typesOf(xs []*compiled) []schema.Type {
	out := make([]schema.Type, len(xs))
	for i, x := range xs {
		out[i] = x.t
	}
	return out
}

// compileOrder compiles the ORDER BY items with c.
// compileOrder compiles ORDER BY into keys over the output columns; a key
// that is no output column is returned in extra, evaluated after the
// outputs, and its key points there.
func compileOrder(st *parser.Select, items []outItem, c *compiler) ([]orderKey, []*compiled, error) {
	var keys []orderKey
	for _, o := range st.OrderBy {
		k := orderKey{out: -1, desc: o.Desc, nulls: o.Nulls}
		idx, ok, err := resolveOrderOutput(o.Expr, items)
		if err != nil {
			return nil, nil, err
		}
		if ok && idx >= 0 {
			k.out = idx
		} else {
			if k.expr, err = c.compile(o.Expr); err != nil {
				return nil, nil, err
			}
		}
		keys = append(keys, k)
	}
	var extra []*compiled
	for i := range keys {
		if keys[i].out < 0 {
			extra = append(extra, keys[i].expr)
			keys[i].out = len(items) + len(extra) - 1
		}
	}
	return keys, extra, nil
}

// sortRows sorts rows by the keys (stable, so equal keys keep scan order).
// NULLs sort first ascending and last descending unless NULLS FIRST/LAST
// says otherwise.
func sortRows(rows [][]schema.Value, keys []orderKey, types []schema.Type) {
	if len(keys) == 0 {
		return
	}
	cmps := make([]func(a, b schema.Value) int, len(keys))
	for i, k := range keys {
		cmps[i] = compareIn(types[k.out])
	}
	sort.SliceStable(rows, func(i, j int) bool {
		for n, k := range keys {
			a, b := rows[i][k.out], rows[j][k.out]
			var c int
			switch {
			case a.IsNull() && b.IsNull():
				c = 0
			case a.IsNull() || b.IsNull():
				nullsFirst := !k.desc
				if k.nulls == parser.NullsFirst {
					nullsFirst = true
				} else if k.nulls == parser.NullsLast {
					nullsFirst = false
				}
				if a.IsNull() == nullsFirst {
					return true
				}
				return false
			default:
				c = cmps[n](a, b)
				if k.desc {
					c = -c
				}
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	})
}

func applyLimit(rows [][]schema.Value, l *parser.Limit) [][]schema.Value {
	if l == nil {
		return rows
	}
	off := min(max(l.Offset, 0), int64(len(rows)))
	rows = rows[off:]
	if l.Count >= 0 && l.Count < int64(len(rows)) {
		rows = rows[:l.Count]
	}
	return rows
}

// distinctRows keeps the first row of each distinct value of its first n
// columns.
func distinctRows(rows [][]schema.Value, n int) [][]schema.Value {
	seen := map[string]bool{}
	out := rows[:0]
	for _, r := range rows {
		k := encodeKey(r[:n])
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

// keeps says whether a compiled WHERE (nil: none) keeps row: TRUE, not
// FALSE or NULL.
func (where *compiled) keeps(row []schema.Value) (bool, error) {
	if where == nil {
		return true, nil
	}
	v, err := where.eval(row)
	if err != nil {
		return false, err
	}
	return !v.IsNull() && v.Int != 0, nil
}

// scanRows streams the rows of the source that the scan keeps (alive at
// the statement's now, matching the pushed-down part of where) to fn as
// input rows of src.sc. A source without a table yields one empty row. fn
// returns false to stop.
func (s *Session) scanRows(ctx context.Context, env *stmtEnv, src *selectSource, c *compiler, where parser.Expr, fn func(row []schema.Value) (bool, error)) error {
	if src.tbl == nil {
		_, err := fn(nil)
		return err
	}
	slots := make([]int, 0, len(c.used))
	for slot := range c.used {
		slots = append(slots, slot)
	}
	sort.Ints(slots)
	names := make([]string, len(slots))
	for i, slot := range slots {
		names[i] = src.sc.cols[slot].name
	}
	req := query.Request{Now: env.now, Columns: names, Filter: pushdown(env, src.sc, where)}
	r, err := src.tbl.Scan(ctx, req)
	if err != nil {
		return err
	}
	defer r.Release()
	row := make([]schema.Value, len(src.sc.cols))
	for r.Next() {
		rec := r.RecordBatch()
		cols := rec.Columns()
		n := int(rec.NumRows())
		for i := 0; i < n; i++ {
			for j, slot := range slots {
				row[slot] = schema.ValueAt(cols[j], i)
			}
			more, err := fn(row)
			if err != nil {
				return err
			}
			if !more {
				return nil
			}
		}
	}
	return r.Err()
}

// rowsOf converts a batch to input rows of sc, matching columns by name.
func rowsOf(rec arrow.RecordBatch, sc *scope, fn func(i int, row []schema.Value) error) error {
	idx := make([]int, len(sc.cols))
	for slot, c := range sc.cols {
		idx[slot] = -1
		for j, f := range rec.Schema().Fields() {
			if strings.EqualFold(f.Name, c.name) {
				idx[slot] = j
				break
			}
		}
	}
	row := make([]schema.Value, len(sc.cols))
	for i := 0; i < int(rec.NumRows()); i++ {
		for slot, j := range idx {
			if j >= 0 {
				row[slot] = schema.ValueAt(rec.Column(j), i)
			} else {
				row[slot] = schema.Null
			}
		}
		if err := fn(i, row); err != nil {
			return err
		}
	}
	return nil
}
