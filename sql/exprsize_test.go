package sql

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/sql/parser"
)

// chain returns n terms joined by op: "x op x op ... x".
func chain(x, op string, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(op)
		}
		b.WriteString(x)
	}
	return b.String()
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// linearBytes runs f(n) at two sizes and fails unless the bytes it
// allocates grow linearly: quadrupling n may at most quintuple them (a
// quadratic cost would multiply them by 16), and no term may cost more
// than perTerm bytes.
func linearBytes(t *testing.T, what string, n int, perTerm uint64, f func(n int)) {
	t.Helper()
	small, big := allocated(func() { f(n / 4) }), allocated(func() { f(n) })
	t.Logf("%s: %d terms %d bytes, %d terms %d bytes", what, n/4, small, n, big)
	if big > 5*small || big > uint64(n)*perTerm {
		t.Errorf("%s: %d terms allocate %d bytes, %d terms %d: not linear in the expression's size", what, n/4, small, n, big)
	}
}

// TestLongExpressionsCompileLinearly: an expression of 20,000 terms
// compiles in memory linear in its size, through SQL and through a load's
// column list alike.
func TestLongExpressionsCompileLinearly(t *testing.T) {
	const n = 20000
	sc, row := evalScope()
	env := &stmtEnv{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), loc: time.UTC}
	for _, c := range []struct{ x, op string }{{"i", " + "}, {"i", " * "}, {"-i", " - "}, {"dt + INTERVAL 1 DAY > dt", " AND "}} {
		linearBytes(t, "compile "+c.op, n, 8192, func(n int) {
			e, err := parser.ParseExpr(chain(c.x, c.op, n))
			if err != nil {
				t.Fatal(err)
			}
			x, err := newCompiler(env, sc).compile(e)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := x.eval(row); err != nil && !errors.Is(err, rowttl.ErrInvalidArgument) {
				t.Fatal(err)
			}
		})
	}

	def, pol := loadDef(t, true)
	linearBytes(t, "load columns", n, 8192, func(n int) {
		if _, err := CompileLoadColumns("id, x, v = "+chain("x", " + ", n), def, pol, time.UTC, time.Time{}); err != nil {
			t.Fatal(err)
		}
	})

	s, _ := modelSession(t, 0)
	ctx := context.Background()
	if _, err := s.Exec(ctx, "CREATE TABLE t (id INT, v INT) DUPLICATE KEY(id)"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, "INSERT INTO t VALUES (1, 2)"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SELECT %s FROM t", "SELECT id, sum(v) FROM t GROUP BY id HAVING %s > 0", "SELECT %s FROM t GROUP BY id, v"} {
		linearBytes(t, q, n, 8192, func(n int) {
			res, err := s.Exec(ctx, strings.Replace(q, "%s", chain("id", "+", n), 1))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rows) != 1 {
				t.Fatalf("%d rows", len(res.Rows))
			}
		})
	}

}

// TestExpressionLimits: an expression taller than MaxExprHeight or with
// more than MaxExprSize nodes is refused with a clear error, in SQL and in
// a load's column list alike; one at the limits is accepted.
func TestExpressionLimits(t *testing.T) {
	tall := "more than 32768 operators deep"
	if _, err := parser.ParseExpr(chain("i", "+", parser.MaxExprHeight)); err != nil {
		t.Errorf("%d terms: %v", parser.MaxExprHeight, err)
	}
	for _, src := range []string{chain("i", "+", parser.MaxExprHeight+1), chain("i", " AND ", parser.MaxExprHeight+1), "f(" + chain("i", "*", parser.MaxExprHeight) + ")"} {
		_, err := parser.ParseExpr(src)
		if err == nil || !strings.Contains(err.Error(), tall) || !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Errorf("%.20s...: %v, want an invalid argument saying %q", src, err, tall)
		}
	}
	s, _ := modelSession(t, 0)
	ctx := context.Background()
	if _, err := s.Exec(ctx, "CREATE TABLE t (id INT, v INT) DUPLICATE KEY(id)"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SELECT %s FROM t", "SELECT id FROM t WHERE %s > 0", "INSERT INTO t VALUES (1, %s)", "SELECT id FROM t WHERE id IN (SELECT %s FROM t)"} {
		_, err := s.Exec(ctx, strings.Replace(q, "%s", chain("1", "+", parser.MaxExprHeight+1), 1))
		if err == nil || !strings.Contains(err.Error(), tall) || !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Errorf("%s: %v, want an invalid argument saying %q", q, err, tall)
		}
	}
	def, pol := loadDef(t, true)
	_, err := CompileLoadColumns("id, x, v = "+chain("x", "+", parser.MaxExprHeight+1), def, pol, time.UTC, time.Time{})
	if err == nil || !strings.Contains(err.Error(), "columns: ") || !strings.Contains(err.Error(), tall) || !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Errorf("load columns: %v, want an invalid argument saying %q", err, tall)
	}

	defer func(n int) { parser.MaxExprSize = n }(parser.MaxExprSize)
	parser.MaxExprSize = 1000
	in := func(n int) string { return "i IN (" + chain("1", ", ", n) + ")" }
	if _, err := parser.ParseExpr(in(998)); err != nil {
		t.Errorf("1000 nodes: %v", err)
	}
	if _, err := parser.ParseExpr(in(999)); err == nil || !strings.Contains(err.Error(), "more than 1000 terms") {
		t.Errorf("1001 nodes: %v", err)
	}
}
