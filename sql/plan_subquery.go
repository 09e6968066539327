package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// Subqueries in expressions become joins above the FROM relation: a WHERE
// conjunct x IN (query) a semi join on x, x NOT IN (query) a null-aware
// anti join (a NULL in the subquery makes the conjunct never TRUE), EXISTS
// and NOT EXISTS semi and anti joins (correlated on equalities: the
// subquery's conjuncts comparing its columns with the outer query's
// become keys); a correlated [NOT] IN is decorrelated the same way, as
// the [NOT] EXISTS it equals (correlatedIn). A scalar subquery anywhere
// is a cross join with its one row (NULL when it has none, an error when
// it has more), its value a column of the joined row; in a query with
// GROUP BY or aggregates, whose select list, HAVING and ORDER BY read the
// aggregation's output, an uncorrelated one is run once before the first
// row into a value (exec.ScalarCell). An uncorrelated IN
// (subquery) or EXISTS anywhere else (under OR, in the select list, in
// HAVING) is evaluated once, before the first row, into a set that each
// row probes (onceSet); a correlated one there is refused. A correlated
// scalar subquery of one aggregate (or one value), correlated on
// equalities, is a LEFT
// join with the aggregate grouped by the inner sides of the equalities
// (correlatedScalar); other correlated scalar subqueries are refused.

// topJoin is one subquery joined above a FROM relation.
type topJoin struct {
	kind exec.JoinKind
	sub  relPlan
	// keys are over the outer relation, subKeys over the subquery's
	// columns; none for an uncorrelated EXISTS and a scalar subquery.
	keys, subKeys []exec.Expr
	// residual is a correlated EXISTS's other conditions over the joined
	// row; nil when there are none.
	residual exec.Expr
	text     string
	scalar   bool
	// A correlated scalar subquery (scalar with keys) is a LEFT join with
	// its aggregate grouped by the keys; valueType and valueName are the
	// aggregate's column, and count says it is a count, 0 (not NULL) for
	// an outer row no inner row matches.
	valueType schema.Type
	valueName string
	count     bool
	// lookup: the subquery selects one value, not an aggregate; its
	// grouped form counts the rows per key, and more than one is an error.
	lookup bool
	// out, when set on the last join, are the only columns of the outer
	// relation read above it (see pruneFrom).
	out []int
	// rangeCol, on the first join over a table scan, is the scan's column
	// the build keys' range filters (see rangeColumn).
	rangeCol string
}

// planRelSelect plans a query block beyond one table.
func (p *relPlanner) planRelSelect(st *parser.Select) (*selectPlan, error) {
	if err := refuseRel(st); err != nil {
		return nil, err
	}
	var used []parser.Expr
	for _, it := range st.Items {
		if it.Expr != nil {
			used = append(used, it.Expr)
		}
	}
	if st.Where != nil {
		if parser.ContainsAggregate(st.Where) {
			return nil, invalidf("aggregate functions are not allowed in WHERE")
		}
		used = append(used, st.Where)
	}
	for _, w := range st.Windows {
		used = append(used, w.Spec.PartitionBy...)
		for _, o := range w.Spec.OrderBy {
			used = append(used, o.Expr)
		}
	}
	var fp *fromPlan
	if st.From == nil {
		for _, it := range st.Items {
			if it.Star {
				return nil, invalidf("No tables used")
			}
		}
		leaf := &relNode{sub: oneRowPlan{}, leaves: []int{0}, est: 1}
		fp = &fromPlan{root: leaf, leaves: []*relNode{leaf}, scope: &scope{multi: true}, above: conjuncts(st.Where),
			full: &scope{multi: true}}
	} else {
		var err error
		if fp, err = p.planFrom(st, used); err != nil {
			return nil, err
		}
	}
	sp := &selectPlan{from: fp, limit: st.Limit}
	width := len(fp.root.cols)
	var rest []parser.Expr
	for _, conj := range fp.above {
		tj, err := p.subqueryJoin(fp.scope, fp.full, conj)
		if err != nil {
			return nil, err
		}
		if tj == nil {
			rest = append(rest, conj)
			continue
		}
		if len(sp.tops) == 0 && len(tj.keys) == 1 && tj.kind == exec.SemiJoin {
			tj.rangeCol = rangeColumn(fp.root, tj.keys[0], tj.kind)
		}
		sp.tops = append(sp.tops, tj)
	}
	c := newVCompiler(p.env, fp.scope)
	c.insub = func(cc *vcompiler, e parser.Expr) (exec.Expr, error) { return p.onceSubquery(sp, fp.full, cc, e) }
	c.subq = func(e *parser.SubqueryExpr) (exec.Expr, error) {
		// Each scalar subquery adds one column past the relation's.
		idx := width
		for _, t := range sp.tops {
			if t.scalar {
				idx++
			}
		}
		if st, ok := e.Query.(*parser.Select); ok && p.isCorrelated(fp.full, st) {
			tj, err := p.correlatedScalar(fp.scope, st, e)
			if err != nil {
				return nil, err
			}
			sp.tops = append(sp.tops, tj)
			return &exec.ColumnRef{Index: idx, Name: tj.valueName, Typ: tj.valueType}, nil
		}
		sub, err := p.planQuery(e.Query)
		if err != nil {
			return nil, err
		}
		cols := sub.outCols()
		if len(cols) != 1 {
			return nil, invalidf("Operand should contain 1 column(s)")
		}
		sp.tops = append(sp.tops, &topJoin{kind: exec.CrossJoin, sub: sub, scalar: true, text: "(" + parser.FormatQuery(e.Query) + ")"})
		return &exec.ColumnRef{Index: idx, Name: cols[0].Name, Typ: cols[0].Type}, nil
	}
	if len(rest) > 0 {
		if parser.ContainsWindow(andAll(rest)) {
			return nil, invalidf("window functions are not allowed in WHERE")
		}
		w, err := c.compile(andAll(rest))
		if err == nil {
			w, err = c.asBool(w)
		}
		if err != nil {
			return nil, analytic(err)
		}
		sp.where = w
	}
	items := expandRelItems(st, fp)
	aggMode := len(st.GroupBy) > 0 || st.Having != nil
	for _, it := range st.Items {
		aggMode = aggMode || parser.ContainsAggregate(it.Expr)
	}
	for _, o := range st.OrderBy {
		aggMode = aggMode || parser.ContainsAggregate(o.Expr)
	}
	// GROUP BY, HAVING, ORDER BY and DISTINCT are planned as for a single
	// table, over the FROM relation's columns.
	out := c
	if aggMode {
		var err error
		if out, err = sp.planAggregate(p.env, st, &selectSource{sc: fp.scope}, items, c); err != nil {
			return nil, analytic(err)
		}
	}
	if out != c {
		out.insub = c.insub
		// Scalar subqueries join below the aggregation; over its output
		// they would have to be group keys. An uncorrelated one is one
		// value, run once before the first row instead.
		out.subq = func(e *parser.SubqueryExpr) (exec.Expr, error) {
			if st, ok := e.Query.(*parser.Select); ok && p.isCorrelated(fp.full, st) {
				return nil, notYet("a correlated scalar subquery in a query with GROUP BY or aggregates")
			}
			sub, err := p.planQuery(e.Query)
			if err != nil {
				return nil, err
			}
			cols := sub.outCols()
			if len(cols) != 1 {
				return nil, invalidf("Operand should contain 1 column(s)")
			}
			text := "(" + parser.FormatQuery(e.Query) + ")"
			cell := &exec.ScalarCell{Typ: cols[0].Type, Val: schema.Null, Text: text}
			sp.sets = append(sp.sets, &onceSet{sub: sub, cell: cell, text: text})
			return cell, nil
		}
	}
	wp := &windowPlan{}
	out.win = func(w *parser.WindowFunc) (exec.Expr, error) { return wp.window(out, st, w) }
	for _, it := range items {
		x, err := out.compile(it.expr)
		if err != nil {
			return nil, analytic(err)
		}
		sp.exprs = append(sp.exprs, x)
		sp.names = append(sp.names, it.name)
	}
	sp.nOut, sp.distinct = len(sp.exprs), st.Distinct
	if sp.agg != nil && st.Having != nil {
		h, err := out.compile(st.Having)
		if err == nil {
			h, err = out.asBool(h)
		}
		if err != nil {
			return nil, analytic(err)
		}
		sp.agg.having = h
	}
	if err := sp.planOrder(st, items, out); err != nil {
		return nil, analytic(err)
	}
	bindRefs(c)
	if len(wp.specs) > 0 {
		sp.win = wp
	}
	sp.pruneFrom(c)
	return sp, nil
}

