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
	"github.com/rowttl/rowttl/sql/parser"
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
	limit     *parser.Limit
	exprs     []exec.Expr
	names     []string
	// nOut is the number of select items; exprs after them are ORDER BY
	// keys that are no select item, dropped after the sort.
	nOut     int
	distinct bool
	order    []exec.SortKey
	// agg, when set, aggregates the filtered rows; exprs are then over its
	// output (the group keys, then the aggregates).
	agg *aggPlan
	// from is the FROM of joins, derived tables or CTEs and tops the
	// subquery joins above it (plan_join.go, plan_subquery.go); tbl is nil
	// then.
	from *fromPlan
	tops []*topJoin
	// win computes the block's window functions after the filter.
	win *windowPlan
	// scanAgg, when set, answers agg from the scan (plan_scanagg.go).
	scanAgg *scanAgg
	// sets are the subqueries run once into sets before the first row
	// (plan_subquery.go).
	sets []*onceSet
}

// aggPlan is the aggregation of a plan: a projection of the group keys and
// the aggregates' arguments, the hash aggregation, then HAVING.
type aggPlan struct {
	pre      []exec.Expr
	preNames []string
	groups   []int
	aggs     []exec.Aggregate
	having   exec.Expr
	// dict, when set, makes the one group key the root join's build group
	// ids, mapped back to the key's values after the aggregation.
	dict *groupValues
}

// planSelect plans a SELECT onto exec operators: the plain query block
// here, every other shape through the relational planner.
func (s *Session) planSelect(env *stmtEnv, st *parser.Select) (*selectPlan, error) {
	if !st.IsSimple() {
		// Joins, derived tables, WITH and subqueries.
		p := &relPlanner{s: s, env: env}
		p.pushWith(st.With)
		return p.planRelSelect(st)
	}
	p, err := s.planSelectSimple(env, st)
	if err != nil {
		return nil, planError(err)
	}
	return p, nil
}

// planError turns an error of the vectorised compiler into what the
// statement reports: the resolution or typing error itself, or the
// construct no kernel computes yet.
func planError(err error) error {
	var re *rowEngineError
	if !errors.As(err, &re) {
		return err
	}
	if re.err != nil {
		return re.err
	}
	return notYet(re.reason)
}

