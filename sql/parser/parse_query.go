package parser

import (
	"fmt"
	"strings"
)

// The grammar of queries, lowest precedence first:
//
//	query      [WITH cte, ...] union [ORDER BY ...] [LIMIT ...]
//	union      intersect { UNION [ALL|DISTINCT] | EXCEPT [DISTINCT] intersect }
//	intersect  primary { INTERSECT [DISTINCT] primary }
//	primary    select-block | ( query )
//
// A select block has no ORDER BY or LIMIT of its own: those written after
// the last operand belong to the whole query; an operand that needs its own
// is parenthesised.

// windowRef is an OVER that names a window of the WINDOW clause, kept until
// the clause has been read.
type windowRef struct {
	tok  token
	spec *WindowSpec
}

// startsQuery reports whether a query starts here, possibly behind
// parentheses: FROM ((SELECT ...)) is a derived table, FROM ((a JOIN b)) a
// parenthesised join.
func (p *parser) startsQuery() bool {
	// Deeper nesting fails on maxDepth anyway; stopping here keeps hostile
	// input from costing a scan of every '(' at every level.
	for n := 0; n <= maxDepth; n++ {
		t := p.peekAt(n)
		if !isOpTok(t, "(") {
			return isKwTok(t, "SELECT") || isKwTok(t, "WITH")
		}
	}
	return false
}

// parseQuery parses a whole query.
func (p *parser) parseQuery() QueryExpr {
	p.enter()
	defer p.leave()
	// The expressions of a subquery are checked as their own (see
	// checkExprSize): the enclosing one sees the subquery as one node.
	level := p.exprLevel
	p.exprLevel = 0
	defer func() { p.exprLevel = level }()
	var with []*CTE
	if p.isKw("WITH") {
		with = p.parseWith()
	}
	return p.parseQueryBody(with, nil)
}

// parseWith parses WITH name [(cols)] AS (query), ....
func (p *parser) parseWith() []*CTE {
	p.expectKw("WITH")
	if p.isKw("RECURSIVE") && (p.peekAt(1).kind == tokIdent || p.peekAt(1).kind == tokQuotedIdent) && !isKwTok(p.peekAt(1), "AS") {
		p.fail("WITH RECURSIVE is not supported")
	}
	var ctes []*CTE
	for {
		t := p.peek()
		c := &CTE{Name: p.name("a WITH query name")}
		for _, d := range ctes {
			if d.Name == c.Name {
				p.failAt(t, fmt.Sprintf("duplicate WITH query name %s", c.Name))
			}
		}
		if p.isOp("(") {
			c.Columns = p.nameList("column name")
		}
		p.expectKw("AS")
		p.expectOp("(")
		c.Query = p.parseQuery()
		p.expectOp(")")
		ctes = append(ctes, c)
		if !p.acceptOp(",") {
			return ctes
		}
	}
}

// queryTail returns the clauses of q that apply to the query as a whole.
func queryTail(q QueryExpr) (order *[]*OrderItem, limit **Limit, with *[]*CTE) {
	switch q := q.(type) {
	case *Select:
		return &q.OrderBy, &q.Limit, &q.With
	case *SetOp:
		return &q.OrderBy, &q.Limit, &q.With
	}
	panic(fmt.Sprintf("sql: unknown query %T", q))
}