// pruneFrom lets the topmost join of the FROM relation (or of the subquery
// joins above it) output only the columns the operators above it read:
// the columns c's expressions name, which c.refs holds by slot. A join
// then gathers no column read only by itself (its keys, its residual), and
// a count over a semi join gathers none. Plans whose slots are read by
// other means keep every column: scalar subqueries (whose values are
// columns past the relation's) and windows (whose inputs index columns
// directly).
func (sp *selectPlan) pruneFrom(c *vcompiler) {
	if sp.win != nil {
		return
	}
	for _, t := range sp.tops {
		if t.scalar {
			return
		}
	}
	var target *[]int
	switch {
	case len(sp.tops) > 0:
		target = &sp.tops[len(sp.tops)-1].out
	case !sp.from.root.isLeaf() && len(sp.from.root.coalesced) == 0:
		target = &sp.from.root.outNeed
	default:
		return
	}
	used := make([]int, 0, len(c.refs))
	for slot := range c.refs {
		used = append(used, slot)
	}
	slices.Sort(used)
	group, gslot := sp.buildGroup(c)
	if group != nil {
		used = slices.DeleteFunc(used, func(s int) bool { return s == gslot })
	}
	if len(used) == len(sp.from.root.cols) {
		return
	}
	for i, slot := range used {
		for _, r := range c.refs[slot] {
			r.Index = i
		}
	}
	*target = used
	if group != nil {
		// The group key reads the join's group ids, after the columns.
		group.Index, group.Typ = len(used), schema.IntType
	}
}

// buildGroup finds an aggregation whose one group key is a column of the
// root join's build side read by nothing else: the join then numbers its
// build rows by that column (exec.GroupDict) and the aggregation groups on
// the numbers, so that the column is neither gathered per pair nor hashed
// per row, and its values come back per group (exec.GroupValue). It
// returns the key's reference and slot, having set up the plan, or nil.
func (sp *selectPlan) buildGroup(c *vcompiler) (*exec.ColumnRef, int) {
	a, root := sp.agg, sp.from.root
	if a == nil || len(a.groups) != 1 || len(sp.tops) > 0 || root.isLeaf() || len(root.coalesced) > 0 {
		return nil, 0
	}
	ref, ok := a.pre[a.groups[0]].(*exec.ColumnRef)
	if !ok {
		return nil, 0
	}
	for slot, refs := range c.refs {
		if len(refs) != 1 || refs[0] != ref {
			continue
		}
		lw := len(root.left.cols)
		onBuild := slot >= lw != root.swap
		if !onBuild || checkGroupType(ref.Typ) != nil {
			return nil, 0
		}
		col := slot - lw
		if root.swap {
			col = slot
		}
		root.groups = exec.NewGroupDict([]int{col})
		a.dict = &groupValues{dict: root.groups, typ: ref.Typ, name: ref.Name}
		return ref, slot
	}
	return nil, 0
}

// groupValues maps an aggregation's group ids back to the build column's
// values (see buildGroup).
type groupValues struct {
	dict *exec.GroupDict
	typ  schema.Type
	name string
}

// refuseRel refuses what the relational planner does not plan yet, by
// name.
func refuseRel(st *parser.Select) error {
	var err error
	st.WalkExprs(func(e parser.Expr) {
		parser.Walk(e, func(x parser.Expr) bool {
			if err != nil {
				return false
			}
			switch x.(type) {
			case *parser.SubqueryExpr, *parser.InSubquery, *parser.ExistsExpr, *parser.QuantifiedCmp, *parser.WindowFunc:
				return true
			}
			err = refuseNode(x)
			return err == nil
		})
	})
	return err
}

