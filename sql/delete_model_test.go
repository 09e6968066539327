package sql

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestDeleteAgreesWithSelect deletes with random predicates over columns of
// every kind from DUPLICATE and UNIQUE tables and checks each DELETE
// against the SELECT of the same predicate just before it: it reports as
// many rows as that SELECT returned, and afterwards exactly those rows are
// gone, compactions in between changing nothing.
func TestDeleteAgreesWithSelect(t *testing.T) {
	for _, model := range []string{"DUPLICATE KEY(id)", "UNIQUE KEY(id)"} {
		s, exec := modelSession(t, 4)
		exec("SET session_now = '2026-01-01 00:00:00'")
		exec(`CREATE TABLE t (id INT, i INT, d DOUBLE, s VARCHAR(8), dt DATE, b BOOLEAN, dec DECIMAL(9,2)) ` + model +
			` PROPERTIES ("function_column.enable_row_ttl" = "true", "disable_auto_compaction" = "true")`)
		rng := rand.New(rand.NewPCG(31, uint64(len(model))))
		pick := func(vals ...string) string { return vals[rng.IntN(len(vals))] }
		var tuples []string
		for id := 0; id < 400; id++ {
			tuples = append(tuples, fmt.Sprintf("(%d, %s, %s, %s, %s, %s, %s, %s)", id,
				pick("NULL", "-3", "0", "7", "12"),
				pick("NULL", "0.5", "-1.25", "3"),
				pick("NULL", "'a'", "'ab'", "'b'", "''"),
				pick("NULL", "'2025-12-30'", "'2026-01-01'", "'2026-02-01'"),
				pick("NULL", "true", "false"),
				pick("NULL", "1.25", "-7.50", "0"),
				pick("NULL", "NULL", "1", "4102444800000000")))
		}
		exec("INSERT INTO t (id, i, d, s, dt, b, dec, __TTL__) VALUES " + strings.Join(tuples, ", "))
		preds := []func() string{
			func() string { return "i " + pick("=", "<", ">=", "<>") + " " + pick("0", "7", "-3") },
			func() string { return "d " + pick("<", ">", "=") + " " + pick("0.5", "3", "0") },
			func() string { return "s " + pick("=", "<>", ">") + " " + pick("'a'", "''", "'ab'") },
			func() string { return "dt " + pick("<", ">=") + " '2026-01-01'" },
			func() string { return "b = " + pick("true", "false") },
			func() string { return "dec " + pick("<", ">") + " " + pick("0", "1.25") },
			func() string { return pick("i", "d", "s", "dt", "b", "dec") + pick(" IS NULL", " IS NOT NULL") },
			func() string { return "i + 0 > 5 OR s = 'b'" },
		}
		ids := func(where string) []string {
			q := "SELECT id FROM t"
			if where != "" {
				q += " WHERE " + where
			}
			var out []string
			for _, r := range exec(q + " ORDER BY id").Rows {
				out = append(out, r[0])
			}
			return out
		}
		for step := 0; step < 25; step++ {
			before := ids("")
			pred := preds[rng.IntN(len(preds))]()
			if rng.IntN(3) == 0 {
				pred += " AND " + preds[rng.IntN(len(preds))]()
			}
			doomed := ids(pred)
			res, err := s.Exec(context.Background(), "DELETE FROM t WHERE "+pred)
			if err != nil {
				t.Fatalf("%s: DELETE WHERE %s: %v", model, pred, err)
			}
			if res.RowsAffected != int64(len(doomed)) {
				t.Fatalf("%s: DELETE WHERE %s: %d rows affected, SELECT found %d", model, pred, res.RowsAffected, len(doomed))
			}
			if rng.IntN(3) == 0 {
				exec("ADMIN COMPACT TABLE t WHERE type = '" + pick("cumulative", "base", "full") + "'")
			}
			want := slices.DeleteFunc(slices.Clone(before), func(id string) bool { return slices.Contains(doomed, id) })
			if got := ids(""); !slices.Equal(got, want) {
				t.Fatalf("%s: after DELETE WHERE %s: %d rows, want %d", model, pred, len(got), len(want))
			}
		}
	}
}