// parseQueryBody parses the set operations of a query and its ORDER BY
// and LIMIT, and attaches with to it. first, when not nil, is the first
// operand, already parsed.
func (p *parser) parseQueryBody(with []*CTE, first QueryExpr) QueryExpr {
	bodyTok := p.peek()
	body := p.parseUnion(first)
	saved := p.winRefs
	p.winRefs = nil
	var order []*OrderItem
	var limit *Limit
	orderTok, limitTok := p.peek(), token{}
	if p.acceptKw("ORDER", "BY") {
		order = p.parseOrderItems("")
	}
	if p.isKw("LIMIT") {
		limitTok = p.next()
		limit = p.parseLimit()
	}
	refs := p.winRefs
	p.winRefs = saved
	if _, _, ok := p.peekSetOp(); ok {
		p.fail("ORDER BY and LIMIT after an operand of a set operation apply to the whole set operation: put them after the last operand, or parenthesise the operand")
	}
	ord, lim, w := queryTail(body)
	if order != nil {
		if *ord != nil || *lim != nil {
			p.failAt(orderTok, "the parenthesised query already has ORDER BY or LIMIT: select from it as a subquery in FROM")
		}
		*ord = order
	}
	if limit != nil {
		if *lim != nil {
			p.failAt(limitTok, "the parenthesised query already has a LIMIT: select from it as a subquery in FROM")
		}
		*lim = limit
	}
	sel, _ := body.(*Select)
	for _, r := range refs {
		if sel == nil {
			p.failAt(r.tok, fmt.Sprintf("window %s is not defined", r.spec.Ref))
		}
		if _, err := sel.ResolveWindow(r.spec); err != nil {
			p.failAt(r.tok, err.Error())
		}
	}
	if with != nil {
		if *w != nil {
			p.failAt(bodyTok, "a query has at most one WITH")
		}
		*w = with
	}
	return body
}

// peekSetOp reports the set operator that starts here, if any.
func (p *parser) peekSetOp() (SetOpKind, token, bool) {
	t := p.peek()
	switch {
	case isKwTok(t, "UNION"):
		return SetUnion, t, true
	case isKwTok(t, "INTERSECT"):
		return SetIntersect, t, true
	case isKwTok(t, "EXCEPT"):
		return SetExcept, t, true
	}
	return 0, t, false
}

// acceptSetOp consumes a set operator of the given precedence (INTERSECT,
// or UNION and EXCEPT) and its ALL or DISTINCT.
func (p *parser) acceptSetOp(intersect bool) (op SetOpKind, all, ok bool) {
	op, t, ok := p.peekSetOp()
	if !ok || (op == SetIntersect) != intersect {
		return 0, false, false
	}
	p.i++
	if p.acceptKw("ALL") {
		if op != SetUnion {
			p.failAt(t, fmt.Sprintf("%s ALL is not supported: only UNION takes ALL", op))
		}
		return op, true, true
	}
	p.acceptKw("DISTINCT")
	return op, false, true
}

func (p *parser) parseUnion(first QueryExpr) QueryExpr {
	l := p.parseIntersect(first)
	for {
		op, all, ok := p.acceptSetOp(false)
		if !ok {
			return l
		}
		l = &SetOp{Op: op, All: all, L: l, R: p.parseIntersect(nil)}
	}
}

func (p *parser) parseIntersect(first QueryExpr) QueryExpr {
	l := first
	if l == nil {
		l = p.parseQueryPrimary()
	}
	for {
		op, _, ok := p.acceptSetOp(true)
		if !ok {
			return l
		}
		l = &SetOp{Op: op, L: l, R: p.parseQueryPrimary()}
	}
}

// parseQueryPrimary parses a select block or a parenthesised query.
func (p *parser) parseQueryPrimary() QueryExpr {
	p.enter()
	defer p.leave()
	switch {
	case p.isKw("SELECT"):
		return p.parseSelectBlock()
	case p.acceptOp("("):
		q := p.parseQuery()
		p.expectOp(")")
		return q
	case p.isKw("WITH"):
		p.fail("WITH starts a query: parenthesise a set operation operand that has one")
	}
	p.fail("expected SELECT or '('")
	return nil
}

// atQueryContinuation reports a set operator, ORDER BY or LIMIT: after a
// parenthesised subquery in an expression, they make it the first operand
// of a larger query.
func (p *parser) atQueryContinuation() bool {
	_, _, ok := p.peekSetOp()
	return ok || p.isKwSeq("ORDER", "BY") || p.isKw("LIMIT")
}

