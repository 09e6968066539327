package parser

import (
	"fmt"
	"strings"
	"testing"
)

// setShape renders a query's set operations fully parenthesised, each
// select block as its first item: ((1 UNION 2) INTERSECT 3).
func setShape(q QueryExpr) string {
	switch q := q.(type) {
	case *Select:
		s := FormatExpr(q.Items[0].Expr)
		if q.OrderBy != nil || q.Limit != nil {
			s += "+tail"
		}
		return s
	case *SetOp:
		op := q.Op.String()
		if q.All {
			op += " ALL"
		}
		s := "(" + setShape(q.L) + " " + op + " " + setShape(q.R) + ")"
		if q.OrderBy != nil || q.Limit != nil {
			s += "+tail"
		}
		return s
	}
	return "?"
}

func TestSetOpPrecedence(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"SELECT 1 UNION SELECT 2 UNION SELECT 3", "((1 UNION 2) UNION 3)"},
		{"SELECT 1 UNION ALL SELECT 2 UNION SELECT 3", "((1 UNION ALL 2) UNION 3)"},
		{"SELECT 1 EXCEPT SELECT 2 UNION SELECT 3", "((1 EXCEPT 2) UNION 3)"},
		{"SELECT 1 UNION SELECT 2 EXCEPT SELECT 3", "((1 UNION 2) EXCEPT 3)"},
		{"SELECT 1 UNION SELECT 2 INTERSECT SELECT 3", "(1 UNION (2 INTERSECT 3))"},
		{"SELECT 1 INTERSECT SELECT 2 UNION SELECT 3", "((1 INTERSECT 2) UNION 3)"},
		{"SELECT 1 EXCEPT SELECT 2 INTERSECT SELECT 3 INTERSECT SELECT 4", "(1 EXCEPT ((2 INTERSECT 3) INTERSECT 4))"},
		{"SELECT 1 INTERSECT SELECT 2 EXCEPT SELECT 3 INTERSECT SELECT 4", "((1 INTERSECT 2) EXCEPT (3 INTERSECT 4))"},
		{"(SELECT 1 UNION SELECT 2) INTERSECT SELECT 3", "((1 UNION 2) INTERSECT 3)"},
		{"SELECT 1 UNION (SELECT 2 UNION SELECT 3)", "(1 UNION (2 UNION 3))"},
		{"SELECT 1 UNION SELECT 2 ORDER BY 1", "(1 UNION 2)+tail"},
		{"SELECT 1 UNION SELECT 2 INTERSECT SELECT 3 LIMIT 1", "(1 UNION (2 INTERSECT 3))+tail"},
		{"(SELECT 1 LIMIT 1) UNION SELECT 2", "(1+tail UNION 2)"},
		{"SELECT 1 UNION (SELECT 2 ORDER BY 1)", "(1 UNION 2+tail)"},
		{"(SELECT 1 UNION SELECT 2) LIMIT 1", "(1 UNION 2)+tail"},
		{"SELECT 1 LIMIT 1", "1+tail"},
		{"SELECT * FROM t WHERE a IN (SELECT 1 UNION SELECT 2 INTERSECT SELECT 3)", ""},
	} {
		stmt, err := Parse(tc.src)
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		q := stmt.(QueryExpr)
		if tc.want == "" {
			in := q.(*Select).Where.(*InSubquery)
			q, tc.want = in.Query, "(1 UNION (2 INTERSECT 3))"
		}
		if got := setShape(q); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.src, got, tc.want)
		}
		if err := checkQuery(q); err != nil {
			t.Errorf("%s: %v", tc.src, err)
		}
	}
}

// joinShape renders a FROM reference fully parenthesised, with each ON or
// USING after the join it belongs to.
func joinShape(r *TableRef) string {
	switch {
	case r.Join != nil:
		j := r.Join
		s := "(" + joinShape(j.Left) + " " + j.Kind.String() + " " + joinShape(j.Right)
		if j.On != nil {
			s += " ON " + FormatExpr(j.On)
		}
		if j.Using != nil {
			s += " USING " + strings.Join(j.Using, ",")
		}
		return s + ")"
	case r.Subquery != nil:
		return "[" + r.Alias + "]"
	}
	return r.Table.String()
}