// subqueryJoin returns the join of a WHERE conjunct that is [NOT] IN
// (query), EXISTS or NOT EXISTS, or nil for any other conjunct.
func (p *relPlanner) subqueryJoin(outer, full *scope, conj parser.Expr) (*topJoin, error) {
	not := false
	x := conj
	if u, ok := x.(*parser.UnaryExpr); ok && u.Op == parser.OpNot {
		switch in := u.X.(type) {
		case *parser.ExistsExpr:
			not, x = true, u.X
		case *parser.InSubquery:
			// NOT (x IN q) is x NOT IN q, NULLs and all.
			flipped := *in
			flipped.Not = !in.Not
			x = &flipped
		}
	}
	switch e := x.(type) {
	case *parser.InSubquery:
		xs := []parser.Expr{e.X}
		if row, ok := e.X.(*parser.RowExpr); ok {
			// (a, b) IN (SELECT x, y ...) keeps the rows whose every column
			// is equal: a semi join on all of them. NOT IN of a row is NULL
			// on a partly NULL match, which no anti join keys give.
			if e.Not {
				return nil, notYet("NOT IN (subquery) of a row (a, b, ...)")
			}
			xs = row.Items
		}
		if st, ok := e.Query.(*parser.Select); ok && p.isCorrelated(full, st) {
			if len(xs) > 1 {
				return nil, notYet("a correlated IN (subquery) of a row (a, b, ...)")
			}
			return p.correlatedIn(outer, e, st, conj)
		}
		sub, err := p.planQuery(e.Query)
		if err != nil {
			return nil, err
		}
		cols := sub.outCols()
		if len(cols) != len(xs) {
			return nil, invalidf("Operand should contain %d column(s)", len(xs))
		}
		lc := newVCompiler(p.env, outer)
		rc := newVCompiler(p.env, &scope{multi: true})
		var keys, subKeys []exec.Expr
		for i, x := range xs {
			l, err := lc.compile(x)
			if err != nil {
				return nil, analytic(err)
			}
			var r exec.Expr = &exec.ColumnRef{Index: i, Name: cols[i].Name, Typ: cols[i].Type}
			lt := l.Type()
			l, r, err = p.sameKeyType(lc, rc, l, r)
			if err != nil {
				return nil, err
			}
			if l == nil {
				return nil, notYet(fmt.Sprintf("IN (subquery) comparing %s with %s", lt, cols[i].Type))
			}
			keys, subKeys = append(keys, l), append(subKeys, r)
		}
		bindRefs(lc)
		kind := exec.SemiJoin
		if e.Not {
			kind = exec.NullAwareAntiJoin
		}
		return &topJoin{kind: kind, sub: sub, keys: keys, subKeys: subKeys, text: parser.FormatExpr(conj)}, nil
	case *parser.ExistsExpr:
		return p.existsJoin(outer, e, not, conj)
	}
	return nil, nil
}

// isCorrelated reports whether a query block names a column of the outer
// scope that is none of its own.
func (p *relPlanner) isCorrelated(outer *scope, st *parser.Select) bool {
	inner := &scope{multi: true}
	if st.From != nil {
		var err error
		if inner, err = p.fromScope(st); err != nil {
			return false
		}
	}
	found := false
	st.WalkExprs(func(e parser.Expr) {
		for _, r := range colRefs(e) {
			if _, err := inner.resolve(r); err == nil {
				continue
			}
			if _, err := outer.resolve(r); err == nil {
				found = true
			}
		}
	})
	return found
}

// correlatedIn plans x [NOT] IN (SELECT y FROM ... WHERE c), correlated,
// as the EXISTS it equals: EXISTS (SELECT ... WHERE c AND y = x), whose
// equality becomes a key beside c's correlated ones; and NOT EXISTS
// (SELECT ... WHERE c AND (y = x OR y IS NULL OR x IS NULL)), since x NOT
// IN a set is TRUE only when the set is empty or every y is known to
// differ from x.
func (p *relPlanner) correlatedIn(outer *scope, e *parser.InSubquery, st *parser.Select, conj parser.Expr) (*topJoin, error) {
	if len(st.Items) != 1 || st.Items[0].Star {
		if len(st.Items) != 1 {
			return nil, invalidf("Operand should contain 1 column(s)")
		}
		return nil, notYet("a correlated IN (SELECT * ...)")
	}
	y := st.Items[0].Expr
	if len(st.GroupBy) > 0 || st.Having != nil || st.Limit != nil || parser.ContainsAggregate(y) || parser.ContainsWindow(y) ||
		len(st.With) > 0 || len(st.Windows) > 0 {
		return nil, notYet("a correlated IN (subquery) with GROUP BY, HAVING, aggregates, windows, WITH or LIMIT")
	}
	var cond parser.Expr = &parser.BinaryExpr{Op: parser.OpEq, L: y, R: e.X}
	if e.Not {
		cond = &parser.BinaryExpr{Op: parser.OpOr,
			L: &parser.BinaryExpr{Op: parser.OpOr, L: cond, R: &parser.IsExpr{X: y, Test: parser.IsNull}},
			R: &parser.IsExpr{X: e.X, Test: parser.IsNull}}
	}
	// x's names are the outer query's, whatever the subquery calls its
	// own columns.
	if p.outerRefs == nil {
		p.outerRefs = map[*parser.ColumnRef]bool{}
	}
	for _, r := range colRefs(e.X) {
		p.outerRefs[r] = true
	}
	q := *st
	q.Where = cond
	if st.Where != nil {
		q.Where = &parser.BinaryExpr{Op: parser.OpAnd, L: st.Where, R: cond}
	}
	q.Distinct, q.OrderBy = false, nil
	q.Items = []*parser.SelectItem{{Expr: &parser.IntLit{Val: 1}, Text: "1"}}
	tj, err := p.existsJoin(outer, &parser.ExistsExpr{Query: &q}, e.Not, conj)
	if err != nil {
		return nil, err
	}
	return tj, nil
}

