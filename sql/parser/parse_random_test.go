package parser

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// queryGen builds random query trees in the shape the parser produces:
// the reference model of TestRandomQueryRoundTrip, which formats each tree
// and checks that parsing the text gives the tree back.
type queryGen struct {
	r *rand.Rand
	n int // counter for unique names
}

func (g *queryGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *queryGen) name(prefix string) string {
	g.n++
	return prefix + strconv.Itoa(g.n)
}

func (g *queryGen) query(depth int) QueryExpr {
	var q QueryExpr
	if depth > 0 && g.chance(0.35) {
		op := []SetOpKind{SetUnion, SetIntersect, SetExcept}[g.r.IntN(3)]
		q = &SetOp{Op: op, All: op == SetUnion && g.chance(0.5), L: g.query(depth - 1), R: g.query(depth - 1)}
	} else {
		q = g.selectBlock(depth)
	}
	order, limit, with := queryTail(q)
	if g.chance(0.25) {
		var windows []*NamedWindow
		if s, ok := q.(*Select); ok {
			windows = append([]*NamedWindow{}, s.Windows...)
		}
		*order = g.orderItems(depth, windows)
	}
	if g.chance(0.2) {
		*limit = &Limit{Count: g.r.Int64N(100), Offset: g.r.Int64N(3)}
	}
	if depth > 0 && g.chance(0.15) {
		for range 1 + g.r.IntN(2) {
			c := &CTE{Name: g.name("c"), Query: g.query(depth - 1)}
			if g.chance(0.3) {
				c.Columns = []string{"x", "y"}
			}
			*with = append(*with, c)
		}
	}
	return q
}

func (g *queryGen) selectBlock(depth int) *Select {
	s := &Select{Distinct: g.chance(0.1)}
	if g.chance(0.2) {
		s.Windows = []*NamedWindow{{Name: g.name("w"), Spec: g.windowSpec(depth)}}
	}
	for range 1 + g.r.IntN(3) {
		it := &SelectItem{}
		switch {
		case g.chance(0.1):
			it.Star = true
		case g.chance(0.05):
			it.Star, it.StarTable = true, "t"
		default:
			it.Expr = g.expr(depth, append([]*NamedWindow{}, s.Windows...))
			if g.chance(0.3) {
				it.Alias = g.name("x")
			}
		}
		s.Items = append(s.Items, it)
	}
	if g.chance(0.8) {
		s.From = g.tableRef(depth)
	}
	if g.chance(0.4) {
		s.Where = g.expr(depth, nil)
	}
	if g.chance(0.2) {
		s.GroupBy = []Expr{g.expr(depth, nil)}
		if g.chance(0.5) {
			s.Having = g.expr(depth, nil)
		}
	}
	return s
}

func (g *queryGen) tableRef(depth int) *TableRef {
	switch {
	case depth > 0 && g.chance(0.35):
		kind := JoinKind(1 + g.r.IntN(6))
		j := &Join{Kind: kind, Left: g.tableRef(depth - 1), Right: g.tableRef(depth - 1)}
		if kind != JoinCross && kind != JoinComma && (kind.IsOuter() || g.chance(0.7)) {
			if g.chance(0.7) {
				j.On = g.expr(depth-1, nil)
			} else {
				j.Using = []string{"a", "b"}[:1+g.r.IntN(2)]
			}
		}
		return &TableRef{Join: j}
	case depth > 0 && g.chance(0.2):
		return &TableRef{Subquery: g.query(depth - 1), Alias: g.name("s")}
	}
	r := &TableRef{Table: TableName{Name: []string{"t", "u", "full", "window"}[g.r.IntN(4)]}}
	if g.chance(0.2) {
		r.Table.DB = "db"
	}
	if g.chance(0.4) {
		r.Alias = g.name("a")
	}
	return r
}

// orderItems returns ORDER BY items; window functions appear when windows
// is not nil (a select block's, possibly empty).
func (g *queryGen) orderItems(depth int, windows []*NamedWindow) []*OrderItem {
	var items []*OrderItem
	for range 1 + g.r.IntN(2) {
		var e Expr = &IntLit{Val: 1}
		if g.chance(0.7) {
			e = g.expr(depth, windows)
		}
		items = append(items, &OrderItem{Expr: e, Desc: g.chance(0.5), Nulls: NullsOrder(g.r.IntN(3))})
	}
	return items
}

// expr returns a random expression; windows, when not nil, allows window
// functions over them or over windows of their own.
func (g *queryGen) expr(depth int, windows []*NamedWindow) Expr {
	col := func() Expr {
		c := &ColumnRef{Name: []string{"a", "b", "c", "rows"}[g.r.IntN(4)]}
		if g.chance(0.3) {
			c.Table = "t"
		}
		return c
	}
	if depth <= 0 || g.chance(0.3) {
		if g.chance(0.5) {
			return &IntLit{Val: g.r.Int64N(10)}
		}
		return col()
	}
	d := depth - 1
	switch g.r.IntN(11) {
	case 0:
		return &BinaryExpr{Op: []BinaryOp{OpAdd, OpMul, OpEq, OpAnd, OpOr}[g.r.IntN(5)], L: g.expr(d, windows), R: g.expr(d, windows)}
	case 1:
		return &SubqueryExpr{Query: g.query(d)}
	case 2:
		return &InSubquery{X: g.expr(d, nil), Not: g.chance(0.5), Query: g.query(d)}
	case 3:
		e := Expr(&ExistsExpr{Query: g.query(d)})
		if g.chance(0.5) {
			e = &UnaryExpr{Op: OpNot, X: e}
		}
		return e
	case 4:
		return &InExpr{X: g.expr(d, nil), Not: g.chance(0.5), List: []Expr{&SubqueryExpr{Query: g.query(d)}, g.expr(d, nil)}[:1+g.r.IntN(2)]}
	case 5:
		return &RegexpExpr{X: g.expr(d, nil), Pattern: &StringLit{Val: "^x"}, Not: g.chance(0.5)}
	case 6:
		return &TimestampDiff{Unit: IntervalUnit(1 + g.r.IntN(9)), From: col(), To: g.expr(d, nil)}
	case 7:
		return &ExtractExpr{Unit: IntervalUnit(1 + g.r.IntN(9)), X: g.expr(d, nil)}
	case 8, 9:
		if windows != nil {
			return g.windowFunc(d, windows)
		}
	}
	return &FuncCall{Name: "coalesce", Args: []Expr{col(), g.expr(d, nil)}}
}