func TestJoinAssociativity(t *testing.T) {
	for _, tc := range []struct{ from, want string }{
		{"a JOIN b JOIN c", "((a JOIN b) JOIN c)"},
		{"a JOIN b ON x JOIN c ON y", "((a JOIN b ON x) JOIN c ON y)"},
		{"a JOIN b JOIN c ON y", "((a JOIN b) JOIN c ON y)"},
		{"a LEFT JOIN b ON x RIGHT JOIN c USING (k) CROSS JOIN d", "(((a LEFT JOIN b ON x) RIGHT JOIN c USING k) CROSS JOIN d)"},
		{"a JOIN (b JOIN c ON y) ON x", "(a JOIN (b JOIN c ON y) ON x)"},
		{"a, b, c", "((a COMMA b) COMMA c)"},
		{"a, b JOIN c ON y", "(a COMMA (b JOIN c ON y))"},
		{"a JOIN b ON x, c JOIN d ON y", "((a JOIN b ON x) COMMA (c JOIN d ON y))"},
		{"(a, b) JOIN c ON y", "((a COMMA b) JOIN c ON y)"},
		{"a, (b, c)", "(a COMMA (b COMMA c))"},
		{"(SELECT 1) s JOIN b ON x", "([s] JOIN b ON x)"},
		{"a FULL OUTER JOIN b ON x FULL JOIN c ON y", "((a FULL JOIN b ON x) FULL JOIN c ON y)"},
		{"((a))", "a"},
	} {
		src := "SELECT * FROM " + tc.from
		stmt, err := Parse(src)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		sel := stmt.(*Select)
		if got := joinShape(sel.From); got != tc.want {
			t.Errorf("%s: got %s, want %s", src, got, tc.want)
		}
		if err := checkQuery(sel); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}

// windowShape renders a window function's window field by field.
func windowShape(w *WindowFunc) string {
	var parts []string
	o := w.Over
	if o.Ref != "" {
		parts = append(parts, "ref="+o.Ref)
	}
	if o.PartitionBy != nil {
		parts = append(parts, "partition="+formatExprs(o.PartitionBy))
	}
	for _, it := range o.OrderBy {
		parts = append(parts, fmt.Sprintf("order=%s desc=%v nulls=%v", FormatExpr(it.Expr), it.Desc, it.Nulls))
	}
	if f := o.Frame; f != nil {
		parts = append(parts, fmt.Sprintf("%v %v/%d..%v/%d", f.Unit, f.Start.Kind, f.Start.N, f.End.Kind, f.End.N))
	}
	return w.Name + "(" + formatExprs(w.Args) + ") " + strings.Join(parts, " ")
}

func TestWindowClauses(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"row_number() OVER ()", "row_number() "},
		{"rank() OVER (ORDER BY a DESC NULLS FIRST, b)", "rank() order=a desc=true nulls=NULLS FIRST order=b desc=false nulls=DEFAULT"},
		{"sum(x) OVER (PARTITION BY a, b + 1)", "sum(x) partition=a, b + 1"},
		{"lag(x, 2, 0) OVER w", "lag(x, 2, 0) ref=w"},
		{"lag(x, 2, 0) OVER (w)", "lag(x, 2, 0) ref=w"},
		{"count(*) OVER (w ORDER BY t ROWS 3 PRECEDING)", "count() ref=w order=t desc=false nulls=DEFAULT ROWS PRECEDING/3..CURRENT ROW/0"},
		{"avg(x) OVER (ORDER BY t ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING)", "avg(x) order=t desc=false nulls=DEFAULT ROWS PRECEDING/2..FOLLOWING/2"},
		{"min(x) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)", "min(x) ROWS UNBOUNDED PRECEDING/0..UNBOUNDED FOLLOWING/0"},
		{"max(x) OVER (ORDER BY t RANGE UNBOUNDED PRECEDING)", "max(x) order=t desc=false nulls=DEFAULT RANGE UNBOUNDED PRECEDING/0..CURRENT ROW/0"},
		{"max(x) OVER (RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)", "max(x) RANGE CURRENT ROW/0..UNBOUNDED FOLLOWING/0"},
		{"sum(x) OVER (ROWS BETWEEN 1 FOLLOWING AND 1 FOLLOWING)", "sum(x) ROWS FOLLOWING/1..FOLLOWING/1"},
		{"sum(x) OVER (ROWS BETWEEN 0 PRECEDING AND 0 FOLLOWING)", "sum(x) ROWS PRECEDING/0..FOLLOWING/0"},
		// A window name may be a word that also starts a clause.
		{"sum(x) OVER (rows)", "sum(x) ref=rows"},
		{"sum(x) OVER (partition ORDER BY a)", "sum(x) ref=partition order=a desc=false nulls=DEFAULT"},
		{"sum(x) OVER (range ROWS 1 PRECEDING)", "sum(x) ref=range ROWS PRECEDING/1..CURRENT ROW/0"},
	} {
		e, err := ParseExpr(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		w, ok := e.(*WindowFunc)
		if !ok {
			t.Errorf("%s: parsed as %T", tc.expr, e)
			continue
		}
		if agg := w.IsAggregate(); agg != (w.Name == "sum" || w.Name == "count" || w.Name == "min" || w.Name == "max" || w.Name == "avg") {
			t.Errorf("%s: IsAggregate = %v", tc.expr, agg)
		}
		if got := strings.TrimSpace(windowShape(w)); got != strings.TrimSpace(tc.want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.expr, got, tc.want)
		}
		if err := checkExpr(e); err != nil {
			t.Errorf("%s: %v", tc.expr, err)
		}
	}
}

