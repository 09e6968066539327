package driver

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// BenchmarkGroupBy runs the same GROUP BY through database/sql (every
// value scanned into Go) and through the connection's own sql.Session
// (the Arrow batches read), on one table of ROWTTL_BENCH_ROWS rows
// (default 262,144) in 1,000 groups:
//
//	ROWTTL_BENCH_ROWS=1000000 go test -run XXX -bench GroupBy ./driver
func BenchmarkGroupBy(b *testing.B) {
	rows := 1 << 18
	if n, err := strconv.Atoi(os.Getenv("ROWTTL_BENCH_ROWS")); err == nil && n > 0 {
		rows = n
	}
	db, _ := openTest(b, "")
	mustExec(b, db, "CREATE TABLE ev (id BIGINT, user_id BIGINT, amount DOUBLE) DUPLICATE KEY(id)")
	mustExec(b, db, "INSERT INTO ev VALUES (0, 0, 1.5e0), (1, 1, 2.5e0), (2, 2, 3.5e0), (3, 3, 4.5e0)")
	for n := 4; n < rows; n *= 2 {
		mustExec(b, db, fmt.Sprintf("INSERT INTO ev SELECT id + %d, (id + %d) %% 1000, amount FROM ev", n, n))
	}
	const q = "SELECT user_id, sum(amount), count(*) FROM ev GROUP BY user_id"
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	b.Run("database-sql", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			rs, err := conn.QueryContext(ctx, q)
			if err != nil {
				b.Fatal(err)
			}
			groups := 0
			var u, c int64
			var s float64
			for rs.Next() {
				if err := rs.Scan(&u, &s, &c); err != nil {
					b.Fatal(err)
				}
				groups++
			}
			if err := rs.Err(); err != nil || groups != 1000 {
				b.Fatalf("%d groups: %v", groups, err)
			}
			rs.Close()
		}
	})
	b.Run("session", func(b *testing.B) {
		err := conn.Raw(func(dc any) error {
			s := dc.(*Conn).Session()
			for i := 0; i < b.N; i++ {
				r, err := s.Query(ctx, q)
				if err != nil {
					return err
				}
				groups := 0
				for r.Next() {
					groups += int(r.RecordBatch().NumRows())
				}
				r.Release()
				if err := r.Err(); err != nil || groups != 1000 {
					return fmt.Errorf("%d groups: %v", groups, err)
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	})
}

var _ = sql.ErrNoRows
