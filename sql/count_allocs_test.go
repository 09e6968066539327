package sql

import (
	"context"
	"strconv"
	"testing"

	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/table"
)

// TestCountAllocsDoNotGrowWithRowsets: a SELECT count(*) that zone maps
// answer allocates per statement, not per segment or page: each load adds
// rowsets, and a count under loads must not cost more with every one. The
// scan on one goroutine and the parallel pipeline are both checked.
func TestCountAllocsDoNotGrowWithRowsets(t *testing.T) {
	ctx := context.Background()
	allocs := func(rowsets int, workers int) float64 {
		db, err := table.OpenDB(t.TempDir(), &table.Options{DisableAutoCompaction: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		s := NewSession(db)
		if _, err := s.Exec(ctx, "CREATE TABLE t (id BIGINT, v DOUBLE) DUPLICATE KEY(id)"); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < rowsets; i++ {
			if _, err := s.Exec(ctx, "INSERT INTO t VALUES ("+strconv.Itoa(i)+", 1.5)"); err != nil {
				t.Fatal(err)
			}
		}
		qctx := query.WithParallelism(ctx, workers)
		count := func() {
			r, err := s.Query(qctx, "SELECT count(*) FROM t")
			if err != nil {
				t.Fatal(err)
			}
			for r.Next() {
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			r.Release()
		}
		count()
		return testing.AllocsPerRun(20, count)
	}
	for _, workers := range []int{1, 2} {
		few, many := allocs(4, workers), allocs(64, workers)
		t.Logf("%d workers: %.0f allocations per count of 4 rowsets, %.0f of 64", workers, few, many)
		// Sixty more rowsets may cost a few allocations (a map grows), not
		// one or more per rowset.
		if many-few > 10 {
			t.Errorf("%d workers: %.0f allocations per count of 64 rowsets, %.0f of 4: they grow with the rowsets", workers, many, few)
		}
	}
}
