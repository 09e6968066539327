package sql

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCountPushdownAgrees checks the count(*) fast path, taken when every
// conjunct of the WHERE pushes down, against the row path, forced by a
// conjunct that cannot be pushed (1 = 1), and the rows a pushed-down
// filter keeps against those of the same predicate hidden from pushdown
// under an OR: over columns of every kind and literals of other types, in
// both TTL modes, they must agree.
func TestCountPushdownAgrees(t *testing.T) {
	ctx := context.Background()
	s, exec := modelSession(t, 8)
	exec("SET session_now = '2026-01-01 00:00:00'")
	cols := `(id BIGINT, i INT, t TINYINT, d DOUBLE, f FLOAT, s VARCHAR(8), dt DATE, ts DATETIME(6), b BOOLEAN, dec DECIMAL(9,2))`
	exec(`CREATE TABLE direct ` + cols + ` DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true")`)
	exec(`CREATE TABLE source ` + cols + ` DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true",
		"function_column.ttl_col" = "ts", "function_column.ttl" = "3 days", "function_column.ttl_time_zone" = "UTC")`)
	rng := rand.New(rand.NewPCG(11, 12))
	pick := func(vals ...string) string { return vals[rng.IntN(len(vals))] }
	for batch := 0; batch < 5; batch++ {
		var direct, source []string
		for i := 0; i < 30; i++ {
			id := batch*100 + i
			row := []string{
				fmt.Sprint(id),
				pick("NULL", "-3", "0", "7", "2147483647"),
				pick("NULL", "-128", "5", "127"),
				pick("NULL", "0.5", "-1.25", "3", "1e10"),
				pick("NULL", "0.5", "2.75"),
				pick("NULL", "'a'", "'ab'", "'b'", "''"),
				pick("NULL", "'2025-12-30'", "'2026-01-01'", "'2026-02-01'"),
				pick("NULL", "'2025-12-28 10:00:00'", "'2025-12-30 00:00:00.5'", "'2026-01-01 00:00:00'"),
				pick("NULL", "true", "false"),
				pick("NULL", "1.25", "-7.50", "0"),
			}
			source = append(source, "("+strings.Join(row, ", ")+")")
			ttl := pick("NULL", "1767139200000000", "1767225600000000", "1767312000000000")
			direct = append(direct, "("+strings.Join(row, ", ")+", "+ttl+")")
		}
		exec("INSERT INTO direct (id, i, t, d, f, s, dt, ts, b, dec, __TTL__) VALUES " + strings.Join(direct, ", "))
		exec("INSERT INTO source VALUES " + strings.Join(source, ", "))
	}
	preds := map[string][]string{
		"i":       {"0", "7", "-3.5", "'7'", "2147483648", "NULL"},
		"t":       {"5", "127", "128", "-129", "'5'"},
		"d":       {"0.5", "3", "1e10", "-1.25", "'3'"},
		"f":       {"0.5", "2.75", "2.7", "1"},
		"s":       {"'a'", "'ab'", "''", "'b'", "1"},
		"dt":      {"'2026-01-01'", "'2026-01-01 00:00:00'", "'2026-01-01 10:00:00'", "'2025-12-30'"},
		"ts":      {"'2025-12-30 00:00:00.5'", "'2026-01-01'", "'2025-12-28 10:00:00'", "'2025-12-30'"},
		"b":       {"true", "false", "1", "0"},
		"dec":     {"1.25", "-7.5", "0", "1.255"},
		"__TTL__": {"1767225600000000", "'2026-01-01 00:00:00'", "'2026-01-02'", "0"},
	}
	ops := []string{"=", "<>", "<", "<=", ">", ">=", "<=>"}
	checked := 0
	for _, tbl := range []string{"direct", "source"} {
		for col, lits := range preds {
			for _, lit := range lits {
				for _, op := range ops {
					pred := fmt.Sprintf("%s %s %s", col, op, lit)
					for _, where := range []string{pred, fmt.Sprintf("%s IS NOT NULL", col), fmt.Sprintf("%s IN (%s, %s)", col, lit, lits[0]), fmt.Sprintf("%s BETWEEN %s AND %s", col, lits[0], lit)} {
						fast, ferr := s.Exec(ctx, fmt.Sprintf("SELECT count(*) FROM %s WHERE %s", tbl, where))
						slow, serr := s.Exec(ctx, fmt.Sprintf("SELECT count(*) FROM %s WHERE %s AND 1 = 1", tbl, where))
						if (ferr == nil) != (serr == nil) {
							t.Fatalf("%s WHERE %s: errors differ: %v / %v", tbl, where, ferr, serr)
						}
						if ferr != nil {
							continue
						}
						if f, sl := fast.Rows[0][0], slow.Rows[0][0]; f != sl {
							t.Fatalf("%s WHERE %s: count %s by pushdown, %s by rows", tbl, where, f, sl)
						}
						// Counts and integer sums reduced in the scan, against
						// the row path.
						q := "SELECT count(*), count(i), sum(i), count(t), sum(t), sum(id) FROM %s WHERE %s"
						inScan := exec(fmt.Sprintf(q, tbl, where))
						byRows := exec(fmt.Sprintf(q, tbl, "("+where+") OR 1 = 0"))
						if fmt.Sprint(inScan.Rows) != fmt.Sprint(byRows.Rows) {
							t.Fatalf("%s WHERE %s: aggregates %v in the scan, %v by rows", tbl, where, inScan.Rows, byRows.Rows)
						}
						// The rows, with the filter on zone maps and pages or
						// on the executor's rows alone.
						pushed := exec(fmt.Sprintf("SELECT * FROM %s WHERE %s ORDER BY id", tbl, where))
						rows := exec(fmt.Sprintf("SELECT * FROM %s WHERE (%s) OR 1 = 0 ORDER BY id", tbl, where))
						if fmt.Sprint(pushed.Rows) != fmt.Sprint(rows.Rows) {
							t.Fatalf("%s WHERE %s: rows differ\npushed %v\nrows   %v", tbl, where, pushed.Rows, rows.Rows)
						}
						checked++
					}
				}
			}
		}
	}
	if checked < 500 {
		t.Fatalf("only %d predicates compared", checked)
	}
}