// TestResolveWindow checks how a window built on a named one combines
// their clauses.
func TestResolveWindow(t *testing.T) {
	stmt, err := Parse("SELECT rank() OVER (w2 ROWS 1 PRECEDING), sum(x) OVER w3 FROM t " +
		"WINDOW w1 AS (PARTITION BY a), w2 AS (w1 ORDER BY b), w3 AS (w2)")
	if err != nil {
		t.Fatal(err)
	}
	sel := stmt.(*Select)
	for i, want := range []string{
		"rank() partition=a order=b desc=false nulls=DEFAULT ROWS PRECEDING/1..CURRENT ROW/0",
		"sum(x) partition=a order=b desc=false nulls=DEFAULT",
	} {
		w := sel.Items[i].Expr.(*WindowFunc)
		r, err := sel.ResolveWindow(w.Over)
		if err != nil {
			t.Fatal(err)
		}
		if got := windowShape(&WindowFunc{Name: w.Name, Args: w.Args, Over: r}); got != want {
			t.Errorf("item %d resolves to %s, want %s", i, got, want)
		}
	}
	if _, err := sel.ResolveWindow(&WindowSpec{Ref: "nope"}); err == nil || err.Error() != "window nope is not defined" {
		t.Errorf("unknown window: %v", err)
	}
}

// TestDeepQueryNesting checks that nested queries, derived tables,
// parenthesised joins and subqueries are bounded like nested expressions.
func TestDeepQueryNesting(t *testing.T) {
	deep := func(open, mid, close string, n int) string {
		return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
	}
	for _, src := range []string{
		deep("(", "SELECT 1", ")", 5000),
		"SELECT * FROM " + deep("(", "t", ")", 5000),
		"SELECT * FROM " + deep("(SELECT * FROM ", "t", ") AS x", 5000),
		"SELECT " + deep("(SELECT ", "1", ")", 5000),
		"SELECT 1 FROM t WHERE " + deep("a IN (SELECT a FROM t WHERE ", "TRUE", ")", 5000),
		"SELECT " + deep("EXISTS (SELECT ", "1", ")", 5000),
		deep("WITH c AS (", "SELECT 1", ") SELECT 1", 5000),
		"SELECT 1 UNION " + deep("(SELECT 1 UNION ", "SELECT 1", ")", 5000),
		"SELECT * FROM t JOIN " + deep("(t JOIN ", "t", " ON TRUE)", 5000) + " ON TRUE",
	} {
		_, err := Parse(src)
		if err == nil || !strings.Contains(err.Error(), "nested too deeply") {
			t.Errorf("%.40s...: got %v, want a nesting error", src, err)
		}
	}
	for _, src := range []string{
		deep("(", "SELECT 1", ")", 100),
		"SELECT * FROM " + deep("(SELECT * FROM ", "t", ") AS x", 100),
		"SELECT " + deep("(SELECT ", "1", ")", 100),
	} {
		stmt, err := Parse(src)
		if err != nil {
			t.Errorf("%.40s...: %v", src, err)
			continue
		}
		if err := checkRoundTrip(src, stmt); err != nil {
			t.Errorf("%.40s...: %v", src, err)
		}
	}
}