func (g *queryGen) windowFunc(depth int, windows []*NamedWindow) Expr {
	w := &WindowFunc{}
	switch g.r.IntN(4) {
	case 0:
		w.Name = []string{"row_number", "rank", "dense_rank"}[g.r.IntN(3)]
	case 1:
		w.Name = []string{"lag", "lead"}[g.r.IntN(2)]
		w.Args = []Expr{g.expr(depth, nil), &IntLit{Val: g.r.Int64N(3)}, &NullLit{}}[:1+g.r.IntN(3)]
	case 2:
		w.Name, w.Star = "count", true
	default:
		w.Name = []string{"sum", "min", "max", "avg", "count"}[g.r.IntN(5)]
		w.Args = []Expr{g.expr(depth, nil)}
	}
	if len(windows) > 0 && g.chance(0.4) {
		w.Over = &WindowSpec{Ref: windows[0].Name}
		if base := windows[0].Spec; base.OrderBy == nil && base.Frame == nil && g.chance(0.5) {
			// A window built on the named one adds its ORDER BY.
			w.Over.OrderBy = g.orderItems(depth, nil)
		}
	} else {
		w.Over = g.windowSpec(depth)
	}
	return w
}

func (g *queryGen) windowSpec(depth int) *WindowSpec {
	w := &WindowSpec{}
	if g.chance(0.5) {
		w.PartitionBy = []Expr{g.expr(depth, nil)}
	}
	if g.chance(0.6) {
		w.OrderBy = g.orderItems(depth, nil)
	}
	if g.chance(0.4) {
		f := &Frame{Unit: FrameRows}
		kinds := []BoundKind{FrameUnboundedPreceding, FramePreceding, FrameCurrentRow, FrameFollowing, FrameUnboundedFollowing}
		if g.chance(0.3) {
			f.Unit = FrameRange
			kinds = []BoundKind{FrameUnboundedPreceding, FrameCurrentRow, FrameUnboundedFollowing}
		}
		// A start before UNBOUNDED FOLLOWING, an end after UNBOUNDED
		// PRECEDING, start <= end.
		i := g.r.IntN(len(kinds) - 1)
		j := i + g.r.IntN(len(kinds)-i)
		if j == 0 {
			j = 1
		}
		f.Start, f.End = FrameBound{Kind: kinds[i]}, FrameBound{Kind: kinds[j]}
		for _, b := range []*FrameBound{&f.Start, &f.End} {
			if b.Kind == FramePreceding || b.Kind == FrameFollowing {
				b.N = g.r.Int64N(5)
			}
		}
		w.Frame = f
	}
	return w
}

// TestRandomQueryRoundTrip formats random query trees (joins, derived
// tables, set operations, WITH, subqueries, window functions) and checks
// that each text parses back to its tree and formats identically. Set
// ROWTTL_PARSE_SEEDS=n to run more seeds.
func TestRandomQueryRoundTrip(t *testing.T) {
	seeds := 300
	if s, err := strconv.Atoi(os.Getenv("ROWTTL_PARSE_SEEDS")); err == nil {
		seeds = s
	}
	// Each construct must show up, so that the generator cannot quietly
	// stop producing it.
	seen := map[string]int{}
	constructs := []string{" JOIN ", ", ", " UNION ", " INTERSECT ", " EXCEPT ", "WITH ", " OVER (", " OVER w",
		" EXISTS (", " IN (SELECT", ") AS s", " ROWS BETWEEN ", " RANGE BETWEEN ", " WINDOW ", " ORDER BY ", " LIMIT "}
	for seed := range uint64(seeds) {
		g := &queryGen{r: rand.New(rand.NewPCG(seed, 7))}
		q := g.query(3)
		text := FormatQuery(q)
		stmt, err := Parse(text)
		if err != nil {
			t.Fatalf("seed %d: %s\ndoes not parse: %v", seed, text, err)
		}
		if !sameTree(q, stmt) {
			t.Fatalf("seed %d: %s\nparses to a different tree:\n%s", seed, text, dumpNode(stmt))
		}
		if again := FormatQuery(stmt.(QueryExpr)); again != text {
			t.Fatalf("seed %d: %s\nformats back as\n%s", seed, text, again)
		}
		for _, c := range constructs {
			if strings.Contains(text, c) {
				seen[c]++
			}
		}
	}
	for _, c := range constructs {
		if seen[c] == 0 {
			t.Errorf("no query of %d seeds has %q", seeds, c)
		}
	}
	t.Logf("%d seeds; queries per construct: %v", seeds, seen)
}