// onceSubquery compiles, with c, an uncorrelated x [NOT] IN (query) or
// EXISTS (query) that no join takes: the subquery runs once, before the
// plan's first row, into a set (sp.sets), which the expression probes.
func (p *relPlanner) onceSubquery(sp *selectPlan, outer *scope, c *vcompiler, e parser.Expr) (exec.Expr, error) {
	if qc, ok := e.(*parser.QuantifiedCmp); ok {
		// = ANY is IN and <> ALL is NOT IN, NULLs and all.
		switch {
		case qc.Op == parser.OpEq && !qc.All:
			e = &parser.InSubquery{X: qc.X, Query: qc.Query}
		case qc.Op == parser.OpNe && qc.All:
			e = &parser.InSubquery{X: qc.X, Not: true, Query: qc.Query}
		}
	}
	var q parser.QueryExpr
	switch e := e.(type) {
	case *parser.InSubquery:
		q = e.Query
	case *parser.ExistsExpr:
		q = e.Query
	case *parser.QuantifiedCmp:
		q = e.Query
	}
	if st, ok := q.(*parser.Select); ok && p.isCorrelated(outer, st) {
		if qc, ok := e.(*parser.QuantifiedCmp); ok {
			return nil, notYet(fmt.Sprintf("a correlated %s %s (subquery)", qc.Op, quantWord(qc.All)))
		}
		return nil, notYet("a correlated subquery other than a WHERE conjunct")
	}
	sub, err := p.planQuery(q)
	if err != nil {
		return nil, err
	}
	text := "(" + parser.FormatQuery(q) + ")"
	if _, ok := e.(*parser.ExistsExpr); ok {
		set := exec.NewValueSet(schema.BooleanType)
		sp.sets = append(sp.sets, &onceSet{sub: sub, set: set, text: text})
		return &exec.ExistsSet{Set: set, Text: text}, nil
	}
	if qc, ok := e.(*parser.QuantifiedCmp); ok {
		return p.quantifiedOnce(sp, c, qc, sub, text)
	}
	in := e.(*parser.InSubquery)
	if _, ok := in.X.(*parser.RowExpr); ok {
		return nil, notYet("IN (subquery) of a row (a, b, ...) other than a WHERE conjunct")
	}
	l, r, err := subqueryOperands(c, in.X, sub)
	if err != nil {
		return nil, err
	}
	rc := newVCompiler(p.env, &scope{multi: true})
	lt, rt := l.Type(), r.Type()
	if l, r, err = p.sameKeyType(c, rc, l, r); err != nil {
		return nil, err
	}
	if l == nil {
		return nil, notYet(fmt.Sprintf("IN (subquery) comparing %s with %s", lt, rt))
	}
	set := exec.NewValueSet(r.Type())
	sp.sets = append(sp.sets, &onceSet{sub: sub, key: r, set: set, text: text})
	return &exec.InSet{X: l, Set: set, Not: in.Not, Text: text}, nil
}

// correlatedEq splits c, a conjunct of a correlated subquery, when it is
// an equality of an expression of the subquery's own names (in) and one of
// the outer query's (out), on either side of the =.
func correlatedEq(c parser.Expr, isInner, isOuter func(parser.Expr) bool) (in, out parser.Expr, ok bool) {
	b, ok := c.(*parser.BinaryExpr)
	if !ok || b.Op != parser.OpEq {
		return nil, nil, false
	}
	switch {
	case isInner(b.L) && isOuter(b.R):
		return b.L, b.R, true
	case isInner(b.R) && isOuter(b.L):
		return b.R, b.L, true
	}
	return nil, nil, false
}

// subqueryOperands compiles x, the left side of x IN (sub) or x op
// ANY|ALL (sub), and the reference to sub's one output column that it is
// compared with.
func subqueryOperands(c *vcompiler, x parser.Expr, sub relPlan) (l, r exec.Expr, err error) {
	cols := sub.outCols()
	if len(cols) != 1 {
		return nil, nil, invalidf("Operand should contain 1 column(s)")
	}
	if l, err = c.compile(x); err != nil {
		return nil, nil, err
	}
	return l, &exec.ColumnRef{Index: 0, Name: cols[0].Name, Typ: cols[0].Type}, nil
}

// quantifiedOnce compiles x op ANY|ALL (query) for an op other than = ANY
// and <> ALL (which are IN and NOT IN): the subquery runs once into the
// count of its values, of its non-NULL ones and their extremes, which
// decide the comparison (exec.Quantified).
func (p *relPlanner) quantifiedOnce(sp *selectPlan, c *vcompiler, qc *parser.QuantifiedCmp, sub relPlan, text string) (exec.Expr, error) {
	l, r, err := subqueryOperands(c, qc.X, sub)
	if err != nil {
		return nil, err
	}
	// The extremes are taken in the comparison's type, where the order
	// is the comparison's: '10' < '9' as text, not as numbers. DECIMAL and
	// integers keep their own types, which order as their exact values.
	if !isDecimalPair(l.Type(), r.Type()) {
		t, ok := comparisonType(l.Type(), r.Type())
		if !ok {
			return nil, notYet(fmt.Sprintf("%s %s (subquery) comparing %s with %s", qc.Op, quantWord(qc.All), l.Type(), r.Type()))
		}
		if !isNullType(t) {
			rc := newVCompiler(p.env, &scope{multi: true})
			if l, err = c.convert(l, t); err != nil {
				return nil, err
			}
			if r, err = rc.convert(r, t); err != nil {
				return nil, analytic(err)
			}
		}
	}
	qf := &quantFill{key: r, stats: &exec.QuantStats{},
		min: &exec.ScalarCell{Typ: r.Type(), Val: schema.Null, Text: "min" + text},
		max: &exec.ScalarCell{Typ: r.Type(), Val: schema.Null, Text: "max" + text}}
	cmp := func(op parser.BinaryOp, cell *exec.ScalarCell) (exec.Expr, error) {
		return c.compare(op, l, cell)
	}
	var test exec.Expr
	switch op := qc.Op; {
	case op == parser.OpEq || op == parser.OpNe:
		// = ALL: every value is x; <> ANY: some value is not.
		lo, err := cmp(op, qf.min)
		if err != nil {
			return nil, err
		}
		hi, err := cmp(op, qf.max)
		if err != nil {
			return nil, err
		}
		test = &exec.Logic{And: op == parser.OpEq, L: lo, R: hi}
	default:
		// x > ANY is x > min, x > ALL is x > max; < the other way round.
		cell := qf.min
		if (op == parser.OpGt || op == parser.OpGe) == qc.All {
			cell = qf.max
		}
		if test, err = cmp(op, cell); err != nil {
			return nil, err
		}
	}
	sp.sets = append(sp.sets, &onceSet{sub: sub, quant: qf, text: text})
	return &exec.Quantified{X: l, Test: test, Op: cmpOps[qc.Op], All: qc.All, Stats: qf.stats, Text: text}, nil
}

