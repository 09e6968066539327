package sql

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
)

// The relational planner runs the query shapes beyond one table:
// FROM with joins and derived tables, WITH, subqueries in expressions and
// set operations. It plans every table reference onto a scan at the
// statement's one now (so the TTL rule applies per table), pushes each
// WHERE conjunct as far down as SQL allows (into a scan's filter, where
// zone maps skip pages, but never into the NULL-extended side of an outer
// join), turns the equalities of ON into hash keys and builds on the side
// with fewer estimated rows.

// relPlan is a planned relation: it builds the operators that produce its
// rows and explains them.
type relPlan interface {
	build(env *exec.Env) (exec.Operator, error)
	// explainTree writes the operators at depth and their inputs below.
	explainTree(add explainFunc, depth int)
	// outCols are the names and types of its columns.
	outCols() exec.Schema
	// estRows is the planner's estimate of its row count.
	estRows() int64
}

type explainFunc func(depth int, format string, args ...any)

// relPlanner plans one statement's query blocks; ctes are the common table
// expressions in scope, innermost last.
type relPlanner struct {
	s    *Session
	env  *stmtEnv
	ctes []*cteDef
	// outerRefs are names of an outer query moved into a subquery's
	// conditions (correlatedIn): they resolve in the outer query only.
	outerRefs map[*parser.ColumnRef]bool
}

// cteDef is one WITH entry; each use plans its query again (it is not
// recursive), in the scope of the CTEs defined before it.
type cteDef struct {
	name  string
	cols  []string
	query parser.QueryExpr
	outer []*cteDef
}

// analytic turns an error of the vectorised compiler into what a query
// of these shapes reports: the resolution or typing error
// itself, or the construct the vectorised engine does not compute yet.
func analytic(err error) error {
	var re *rowEngineError
	if !errors.As(err, &re) {
		return err
	}
	if re.err != nil {
		return re.err
	}
	return notYet(re.reason + " in a query with joins, subqueries, set operations or WITH")
}

// needsRel reports whether a query block needs the relational planner.
func (p *relPlanner) needsRel(st *parser.Select) bool {
	if !st.IsSimple() {
		return true
	}
	return st.From != nil && p.cte(st.From.Table) != nil
}

// cte returns the CTE a table name refers to, or nil.
func (p *relPlanner) cte(t parser.TableName) *cteDef {
	if t.DB != "" {
		return nil
	}
	for i := len(p.ctes) - 1; i >= 0; i-- {
		if strings.EqualFold(p.ctes[i].name, t.Name) {
			return p.ctes[i]
		}
	}
	return nil
}

// planQuery plans a query expression (a query block or a set operation)
// with its WITH.
func (p *relPlanner) planQuery(q parser.QueryExpr) (relPlan, error) {
	var with []*parser.CTE
	switch q := q.(type) {
	case *parser.Select:
		with = q.With
	case *parser.SetOp:
		with = q.With
	}
	saved := p.ctes
	defer func() { p.ctes = saved }()
	p.pushWith(with)
	switch q := q.(type) {
	case *parser.Select:
		return p.planBlock(q)
	case *parser.SetOp:
		return p.planSetOp(q)
	}
	return nil, invalidf("unknown query %T", q)
}

// pushWith brings the CTEs of a WITH into scope, each seeing those
// before it.
func (p *relPlanner) pushWith(with []*parser.CTE) {
	for _, c := range with {
		p.ctes = append(p.ctes[:len(p.ctes):len(p.ctes)], &cteDef{name: c.Name, cols: c.Columns, query: c.Query, outer: p.ctes})
	}
}

// planBlock plans one query block: the plain single-table shape through
// planSelect, any other through planRelSelect.
func (p *relPlanner) planBlock(st *parser.Select) (relPlan, error) {
	if p.needsRel(st) {
		return p.planRelSelect(st)
	}
	sp, err := p.s.planSelectSimple(p.env, st)
	if err != nil {
		return nil, analytic(err)
	}
	return sp, nil
}

// relNode is one node of a FROM tree: a table scan, a derived table (or
// CTE), or a join of two nodes.
type relNode struct {
	// full is every column the reference offers (a table's visible columns
	// and __TTL__, a derived table's output), with its qualifiers; cols are
	// those the statement uses, the node's output, in full's order.
	full []column
	cols []column
	// leaves are the indices of the table references below, in FROM order.
	leaves []int
	est    int64
	// pending are the conjuncts placed on the node: a leaf's filter, a
	// join's condition beside its ON.
	pending []parser.Expr

	// A table scan.
	tbl       *table.Table
	tscope    *scope
	tableName string
	req       query.Request
	filter    exec.Expr
	// A derived table.
	sub   relPlan
	alias string
	// A join.
	kind        parser.JoinKind
	left, right *relNode
	on          []parser.Expr
	using       []string
	ekind       exec.JoinKind
	swap        bool
	lkeys       []exec.Expr
	rkeys       []exec.Expr
	keyText     []string
	residual    exec.Expr
	// outNeed, when set, are the only columns of cols the join outputs,
	// by their index in cols (see selectPlan.pruneFrom).
	outNeed []int
	// coalesced are a FULL JOIN's USING columns, COALESCE(left, right),
	// the last of full and of cols; coalesceX computes them over the
	// join's left and right columns.
	coalesced []usingCol
	coalesceX []exec.Expr
	// groups, when set, numbers the build rows for the aggregation above
	// (selectPlan.buildGroup): the join outputs the ids after outNeed.
	groups *exec.GroupDict
	// rangeCol, when set, is the probe scan's key column that the build
	// keys' range filters once the build side is held (rangeFilter).
	rangeCol string
	// senv is a table leaf's statement, for the filters pushed at run
	// time.
	senv *stmtEnv
}

// usingCol is a FULL JOIN's USING column: the two columns it coalesces.
type usingCol struct {
	name        string
	left, right column
}

func (n *relNode) isLeaf() bool { return n.left == nil }

// fromPlan is a planned FROM clause.
type fromPlan struct {
	root   *relNode
	leaves []*relNode
	// scope resolves names to root's output columns.
	scope *scope
	// above are the WHERE conjuncts no join or scan could take.
	above []parser.Expr
	// full resolves names to every column the references offer, read or
	// not: what tells a correlated subquery's outer names from unknown
	// ones.
	full *scope
}

