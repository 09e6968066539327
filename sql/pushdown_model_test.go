package sql

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPushedFiltersAgainstUnpushed is a randomized differential test of the
// filters pushed into scans: conjunctions of comparisons of BIGINT and
// DOUBLE columns (evaluated on decoded values when a count or sum is
// reduced in the scan), IS [NOT] NULL, IN and [NOT] LIKE of every pushed
// pattern form, over rows with NULLs and expired rows on pages of a few
// rows, against the same predicate hidden from pushdown under an OR that
// the executor evaluates alone. Counts, sums and the rows themselves must
// agree: exactly, but for sums of doubles, which the scan adds exactly and
// rounds once while the executor rounds at every row. The seed is printed.
func TestPushedFiltersAgainstUnpushed(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	s, exec := modelSession(t, 8)
	exec("SET session_now = '2026-01-01 00:00:00'")
	exec(`CREATE TABLE p (id BIGINT, u BIGINT, d DOUBLE, m VARCHAR(20)) DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true")`)
	pick := func(vals ...string) string { return vals[rng.IntN(len(vals))] }
	// Words that, side by side in a page, spell a needle across two values.
	words := []string{"refund", "view", "re", "fund", "ref", "und", "refunded", "", "xrefundx", "ref und"}
	for batch := range 4 {
		var rows []string
		for i := range 40 {
			m := "NULL"
			if rng.IntN(6) > 0 {
				m = "'" + words[rng.IntN(len(words))] + pick("", "", " #1", "nd") + "'"
			}
			rows = append(rows, fmt.Sprintf("(%d, %s, %s, %s, %s)", batch*100+i,
				pick("NULL", "-3", "0", "7", "500", "9223372036854775807"),
				pick("NULL", "0.5", "-1.25", "3", "9000.01", "9000", "1e10", fmt.Sprintf("%d.%02d", rng.IntN(10000), rng.IntN(100))),
				m,
				pick("NULL", "1767139200000000", "1767312000000000")))
		}
		exec("INSERT INTO p (id, u, d, m, __TTL__) VALUES " + strings.Join(rows, ", "))
	}
	ops := []string{"=", "<>", "<", "<=", ">", ">=", "<=>"}
	pred := func() string {
		switch rng.IntN(7) {
		case 0:
			return fmt.Sprintf("u %s %s", pick(ops...), pick("0", "7", "500", "-4", "9223372036854775807", "NULL"))
		case 1:
			return fmt.Sprintf("id %s %d", pick(ops...), rng.IntN(400))
		case 2:
			return fmt.Sprintf("d %s %s", pick(ops...), pick("0.5", "3", "9000", "9000.01", "-1.25", "1e10", "2", fmt.Sprintf("%d.%d", rng.IntN(10000), rng.IntN(100))))
		case 3:
			return pick("d IS NULL", "u IS NOT NULL", "m IS NULL", "m IS NOT NULL")
		case 4:
			return fmt.Sprintf("u IN (%s, %s)", pick("0", "7", "500"), pick("-3", "NULL"))
		}
		w := "refund"
		if rng.IntN(2) == 0 {
			w = words[rng.IntN(len(words))]
		}
		p := pick("%"+w+"%", w+"%", "%"+w, w, "%", "%%"+w+"%%")
		return fmt.Sprintf("m %sLIKE '%s'", pick("", "NOT "), p)
	}
	for iter := range 200 {
		var conj []string
		for range 1 + rng.IntN(3) {
			conj = append(conj, pred())
		}
		where := strings.Join(conj, " AND ")
		hidden := "(" + where + ") OR 1 = 0"
		for _, q := range []string{
			// Reduced in the scan when every conjunct pushes.
			"SELECT count(*) FROM p WHERE %s",
			"SELECT count(*), sum(u), count(u), sum(id) FROM p WHERE %s",
			// Filtered in the scan, then again by the executor.
			"SELECT count(*), sum(d), count(d) FROM p WHERE %s",
			"SELECT id, u, d, m FROM p WHERE %s ORDER BY id",
		} {
			// A sum past BIGINT is an error both ways.
			out := func(text string) [][]string {
				r, err := s.Exec(context.Background(), text)
				if err != nil {
					return [][]string{{"error: " + err.Error()}}
				}
				return r.Rows
			}
			if pushed, byRows := out(fmt.Sprintf(q, where)), out(fmt.Sprintf(q, hidden)); !sameRows(pushed, byRows) {
				t.Fatalf("seed %d iter %d: %s\npushed   %v\nunpushed %v", seed, iter, fmt.Sprintf(q, where), pushed, byRows)
			}
		}
	}
}

// sameRows reports whether two results agree: cell by cell as text, or as
// numbers within a relative 1e-12 for a cell with a fraction or exponent
// on either side (a sum of doubles).
func sameRows(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j, x := range a[i] {
			y := b[i][j]
			if x == y {
				continue
			}
			if !strings.ContainsAny(x+y, ".e") {
				return false
			}
			fx, errx := strconv.ParseFloat(x, 64)
			fy, erry := strconv.ParseFloat(y, 64)
			if errx != nil || erry != nil || math.Abs(fx-fy) > 1e-12*max(math.Abs(fx), math.Abs(fy), 1) {
				return false
			}
		}
	}
	return true
}