// parenBody parses what follows '(' in an expression: a query (q) or an
// expression list (one expression unless list is set). ((SELECT 1) UNION
// SELECT 2) is a query; ((SELECT 1) + 1) an expression.
func (p *parser) parenBody(list bool) (q QueryExpr, es []Expr) {
	if p.isKw("SELECT") || p.isKw("WITH") {
		return p.parseQuery(), nil
	}
	if p.isOp("(") {
		first := p.parsePrimary()
		if sq, ok := first.(*SubqueryExpr); ok && p.atQueryContinuation() {
			p.enter()
			defer p.leave()
			return p.parseQueryBody(nil, sq.Query), nil
		}
		// The expression goes on from the primary just read.
		p.pending = first
	}
	if list {
		return nil, p.exprList()
	}
	return nil, []Expr{p.parseExpr()}
}

// parseSelectBlock parses SELECT ... up to and excluding ORDER BY.
func (p *parser) parseSelectBlock() *Select {
	p.expectKw("SELECT")
	saved := p.winRefs
	p.winRefs = nil
	s := &Select{}
	if p.acceptKw("DISTINCT") {
		s.Distinct = true
	} else {
		p.acceptKw("ALL")
	}
	for {
		s.Items = append(s.Items, p.parseSelectItem())
		if !p.acceptOp(",") {
			break
		}
	}
	if p.acceptKw("FROM") {
		if p.isKw("DUAL") && !isOpTok(p.peekAt(1), ".") {
			p.i++
		} else {
			s.From = p.parseFrom()
		}
		if p.isKw("ON") || p.isKw("USING") {
			p.fail("ON and USING must follow a JOIN")
		}
	}
	if p.acceptKw("WHERE") {
		s.Where = p.noWindow("WHERE", p.parseExpr)
	}
	if p.acceptKw("GROUP", "BY") {
		for {
			s.GroupBy = append(s.GroupBy, p.noWindow("GROUP BY", p.parseExpr))
			if !p.acceptOp(",") {
				break
			}
		}
	}
	if p.acceptKw("HAVING") {
		s.Having = p.noWindow("HAVING", p.parseExpr)
	}
	if p.isKw("WINDOW") {
		p.i++
		var toks []token
		for {
			t := p.peek()
			nw := &NamedWindow{Name: p.name("window name")}
			for _, o := range s.Windows {
				if strings.EqualFold(o.Name, nw.Name) {
					p.failAt(t, fmt.Sprintf("window %s is defined twice", nw.Name))
				}
			}
			p.expectKw("AS")
			p.expectOp("(")
			nw.Spec = p.parseWindowSpec()
			p.expectOp(")")
			s.Windows = append(s.Windows, nw)
			toks = append(toks, t)
			if !p.acceptOp(",") {
				break
			}
		}
		for i, nw := range s.Windows {
			if _, err := s.resolveWindow(nw.Spec, i); err != nil {
				p.failAt(toks[i], err.Error())
			}
		}
	}
	for _, r := range p.winRefs {
		if _, err := s.ResolveWindow(r.spec); err != nil {
			p.failAt(r.tok, err.Error())
		}
	}
	p.winRefs = saved
	return s
}

// noWindow parses an expression of a clause that may not call window
// functions.
func (p *parser) noWindow(clause string, parse func() Expr) Expr {
	t := p.peek()
	e := parse()
	if ContainsWindow(e) {
		p.failAt(t, fmt.Sprintf("window functions are not allowed in %s", clause))
	}
	return e
}