func quantWord(all bool) string {
	if all {
		return "ALL"
	}
	return "ANY"
}

// quantFill is what a quantified comparison's subquery is run into.
type quantFill struct {
	key      exec.Expr
	stats    *exec.QuantStats
	min, max *exec.ScalarCell
}

func (q *quantFill) fill(ctx context.Context, env *exec.Env, sub relPlan) error {
	*q.stats = exec.QuantStats{}
	q.min.Val, q.max.Val = schema.Null, schema.Null
	op, err := sub.build(env)
	if err != nil {
		return err
	}
	defer op.Close()
	for {
		b, err := op.Next(ctx)
		if err != nil || b == nil {
			return err
		}
		a, err := q.key.Eval(env, b)
		b.Release()
		if err != nil {
			return err
		}
		q.stats.Rows += int64(a.Len())
		for i := range a.Len() {
			if a.IsNull(i) {
				continue
			}
			v := schema.ValueAt(a, i)
			if q.stats.NonNull == 0 || v.Compare(q.min.Val) < 0 {
				// The value outlives the batch.
				q.min.Val = v
				q.min.Val.Bytes = slices.Clone(v.Bytes)
			}
			if q.stats.NonNull == 0 || v.Compare(q.max.Val) > 0 {
				q.max.Val = v
				q.max.Val.Bytes = slices.Clone(v.Bytes)
			}
			q.stats.NonNull++
		}
		a.Release()
	}
}

// onceSet is a subquery run once into a set before the rows that read it:
// its key's values (IN), or whether it has a row (EXISTS: key is nil); or,
// with cell set, a scalar subquery's one value (set is nil); or, with
// quant set, what a quantified comparison needs of its values.
type onceSet struct {
	sub   relPlan
	key   exec.Expr
	set   *exec.ValueSet
	cell  *exec.ScalarCell
	quant *quantFill
	text  string
}

