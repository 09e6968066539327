package sql

import (
	"context"
	"io"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/bench"
	"github.com/rowttl/rowttl/table"
)

// benchRows is the size of the generated events table of the engine
// benchmarks; ROWTTL_BENCH_ROWS overrides it (at most 1M on shared
// machines).
func benchRows() int64 {
	if n, err := strconv.ParseInt(os.Getenv("ROWTTL_BENCH_ROWS"), 10, 64); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

var benchDB struct {
	once sync.Once
	dir  string
	err  error
}

// benchEvents returns a data directory holding the generated events table
// (bench.Events, random expirations), made once per test binary.
func benchEvents(b *testing.B) string {
	benchDB.once.Do(func() {
		dir, err := os.MkdirTemp("", "rowttl-sql-bench")
		if err != nil {
			benchDB.err = err
			return
		}
		benchDB.dir = dir
		db, err := table.OpenDB(dir, &table.Options{DisableAutoCompaction: true})
		if err != nil {
			benchDB.err = err
			return
		}
		defer db.Close()
		tbl, err := db.CreateTable(table.DefaultDatabase, "events", bench.EventsDefinition(0), false)
		if err != nil {
			benchDB.err = err
			return
		}
		g := bench.Events(benchRows(), bench.Random, 1)
		benchDB.err = g.Each(memory.DefaultAllocator, func(_ int, rec arrow.RecordBatch) error {
			return tbl.Write(context.Background(), rec)
		})
	})
	if benchDB.err != nil {
		b.Fatal(benchDB.err)
	}
	return benchDB.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDB.dir != "" {
		os.RemoveAll(benchDB.dir)
	}
	os.Exit(code)
}

// BenchmarkQueries runs queries of the suite, printed as `rowttl sql`
// prints them (to io.Discard):
//
//	go test ./sql -run '^$' -bench Queries -benchtime 3x
func BenchmarkQueries(b *testing.B) {
	dir := benchEvents(b)
	queries := []struct{ name, text string }{
		{"point", "SELECT * FROM events WHERE id = 123457"},
		{"filter", "SELECT id, amount FROM events WHERE amount > 9990"},
		{"like", "SELECT id, user_id FROM events WHERE message LIKE '%refund%'"},
		{"exprs", "SELECT id, amount * 2 + 1, hour(event_time), upper(message) FROM events WHERE user_id % 100 = 7"},
		{"all_limit", "SELECT * FROM events LIMIT 100000"},
		{"q04_minmax", "SELECT min(event_time), max(event_time), avg(amount) FROM events"},
		{"q05_group_top", "SELECT user_id, sum(amount) FROM events GROUP BY user_id ORDER BY 2 DESC LIMIT 10"},
		{"q06_hour", "SELECT hour(event_time), count(*), sum(amount) FROM events GROUP BY hour(event_time) ORDER BY 1"},
		{"q07_topn", "SELECT id, amount FROM events ORDER BY amount DESC LIMIT 10"},
		{"q09_like_count", "SELECT count(*) FROM events WHERE message LIKE '%refund%'"},
	}
	db, err := table.OpenDB(dir, &table.Options{DisableAutoCompaction: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			s := NewSession(db)
			s.FreezeNow(bench.Now)
			ctx := context.Background()
			for b.Loop() {
				failed, err := s.RunScript(ctx, q.text, ScriptOptions{}, io.Discard)
				if err != nil || len(failed) > 0 {
					b.Fatalf("%s: %v %v", q.text, err, failed)
				}
			}
		})
	}
}

// BenchmarkCountManyRowsets runs SELECT count(*) through a session's Query,
// as the MySQL front end does, on a table of 200 rowsets (one per INSERT,
// compaction off): the statement's own cost, which every load's rowsets
// add to until compaction merges them.
//
//	go test ./sql -run '^$' -bench CountManyRowsets -benchmem
func BenchmarkCountManyRowsets(b *testing.B) {
	db, err := table.OpenDB(b.TempDir(), &table.Options{DisableAutoCompaction: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s := NewSession(db)
	ctx := context.Background()
	if _, err := s.Exec(ctx, "CREATE TABLE t (id BIGINT, user_id BIGINT, amount DOUBLE, msg VARCHAR(16)) DUPLICATE KEY(id)"); err != nil {
		b.Fatal(err)
	}
	const rowsets = 200
	for i := 0; i < rowsets; i++ {
		q := "INSERT INTO t VALUES (" + strconv.Itoa(2*i) + ", 1, 1.5, 'a'), (" + strconv.Itoa(2*i+1) + ", 2, 2.5, 'b')"
		if _, err := s.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	count := func() {
		r, err := s.Query(ctx, "SELECT count(*) FROM t")
		if err != nil {
			b.Fatal(err)
		}
		defer r.Release()
		got := int64(-1)
		for r.Next() {
			rec := r.RecordBatch()
			if rec.NumRows() == 1 {
				got = rec.Column(0).(interface{ Value(int) int64 }).Value(0)
			}
		}
		if err := r.Err(); err != nil || got != 2*rowsets {
			b.Fatalf("count %d, want %d: %v", got, 2*rowsets, err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		count()
	}
}