func (p *parser) parseSelectItem() *SelectItem {
	start := p.peek()
	if p.acceptOp("*") {
		return &SelectItem{Star: true, Text: "*"}
	}
	if (start.kind == tokIdent || start.kind == tokQuotedIdent) && isOpTok(p.peekAt(1), ".") && isOpTok(p.peekAt(2), "*") {
		tbl := p.name("table name")
		p.i += 2
		return &SelectItem{Star: true, StarTable: tbl, Text: p.src[start.pos:p.prevEnd()]}
	}
	it := &SelectItem{Expr: p.parseExpr()}
	// The tokens' span: no white space around it. (TrimSpace would also cut
	// Unicode spaces, which the lexer reads as identifier bytes.)
	it.Text = p.src[start.pos:p.prevEnd()]
	if p.acceptKw("AS") {
		if p.at(tokString) {
			it.Alias = p.stringLit("alias")
		} else {
			it.Alias = p.name("alias")
		}
	} else if p.isName() && !p.atClauseWord() {
		it.Alias = p.name("alias")
	}
	return it
}

// optAlias parses [AS] alias after a table name.
func (p *parser) optAlias() string {
	if p.acceptKw("AS") {
		return p.name("alias")
	}
	if p.isName() && !p.atClauseWord() {
		return p.name("alias")
	}
	return ""
}

// atClauseWord reports the unreserved words that start a clause where an
// alias could stand: FULL [OUTER] JOIN and WINDOW w AS.
func (p *parser) atClauseWord() bool {
	switch {
	case p.isKw("FULL"):
		n := p.peekAt(1)
		return isKwTok(n, "JOIN") || isKwTok(n, "OUTER")
	case p.isKw("WINDOW"):
		n := p.peekAt(1)
		return (n.kind == tokIdent || n.kind == tokQuotedIdent) && isKwTok(p.peekAt(2), "AS")
	}
	return false
}

// parseOrderItems parses expr [ASC|DESC] [NULLS FIRST|LAST], ....
// noWindowIn, when not empty, names the clause for the error when an item
// calls a window function.
func (p *parser) parseOrderItems(noWindowIn string) []*OrderItem {
	var items []*OrderItem
	for {
		o := &OrderItem{}
		if noWindowIn != "" {
			o.Expr = p.noWindow(noWindowIn, p.parseExpr)
		} else {
			o.Expr = p.parseExpr()
		}
		if p.acceptKw("DESC") {
			o.Desc = true
		} else {
			p.acceptKw("ASC")
		}
		switch {
		case p.acceptKw("NULLS", "FIRST"):
			o.Nulls = NullsFirst
		case p.acceptKw("NULLS", "LAST"):
			o.Nulls = NullsLast
		}
		items = append(items, o)
		if !p.acceptOp(",") {
			return items
		}
	}
}

// parseLimit parses what follows LIMIT: n [OFFSET m] or m, n.
func (p *parser) parseLimit() *Limit {
	n := p.limitNumber()
	l := &Limit{Count: n}
	if p.acceptOp(",") {
		l.Offset, l.Count = n, p.limitNumber()
	} else if p.acceptKw("OFFSET") {
		l.Offset = p.limitNumber()
	}
	return l
}

// ---------------------------------------------------------------------------
// FROM

// parseFrom parses a comma-separated list of joined tables; the comma binds
// more loosely than JOIN.
func (p *parser) parseFrom() *TableRef {
	return p.parseFromRest(p.parseJoined(nil))
}

// parseFromRest parses the commas that follow the joined table l.
func (p *parser) parseFromRest(l *TableRef) *TableRef {
	for p.acceptOp(",") {
		l = &TableRef{Join: &Join{Kind: JoinComma, Left: l, Right: p.parseJoined(nil)}}
	}
	return l
}