// fill runs the subquery into the set.
func (s *onceSet) fill(ctx context.Context, env *exec.Env) error {
	if s.cell != nil {
		return s.fillCell(ctx, env)
	}
	if s.quant != nil {
		return s.quant.fill(ctx, env, s.sub)
	}
	s.set.Reset()
	op, err := s.sub.build(env)
	if err != nil {
		return err
	}
	defer op.Close()
	for {
		b, err := op.Next(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		if s.key == nil {
			s.set.AddRows(int(b.NumRows()))
			b.Release()
			break
		}
		a, err := s.key.Eval(env, b)
		b.Release()
		if err != nil {
			return err
		}
		err = s.set.Add(env, a)
		a.Release()
		if err != nil {
			return err
		}
	}
	return s.set.Seal(env)
}

// fillCell runs a scalar subquery into its cell: NULL when it has no row,
// an error when it has more than one.
func (s *onceSet) fillCell(ctx context.Context, env *exec.Env) error {
	s.cell.Val = schema.Null
	op, err := s.sub.build(env)
	if err != nil {
		return err
	}
	defer op.Close()
	rows := 0
	for {
		b, err := op.Next(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			return nil
		}
		n := int(b.NumRows())
		if rows+n > 1 {
			b.Release()
			return invalidf("Subquery returns more than 1 row")
		}
		if n == 1 {
			// The value outlives the batch.
			v := schema.ValueAt(b.Column(0), 0)
			v.Bytes = slices.Clone(v.Bytes)
			s.cell.Val = v
		}
		rows += n
		b.Release()
	}
}

// setsOp fills its sets at its first Next, then passes its input on: it
// sits below every operator that evaluates the sets' expressions. The sets
// outlive it (an aggregation closes its input before HAVING reads them):
// setsRelease, at the top of the plan, gives them back.
type setsOp struct {
	env    *exec.Env
	in     exec.Operator
	sets   []*onceSet
	filled bool
	err    error
}

func (o *setsOp) Schema() exec.Schema { return o.in.Schema() }

func (o *setsOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if o.err != nil {
		return nil, o.err
	}
	if !o.filled {
		o.filled = true
		for _, s := range o.sets {
			if err := s.fill(ctx, o.env); err != nil {
				o.err = err
				return nil, err
			}
		}
	}
	return o.in.Next(ctx)
}

func (o *setsOp) Close() { o.in.Close() }

// setsRelease is the top of a plan with sets or build groups: closing it
// empties them.
type setsRelease struct {
	in     exec.Operator
	sets   []*onceSet
	groups *exec.GroupDict
}

func (o *setsRelease) Schema() exec.Schema { return o.in.Schema() }

func (o *setsRelease) Next(ctx context.Context) (arrow.RecordBatch, error) { return o.in.Next(ctx) }

func (o *setsRelease) Close() {
	o.in.Close()
	for _, s := range o.sets {
		if s.set != nil {
			s.set.Reset()
		}
	}
	if o.groups != nil {
		o.groups.Release()
	}
}

// sides returns the tests of a correlated subquery's expressions: isInner
// holds for one that reads only the subquery's own columns (none its scope
// takes from the outer query), isOuter for one that reads only the outer
// query's, at least one.
func (p *relPlanner) sides(outer, inner *scope) (isInner, isOuter func(parser.Expr) bool) {
	isInner = func(x parser.Expr) bool {
		for _, r := range colRefs(x) {
			if _, err := inner.resolve(r); err != nil || p.outerRefs[r] {
				return false
			}
		}
		return true
	}
	isOuter = func(x parser.Expr) bool {
		refs := colRefs(x)
		for _, r := range refs {
			if _, err := outer.resolve(r); err != nil {
				return false
			}
			if _, err := inner.resolve(r); err == nil && !p.outerRefs[r] {
				return false
			}
		}
		return len(refs) > 0
	}
	return isInner, isOuter
}

// existsJoin plans [NOT] EXISTS (query). A subquery block whose WHERE
// names outer columns is correlated: each conjunct equating an
// expression of its own columns with one of the outer query's becomes a
// key pair; any other conjunct naming an outer column joins the residual.
func (p *relPlanner) existsJoin(outer *scope, e *parser.ExistsExpr, not bool, conj parser.Expr) (*topJoin, error) {
	kind := exec.SemiJoin
	if not {
		kind = exec.AntiJoin
	}
	st, ok := e.Query.(*parser.Select)
	if !ok || st.From == nil {
		sub, err := p.planQuery(e.Query)
		if err != nil {
			return nil, err
		}
		return &topJoin{kind: kind, sub: sub, text: parser.FormatExpr(conj)}, nil
	}
	// The subquery's own scope decides which names are its own.
	inner, err := p.fromScope(st)
	if err != nil {
		return nil, err
	}
	isInner, isOuter := p.sides(outer, inner)
	var own, innerKeys, outerKeys, resid []parser.Expr
	for _, c := range conjuncts(st.Where) {
		if parser.ContainsSubquery(c) || isInner(c) {
			own = append(own, c)
			continue
		}
		if in, out, ok := correlatedEq(c, isInner, isOuter); ok {
			innerKeys, outerKeys = append(innerKeys, in), append(outerKeys, out)
			continue
		}
		resid = append(resid, c)
	}
	// The inner columns the other correlated conditions read are selected
	// after the keys, for the join's residual.
	var innerSlots []int
	var innerRefs []*parser.ColumnRef
	for _, c := range resid {
		for _, r := range colRefs(c) {
			slot, err := inner.resolve(r)
			if err != nil || slices.Contains(innerSlots, slot) {
				continue
			}
			innerSlots, innerRefs = append(innerSlots, slot), append(innerRefs, r)
		}
	}
	// The subquery selects its key expressions, filtered by its own
	// conjuncts.
	q := *st
	q.Where = nil
	if len(own) > 0 {
		q.Where = andAll(own)
	}
	q.Items = nil
	for _, k := range innerKeys {
		q.Items = append(q.Items, &parser.SelectItem{Expr: k, Text: parser.FormatExpr(k)})
	}
	for _, r := range innerRefs {
		q.Items = append(q.Items, &parser.SelectItem{Expr: r, Text: parser.FormatExpr(r)})
	}
	if len(q.Items) == 0 {
		q.Items = []*parser.SelectItem{{Expr: &parser.IntLit{Val: 1}, Text: "1"}}
	}
	sub, err := p.planQuery(&q)
	if err != nil {
		return nil, err
	}
	tj := &topJoin{kind: kind, sub: sub, text: parser.FormatExpr(conj)}
	cols := sub.outCols()
	if err := p.correlationKeys(outer, tj, outerKeys, cols); err != nil {
		return nil, err
	}
	if len(resid) > 0 {
		x, err := p.existsResidual(outer, inner, innerSlots, cols, len(innerKeys), tj.keys, resid)
		if err != nil {
			return nil, err
		}
		tj.residual = x
	}
	return tj, nil
}

// correlationKeys compiles the outer side of each correlated equality
// into tj's keys, beside the subquery's output column i it equals (the
// subquery's first columns are its sides of the equalities), both in one
// type.
func (p *relPlanner) correlationKeys(outer *scope, tj *topJoin, outerKeys []parser.Expr, cols exec.Schema) error {
	lc := newVCompiler(p.env, outer)
	rc := newVCompiler(p.env, &scope{multi: true})
	for i, ok := range outerKeys {
		l, err := lc.compile(ok)
		if err != nil {
			return analytic(err)
		}
		var r exec.Expr = &exec.ColumnRef{Index: i, Name: cols[i].Name, Typ: cols[i].Type}
		l, r, err = p.sameKeyType(lc, rc, l, r)
		if err != nil {
			return err
		}
		if l == nil {
			return notYet("a correlated equality of " + parser.FormatExpr(ok) + " with " + cols[i].Type.String())
		}
		tj.keys = append(tj.keys, l)
		tj.subKeys = append(tj.subKeys, r)
	}
	bindRefs(lc)
	return nil
}

// existsResidual compiles the correlated conditions of an EXISTS that are
// not key equalities over the semi join's combined row: the outer columns
// (then the outer keys buildTops computes), then the subquery's columns,
// the inner columns they read after its nKeys keys. A name resolves in the
// subquery first, as SQL scopes it.
func (p *relPlanner) existsResidual(outer, inner *scope, innerSlots []int, cols exec.Schema, nKeys int, keys []exec.Expr, resid []parser.Expr) (exec.Expr, error) {
	rcols := append([]column(nil), outer.cols...)
	for _, c := range cols {
		// Reachable only through pre: hidden from every name.
		rcols = append(rcols, column{name: c.Name, typ: c.Type, merged: true})
	}
	width := len(outer.cols)
	sc := &scope{cols: rcols, multi: true, showHidden: outer.showHidden}
	sc.pre = func(r *parser.ColumnRef) (int, bool) {
		slot, err := inner.resolve(r)
		if err != nil || p.outerRefs[r] {
			return 0, false
		}
		i := slices.Index(innerSlots, slot)
		return width + nKeys + i, i >= 0
	}
	c := newVCompiler(p.env, sc)
	x, err := c.compile(andAll(resid))
	if err == nil {
		x, err = c.asBool(x)
	}
	if err != nil {
		return nil, analytic(err)
	}
	extra := 0
	for _, k := range keys {
		if _, ok := k.(*exec.ColumnRef); !ok {
			extra++
		}
	}
	for slot, refs := range c.refs {
		for _, r := range refs {
			r.Index = slot
			if slot >= width {
				r.Index += extra
			}
		}
	}
	return x, nil
}

// fromScope is the scope of a query block's FROM, for telling its names
// from an outer query's.
func (p *relPlanner) fromScope(st *parser.Select) (*scope, error) {
	fp := &fromPlan{}
	root, err := p.planTree(fp, st.From)
	if err != nil {
		return nil, err
	}
	return &scope{cols: root.full, multi: true, showHidden: p.s.showHidden}, nil
}

// buildTops joins the subqueries above op.
func buildTops(env *exec.Env, op exec.Operator, tops []*topJoin, root *relNode, scan *scanOp) (exec.Operator, error) {
	for i, t := range tops {
		sub, err := t.sub.build(env)
		if err != nil {
			op.Close()
			return nil, err
		}
		if t.scalar && len(t.keys) > 0 {
			if op, err = correlatedScalarJoin(env, op, sub, t); err != nil {
				return nil, err
			}
			continue
		}
		if t.scalar {
			j, err := exec.NewHashJoin(env, op, &scalarOp{in: sub, mem: env.Mem}, exec.CrossJoin, nil, nil, nil)
			if err != nil {
				op.Close()
				sub.Close()
				return nil, err
			}
			op = j
			continue
		}
		width := len(op.Schema())
		probe, build, pk, bk, err := keyedSides(env, op, sub, t)
		if err != nil {
			return nil, err
		}
		j, err := exec.NewHashJoinOutput(env, probe, build, t.kind, pk, bk, t.residual, t.out)
		if err != nil {
			probe.Close()
			build.Close()
			return nil, err
		}
		if i == 0 {
			rangeFilter(j, root, scan, t.rangeCol)
		}
		op = j
		if t.out == nil && len(j.Schema()) != width {
			// Drop the computed keys.
			s := j.Schema()
			exprs := make([]exec.Expr, width)
			names := make([]string, width)
			for i := range exprs {
				exprs[i] = &exec.ColumnRef{Index: i, Name: s[i].Name, Typ: s[i].Type}
				names[i] = s[i].Name
			}
			if op, err = exec.NewProject(env, j, exprs, names); err != nil {
				j.Close()
				return nil, err
			}
		}
	}
	return op, nil
}

// explainTops writes the subquery joins, outermost first, each with its
// probe input (the joins below it, then the FROM relation) before the
// subquery it builds on.
func explainTops(add explainFunc, d int, tops []*topJoin, from func(d int)) {
	if len(tops) == 0 {
		from(d)
		return
	}
	t := tops[len(tops)-1]
	keys := make([]string, len(t.keys))
	for k := range t.keys {
		keys[k] = fmt.Sprintf("%s = %s", t.keys[k], t.subKeys[k])
	}
	what := joinName(t.kind)
	switch {
	case t.scalar && len(t.keys) > 0:
		what = "LEFT OUTER (correlated scalar subquery)"
	case t.scalar:
		what = "CROSS (scalar subquery)"
	}
	line := fmt.Sprintf("HashJoin: %s for %s", what, t.text)
	if len(keys) > 0 {
		line += ", keys [" + strings.Join(keys, ", ") + "]"
	}
	if t.rangeCol != "" {
		line += ", build key range filters the scan on " + t.rangeCol
	}
	if t.residual != nil {
		line += fmt.Sprintf(", residual %s", t.residual)
	}
	add(d, "%s, build right, estimated rows %d", line, t.sub.estRows())
	explainTops(add, d+1, tops[:len(tops)-1], from)
	t.sub.explainTree(add, d+1)
}

// oneRowPlan is the FROM of a block without one.
type oneRowPlan struct{}

func (oneRowPlan) build(*exec.Env) (exec.Operator, error) { return oneRow(), nil }
func (oneRowPlan) explainTree(add explainFunc, d int)     { add(d, "OneRow") }
func (oneRowPlan) outCols() exec.Schema                   { return exec.Schema{} }
func (oneRowPlan) estRows() int64                         { return 1 }

// scalarOp yields the one row of a scalar subquery: a row of NULL when
// the subquery has none, an error when it has more.
type scalarOp struct {
	in   exec.Operator
	mem  memory.Allocator
	done bool
}

func (o *scalarOp) Schema() exec.Schema { return o.in.Schema() }

func (o *scalarOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if o.done {
		return nil, nil
	}
	o.done = true
	defer o.in.Close()
	var row arrow.RecordBatch
	for {
		b, err := o.in.Next(ctx)
		if err != nil {
			if row != nil {
				row.Release()
			}
			return nil, err
		}
		if b == nil {
			break
		}
		if b.NumRows() == 0 {
			// An empty batch is no row: kept, it would count as the one
			// row (and, alone, join the outer rows with nothing).
			b.Release()
			continue
		}
		if row != nil || b.NumRows() > 1 {
			b.Release()
			if row != nil {
				row.Release()
			}
			return nil, invalidf("Subquery returns more than 1 row")
		}
		row = b
	}
	if row != nil {
		return row, nil
	}
	s := o.in.Schema()
	cols := make([]arrow.Array, len(s))
	for i, c := range s {
		cols[i] = array.MakeArrayOfNull(o.mem, c.Type.Arrow(), 1)
	}
	b := array.NewRecordBatch(s.Arrow(), cols, 1)
	for _, c := range cols {
		c.Release()
	}
	return b, nil
}

func (o *scalarOp) Close() {
	o.done = true
	o.in.Close()
}

// checkGroupType rejects the types a join's build groups cannot key (as
// exec's hash tables cannot).
func checkGroupType(t schema.Type) error {
	switch t.Kind {
	case schema.Boolean, schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt, schema.Float,
		schema.Double, schema.Decimal, schema.String, schema.Varchar, schema.Char, schema.Date,
		schema.Datetime, schema.TimestampTZ, schema.TimestampNS:
		return nil
	}
	return notYet("a group key of type " + t.String())
}

// project replaces column col of op's output, the group ids, with the
// build column's values.
func (g *groupValues) project(env *exec.Env, op exec.Operator, col int) (exec.Operator, error) {
	s := op.Schema()
	exprs := make([]exec.Expr, len(s))
	names := make([]string, len(s))
	for i, c := range s {
		names[i] = c.Name
		exprs[i] = &exec.ColumnRef{Index: i, Name: c.Name, Typ: c.Type}
	}
	exprs[col] = &exec.GroupValue{Dict: g.dict, Col: 0, X: exprs[col], Typ: g.typ, Name: g.name}
	return exec.NewProject(env, op, exprs, names)
}

// correlatedScalar plans (SELECT agg(...) FROM ... WHERE c) correlated on
// equalities of c as a LEFT join on them with SELECT keys, agg(...) FROM
// ... WHERE (the rest of c) GROUP BY keys: one row per key, so an outer
// row meets at most one; an outer row that meets none takes the
// aggregate of no row (NULL, or 0 for count). (SELECT x FROM ... WHERE c)
// of no aggregate selects min(x) and count(*) per key the same way, and
// an outer row whose key has more than one row fails (oneRowOp).
func (p *relPlanner) correlatedScalar(outer *scope, st *parser.Select, e *parser.SubqueryExpr) (*topJoin, error) {
	if len(st.Items) != 1 || st.Items[0].Star {
		if len(st.Items) != 1 {
			return nil, invalidf("Operand should contain 1 column(s)")
		}
		return nil, notYet("a correlated scalar subquery of *")
	}
	item := st.Items[0].Expr
	agg, ok := item.(*parser.FuncCall)
	isAgg := ok && parser.IsAggregate(agg.Name)
	// lookup is a subquery of no aggregate: (SELECT country FROM u WHERE
	// u.uid = e.uid), at most one row per outer row.
	lookup := !isAgg && !parser.ContainsAggregate(item)
	if !(isAgg || lookup) || st.From == nil || len(st.GroupBy) > 0 || st.Having != nil || st.Distinct ||
		st.Limit != nil || len(st.With) > 0 || len(st.Windows) > 0 || parser.ContainsWindow(item) {
		return nil, notYet("a correlated scalar subquery other than one aggregate (count, sum, min, max, avg) or one value, without GROUP BY, HAVING, DISTINCT, LIMIT, WITH or windows")
	}
	inner, err := p.fromScope(st)
	if err != nil {
		return nil, err
	}
	isInner, isOuter := p.sides(outer, inner)
	if !isInner(item) {
		return nil, notYet("a correlated scalar subquery whose select item reads the outer query")
	}
	var own, innerKeys, outerKeys []parser.Expr
	for _, c := range conjuncts(st.Where) {
		if parser.ContainsSubquery(c) || isInner(c) {
			own = append(own, c)
			continue
		}
		if in, out, ok := correlatedEq(c, isInner, isOuter); ok {
			innerKeys, outerKeys = append(innerKeys, in), append(outerKeys, out)
			continue
		}
		return nil, notYet("a correlated scalar subquery correlated other than on equalities")
	}
	if len(innerKeys) == 0 {
		return nil, notYet("a correlated scalar subquery correlated other than on equalities")
	}
	q := *st
	q.Where = nil
	if len(own) > 0 {
		q.Where = andAll(own)
	}
	q.Items, q.GroupBy, q.Distinct, q.OrderBy = nil, nil, false, nil
	for _, k := range innerKeys {
		q.Items = append(q.Items, &parser.SelectItem{Expr: k, Text: parser.FormatExpr(k)})
		q.GroupBy = append(q.GroupBy, k)
	}
	if lookup {
		// The value and the number of rows per key: more than one is the
		// error a scalar subquery gives (oneRowOp).
		q.Items = append(q.Items, &parser.SelectItem{Expr: &parser.FuncCall{Name: "min", Args: []parser.Expr{item}}, Text: parser.FormatExpr(item)},
			&parser.SelectItem{Expr: &parser.FuncCall{Name: "count", Star: true}, Text: "count(*)"})
	} else {
		q.Items = append(q.Items, &parser.SelectItem{Expr: item, Text: parser.FormatExpr(item)})
	}
	sub, err := p.planQuery(&q)
	if err != nil {
		return nil, err
	}
	cols := sub.outCols()
	tj := &topJoin{kind: exec.LeftJoin, sub: sub, scalar: true, text: "(" + parser.FormatQuery(e.Query) + ")",
		valueType: cols[len(innerKeys)].Type, valueName: cols[len(innerKeys)].Name, count: isAgg && isCountAgg(agg.Name),
		lookup: lookup}
	if err := p.correlationKeys(outer, tj, outerKeys, cols); err != nil {
		return nil, err
	}
	return tj, nil
}

// keyedSides computes t's keys beside op (the probe side) and sub (the
// build side) for their hash join; on an error both are closed.
func keyedSides(env *exec.Env, op, sub exec.Operator, t *topJoin) (probe, build exec.Operator, pk, bk []int, err error) {
	probe, pk, err = withKeys(env, op, t.keys)
	if err != nil {
		sub.Close()
		return nil, nil, nil, nil, err
	}
	build, bk, err = withKeys(env, sub, t.subKeys)
	if err != nil {
		probe.Close()
		return nil, nil, nil, nil, err
	}
	return probe, build, pk, bk, nil
}

// correlatedScalarJoin joins op with the grouped subquery sub of a
// correlated scalar subquery (correlatedScalar): op's columns, then the
// aggregate's.
func correlatedScalarJoin(env *exec.Env, op, sub exec.Operator, t *topJoin) (exec.Operator, error) {
	width := len(op.Schema())
	probe, build, pk, bk, err := keyedSides(env, op, sub, t)
	if err != nil {
		return nil, err
	}
	pw := len(probe.Schema())
	j, err := exec.NewHashJoinOutput(env, probe, build, exec.LeftJoin, pk, bk, nil, nil)
	if err != nil {
		probe.Close()
		build.Close()
		return nil, err
	}
	var joined exec.Operator = j
	if t.lookup {
		joined = &oneRowOp{in: j, col: pw + len(t.keys) + 1}
	}
	s := j.Schema()
	exprs := make([]exec.Expr, width+1)
	names := make([]string, width+1)
	for i := range width {
		exprs[i] = &exec.ColumnRef{Index: i, Name: s[i].Name, Typ: s[i].Type}
		names[i] = s[i].Name
	}
	var v exec.Expr = &exec.ColumnRef{Index: pw + len(t.keys), Name: t.valueName, Typ: t.valueType}
	if t.count {
		v = &exec.Coalesce{Args: []exec.Expr{v, &exec.Literal{Typ: t.valueType, Val: schema.IntVal(0), Text: "0"}}, Typ: t.valueType}
	}
	exprs[width], names[width] = v, t.valueName
	out, err := exec.NewProject(env, joined, exprs, names)
	if err != nil {
		joined.Close()
		return nil, err
	}
	return out, nil
}

// oneRowOp fails a correlated scalar subquery of one value when an outer
// row meets more than one row: column col of its input is the number of
// rows the subquery has for the row's keys (NULL when none).
type oneRowOp struct {
	in  exec.Operator
	col int
}

func (o *oneRowOp) Schema() exec.Schema { return o.in.Schema() }
func (o *oneRowOp) Close()              { o.in.Close() }

func (o *oneRowOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	b, err := o.in.Next(ctx)
	if err != nil || b == nil {
		return b, err
	}
	n, ok := b.Column(o.col).(*array.Int64)
	if !ok {
		b.Release()
		return nil, rowEnginef("the row count of a correlated scalar subquery is %s", b.Column(o.col).DataType())
	}
	for i := 0; i < n.Len(); i++ {
		if n.IsValid(i) && n.Value(i) > 1 {
			b.Release()
			return nil, invalidf("Subquery returns more than 1 row")
		}
	}
	return b, nil
}
