// Package tabletest holds test helpers over table.DB shared by the
// packages that build on tables (sql, load). It owns no behaviour of its
// own and must never be imported by non-test code.
package tabletest

import (
	"testing"

	"github.com/rowttl/rowttl/table"
)

// CheckAll runs Table.Check on every table of every database of db and
// reports each failure as a test error.
func CheckAll(t testing.TB, db *table.DB) {
	t.Helper()
	dbs, err := db.Databases()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dbs {
		names, err := db.Tables(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			tbl, err := db.Table(d, n)
			if err != nil {
				t.Errorf("open %s.%s: %v", d, n, err)
				continue
			}
			if err := tbl.Check(); err != nil {
				t.Errorf("check %s.%s: %v", d, n, err)
			}
		}
	}
}