// parseJoined parses factor { join factor [ON e | USING (cols)] }, left
// associative: each ON belongs to the JOIN just before it. l, when not nil,
// is the first factor, already parsed.
func (p *parser) parseJoined(l *TableRef) *TableRef {
	if l == nil {
		l = p.parseTableFactor()
	}
	for {
		kind, ok := p.acceptJoin()
		if !ok {
			return l
		}
		j := &Join{Kind: kind, Left: l, Right: p.parseTableFactor()}
		switch {
		case p.isKw("ON"), p.isKw("USING"):
			if kind == JoinCross {
				p.fail("CROSS JOIN takes no ON or USING: write JOIN ... ON")
			}
			if p.acceptKw("ON") {
				j.On = p.noWindow("ON", p.parseExpr)
			} else {
				p.i++
				j.Using = p.nameList("column name")
			}
		case kind.IsOuter():
			p.failf("%s needs ON or USING", kind)
		}
		l = &TableRef{Join: j}
	}
}

// acceptJoin consumes the keywords of a join, if one starts here.
func (p *parser) acceptJoin() (JoinKind, bool) {
	switch {
	case p.acceptKw("JOIN"):
		return JoinInner, true
	case p.acceptKw("INNER"):
		p.expectKw("JOIN")
		return JoinInner, true
	case p.acceptKw("CROSS"):
		p.expectKw("JOIN")
		return JoinCross, true
	case p.isKw("LEFT"), p.isKw("RIGHT"), p.isKw("FULL") && p.atClauseWord():
		t := p.next()
		kind := map[string]JoinKind{"LEFT": JoinLeft, "RIGHT": JoinRight, "FULL": JoinFull}[strings.ToUpper(t.val)]
		if p.isKw("SEMI") || p.isKw("ANTI") {
			p.failf("%s %s JOIN is not supported: write EXISTS or NOT EXISTS", strings.ToUpper(t.val), strings.ToUpper(p.peek().val))
		}
		p.acceptKw("OUTER")
		p.expectKw("JOIN")
		return kind, true
	case p.isKw("NATURAL"):
		p.fail("NATURAL JOIN is not supported: write JOIN ... USING (...)")
	}
	return 0, false
}

// parseTableFactor parses a table [AS alias], a derived table (query) [AS]
// alias, or a parenthesised list of joined tables.
func (p *parser) parseTableFactor() *TableRef {
	p.enter()
	defer p.leave()
	if t := p.peek(); t.kind == tokIdent && isOpTok(p.peekAt(1), "(") {
		p.i++
		r := &TableRef{Func: &TableFunc{Name: strings.ToLower(t.val), Props: p.propertyList()}}
		r.Alias = p.optAlias()
		return r
	}
	if !p.isOp("(") {
		r := &TableRef{Table: p.tableName()}
		r.Alias = p.optAlias()
		return r
	}
	if p.startsQuery() {
		p.i++
		if !p.isOp("(") {
			q := p.parseQuery()
			p.expectOp(")")
			return p.derivedTable(q)
		}
		// Either ((query) ...) AS s, a derived table, or ((query) AS s
		// JOIN ...), a parenthesised join that starts with one.
		first := p.parseQueryPrimary()
		if !p.isOp(")") && !p.atQueryContinuation() {
			r := p.parseFromRest(p.parseJoined(p.derivedTable(first)))
			p.expectOp(")")
			return r
		}
		q := p.parseQueryBody(nil, first)
		p.expectOp(")")
		return p.derivedTable(q)
	}
	p.i++
	r := p.parseFrom()
	p.expectOp(")")
	return r
}

// derivedTable parses the alias of the derived table of q.
func (p *parser) derivedTable(q QueryExpr) *TableRef {
	r := &TableRef{Subquery: q}
	if r.Alias = p.optAlias(); r.Alias == "" {
		p.fail("a subquery in FROM needs an alias: (SELECT ...) AS name")
	}
	return r
}

// ---------------------------------------------------------------------------
// Window functions

// windowOnly lists the functions that exist only with OVER, with their
// argument counts.
var windowOnly = map[string]struct{ min, max int }{
	"row_number": {0, 0}, "rank": {0, 0}, "dense_rank": {0, 0}, "ntile": {1, 1},
	"percent_rank": {0, 0}, "cume_dist": {0, 0},
	"lag": {1, 3}, "lead": {1, 3}, "first_value": {1, 1}, "last_value": {1, 1}, "nth_value": {2, 2},
}

