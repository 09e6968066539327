package sql

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
)

// TestRefusalsAreNotSupported checks that every shape the executor refuses
// is refused with ErrNotSupported (not a syntax error), naming the
// construct, and that IsSimple agrees with the executor.
func TestRefusalsAreNotSupported(t *testing.T) {
	db, err := table.OpenDB(t.TempDir(), &table.Options{Clock: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := NewSession(db)
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE t (id INT, v INT) DUPLICATE KEY(id)",
		"CREATE TABLE u (id INT, v INT) DUPLICATE KEY(id)",
	} {
		if _, err := s.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ src, construct string }{
		{"SELECT sum(id) OVER (ORDER BY id RANGE BETWEEN 1 FOLLOWING AND 2 FOLLOWING) FROM t", "RANGE frame"},
		{"SELECT t.id, (SELECT max(v) FROM u WHERE u.id = t.id) FROM t JOIN u ON t.id = u.id GROUP BY t.id", "scalar subquery"},
		{"SELECT 1 FROM t WHERE id IN (SELECT id FROM u WHERE u.v = t.v) OR id = 1", "correlated subquery"},
		{"DELETE FROM t WHERE id IN (SELECT id FROM u)", "IN (subquery)"},
	} {
		stmt, err := parser.Parse(tc.src)
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		if sel, ok := stmt.(*parser.Select); ok && sel.IsSimple() {
			t.Errorf("%s: IsSimple = true", tc.src)
		}
		_, err = s.Exec(ctx, tc.src)
		if !errors.Is(err, rowttl.ErrNotSupported) || errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Errorf("%s: got %v, want ErrNotSupported alone", tc.src, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tc.construct) || !strings.HasSuffix(msg, "is not supported yet") {
			t.Errorf("%s: %q does not name %s", tc.src, msg, tc.construct)
		}
	}
	// Query and EXPLAIN refuse them the same way.
	for _, src := range []string{"SELECT 1 UNION SELECT sum(id) OVER (ORDER BY id RANGE BETWEEN 1 FOLLOWING AND 2 FOLLOWING) FROM t", "SELECT * FROM t JOIN u USING (id) WHERE t.id IN (SELECT count(*) OVER (ORDER BY id RANGE BETWEEN 1 FOLLOWING AND 2 FOLLOWING) FROM u)", "EXPLAIN SELECT 1 EXCEPT SELECT sum(id) OVER (ORDER BY id RANGE BETWEEN 1 FOLLOWING AND 2 FOLLOWING) FROM t"} {
		if r, err := s.Query(ctx, src); !errors.Is(err, rowttl.ErrNotSupported) {
			if r != nil {
				r.Release()
			}
			t.Errorf("Query(%s): got %v, want ErrNotSupported", src, err)
		}
	}
	for _, src := range []string{
		"SELECT 1",
		"SELECT id, count(*) FROM t AS x WHERE v IN (1, 2) GROUP BY id HAVING count(*) > 1 ORDER BY 1 LIMIT 2",
	} {
		stmt, err := parser.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if !stmt.(*parser.Select).IsSimple() {
			t.Errorf("%s: IsSimple is false", src)
		}
		if _, err := s.Exec(ctx, src); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}