// leafScope is the scope of a table reference's columns.
func leafScope(cols []column, name string) *scope {
	return &scope{cols: cols, multi: true, tableName: name}
}

// planTree builds the node of a FROM reference; its leaves are appended to
// fp.leaves.
func (p *relPlanner) planTree(fp *fromPlan, ref *parser.TableRef) (*relNode, error) {
	if ref.IsJoin() {
		l, err := p.planTree(fp, ref.Join.Left)
		if err != nil {
			return nil, err
		}
		r, err := p.planTree(fp, ref.Join.Right)
		if err != nil {
			return nil, err
		}
		n := &relNode{kind: ref.Join.Kind, left: l, right: r, using: ref.Join.Using}
		n.leaves = append(append([]int(nil), l.leaves...), r.leaves...)
		n.full = append(append([]column(nil), l.full...), r.full...)
		if ref.Join.On != nil {
			n.on = conjuncts(ref.Join.On)
		}
		for _, u := range ref.Join.Using {
			if err := p.using(n, u); err != nil {
				return nil, err
			}
		}
		return n, nil
	}
	n := &relNode{leaves: []int{len(fp.leaves)}}
	fp.leaves = append(fp.leaves, n)
	if ref.Func != nil {
		return p.tableFuncNode(n, ref)
	}
	if ref.IsSubquery() {
		sub, err := p.planQuery(ref.Subquery)
		if err != nil {
			return nil, err
		}
		n.sub, n.alias = sub, ref.Alias
		n.est = sub.estRows()
		for _, c := range sub.outCols() {
			n.full = append(n.full, column{name: c.Name, typ: c.Type, quals: []string{ref.Alias}})
		}
		return n, nil
	}
	if c := p.cte(ref.Table); c != nil {
		saved := p.ctes
		p.ctes = c.outer
		sub, err := p.planQuery(c.query)
		p.ctes = saved
		if err != nil {
			return nil, err
		}
		out := sub.outCols()
		if c.cols != nil && len(c.cols) != len(out) {
			return nil, invalidf("WITH query name '%s' specifies %d columns for a query of %d", c.name, len(c.cols), len(out))
		}
		alias := ref.Alias
		if alias == "" {
			alias = c.name
		}
		n.sub, n.alias = sub, alias
		n.est = sub.estRows()
		for i, col := range out {
			name := col.Name
			if c.cols != nil {
				name = c.cols[i]
			}
			n.full = append(n.full, column{name: name, typ: col.Type, quals: []string{alias}})
		}
		return n, nil
	}
	tbl, db, name, err := p.s.openTable(ref.Table)
	if err != nil {
		return nil, err
	}
	sc := p.s.tableScope(tbl.SharedDefinition(), policyOf(tbl), db, name, ref.Alias)
	n.tbl, n.tscope, n.tableName = tbl, sc, db+"."+name
	for _, c := range sc.cols {
		c.quals, c.db = sc.qualifiers, db
		n.full = append(n.full, c)
	}
	n.est, err = estimateRows(tbl, p.env)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// estimateRows estimates a table's live rows at the statement's now from
// its rowsets' metadata: rows written, less those expired or deleted.
func estimateRows(tbl *table.Table, env *stmtEnv) (int64, error) {
	// An estimate from the metadata in memory: an exact count of expired
	// rows would read the __TTL__ pages of the whole table per statement.
	return tbl.EstimateRows(env.now)
}

// using adds the equality of a USING column to a join's condition and
// hides one of the two columns from unqualified names: the right one,
// except in a RIGHT JOIN, where the right side's value is the one kept.
func (p *relPlanner) using(n *relNode, name string) error {
	find := func(cols []column) (int, error) {
		at := -1
		for i, c := range cols {
			if !c.ttl && !c.merged && strings.EqualFold(c.name, name) {
				if at >= 0 {
					return 0, invalidf("Column '%s' in from clause is ambiguous", name)
				}
				at = i
			}
		}
		if at < 0 {
			return 0, notFoundf("Unknown column '%s' in 'from clause'", name)
		}
		return at, nil
	}
	li, err := find(n.left.full)
	if err != nil {
		return err
	}
	ri, err := find(n.right.full)
	if err != nil {
		return err
	}
	lc, rc := n.left.full[li], n.right.full[ri]
	ref := func(c column) *parser.ColumnRef {
		r := &parser.ColumnRef{Name: c.name}
		if len(c.quals) > 0 {
			r.Table = c.quals[0]
		}
		return r
	}
	n.on = append(n.on, &parser.BinaryExpr{Op: parser.OpEq, L: ref(lc), R: ref(rc)})
	if n.kind == parser.JoinFull {
		// Either side may be the NULL-extended one: the column is
		// COALESCE(left, right), and both sides answer only to their
		// qualifiers.
		n.full[li].merged = true
		n.full[len(n.left.full)+ri].merged = true
		lc.merged, rc.merged = true, true
		n.coalesced = append(n.coalesced, usingCol{name: lc.name, left: lc, right: rc})
		n.full = append(n.full, column{name: lc.name, typ: unify(lc.typ, rc.typ)})
		return nil
	}
	if n.kind == parser.JoinRight {
		n.full[li].merged = true
	} else {
		n.full[len(n.left.full)+ri].merged = true
	}
	return nil
}

// resolveMulti resolves a name in the scope of several table references.
func (sc *scope) resolveMulti(ref *parser.ColumnRef) (int, error) {
	where := "field list"
	if ref.Table != "" {
		where = ref.Table
	}
	found := -1
	for i, c := range sc.cols {
		if ref.Table != "" {
			ok := false
			for _, q := range c.quals {
				if strings.EqualFold(q, ref.Table) {
					ok = true
				}
			}
			if !ok || (ref.DB != "" && ref.DB != c.db) {
				continue
			}
		} else if c.merged {
			continue
		}
		// A table's hidden __TTL__ answers to both its names when shown; a
		// column of a file or subquery that is called so is an ordinary one.
		if schema.IsTTLName(ref.Name) && c.ttl {
			if !sc.showHidden {
				continue
			}
		} else if c.ttl || !strings.EqualFold(c.name, ref.Name) {
			continue
		}
		if found >= 0 {
			return 0, invalidf("Column '%s' in %s is ambiguous", parser.FormatExpr(ref), where)
		}
		found = i
	}
	if found < 0 {
		if ref.Table != "" {
			return 0, notFoundf("Unknown column '%s' in '%s'", parser.FormatExpr(ref), where)
		}
		return 0, notFoundf("Unknown column '%s' in 'field list'", ref.Name)
	}
	return found, nil
}

// colRefs returns the column references of e outside subqueries.
func colRefs(e parser.Expr) []*parser.ColumnRef {
	var out []*parser.ColumnRef
	parser.Walk(e, func(x parser.Expr) bool {
		if r, ok := x.(*parser.ColumnRef); ok {
			out = append(out, r)
		}
		return true
	})
	return out
}

// leafSet returns the table references an expression reads, by their
// index in FROM order (leafOf maps a full-scope slot to them: one, or
// two for a FULL JOIN's USING column).
func leafSet(e parser.Expr, sc *scope, leafOf [][]int) (map[int]bool, error) {
	set := map[int]bool{}
	for _, r := range colRefs(e) {
		slot, err := sc.resolve(r)
		if err != nil {
			return nil, err
		}
		for _, l := range leafOf[slot] {
			set[l] = true
		}
	}
	return set, nil
}

// slotLeaves returns, per column of n.full, the table references (by
// FROM index) it reads, and marks in sources, per coalesced column, the
// slots of the two columns it reads.
func slotLeaves(n *relNode, off int, sources map[int][2]int) [][]int {
	if n.isLeaf() {
		out := make([][]int, len(n.full))
		for i := range out {
			out[i] = n.leaves
		}
		return out
	}
	out := append(slotLeaves(n.left, off, sources), slotLeaves(n.right, off+len(n.left.full), sources)...)
	for _, u := range n.coalesced {
		var src [2]int
		for i, f := range n.full[:len(n.left.full)+len(n.right.full)] {
			if sameCol(f, u.left) {
				src[0] = off + i
			}
			if sameCol(f, u.right) {
				src[1] = off + i
			}
		}
		sources[off+len(out)] = src
		out = append(out, append(append([]int(nil), out[src[0]-off]...), out[src[1]-off]...))
	}
	return out
}

func subset(a map[int]bool, leaves []int) bool {
	for l := range a {
		found := false
		for _, x := range leaves {
			if x == l {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// planFrom plans the FROM clause of st. used lists every expression of
// the statement whose columns must be read; stars asks for every visible
// column of the references they name.
func (p *relPlanner) planFrom(st *parser.Select, used []parser.Expr) (*fromPlan, error) {
	fp := &fromPlan{}
	root, err := p.planTree(fp, st.From)
	if err != nil {
		return nil, err
	}
	fp.root = root
	full := &scope{cols: root.full, multi: true, showHidden: p.s.showHidden}
	sources := map[int][2]int{}
	leafOf := slotLeaves(root, 0, sources)
	// Columns used, by full slot.
	need := make([]bool, len(root.full))
	var walkOn func(n *relNode)
	walkOn = func(n *relNode) {
		if n.isLeaf() {
			return
		}
		walkOn(n.left)
		walkOn(n.right)
		used = append(used, n.on...)
	}
	walkOn(root)
	for _, e := range used {
		for _, r := range colRefs(e) {
			slot, err := full.resolve(r)
			if err != nil {
				return nil, err
			}
			need[slot] = true
		}
	}
	// GROUP BY, HAVING and ORDER BY read the relation's columns too (a
	// column named only there must stay in its scan); their names that
	// are not columns are select-list aliases, resolved above.
	late := append([]parser.Expr(nil), st.GroupBy...)
	if st.Having != nil {
		late = append(late, st.Having)
	}
	for _, o := range st.OrderBy {
		late = append(late, o.Expr)
	}
	for _, e := range late {
		for _, r := range colRefs(e) {
			if slot, err := full.resolve(r); err == nil {
				need[slot] = true
			}
		}
	}
	fp.full = full
	// The outer columns a correlated EXISTS, IN or scalar subquery names
	// are read too; a name that is not the outer query's is left to the
	// subquery.
	var subs []parser.QueryExpr
	for _, conj := range conjuncts(st.Where) {
		if u, ok := conj.(*parser.UnaryExpr); ok && u.Op == parser.OpNot {
			conj = u.X
		}
		switch x := conj.(type) {
		case *parser.ExistsExpr:
			subs = append(subs, x.Query)
		case *parser.InSubquery:
			subs = append(subs, x.Query)
		}
	}
	scalars := []parser.Expr{st.Where}
	for _, it := range st.Items {
		scalars = append(scalars, it.Expr)
	}
	for _, e := range scalars {
		if e == nil {
			continue
		}
		parser.Walk(e, func(x parser.Expr) bool {
			if sq, ok := x.(*parser.SubqueryExpr); ok {
				subs = append(subs, sq.Query)
				return false
			}
			return true
		})
	}
	for _, q := range subs {
		if sub, ok := q.(*parser.Select); ok {
			// A name the subquery's own FROM resolves is its own.
			inner := &scope{multi: true}
			if sub.From != nil {
				if sc, err := p.fromScope(sub); err == nil {
					inner = sc
				}
			}
			sub.WalkExprs(func(e parser.Expr) {
				for _, r := range colRefs(e) {
					if _, err := inner.resolve(r); err == nil {
						continue
					}
					if slot, err := full.resolve(r); err == nil {
						need[slot] = true
					}
				}
			})
		}
	}
	for _, it := range st.Items {
		if !it.Star {
			continue
		}
		any := false
		for i, c := range root.full {
			if c.ttl && !p.s.showHidden {
				continue
			}
			if it.StarTable != "" && !hasQual(c, it.StarTable) {
				continue
			}
			need[i], any = true, true
		}
		if !any {
			return nil, notFoundf("Unknown table '%s'", it.StarTable)
		}
	}
	// A FULL JOIN's USING column is always computed: its sources are read.
	for _, src := range sources {
		need[src[0]], need[src[1]] = true, true
	}
	// Each leaf reads its used columns (at least one, so that its batches
	// carry their row count through every operator).
	var leafCols func(n *relNode, off int)
	leafCols = func(n *relNode, off int) {
		if !n.isLeaf() {
			leafCols(n.left, off)
			leafCols(n.right, off+len(n.left.full))
			return
		}
		for i, c := range n.full {
			if need[off+i] {
				n.cols = append(n.cols, c)
			}
		}
		if len(n.cols) == 0 && len(n.full) > 0 {
			n.cols = append(n.cols, n.full[0])
		}
	}
	leafCols(root, 0)
	var layout func(n *relNode)
	layout = func(n *relNode) {
		if n.isLeaf() {
			return
		}
		layout(n.left)
		layout(n.right)
		n.cols = append(append([]column(nil), n.left.cols...), n.right.cols...)
		n.cols = append(n.cols, n.full[len(n.left.full)+len(n.right.full):]...)
		// USING hides the same column in the output.
		for i := range n.cols {
			for _, f := range n.full {
				if f.merged && sameCol(f, n.cols[i]) {
					n.cols[i].merged = true
				}
			}
		}
	}
	layout(root)
	fp.scope = &scope{cols: root.cols, multi: true, showHidden: p.s.showHidden}

	// WHERE conjuncts go as far down as they may.
	for _, conj := range conjuncts(st.Where) {
		if parser.ContainsSubquery(conj) || parser.ContainsAggregate(conj) || parser.ContainsWindow(conj) {
			fp.above = append(fp.above, conj)
			continue
		}
		set, err := leafSet(conj, full, leafOf)
		if err != nil {
			return nil, err
		}
		if len(set) == 0 || !place(root, conj, set) {
			fp.above = append(fp.above, conj)
		}
	}
	// ON conjuncts of one side go down too where SQL allows it.
	var pushOn func(n *relNode) error
	pushOn = func(n *relNode) error {
		if n.isLeaf() {
			return nil
		}
		var keep []parser.Expr
		for _, conj := range n.on {
			set, err := leafSet(conj, full, leafOf)
			if err != nil {
				return err
			}
			switch {
			case len(set) > 0 && subset(set, n.right.leaves) && (n.kind == parser.JoinInner || n.kind == parser.JoinLeft):
				place(n.right, conj, set)
			case len(set) > 0 && subset(set, n.left.leaves) && (n.kind == parser.JoinInner || n.kind == parser.JoinRight):
				place(n.left, conj, set)
			default:
				keep = append(keep, conj)
			}
		}
		n.on = keep
		if err := pushOn(n.left); err != nil {
			return err
		}
		return pushOn(n.right)
	}
	if err := pushOn(root); err != nil {
		return nil, err
	}
	if err := p.compileTree(root, leafOf, full); err != nil {
		return nil, err
	}
	return fp, nil
}

func hasQual(c column, q string) bool {
	for _, x := range c.quals {
		if strings.EqualFold(x, q) {
			return true
		}
	}
	return false
}

func sameCol(a, b column) bool {
	return a.name == b.name && a.ttl == b.ttl && len(a.quals) == len(b.quals) && (len(a.quals) == 0 || a.quals[0] == b.quals[0]) && a.db == b.db
}

// place puts a conjunct reading the leaves of set on the lowest node that
// may evaluate it, and reports whether one could: never below the
// NULL-extended side of an outer join, whose rows the join makes.
func place(n *relNode, conj parser.Expr, set map[int]bool) bool {
	if n.isLeaf() {
		n.pending = append(n.pending, conj)
		return true
	}
	inner := n.kind == parser.JoinInner || n.kind == parser.JoinCross || n.kind == parser.JoinComma
	switch {
	case subset(set, n.left.leaves) && (inner || n.kind == parser.JoinLeft):
		return place(n.left, conj, set)
	case subset(set, n.right.leaves) && (inner || n.kind == parser.JoinRight):
		return place(n.right, conj, set)
	case inner:
		n.pending = append(n.pending, conj)
		return true
	}
	return false
}

// sideKeys folds the ON conditions of rest that read one side only (or
// neither) into the join's keys: a pair matches when its keys are equal
// and the conditions hold, so the left keys become CASE WHEN (the left
// conditions) THEN key END, NULL (matching nothing) where they fail, and
// the right keys likewise; a join without equalities gets the key 1 = 1
// to carry them. Left in the residual, such a condition would be
// evaluated on every pair of a nested loop: LEFT JOIN u ON e.id < 0 over
// 50k and 1M rows ran for hours, and LEFT JOIN u ON 1 = 0 too. It returns
// the conditions that stay in the residual.
func (p *relPlanner) sideKeys(n *relNode, ls, rs, full *scope, leafOf [][]int, lxs, rxs, rest []parser.Expr) ([]parser.Expr, error) {
	var left, right, keep []parser.Expr
	for _, c := range rest {
		if parser.ContainsSubquery(c) || parser.ContainsAggregate(c) || parser.ContainsWindow(c) {
			keep = append(keep, c)
			continue
		}
		set, err := leafSet(c, full, leafOf)
		if err != nil {
			return nil, err
		}
		switch {
		case subset(set, n.left.leaves):
			left = append(left, c)
		case subset(set, n.right.leaves):
			right = append(right, c)
		default:
			keep = append(keep, c)
		}
	}
	if len(left) == 0 && len(right) == 0 {
		return rest, nil
	}
	if len(lxs) == 0 {
		lxs, rxs = []parser.Expr{&parser.IntLit{Val: 1}}, []parser.Expr{&parser.IntLit{Val: 1}}
	}
	when := func(conds []parser.Expr, x parser.Expr) parser.Expr {
		if len(conds) == 0 {
			return x
		}
		return &parser.CaseExpr{Whens: []*parser.When{{Cond: andAll(conds), Result: x}}}
	}
	n.lkeys, n.rkeys, n.keyText = nil, nil, nil
	for i := range lxs {
		lx, rx := when(left, lxs[i]), when(right, rxs[i])
		lk, rk, err := p.joinKeys(ls, rs, lx, rx)
		if err != nil {
			return nil, err
		}
		if lk == nil {
			// The keys were comparable before the CASE: it changes no type.
			return nil, rowEnginef("join key %s = %s", parser.FormatExpr(lx), parser.FormatExpr(rx))
		}
		n.lkeys = append(n.lkeys, lk)
		n.rkeys = append(n.rkeys, rk)
		n.keyText = append(n.keyText, parser.FormatExpr(lx)+" = "+parser.FormatExpr(rx))
	}
	return keep, nil
}

// compileTree compiles the filters, keys and residuals of the tree.
func (p *relPlanner) compileTree(n *relNode, leafOf [][]int, full *scope) error {
	if n.isLeaf() {
		return p.compileLeaf(n)
	}
	if err := p.compileTree(n.left, leafOf, full); err != nil {
		return err
	}
	if err := p.compileTree(n.right, leafOf, full); err != nil {
		return err
	}
	conds := append(append([]parser.Expr(nil), n.on...), n.pending...)
	kind := n.kind
	if (kind == parser.JoinCross || kind == parser.JoinComma) && len(conds) > 0 {
		kind = parser.JoinInner
	}
	ls := &scope{cols: n.left.cols, multi: true, showHidden: p.s.showHidden}
	rs := &scope{cols: n.right.cols, multi: true, showHidden: p.s.showHidden}
	var rest []parser.Expr
	// The equalities taken as keys, as written, for sideKeys.
	var lxs, rxs []parser.Expr
	for _, conj := range conds {
		b, ok := conj.(*parser.BinaryExpr)
		if ok && b.Op == parser.OpEq {
			lset, err := leafSet(b.L, full, leafOf)
			if err != nil {
				return err
			}
			rset, err := leafSet(b.R, full, leafOf)
			if err != nil {
				return err
			}
			lx, rx := b.L, b.R
			if len(lset) > 0 && len(rset) > 0 && subset(rset, n.left.leaves) && subset(lset, n.right.leaves) {
				lx, rx, lset, rset = rx, lx, rset, lset
			}
			if len(lset) > 0 && len(rset) > 0 && subset(lset, n.left.leaves) && subset(rset, n.right.leaves) {
				lk, rk, err := p.joinKeys(ls, rs, lx, rx)
				if err != nil {
					return err
				}
				if lk != nil {
					n.lkeys = append(n.lkeys, lk)
					n.rkeys = append(n.rkeys, rk)
					n.keyText = append(n.keyText, parser.FormatExpr(lx)+" = "+parser.FormatExpr(rx))
					lxs, rxs = append(lxs, lx), append(rxs, rx)
					continue
				}
			}
		}
		rest = append(rest, conj)
	}
	var err error
	if rest, err = p.sideKeys(n, ls, rs, full, leafOf, lxs, rxs, rest); err != nil {
		return err
	}
	switch kind {
	case parser.JoinInner:
		n.ekind = exec.InnerJoin
	case parser.JoinLeft:
		n.ekind = exec.LeftJoin
	case parser.JoinRight:
		n.ekind = exec.RightJoin
	case parser.JoinFull:
		n.ekind = exec.FullJoin
	default:
		n.ekind = exec.CrossJoin
	}
	// The build side (exec's right input) is the smaller one.
	n.swap = n.left.est < n.right.est && n.ekind != exec.CrossJoin
	if n.ekind == exec.CrossJoin {
		// A nested loop holds its right input: the smaller one too.
		n.swap = n.left.est < n.right.est
	}
	if len(n.lkeys) == 1 {
		probe, pk, kind := n.left, n.lkeys[0], n.ekind
		if n.swap {
			probe, pk = n.right, n.rkeys[0]
			if kind == exec.LeftJoin {
				kind = exec.RightJoin
			}
		}
		n.rangeCol = rangeColumn(probe, pk, kind)
	}
	if len(rest) > 0 {
		probe, build := n.left.cols, n.right.cols
		probeKeys := n.lkeys
		if n.swap {
			probe, build, probeKeys = build, probe, n.rkeys
		}
		cols := append(append([]column(nil), probe...), build...)
		c := newVCompiler(p.env, &scope{cols: cols, multi: true, showHidden: p.s.showHidden})
		x, err := c.compile(andAll(rest))
		if err == nil {
			x, err = c.asBool(x)
		}
		if err != nil {
			return analytic(err)
		}
		// The probe side's computed keys (withKeys) come between its
		// columns and the build side's.
		extra := 0
		for _, k := range probeKeys {
			if _, ok := k.(*exec.ColumnRef); !ok {
				extra++
			}
		}
		for slot, refs := range c.refs {
			for _, r := range refs {
				r.Index = slot
				if slot >= len(probe) {
					r.Index += extra
				}
			}
		}
		n.residual = x
	}
	lw := len(n.left.cols)
	for _, u := range n.coalesced {
		at := func(cols []column, c column) int {
			for i, x := range cols {
				if sameCol(x, c) {
					return i
				}
			}
			return -1
		}
		li, ri := at(n.left.cols, u.left), at(n.right.cols, u.right)
		if li < 0 || ri < 0 {
			return invalidf("USING column '%s' is not read", u.name)
		}
		args := []exec.Expr{
			&exec.ColumnRef{Index: li, Name: u.left.name, Typ: u.left.typ},
			&exec.ColumnRef{Index: lw + ri, Name: u.right.name, Typ: u.right.typ},
		}
		c := newVCompiler(p.env, &scope{multi: true})
		t, err := c.unifyAll(args)
		if err != nil {
			return analytic(err)
		}
		n.coalesceX = append(n.coalesceX, &exec.Coalesce{Args: args, Typ: t})
	}
	switch n.ekind {
	case exec.InnerJoin, exec.CrossJoin:
		n.est = max(n.left.est, n.right.est)
		if n.ekind == exec.CrossJoin {
			n.est = n.left.est * n.right.est
		}
	case exec.LeftJoin:
		n.est = max(n.left.est, 1)
	case exec.RightJoin:
		n.est = n.right.est
	case exec.FullJoin:
		n.est = n.left.est + n.right.est
	}
	return nil
}

// rangeColumn is the column of a probe-side table scan that a join's build
// keys' range may filter (see exec.OnBuildKeyRange), or "": the probe key
// is the scan's table's first key column, of an integer type, and the join
// keeps no probe row without a match. Only the first key column: its
// rowsets and pages are sorted on it, so that their zone maps skip what
// the range excludes; on any other column a range seldom skips a page
// and costs a comparison a row (10% of an IN subquery's CPU).
func rangeColumn(probe *relNode, key exec.Expr, kind exec.JoinKind) string {
	r, ok := key.(*exec.ColumnRef)
	if !ok || !probe.isLeaf() || probe.tbl == nil || r.Index < 0 || r.Index >= len(probe.cols) {
		return ""
	}
	switch kind {
	case exec.InnerJoin, exec.SemiJoin, exec.RightJoin:
	default:
		return ""
	}
	c := probe.cols[r.Index]
	def := probe.tbl.SharedDefinition().Schema
	if c.ttl || def.KeyCount < 1 || len(def.Columns) == 0 || !strings.EqualFold(def.Columns[0].Name, c.name) {
		return ""
	}
	switch c.typ.Kind {
	case schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt:
		return c.name
	}
	return ""
}

// rangeFilter has join j, once built, narrow the probe scan to the build
// keys' range on column col: a conjunct lo <= col <= hi pushed into the
// scan before it starts, whose zone maps then skip the pages outside it.
func rangeFilter(j exec.Operator, leaf *relNode, scan *scanOp, col string) {
	if scan == nil || col == "" {
		return
	}
	exec.OnBuildKeyRange(j, func(lo, hi int64) {
		ref := &parser.ColumnRef{Name: col}
		cond := &parser.BinaryExpr{Op: parser.OpAnd,
			L: &parser.BinaryExpr{Op: parser.OpGe, L: ref, R: &parser.IntLit{Val: lo}},
			R: &parser.BinaryExpr{Op: parser.OpLe, L: ref, R: &parser.IntLit{Val: hi}}}
		if f := pushdown(leaf.senv, leaf.tscope, cond); f != nil {
			scan.req.Filter = query.AllOf(scan.req.Filter, f)
		}
	})
}

// joinKeys compiles an equality's two sides as hash keys of one type, or
// returns nil keys when the equality must stay in the residual.
func (p *relPlanner) joinKeys(ls, rs *scope, lx, rx parser.Expr) (exec.Expr, exec.Expr, error) {
	lc := newVCompiler(p.env, ls)
	l, err := lc.compile(lx)
	if err != nil {
		return nil, nil, analytic(err)
	}
	rc := newVCompiler(p.env, rs)
	r, err := rc.compile(rx)
	if err != nil {
		return nil, nil, analytic(err)
	}
	bindRefs(lc)
	bindRefs(rc)
	lk, rk, err := p.sameKeyType(lc, rc, l, r)
	if err != nil {
		return nil, nil, err
	}
	return lk, rk, nil
}

// sameKeyType converts two key expressions to their comparison type.
// DECIMALs pair only when their types are identical (the exact
// comparison across scales is the row compiler's).
func (p *relPlanner) sameKeyType(lc, rc *vcompiler, l, r exec.Expr) (exec.Expr, exec.Expr, error) {
	lt, rt := l.Type(), r.Type()
	if lt.Kind == schema.Decimal || rt.Kind == schema.Decimal {
		if lt == rt {
			return l, r, nil
		}
		return nil, nil, notYet("a join key comparing " + lt.String() + " with " + rt.String())
	}
	if lt == rt {
		return l, r, nil
	}
	t, ok := comparisonType(lt, rt)
	if !ok || isNullType(t) {
		return nil, nil, nil
	}
	l, err := lc.convert(l, t)
	if err != nil {
		return nil, nil, analytic(err)
	}
	if r, err = rc.convert(r, t); err != nil {
		return nil, nil, analytic(err)
	}
	if !arrowEqual(l.Type(), r.Type()) {
		return nil, nil, nil
	}
	return l, r, nil
}

func arrowEqual(a, b schema.Type) bool {
	if a.IsString() && b.IsString() {
		return true
	}
	return a.Arrow().Fingerprint() == b.Arrow().Fingerprint()
}

// bindRefs points a compiler's column references at their slots: the
// scopes of the relational planner are the operators' column layouts.
func bindRefs(c *vcompiler) {
	for slot, refs := range c.refs {
		for _, r := range refs {
			r.Index = slot
		}
	}
}

func andAll(es []parser.Expr) parser.Expr {
	out := es[0]
	for _, e := range es[1:] {
		out = &parser.BinaryExpr{Op: parser.OpAnd, L: out, R: e}
	}
	return out
}

// compileLeaf compiles a table reference's filter and its scan request.
func (p *relPlanner) compileLeaf(n *relNode) error {
	n.senv = p.env
	c := newVCompiler(p.env, leafScope(n.cols, n.alias))
	c.sc.showHidden = p.s.showHidden
	if len(n.pending) > 0 {
		x, err := c.compile(andAll(n.pending))
		if err == nil {
			x, err = c.asBool(x)
		}
		if err != nil {
			return analytic(err)
		}
		bindRefs(c)
		n.filter = x
		// An equality with a constant keeps few rows; anything else is
		// guessed to keep half.
		for _, e := range n.pending {
			if b, ok := e.(*parser.BinaryExpr); ok && b.Op == parser.OpEq {
				n.est = (n.est + 9) / 10
			} else {
				n.est = (n.est + 1) / 2
			}
		}
	}
	if n.tbl == nil {
		return nil
	}
	names := make([]string, len(n.cols))
	for i, col := range n.cols {
		names[i] = col.name
	}
	n.req = query.Request{Now: p.env.now, Columns: names}
	if len(n.pending) > 0 {
		n.req.Filter = pushdown(p.env, n.tscope, andAll(n.pending))
	}
	return nil
}

// schemaOf is the exec schema of a node's columns.
func schemaOf(cols []column) exec.Schema {
	s := make(exec.Schema, len(cols))
	for i, c := range cols {
		s[i] = exec.Column{Name: c.name, Type: c.typ, Nullable: true}
	}
	return s
}

// build returns the operators of a node.
func (n *relNode) build(env *exec.Env) (exec.Operator, error) {
	if len(n.coalesced) == 0 {
		return n.buildJoin(env)
	}
	// A FULL JOIN's USING columns follow the join's columns.
	op, err := n.buildJoin(env)
	if err != nil {
		return nil, err
	}
	s := op.Schema()
	var exprs []exec.Expr
	var names []string
	for i, c := range s {
		exprs = append(exprs, &exec.ColumnRef{Index: i, Name: c.Name, Typ: c.Type})
		names = append(names, c.Name)
	}
	for k, x := range n.coalesceX {
		exprs = append(exprs, x)
		names = append(names, n.coalesced[k].name)
	}
	return exec.NewProject(env, op, exprs, names)
}

// buildJoin returns the operators of a node without its USING columns.
func (n *relNode) buildJoin(env *exec.Env) (exec.Operator, error) {
	if n.isLeaf() {
		op, _, err := n.buildLeaf(env)
		return op, err
	}
	return n.buildPair(env)
}

// buildLeaf returns the operators of a table reference, and its scan when
// it is a table's.
func (n *relNode) buildLeaf(env *exec.Env) (exec.Operator, *scanOp, error) {
	var scan *scanOp
	var op exec.Operator
	if n.tbl != nil {
		scan = &scanOp{tbl: n.tbl, req: n.req, schema: schemaOf(n.cols)}
		op = scan
	} else {
		sub, err := n.sub.build(env)
		if err != nil {
			return nil, nil, err
		}
		// A derived table reads its used columns of the subquery.
		var exprs []exec.Expr
		var names []string
		for _, c := range n.cols {
			for i, f := range n.full {
				if sameCol(f, c) {
					exprs = append(exprs, &exec.ColumnRef{Index: i, Name: f.name, Typ: f.typ})
					names = append(names, f.name)
					break
				}
			}
		}
		if op, err = exec.NewProject(env, sub, exprs, names); err != nil {
			sub.Close()
			return nil, nil, err
		}
	}
	if n.filter != nil {
		f, err := exec.NewFilter(env, op, n.filter)
		if err != nil {
			op.Close()
			return nil, nil, err
		}
		op = f
	}
	return op, scan, nil
}

// buildSide returns the operators of a join's input and, for a table
// reference, its scan.
func (n *relNode) buildSide(env *exec.Env) (exec.Operator, *scanOp, error) {
	if n.isLeaf() && len(n.coalesced) == 0 {
		return n.buildLeaf(env)
	}
	op, err := n.build(env)
	return op, nil, err
}

// buildPair returns the operators of a join node.
func (n *relNode) buildPair(env *exec.Env) (exec.Operator, error) {
	l, lscan, err := n.left.buildSide(env)
	if err != nil {
		return nil, err
	}
	r, rscan, err := n.right.buildSide(env)
	if err != nil {
		l.Close()
		return nil, err
	}
	probeLeaf, probeScan := n.left, lscan
	if n.swap {
		probeLeaf, probeScan = n.right, rscan
	}
	lk, rk := n.lkeys, n.rkeys
	probe, buildSide := l, r
	kind := n.ekind
	if n.swap {
		probe, buildSide, lk, rk = r, l, rk, lk
		switch kind {
		case exec.LeftJoin:
			kind = exec.RightJoin
		case exec.RightJoin:
			kind = exec.LeftJoin
		}
	}
	probe, pk, err := withKeys(env, probe, lk)
	if err != nil {
		buildSide.Close()
		return nil, err
	}
	buildSide, bk, err := withKeys(env, buildSide, rk)
	if err != nil {
		probe.Close()
		return nil, err
	}
	pw, bw := len(probe.Schema()), len(buildSide.Schema())
	lw, rw := len(n.left.cols), len(n.right.cols)
	// The join's output column of the node's column slot: the probe's
	// columns come first, then the build side's, each followed by its
	// computed keys.
	joinCol := func(slot int) int {
		left := slot < lw
		if !left {
			slot -= lw
		}
		if left == n.swap {
			return pw + slot
		}
		return slot
	}
	var out []int
	if n.outNeed != nil {
		out = make([]int, len(n.outNeed))
		for i, slot := range n.outNeed {
			out[i] = joinCol(slot)
		}
		if n.groups != nil {
			out = append(out, pw+bw)
		}
	}
	j, err := exec.NewHashJoinGrouped(env, probe, buildSide, kind, pk, bk, n.residual, out, n.groups)
	if err != nil {
		probe.Close()
		buildSide.Close()
		return nil, err
	}
	rangeFilter(j, probeLeaf, probeScan, n.rangeCol)
	if out != nil {
		return j, nil
	}
	// Back to the node's layout: left columns then right ones, without
	// the computed keys.
	if !n.swap && pw == lw && bw == rw {
		return j, nil
	}
	js := j.Schema()
	var exprs []exec.Expr
	var names []string
	add := func(i int) {
		exprs = append(exprs, &exec.ColumnRef{Index: i, Name: js[i].Name, Typ: js[i].Type})
		names = append(names, js[i].Name)
	}
	if n.swap {
		for i := 0; i < lw; i++ {
			add(pw + i)
		}
		for i := 0; i < rw; i++ {
			add(i)
		}
	} else {
		for i := 0; i < lw; i++ {
			add(i)
		}
		for i := 0; i < rw; i++ {
			add(pw + i)
		}
	}
	proj, err := exec.NewProject(env, j, exprs, names)
	if err != nil {
		j.Close()
		return nil, err
	}
	return proj, nil
}

// withKeys returns the key columns of keys over op, appending a Project
// that computes those that are not plain columns.
func withKeys(env *exec.Env, op exec.Operator, keys []exec.Expr) (exec.Operator, []int, error) {
	idx := make([]int, len(keys))
	var extra []exec.Expr
	s := op.Schema()
	for i, k := range keys {
		if r, ok := k.(*exec.ColumnRef); ok {
			idx[i] = r.Index
			continue
		}
		idx[i] = len(s) + len(extra)
		extra = append(extra, k)
	}
	if len(extra) == 0 {
		return op, idx, nil
	}
	exprs := make([]exec.Expr, 0, len(s)+len(extra))
	names := make([]string, 0, len(s)+len(extra))
	for i, c := range s {
		exprs = append(exprs, &exec.ColumnRef{Index: i, Name: c.Name, Typ: c.Type})
		names = append(names, c.Name)
	}
	for i, k := range extra {
		exprs = append(exprs, k)
		names = append(names, fmt.Sprintf("key%d", i))
	}
	out, err := exec.NewProject(env, op, exprs, names)
	if err != nil {
		op.Close()
		return nil, nil, err
	}
	return out, idx, nil
}

// explainTree writes a node and its inputs.
func (n *relNode) explainTree(add explainFunc, d int) {
	if n.isLeaf() {
		if n.filter != nil {
			add(d, "Filter: %s", n.filter)
			d++
		}
		names := make([]string, len(n.cols))
		for i, c := range n.cols {
			names[i] = c.name
		}
		if n.tbl != nil {
			add(d, "Scan: %s columns [%s] (estimated rows %d)", n.tableName, strings.Join(names, ", "), n.est)
			if n.req.Filter != nil {
				add(d+1, "pushed filter: %s", n.req.Filter)
			}
			return
		}
		add(d, "Derived: %s columns [%s] (estimated rows %d)", n.alias, strings.Join(names, ", "), n.est)
		n.sub.explainTree(add, d+1)
		return
	}
	var parts []string
	if len(n.keyText) > 0 {
		parts = append(parts, "keys ["+strings.Join(n.keyText, ", ")+"]")
	}
	if n.residual != nil {
		parts = append(parts, fmt.Sprintf("residual %s", n.residual))
	}
	build := "right"
	if n.swap {
		build = "left"
	}
	parts = append(parts, "build "+build, fmt.Sprintf("estimated rows %d", n.est))
	if n.groups != nil {
		parts = append(parts, fmt.Sprintf("build groups by %s", n.right.colName(n.left, n.swap, n.groups.Columns()[0])))
	}
	if n.rangeCol != "" {
		parts = append(parts, "build key range filters the scan on "+n.rangeCol)
	}
	if len(n.coalesceX) > 0 {
		using := make([]string, len(n.coalesceX))
		for k, x := range n.coalesceX {
			using[k] = fmt.Sprintf("%s AS %s", x, parser.QuoteIdent(n.coalesced[k].name))
		}
		add(d, "Project: USING columns %s", strings.Join(using, ", "))
		d++
	}
	add(d, "HashJoin: %s %s", joinName(n.ekind), strings.Join(parts, ", "))
	n.left.explainTree(add, d+1)
	n.right.explainTree(add, d+1)
}

// colName names build column c of a join whose sides are n (right) and
// left, swapped or not.
func (n *relNode) colName(left *relNode, swap bool, c int) string {
	cols := n.cols
	if swap {
		cols = left.cols
	}
	if c < len(cols) {
		return cols[c].name
	}
	return fmt.Sprint("#", c)
}

func joinName(k exec.JoinKind) string {
	switch k {
	case exec.InnerJoin:
		return "INNER"
	case exec.LeftJoin:
		return "LEFT OUTER"
	case exec.RightJoin:
		return "RIGHT OUTER"
	case exec.FullJoin:
		return "FULL OUTER"
	case exec.CrossJoin:
		return "CROSS"
	case exec.SemiJoin:
		return "LEFT SEMI"
	case exec.AntiJoin:
		return "LEFT ANTI"
	case exec.NullAwareAntiJoin:
		return "NULL AWARE LEFT ANTI"
	}
	return "?"
}

// expandRelItems expands the stars of a select list over a FROM: * is
// each reference's visible columns in FROM order, except that a join's
// USING columns come first and once (as MySQL and Doris show them); t.*
// is t's columns.
func expandRelItems(st *parser.Select, fp *fromPlan) []outItem {
	sc := fp.scope
	var items []outItem
	add := func(c column) {
		ref := &parser.ColumnRef{Name: c.name}
		if len(c.quals) > 0 {
			ref.Table = c.quals[0]
		}
		items = append(items, outItem{name: c.name, expr: ref})
	}
	for _, it := range st.Items {
		if !it.Star {
			name := it.Alias
			if name == "" {
				name = it.Text
			}
			items = append(items, outItem{name: name, alias: it.Alias, expr: it.Expr})
			continue
		}
		if it.StarTable == "" {
			for _, i := range starCols(fp.root, 0, sc.cols) {
				if c := sc.cols[i]; !c.ttl || sc.showHidden {
					add(c)
				}
			}
			continue
		}
		for _, c := range sc.cols {
			if hasQual(c, it.StarTable) && (!c.ttl || sc.showHidden) {
				add(c)
			}
		}
	}
	return items
}

// starCols returns the columns * shows of a node whose columns start at
// off in cols, the root's layout.
func starCols(n *relNode, off int, cols []column) []int {
	if n.isLeaf() {
		out := make([]int, len(n.cols))
		for i := range out {
			out[i] = off + i
		}
		return out
	}
	l := starCols(n.left, off, cols)
	r := starCols(n.right, off+len(n.left.cols), cols)
	var out []int
	kept := map[int]bool{}
	from := l
	if n.kind == parser.JoinRight {
		from = r
	}
	if n.kind == parser.JoinFull {
		// The coalesced columns, after the two sides' columns.
		from = nil
		for k := range n.coalesced {
			from = append(from, off+len(n.left.cols)+len(n.right.cols)+k)
		}
	}
	for _, u := range n.using {
		for _, i := range from {
			if !cols[i].merged && !cols[i].ttl && strings.EqualFold(cols[i].name, u) && !kept[i] {
				out = append(out, i)
				kept[i] = true
				break
			}
		}
	}
	for _, side := range [][]int{l, r} {
		for _, i := range side {
			if !kept[i] && !cols[i].merged {
				out = append(out, i)
			}
		}
	}
	return out
}
