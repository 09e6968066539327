package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rowttl/rowttl/load"
)

// benchRows is the size of the benchmarks' tables: ROWTTL_BENCH_ROWS, or
// a modest default.
func benchRows(def int) int {
	if n, err := strconv.Atoi(os.Getenv("ROWTTL_BENCH_ROWS")); err == nil && n > 0 {
		return n
	}
	return def
}

// fillTable makes table name (id BIGINT, user_id BIGINT, amount DOUBLE,
// msg STRING) of at least rows rows by doubling INSERT ... SELECT.
func fillTable(b testing.TB, db *sql.DB, name string, rows int) int {
	mustExec(b, db, "CREATE TABLE "+name+" (id BIGINT, user_id BIGINT, amount DOUBLE, msg STRING) DUPLICATE KEY(id)")
	mustExec(b, db, "INSERT INTO "+name+" VALUES (0, 1, 1.5e0, 'view'), (1, 2, 2.25e0, 'click'), (2, 3, 3e0, 'purchase'), (3, 4, 4.75e0, 'login')")
	n := 4
	for n < rows {
		mustExec(b, db, fmt.Sprintf("INSERT INTO %s SELECT id + %d, (id + %d) %% 1000, amount, msg FROM %s", name, n, n, name))
		n *= 2
	}
	return n
}

// BenchmarkStreamToGoSQLDriver streams a whole table through the protocol
// to go-sql-driver/mysql, scanning every value; it reports rows/s and the
// process's peak RSS while streaming (server and client together).
//
//	ROWTTL_BENCH_ROWS=1000000 go test -run XXX -bench StreamToGoSQLDriver ./server/mysql
func BenchmarkStreamToGoSQLDriver(b *testing.B) {
	ts := startServer(b, Options{})
	db := ts.open(b, "")
	n := fillTable(b, db, "ev", benchRows(1<<20))
	// The peak RSS measured is the streaming's, not the setup's: return
	// the setup's memory and reset VmHWM (Linux: clear_refs 5).
	runtime.GC()
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		rows, err := db.Query("SELECT id, user_id, amount, msg FROM ev")
		if err != nil {
			b.Fatal(err)
		}
		var id, user int64
		var amount float64
		var msg sql.RawBytes
		got := 0
		for rows.Next() {
			if err := rows.Scan(&id, &user, &amount, &msg); err != nil {
				b.Fatal(err)
			}
			got++
		}
		if err := rows.Err(); err != nil || got != n {
			b.Fatalf("%d rows of %d: %v", got, n, err)
		}
		rows.Close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/time.Since(start).Seconds(), "rows/s")
	// CPU per row (server and client together): what a loaded machine
	// does not change.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(n)/float64(b.N), "cpu-ns/row")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MiB")
}

// BenchmarkCountUnderLoads runs SELECT count(*) on 64 connections while 8
// Stream Loads (ROWTTL_BENCH_LOADS) of 20000 rows each
// (ROWTTL_BENCH_LOAD_ROWS) run over HTTP on the same server, and reports
// the p50 and p99 latency of the counts, the loads' rows per second
// together, the process's processor time (per count without loads) and
// peak RSS; every load must succeed, its rows visible to a count as soon
// as it answers. With no loads, the counts run for a second.
//
//	go test -run XXX -bench CountUnderLoads -benchtime 1x ./server/mysql
func BenchmarkCountUnderLoads(b *testing.B) {
	ts := startServer(b, Options{})
	db := ts.open(b, "")
	db.SetMaxOpenConns(80)
	db.SetMaxIdleConns(80)
	fillTable(b, db, "ev", benchRows(1<<16))
	hs := load.NewServer(ts.db, load.ServerOptions{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go hs.Serve(ctx, ln)
	loadRows := 20000
	if n, err := strconv.Atoi(os.Getenv("ROWTTL_BENCH_LOAD_ROWS")); err == nil && n > 0 {
		loadRows = n
	}
	var body strings.Builder
	for i := 0; i < loadRows; i++ {
		fmt.Fprintf(&body, "%d\t%d\t1.5\tloaded\n", 10_000_000+i, i%1000)
	}
	// The 64 connections are open before the loads start: a handshake is
	// not a count's latency.
	conns := make([]*sql.Conn, 64)
	for c := range conns {
		if conns[c], err = db.Conn(ctx); err != nil {
			b.Fatal(err)
		}
		defer conns[c].Close()
		if err := conns[c].PingContext(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		before := count(b, db, "SELECT count(*) FROM ev")
		var wg sync.WaitGroup
		var mu sync.Mutex
		var lat []time.Duration
		errs := make(chan error, 128)
		loadsDone := make(chan struct{})
		loads := 8
		if n, err := strconv.Atoi(os.Getenv("ROWTTL_BENCH_LOADS")); err == nil && n >= 0 {
			loads = n
		}
		if loads == 0 {
			wg.Add(1)
			go func() { defer wg.Done(); time.Sleep(time.Second) }()
		}
		var succeeded atomic.Int32
		loadStart, cpu0 := time.Now(), cpuTime()
		for l := 0; l < loads; l++ {
			wg.Add(1)
			go func(l int) {
				defer wg.Done()
				req, _ := http.NewRequest(http.MethodPut, "http://"+ln.Addr().String()+"/api/default/ev/_stream_load", strings.NewReader(body.String()))
				req.Header.Set("label", fmt.Sprintf("bench-%d-%d-%d", it, l, time.Now().UnixNano()))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- err
					return
				}
				answer, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || !strings.Contains(string(answer), `"Success"`) {
					errs <- fmt.Errorf("load %d: %s %s %v", l, resp.Status, answer, err)
					return
				}
				// The load's rows are visible once it answers: the table
				// holds at least the rows of the loads answered so far.
				done := int(succeeded.Add(1))
				var n int
				if err := db.QueryRow("SELECT count(*) FROM ev").Scan(&n); err != nil {
					errs <- err
				} else if n < before+done*loadRows {
					errs <- fmt.Errorf("load %d answered Success, count %d < %d", l, n, before+done*loadRows)
				}
			}(l)
		}
		var qwg sync.WaitGroup
		for _, conn := range conns {
			qwg.Add(1)
			go func() {
				defer qwg.Done()
				for k := 0; ; k++ {
					select {
					case <-loadsDone:
						if k >= 5 {
							return
						}
					default:
					}
					t0 := time.Now()
					var n int
					if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM ev").Scan(&n); err != nil {
						errs <- err
						return
					}
					d := time.Since(t0)
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		loadTime := time.Since(loadStart)
		close(loadsDone)
		qwg.Wait()
		cpu := cpuTime() - cpu0
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		if after := count(b, db, "SELECT count(*) FROM ev"); after != before+loads*loadRows {
			b.Fatalf("count %d after the loads, want %d", after, before+loads*loadRows)
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(len(lat)), "counts")
		// The process's processor time, server and clients together: on a
		// shared machine it varies far less than the latencies. Without
		// loads it is all the counts'.
		b.ReportMetric(float64(cpu.Milliseconds()), "cpu-ms")
		if loads == 0 {
			b.ReportMetric(float64(cpu.Microseconds())/float64(len(lat)), "cpu-us/count")
		}
		if loads > 0 {
			b.ReportMetric(float64(loads*loadRows)/loadTime.Seconds(), "load-rows/s")
		}
		b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MiB")
	}
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is VmHWM of this process in bytes (0 where /proc is missing).
func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}
