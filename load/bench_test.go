package load

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/table"
)

// genCSV writes about size bytes of event rows (tab-separated: id,
// user_id, event_time, msg, value, expiration) to w and returns the rows.
func genCSV(w io.Writer, size int64) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	msgs := []string{"view", "click", "purchase", "add to cart", "login", "logout from the session"}
	var written, rows int64
	var line []byte
	for written < size {
		ts := base.Add(time.Duration(rng.Int64N(int64(240 * time.Hour))))
		exp := ts.Add(time.Duration(1+rng.IntN(72)) * time.Hour)
		line = line[:0]
		line = strconv.AppendInt(line, rows, 10)
		line = append(line, '\t')
		line = strconv.AppendInt(line, rng.Int64N(1_000_000), 10)
		line = append(line, '\t')
		line = ts.AppendFormat(line, "2006-01-02 15:04:05.000000")
		line = append(line, '\t')
		line = append(line, msgs[rng.IntN(len(msgs))]...)
		line = append(line, '\t')
		line = strconv.AppendFloat(line, float64(rng.IntN(1_000_000))/100, 'f', -1, 64)
		line = append(line, '\t')
		line = exp.AppendFormat(line, "2006-01-02 15:04:05")
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return rows, err
		}
		written += int64(len(line))
		rows++
	}
	return rows, bw.Flush()
}

// peakRSS returns VmHWM of this process in bytes (0 where /proc is
// missing).
func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkBigLoad loads a generated CSV of about 1 GB (ROWTTL_BIG_LOAD_MB
// changes the size) into a DUPLICATE row TTL table (ROWTTL_BIG_LOAD_MODEL=
// UNIQUE for a merge-on-write one) through a pipe, with a derived __TTL__,
// and reports rows/s, MB/s and the process's peak RSS.
// It runs only with ROWTTL_BIG_LOAD=1:
//
//	ROWTTL_BIG_LOAD=1 go test ./load -run '^$' -bench BigLoad -benchtime 1x
func BenchmarkBigLoad(b *testing.B) {
	if os.Getenv("ROWTTL_BIG_LOAD") != "1" {
		b.Skip("set ROWTTL_BIG_LOAD=1 to load a generated 1 GB CSV")
	}
	size := int64(1 << 30)
	if s := os.Getenv("ROWTTL_BIG_LOAD_MB"); s != "" {
		mb, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		size = mb << 20
	}
	model := "DUPLICATE"
	if m := os.Getenv("ROWTTL_BIG_LOAD_MODEL"); m != "" {
		model = m
	}
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		db, err := table.OpenDB(dir, &table.Options{DisableAutoCompaction: true})
		if err != nil {
			b.Fatal(err)
		}
		s := sql.NewSession(db)
		if _, err := s.Exec(context.Background(), `CREATE TABLE events (id BIGINT, user_id INT, event_time DATETIME(6),
			msg VARCHAR(64), value DOUBLE) `+model+` KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true")`); err != nil {
			b.Fatal(err)
		}
		tbl, err := db.Table(table.DefaultDatabase, "events")
		if err != nil {
			b.Fatal(err)
		}
		pr, pw := io.Pipe()
		gen := make(chan int64, 1)
		go func() {
			n, err := genCSV(pw, size)
			pw.CloseWithError(err)
			gen <- n
		}()
		start := time.Now()
		res := Run(context.Background(), tbl, pr, Options{
			Columns: "id, user_id, event_time, msg, value, exp, __DORIS_TTL_COL__ = cast(exp as datetime(6))",
		}, nil)
		took := time.Since(start)
		pr.Close()
		rows := <-gen
		if !res.OK() || res.NumberLoadedRows != rows {
			b.Fatalf("load of %d rows: %s", rows, res.JSON())
		}
		st, err := tbl.Stats(context.Background(), time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		if err != nil {
			b.Fatal(err)
		}
		if err := tbl.Check(); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		rss := peakRSS()
		b.ReportMetric(float64(rows)/took.Seconds(), "rows/s")
		b.ReportMetric(float64(res.LoadBytes)/1e6/took.Seconds(), "MB/s")
		b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
		b.Logf("%d rows, %.0f MB of CSV in %v: %.0f rows/s, %.1f MB/s; %d rowsets, %.0f MB on disk; peak RSS %.1f MiB",
			rows, float64(res.LoadBytes)/1e6, took.Round(time.Millisecond), float64(rows)/took.Seconds(),
			float64(res.LoadBytes)/1e6/took.Seconds(), st.Rowsets, float64(st.BytesOnDisk)/1e6, float64(rss)/(1<<20))
	}
}

// BenchmarkConvert measures the per-row cost of splitting and converting
// a record without the table.
func BenchmarkConvert(b *testing.B) {
	var buf bytes.Buffer
	rows, err := genCSV(&buf, 8<<20)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r := NewReader(bytes.NewReader(buf.Bytes()), Format{})
		var n int64
		for {
			f, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil || len(f) != 6 {
				b.Fatal(fmt.Sprint(err, len(f)))
			}
			if _, ok := fastDatetime(f[2]); !ok {
				b.Fatalf("datetime %q", f[2])
			}
			n++
		}
		if n != rows {
			b.Fatalf("%d rows of %d", n, rows)
		}
	}
}