// callTail turns a call followed by OVER into a *WindowFunc; nameTok is
// the call's name, for errors.
func (p *parser) callTail(f *FuncCall, nameTok token) Expr {
	arity, windowed := windowOnly[f.Name]
	if windowed || IsAggregate(f.Name) || p.isKw("OVER") {
		for _, a := range f.Args {
			if ContainsWindow(a) {
				p.failAt(nameTok, fmt.Sprintf("a window function cannot be an argument of %s()", f.Name))
			}
		}
	}
	if !p.isKw("OVER") {
		if windowed {
			p.failAt(nameTok, fmt.Sprintf("%s() needs an OVER clause", f.Name))
		}
		return f
	}
	switch {
	case !windowed && !IsAggregate(f.Name):
		p.failAt(nameTok, fmt.Sprintf("%s is not a window function", f.Name))
	case f.Distinct:
		p.failAt(nameTok, "DISTINCT is not supported in a window function")
	case windowed && (len(f.Args) < arity.min || len(f.Args) > arity.max):
		if arity.min == arity.max {
			p.failAt(nameTok, fmt.Sprintf("%s() takes %d argument(s), not %d", f.Name, arity.min, len(f.Args)))
		}
		p.failAt(nameTok, fmt.Sprintf("%s() takes %d to %d arguments, not %d", f.Name, arity.min, arity.max, len(f.Args)))
	case !windowed && !f.Star && len(f.Args) != 1:
		p.failAt(nameTok, fmt.Sprintf("%s() takes 1 argument, not %d", f.Name, len(f.Args)))
	}
	if f.Name == "lag" || f.Name == "lead" {
		if len(f.Args) > 1 {
			if n, ok := f.Args[1].(*IntLit); !ok || n.Val < 0 {
				p.failAt(nameTok, fmt.Sprintf("the offset of %s() must be a non-negative integer literal", f.Name))
			}
		}
	}
	p.i++ // OVER
	w := &WindowFunc{Name: f.Name, Args: f.Args, Star: f.Star}
	refTok := p.peek()
	switch {
	case p.acceptOp("("):
		refTok = p.peek()
		w.Over = p.parseWindowSpec()
		if !p.isOp(")") {
			p.fail("expected PARTITION BY, ORDER BY, ROWS, RANGE or ')'")
		}
		p.i++
	case p.isName():
		w.Over = &WindowSpec{Ref: p.name("window name")}
	default:
		p.fail("expected '(' or a window name after OVER")
	}
	if w.Over.Ref != "" {
		p.winRefs = append(p.winRefs, windowRef{tok: refTok, spec: w.Over})
	}
	return w
}

// atPartitionBy and atFrame report PARTITION BY and a frame n tokens ahead.
func (p *parser) atPartitionBy(n int) bool {
	return isKwTok(p.peekAt(n), "PARTITION") && isKwTok(p.peekAt(n+1), "BY")
}

func (p *parser) atFrame(n int) bool {
	t, u := p.peekAt(n), p.peekAt(n+1)
	if !isKwTok(t, "ROWS") && !isKwTok(t, "RANGE") {
		return false
	}
	return isKwTok(u, "BETWEEN") || isKwTok(u, "UNBOUNDED") || isKwTok(u, "CURRENT") || u.kind == tokInt
}

// parseWindowSpec parses the inside of OVER (...) or WINDOW w AS (...).
func (p *parser) parseWindowSpec() *WindowSpec {
	w := &WindowSpec{}
	if p.isName() && !p.atPartitionBy(0) && !p.atFrame(0) {
		if n := p.peekAt(1); isOpTok(n, ")") || isKwTok(n, "ORDER") || p.atPartitionBy(1) || p.atFrame(1) {
			w.Ref = p.name("window name")
		}
	}
	if p.acceptKw("PARTITION", "BY") {
		for {
			w.PartitionBy = append(w.PartitionBy, p.noWindow("a window's PARTITION BY", p.parseExpr))
			if !p.acceptOp(",") {
				break
			}
		}
	}
	if p.acceptKw("ORDER", "BY") {
		w.OrderBy = p.parseOrderItems("a window's ORDER BY")
	}
	if p.isKw("ROWS") || p.isKw("RANGE") {
		w.Frame = p.parseFrame()
	}
	return w
}