// planSelectSimple plans the plain single-table query block.
func (s *Session) planSelectSimple(env *stmtEnv, st *parser.Select) (*selectPlan, error) {
	// Window functions, REGEXP and the like are not planned here: refused
	// by name.
	if err := refuseQuery(st); err != nil {
		return nil, err
	}
	if parser.ContainsAggregate(st.Where) {
		return nil, invalidf("aggregate functions are not allowed in WHERE")
	}
	aggMode := len(st.GroupBy) > 0 || st.Having != nil
	for _, it := range st.Items {
		aggMode = aggMode || parser.ContainsAggregate(it.Expr)
	}
	for _, o := range st.OrderBy {
		aggMode = aggMode || parser.ContainsAggregate(o.Expr)
	}
	src, err := s.selectSource(st)
	if err != nil {
		return nil, err
	}
	items, err := expandItems(st, src.sc)
	if err != nil {
		return nil, err
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
	out := c
	if aggMode {
		if out, err = p.planAggregate(env, st, src, items, c); err != nil {
			return nil, err
		}
	}
	reducible := aggMode && scanReducible(env, st, src)
	for _, it := range items {
		x, err := out.compile(it.expr)
		if err != nil {
			return nil, err
		}
		p.exprs = append(p.exprs, x)
		p.names = append(p.names, it.name)
	}
	p.nOut, p.distinct = len(p.exprs), st.Distinct
	if p.agg != nil && st.Having != nil {
		h, err := out.compile(st.Having)
		if err != nil {
			return nil, err
		}
		if p.agg.having, err = out.asBool(h); err != nil {
			return nil, err
		}
	}
	if err := p.planOrder(st, items, out); err != nil {
		return nil, err
	}
	if reducible {
		p.scanAgg = planScanAgg(env, st, src, p.agg)
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

// planOrder resolves ORDER BY: a
// position, an alias or the text of a select item sorts on that output
// column; any other expression is evaluated beside the outputs and dropped
// after the sort. NULLs sort first ascending and last descending unless
// NULLS FIRST/LAST says otherwise.
func (p *selectPlan) planOrder(st *parser.Select, items []outItem, c *vcompiler) error {
	for _, o := range st.OrderBy {
		k := exec.SortKey{Desc: o.Desc, NullsFirst: !o.Desc}
		switch o.Nulls {
		case parser.NullsFirst:
			k.NullsFirst = true
		case parser.NullsLast:
			k.NullsFirst = false
		}
		idx, ok, err := resolveOrderOutput(o.Expr, items)
		if err != nil {
			return err
		}
		if ok {
			k.Column = idx
		} else {
			x, err := c.compile(o.Expr)
			if err != nil {
				return err
			}
			k.Column = len(p.exprs)
			p.exprs = append(p.exprs, x)
			p.names = append(p.names, parser.FormatExpr(o.Expr))
		}
		p.order = append(p.order, k)
	}
	return nil
}

// limitBelowProject reports a plan whose limit applies right above the
// filter: without ORDER BY and DISTINCT, no select item is evaluated on a
// row the limit drops.
func (p *selectPlan) limitBelowProject() bool {
	return p.limit != nil && len(p.order) == 0 && !p.distinct && p.agg == nil && p.win == nil
}

// lateProject reports a plan whose TopN runs before the select items are
// evaluated: ORDER BY ... LIMIT without DISTINCT, aggregates or windows,
// with an item that computes more than a column. The TopN then orders the
// filtered rows by their keys alone and the items are evaluated only on
// the rows it keeps, not on every row.
func (p *selectPlan) lateProject() bool {
	if len(p.order) == 0 || p.limit == nil || p.limit.Count < 0 || p.distinct || p.agg != nil || p.win != nil {
		return false
	}
	for _, e := range p.exprs {
		if _, ok := e.(*exec.ColumnRef); !ok {
			return true
		}
	}
	return false
}

// lateTopN is the TopN of a lateProject plan over op: the ORDER BY keys
// that are not columns of op are computed beside them first.
func (p *selectPlan) lateTopN(env *exec.Env, op exec.Operator) (exec.Operator, error) {
	in := op.Schema()
	pre := make([]exec.Expr, len(in))
	names := make([]string, len(in))
	for i, c := range in {
		pre[i] = &exec.ColumnRef{Index: i, Name: c.Name, Typ: c.Type}
		names[i] = c.Name
	}
	order := make([]exec.SortKey, len(p.order))
	for i, k := range p.order {
		order[i] = k
		if r, ok := p.exprs[k.Column].(*exec.ColumnRef); ok {
			order[i].Column = r.Index
			continue
		}
		order[i].Column = len(pre)
		pre = append(pre, p.exprs[k.Column])
		names = append(names, p.names[k.Column])
	}
	var err error
	if len(pre) > len(in) {
		if op, err = exec.NewProject(env, op, pre, names); err != nil {
			return nil, err
		}
	}
	return exec.NewTopN(env, op, order, p.limit.Count, max(p.limit.Offset, 0))
}

// build returns the operators of the plan.
func (p *selectPlan) build(env *exec.Env) (exec.Operator, error) {
	var op exec.Operator
	switch {
	case p.from != nil:
		var err error
		var scan *scanOp
		if op, scan, err = p.from.root.buildSide(env); err != nil {
			return nil, err
		}
		if op, err = buildTops(env, op, p.tops, p.from.root, scan); err != nil {
			return nil, err
		}
		if len(p.sets) > 0 {
			op = &setsOp{env: env, in: op, sets: p.sets}
		}
	case p.tbl == nil:
		op = oneRow()
	default:
		op = &scanOp{tbl: p.tbl, req: p.req, schema: p.scanCols}
	}
	var err error
	// Each constructor takes ownership of its input and closes it when it
	// fails.
	if p.where != nil {
		if op, err = exec.NewFilter(env, op, p.where); err != nil {
			return nil, err
		}
	}
	if p.limitBelowProject() {
		op = exec.NewLimit(op, p.limit.Offset, p.limit.Count)
	}
	if a := p.agg; a != nil {
		if op, err = exec.NewProject(env, op, a.pre, a.preNames); err != nil {
			return nil, err
		}
		if op, err = exec.NewHashAggregate(env, op, a.groups, a.aggs); err != nil {
			return nil, err
		}
		if p.scanAgg != nil {
			op = &scanAggOp{tbl: p.tbl, sa: p.scanAgg, fallback: op, env: env}
		}
		if a.dict != nil {
			if op, err = a.dict.project(env, op, 0); err != nil {
				return nil, err
			}
		}
		if a.having != nil {
			if op, err = exec.NewFilter(env, op, a.having); err != nil {
				return nil, err
			}
		}
	}
	if p.win != nil {
		if op, err = p.win.build(env, op); err != nil {
			return nil, err
		}
	}
	late := p.lateProject()
	if late {
		if op, err = p.lateTopN(env, op); err != nil {
			return nil, err
		}
	}
	if op, err = exec.NewProject(env, op, p.exprs, p.names); err != nil {
		return nil, err
	}
	if p.distinct {
		// ORDER BY keys that are not selected ride along, with the
		// values of the first row of each distinct output, as the row
		// engine's distinctRows keeps them.
		if op, err = exec.NewDistinctOn(env, op, p.nOut); err != nil {
			return nil, err
		}
	}
	switch {
	case late:
	case len(p.order) > 0 && p.limit != nil && p.limit.Count >= 0:
		if op, err = exec.NewTopN(env, op, p.order, p.limit.Count, max(p.limit.Offset, 0)); err != nil {
			return nil, err
		}
	case len(p.order) > 0:
		if op, err = exec.NewSort(env, op, p.order); err != nil {
			return nil, err
		}
		if p.limit != nil {
			op = exec.NewLimit(op, p.limit.Offset, p.limit.Count)
		}
	case p.limit != nil && !p.limitBelowProject():
		op = exec.NewLimit(op, p.limit.Offset, p.limit.Count)
	}
	if len(p.exprs) > p.nOut {
		refs := make([]exec.Expr, p.nOut)
		for i := range refs {
			refs[i] = &exec.ColumnRef{Index: i, Name: p.names[i], Typ: p.exprs[i].Type()}
		}
		if op, err = exec.NewProject(env, op, refs, p.names[:p.nOut]); err != nil {
			return nil, err
		}
	}
	if len(p.sets) > 0 || p.agg != nil && p.agg.dict != nil {
		r := &setsRelease{in: op, sets: p.sets}
		if p.agg != nil && p.agg.dict != nil {
			r.groups = p.agg.dict.dict
		}
		op = r
	}
	return op, nil
}

// explain writes the plan tree, one operator per line, inputs indented
// below the operator that reads them.
func (p *selectPlan) explain() []string {
	var lines []string
	add := func(depth int, format string, args ...any) {
		lines = append(lines, strings.Repeat("  ", depth)+fmt.Sprintf(format, args...))
	}
	p.explainTree(add, 0)
	return lines
}

// oneRow is the input of a SELECT without FROM: one row of no columns.
func oneRow() exec.Operator {
	one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	return exec.NewSliceSource(exec.Schema{}, []arrow.RecordBatch{one})
}

func (p *selectPlan) outCols() exec.Schema {
	s := make(exec.Schema, len(p.exprs))
	for i, e := range p.exprs {
		s[i] = exec.Column{Name: p.names[i], Type: e.Type(), Nullable: true}
	}
	return s
}

func (p *selectPlan) estRows() int64 {
	var n int64 = 1
	switch {
	case p.from != nil:
		n = p.from.root.est
	case p.tbl != nil:
		n, _ = estimateRows(p.tbl, &stmtEnv{now: p.req.Now})
		if p.req.Filter != nil {
			n /= 2
		}
	}
	if p.limit != nil && p.limit.Count < n {
		n = p.limit.Count
	}
	return n
}

func (p *selectPlan) explainTree(add explainFunc, d int) {
	exprs := make([]string, len(p.exprs))
	for i, e := range p.exprs {
		exprs[i] = e.String()
		if p.names[i] != exprs[i] {
			exprs[i] += " AS " + parser.QuoteIdent(p.names[i])
		}
	}
	if len(p.exprs) > p.nOut {
		add(d, "Project: %s", strings.Join(exprs[:p.nOut], ", "))
		d++
	}
	keys := make([]string, len(p.order))
	for i, k := range p.order {
		keys[i] = p.exprs[k.Column].String()
		if k.Desc {
			keys[i] += " DESC"
		}
		if k.NullsFirst {
			keys[i] += " NULLS FIRST"
		} else {
			keys[i] += " NULLS LAST"
		}
	}
	late := p.lateProject()
	switch {
	case late:
		// The items are evaluated above the TopN (see lateProject).
		add(d, "Project: %s", strings.Join(exprs, ", "))
		d++
		add(d, "TopN: %s; offset %d, count %d", strings.Join(keys, ", "), p.limit.Offset, p.limit.Count)
		d++
	case len(p.order) > 0 && p.limit != nil && p.limit.Count >= 0:
		add(d, "TopN: %s; offset %d, count %d", strings.Join(keys, ", "), p.limit.Offset, p.limit.Count)
		d++
	case len(p.order) > 0:
		if p.limit != nil {
			add(d, "Limit: offset %d, count %d", p.limit.Offset, p.limit.Count)
			d++
		}
		add(d, "Sort: %s", strings.Join(keys, ", "))
		d++
	case p.limit != nil && !p.limitBelowProject():
		add(d, "Limit: offset %d, count %d", p.limit.Offset, p.limit.Count)
		d++
	}
	if p.distinct {
		add(d, "Distinct")
		d++
	}
	if !late {
		add(d, "Project: %s", strings.Join(exprs, ", "))
		d++
	}
	if p.limitBelowProject() {
		add(d, "Limit: offset %d, count %d", p.limit.Offset, p.limit.Count)
		d++
	}
	if p.win != nil {
		p.win.explain(add, d)
		d++
	}
	if a := p.agg; a != nil {
		if a.having != nil {
			add(d, "Filter: %s", a.having)
			d++
		}
		groups := make([]string, len(a.groups))
		for i, g := range a.groups {
			groups[i] = a.pre[g].String()
		}
		aggs := make([]string, len(a.aggs))
		for i, ag := range a.aggs {
			aggs[i] = ag.Name
		}
		if p.scanAgg != nil {
			est, _ := estimateRows(p.tbl, &stmtEnv{now: p.req.Now})
			add(d, "ScanAggregate: %s of %s columns [%s] (estimated rows %d)", strings.Join(aggs, ", "), p.tableName,
				strings.Join(p.scanAgg.req.Columns, ", "), est)
			if f := p.scanAgg.req.Filter; f != nil {
				add(d+1, "pushed filter: %s", f)
			}
			return
		}
		if a.dict != nil {
			add(d, "GroupValues: %s from the join's build groups", a.dict.name)
			d++
			groups[0] = "group_id(" + groups[0] + ")"
		}
		pres := make(exec.Schema, len(a.pre))
		for i, e := range a.pre {
			pres[i] = exec.Column{Type: e.Type()}
		}
		if exec.CountDistinctApplies(pres, a.groups, a.aggs) {
			add(d, "HashAggregate: groups [] aggregates [%s] (partitioned distinct set)", aggs[0])
		} else {
			add(d, "HashAggregate: groups [%s] aggregates [%s]", strings.Join(groups, ", "), strings.Join(aggs, ", "))
		}
		d++
		pre := make([]string, len(a.pre))
		for i, e := range a.pre {
			pre[i] = e.String()
		}
		add(d, "Project: %s", strings.Join(pre, ", "))
		d++
	}
	if p.where != nil {
		add(d, "Filter: %s", p.where)
		d++
	}
	if p.from != nil {
		if len(p.sets) > 0 {
			add(d, "SubqueryValues: %d subqueries evaluated once, before the first row", len(p.sets))
			for _, s := range p.sets {
				add(d+1, "Subquery: %s", s.text)
				s.sub.explainTree(add, d+2)
			}
			d++
		}
		explainTops(add, d, p.tops, func(d int) { p.from.root.explainTree(add, d) })
		return
	}
	if p.tbl == nil {
		add(d, "OneRow")
		return
	}
	cols := make([]string, len(p.scanCols))
	for i, c := range p.scanCols {
		cols[i] = c.Name
	}
	est, _ := estimateRows(p.tbl, &stmtEnv{now: p.req.Now})
	add(d, "Scan: %s columns [%s] (estimated rows %d)", p.tableName, strings.Join(cols, ", "), est)
	if p.req.Filter != nil {
		add(d+1, "pushed filter: %s", p.req.Filter)
	}
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
