package parser

import (
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a+b*c", "a + b * c"},
		{"(a+b)*c", "(a + b) * c"},
		{"a - (b + c)", "a - (b + c)"},
		{"(a - b) + c", "a - b + c"},
		{"a / (b * c)", "a / (b * c)"},
		{"- (- a)", "-(-a)"},
		{"-(-1)", "1"},
		{"a - -1", "a - -1"},
		{"NOT (a = b)", "NOT a = b"},
		{"(NOT a) AND b", "NOT a AND b"},
		{"NOT (a AND b)", "NOT (a AND b)"},
		{"a OR (b OR c)", "a OR (b OR c)"},
		{"(a OR b) AND c", "(a OR b) AND c"},
		{"a = (b = c)", "a = (b = c)"},
		{"(a + 1) BETWEEN (b AND c) AND d", "a + 1 BETWEEN (b AND c) AND d"},
		{"x IN (a OR b)", "x IN (a OR b)"},
		{"'a\\nb\\tc\\\\d''e\\0'", `'a\nb\tc\\d''e\0'`},
		{"`order`.`key` + `x y`.z + `1a`", "`order`.key + `x y`.z + `1a`"},
		{"`current_timestamp` + CURRENT_TIMESTAMP", "`current_timestamp` + current_timestamp()"},
		{"DATE_SUB(NOW(), INTERVAL (1 + 1) HOUR)", "now() - INTERVAL 1 + 1 HOUR"},
		{"d + INTERVAL (a = b) DAY", "d + INTERVAL (a = b) DAY"},
	} {
		e, err := ParseExpr(tc.in)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tc.in, err)
			continue
		}
		if got := FormatExpr(e); got != tc.want {
			t.Errorf("FormatExpr(ParseExpr(%q)) = %q, want %q", tc.in, got, tc.want)
		}
		if err := checkExpr(e); err != nil {
			t.Errorf("%q: %v", tc.in, err)
		}
	}
}

func TestQuoteIdent(t *testing.T) {
	for in, want := range map[string]string{
		"a": "a", "_x$1": "_x$1", "ünï": "ünï", "": "``", "1a": "`1a`",
		"a b": "`a b`", "a`b": "`a``b`", "select": "`select`", "Null": "`Null`",
		"key": "key", "__DORIS_TTL_COL__": "__DORIS_TTL_COL__",
	} {
		if got := QuoteIdent(in); got != want {
			t.Errorf("QuoteIdent(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWalk(t *testing.T) {
	e, err := ParseExpr("CASE WHEN a IN (b, c) THEN f(d, count(*)) ELSE -e END + CAST(g AS INT) - INTERVAL h DAY")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	Walk(e, func(x Expr) bool {
		if c, ok := x.(*ColumnRef); ok {
			names = append(names, c.Name)
		}
		return true
	})
	if got := strings.Join(names, ","); got != "a,b,c,d,e,g,h" {
		t.Errorf("Walk visited columns %s, want a,b,c,d,e,g,h", got)
	}
	// Returning false prunes the subtree.
	var visited int
	Walk(e, func(x Expr) bool {
		visited++
		_, isCase := x.(*CaseExpr)
		return !isCase
	})
	if visited != 6 { // DateArith, BinaryExpr, CaseExpr, CastExpr, g, h
		t.Errorf("pruned walk visited %d nodes, want 6", visited)
	}
	if !ContainsAggregate(e) {
		t.Error("ContainsAggregate missed count(*)")
	}
	if ContainsAggregate(&FuncCall{Name: "now"}) {
		t.Error("ContainsAggregate: now() is not an aggregate")
	}
}

func TestDeepNesting(t *testing.T) {
	for _, src := range []string{
		"SELECT " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000),
		"SELECT " + strings.Repeat("- ", 5000) + "a",
		"SELECT " + strings.Repeat("NOT ", 5000) + "a",
	} {
		_, err := Parse(src)
		if err == nil || !strings.Contains(err.Error(), "nested too deeply") {
			t.Errorf("got %v, want a nesting error", err)
		}
	}
	if _, err := Parse("SELECT " + strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100)); err != nil {
		t.Errorf("100 levels: %v", err)
	}
}