// BenchmarkDecimalConvert measures the per-field cost of reading DECIMAL
// text: DECIMAL(18,2) values and DECIMAL(38,10) ones past 64 bits.
func BenchmarkDecimalConvert(b *testing.B) {
	for _, c := range []struct {
		name string
		typ  schema.Type
		text string
	}{
		{"18_2", schema.DecimalType(18, 2), "1234567890123456.78"},
		{"38_10", schema.DecimalType(38, 10), "-9999999999999999999999999999.9999999999"},
	} {
		b.Run(c.name, func(b *testing.B) {
			conv, err := converterFor(sql.LoadField{Name: "d", Type: c.typ}, time.UTC)
			if err != nil {
				b.Fatal(err)
			}
			text := []byte(c.text)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := conv(text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoadRows loads rows of (id BIGINT, user_id BIGINT, amount
// DOUBLE, msg STRING), the shape of the Stream Loads server/mysql's
// BenchmarkCountUnderLoads runs: one load of 200000 rows
// (ROWTTL_BENCH_LOAD_ROWS) per iteration, then eight at once of an eighth
// each, unbounded and in a pool of GOMAXPROCS-1 slots (what a server's
// loads get when no statement competes). It reports rows/s and the Go
// memory allocated per row: what loads leave to the garbage collector.
//
//	go test -run XXX -bench LoadRows ./load
func BenchmarkLoadRows(b *testing.B) {
	rows := 200000
	if n, err := strconv.Atoi(os.Getenv("ROWTTL_BENCH_LOAD_ROWS")); err == nil && n > 0 {
		rows = n
	}
	db, err := table.OpenDB(b.TempDir(), &table.Options{DisableAutoCompaction: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s := sql.NewSession(db)
	if _, err := s.Exec(context.Background(), `CREATE TABLE ev (id BIGINT, user_id BIGINT, amount DOUBLE, msg STRING) DUPLICATE KEY(id)`); err != nil {
		b.Fatal(err)
	}
	tbl, err := db.Table(table.DefaultDatabase, "ev")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		loads int
		pool  *Workers
	}{
		{"1-load", 1, nil},
		{"8-loads", 8, nil},
		{"8-loads-pool", 8, NewWorkers(runtime.GOMAXPROCS(0) - 1)},
	} {
		b.Run(c.name, func(b *testing.B) {
			var data bytes.Buffer
			for i := 0; i < rows/c.loads; i++ {
				fmt.Fprintf(&data, "%d\t%d\t1.5\tloaded\n", 10_000_000+i, i%1000)
			}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				var wg sync.WaitGroup
				for l := 0; l < c.loads; l++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						res := Run(context.Background(), tbl, bytes.NewReader(data.Bytes()), Options{Workers: c.pool}, nil)
						if !res.OK() || res.NumberLoadedRows != int64(rows/c.loads) {
							b.Errorf("%s: %s", res.Status, res.Message)
						}
					}()
				}
				wg.Wait()
			}
			took := time.Since(start)
			runtime.ReadMemStats(&m1)
			n := float64(rows/c.loads*c.loads) * float64(b.N)
			b.ReportMetric(n/took.Seconds(), "rows/s")
			b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/n, "alloc-B/row")
			b.ReportMetric(float64(m1.NumGC-m0.NumGC)/float64(b.N), "GCs/op")
		})
	}
}