// parseFrame parses ROWS|RANGE bound or ROWS|RANGE BETWEEN bound AND bound.
func (p *parser) parseFrame() *Frame {
	f := &Frame{Unit: FrameRows}
	if strings.EqualFold(p.next().val, "RANGE") {
		f.Unit = FrameRange
	}
	between := p.acceptKw("BETWEEN")
	startTok := p.peek()
	f.Start = p.frameBound()
	endTok := startTok
	if between {
		p.expectKw("AND")
		endTok = p.peek()
		f.End = p.frameBound()
	} else {
		f.End = FrameBound{Kind: FrameCurrentRow}
	}
	switch {
	case f.Start.Kind == FrameUnboundedFollowing:
		p.failAt(startTok, "a frame cannot start at UNBOUNDED FOLLOWING")
	case f.End.Kind == FrameUnboundedPreceding:
		p.failAt(endTok, "a frame cannot end at UNBOUNDED PRECEDING")
	case !between && f.Start.Kind > FrameCurrentRow:
		p.failAt(startTok, "a frame without BETWEEN ends at CURRENT ROW, so it cannot start after it: write BETWEEN ... AND ...")
	case f.Start.Kind > f.End.Kind:
		p.failAt(startTok, "the frame starts after it ends")
	}
	return f
}

// frameBound parses UNBOUNDED PRECEDING|FOLLOWING, CURRENT ROW or n
// PRECEDING|FOLLOWING.
func (p *parser) frameBound() FrameBound {
	switch {
	case p.acceptKw("UNBOUNDED"):
		switch {
		case p.acceptKw("PRECEDING"):
			return FrameBound{Kind: FrameUnboundedPreceding}
		case p.acceptKw("FOLLOWING"):
			return FrameBound{Kind: FrameUnboundedFollowing}
		}
		p.fail("expected PRECEDING or FOLLOWING")
	case p.acceptKw("CURRENT"):
		p.expectKw("ROW")
		return FrameBound{Kind: FrameCurrentRow}
	case p.at(tokInt):
		n := p.limitNumber()
		switch {
		case p.acceptKw("PRECEDING"):
			return FrameBound{Kind: FramePreceding, N: n}
		case p.acceptKw("FOLLOWING"):
			return FrameBound{Kind: FrameFollowing, N: n}
		}
		p.fail("expected PRECEDING or FOLLOWING")
	}
	p.fail("expected UNBOUNDED PRECEDING, UNBOUNDED FOLLOWING, CURRENT ROW or n PRECEDING|FOLLOWING")
	return FrameBound{}
}

// parseWithStatement parses a statement that starts with WITH: a query, or
// WITH ... INSERT INTO t ... SELECT, whose WITH belongs to the SELECT.
func (p *parser) parseWithStatement() Stmt {
	withTok := p.peek()
	with := p.parseWith()
	if !p.acceptKw("INSERT") {
		if !p.startsQuery() && !p.isOp("(") {
			p.fail("expected SELECT, '(' or INSERT after WITH ...")
		}
		return p.parseQueryBody(with, nil)
	}
	s := p.parseInsert().(*Insert)
	q := s.Query()
	if q == nil {
		p.failAt(withTok, "WITH goes with INSERT ... SELECT, not INSERT ... VALUES")
	}
	if _, _, w := queryTail(q); *w != nil {
		p.failAt(withTok, "a query has at most one WITH")
	} else {
		*w = with
	}
	return s
}
