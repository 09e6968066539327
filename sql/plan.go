package sql

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/table"
)

// selectPlan is a SELECT planned for the vectorised engine: a scan (with
// its projection and the WHERE conjuncts pushed into it), a filter, a
// limit and a projection, built into exec operators by build.
type selectPlan struct {
	tbl       *table.Table
	tableName string
	req       query.Request
	scanCols  exec.Schema
	where     exec.Expr
	limit     *Limit
	exprs     []exec.Expr
	names     []string
}

// planSelect decides which engine runs a SELECT, and plans it for the
// vectorised one. An error wrapping errRowEngine says the row engine runs
// it (and why); so does any error of resolution or typing, which the row
// engine then reports with its own text. Today the vectorised engine runs
// single-table and table-less SELECTs without GROUP BY, HAVING, aggregates,
// ORDER BY or DISTINCT whose expressions it compiles (see vcompiler.compile).
func (s *Session) planSelect(env *stmtEnv, st *Select) (*selectPlan, error) {
	// Joins, subqueries, WITH and window functions are planned by neither
	// engine yet: refused by name, as the row engine would.
	if err := refuseQuery(st); err != nil {
		return nil, err
	}
	switch {
	case s.rowEngineOnly:
		return nil, rowEnginef("the row engine is forced")
	case len(st.GroupBy) > 0 || st.Having != nil:
		return nil, rowEnginef("GROUP BY and HAVING")
	case len(st.OrderBy) > 0:
		return nil, rowEnginef("ORDER BY")
	case st.Distinct:
		return nil, rowEnginef("DISTINCT")
	case ContainsAggregate(st.Where):
		return nil, rowEnginef("an aggregate in WHERE")
	}
	for _, it := range st.Items {
		if ContainsAggregate(it.Expr) {
			return nil, rowEnginef("aggregates")
		}
	}
	src, err := s.selectSource(st)
	if err != nil {
		return nil, rowEngineErr(err)
	}
	items, err := expandItems(st, src.sc)
	if err != nil {
		return nil, rowEngineErr(err)
	}
	p := &selectPlan{tbl: src.tbl, limit: st.Limit}
	c := newVCompiler(env, src.sc)
	if st.Where != nil {
		w, err := c.compile(st.Where)
		if err != nil {
			return nil, err
		}
		if p.where, err = c.asBool(w); err != nil {
			return nil, err
		}
	}
	for _, it := range items {
		x, err := c.compile(it.expr)
		if err != nil {
			return nil, err
		}
		p.exprs = append(p.exprs, x)
		p.names = append(p.names, it.name)
	}
	if src.tbl == nil {
		return p, nil
	}
	// The scan reads the columns the expressions name, in table order.
	slots := make([]int, 0, len(c.refs))
	for slot := range c.refs {
		slots = append(slots, slot)
	}
	sort.Ints(slots)
	names := make([]string, len(slots))
	for i, slot := range slots {
		col := src.sc.cols[slot]
		names[i] = col.name
		p.scanCols = append(p.scanCols, exec.Column{Name: col.name, Type: col.typ, Nullable: true})
		for _, ref := range c.refs[slot] {
			ref.Index = i
		}
	}
	p.tableName = src.sc.db + "." + src.sc.tableName
	p.req = query.Request{Now: env.now, Columns: names, Filter: pushdown(env, src.sc, st.Where)}
	return p, nil
}

// isRowEngine reports an error that sends a statement to the row engine.
func isRowEngine(err error) bool { return errors.Is(err, errRowEngine) }

// build returns the operators of the plan.
func (p *selectPlan) build(env *exec.Env) (exec.Operator, error) {
	var op exec.Operator
	if p.tbl == nil {
		one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
		op = exec.NewSliceSource(exec.Schema{}, []arrow.RecordBatch{one})
	} else {
		op = &scanOp{tbl: p.tbl, req: p.req, schema: p.scanCols}
	}
	if p.where != nil {
		f, err := exec.NewFilter(env, op, p.where)
		if err != nil {
			op.Close()
			return nil, err
		}
		op = f
	}
	if p.limit != nil {
		// Below the projection: no select item is evaluated on a row the
		// limit drops, as the row engine never evaluates them either.
		op = exec.NewLimit(op, p.limit.Offset, p.limit.Count)
	}
	out, err := exec.NewProject(env, op, p.exprs, p.names)
	if err != nil {
		op.Close()
		return nil, err
	}
	return out, nil
}

// explain writes the plan tree, one operator per line, inputs indented
// below the operator that reads them.
func (p *selectPlan) explain() []string {
	var lines []string
	add := func(depth int, format string, args ...any) {
		lines = append(lines, strings.Repeat("  ", depth)+fmt.Sprintf(format, args...))
	}
	exprs := make([]string, len(p.exprs))
	for i, e := range p.exprs {
		exprs[i] = e.String()
		if p.names[i] != exprs[i] {
			exprs[i] += " AS " + QuoteIdent(p.names[i])
		}
	}
	d := 0
	add(d, "Project: %s", strings.Join(exprs, ", "))
	d++
	if p.limit != nil {
		add(d, "Limit: offset %d, count %d", p.limit.Offset, p.limit.Count)
		d++
	}
	if p.where != nil {
		add(d, "Filter: %s", p.where)
		d++
	}
	if p.tbl == nil {
		add(d, "OneRow")
		return lines
	}
	cols := make([]string, len(p.scanCols))
	for i, c := range p.scanCols {
		cols[i] = c.Name
	}
	add(d, "Scan: %s columns [%s]", p.tableName, strings.Join(cols, ", "))
	if p.req.Filter != nil {
		add(d+1, "pushed filter: %s", p.req.Filter)
	}
	return lines
}

// scanOp is the exec operator over a table scan: it starts the scan (and
// pins its snapshot) at the first Next, so that planning and EXPLAIN read
// nothing, and releases it at the end or on Close.
type scanOp struct {
	tbl    *table.Table
	req    query.Request
	schema exec.Schema
	r      array.RecordReader
	done   bool
}

func (o *scanOp) Schema() exec.Schema { return o.schema }

func (o *scanOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if o.done {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if o.r == nil {
		r, err := o.tbl.Scan(ctx, o.req)
		if err != nil {
			o.done = true
			return nil, err
		}
		o.r = r
	}
	for o.r.Next() {
		b := o.r.RecordBatch()
		if b.NumRows() == 0 {
			continue
		}
		b.Retain()
		return b, nil
	}
	err := o.r.Err()
	o.Close()
	if err == nil {
		err = ctx.Err()
	}
	return nil, err
}

func (o *scanOp) Close() {
	o.done = true
	if o.r != nil {
		o.r.Release()
		o.r = nil
	}
}
