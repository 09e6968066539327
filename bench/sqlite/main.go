// Command sqlbench times SQLite on rowttl's small-writes workloads, beside
// `rowttl bench --workloads smallwrites`: durable one-row autocommit INSERTs
// of the same generated rows (bench.SmallWriteRows) from 1 and 16
// goroutines, in WAL mode with synchronous=FULL (every commit synced), the
// same JSON result lines. It is a module of its own so that the main module
// never depends on SQLite; modernc.org/sqlite is pure Go, so no cgo.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rowttl/rowttl/bench"
	_ "modernc.org/sqlite"
)

// Engine is the engine name of sqlbench's results.
const Engine = "sqlite"

func main() {
	var (
		writes int
		dir    string
		seed   uint64
		wl     string
		sync   string
	)
	flag.IntVar(&writes, "writes", bench.DefaultSmallWrites, "one-row writes per run")
	flag.StringVar(&dir, "dir", filepath.Join(os.TempDir(), "rowttl-bench"), "directory for the databases")
	flag.Uint64Var(&seed, "seed", bench.DefaultSeed, "seed of the data generator")
	flag.StringVar(&wl, "workloads", "smallwrites", "workloads (smallwrites)")
	flag.StringVar(&sync, "synchronous", "FULL", "PRAGMA synchronous: FULL (a sync per commit) or NORMAL")
	flag.Bool("json", true, "print JSON lines (always on; accepted for symmetry with rowttl bench)")
	flag.Parse()
	for _, w := range strings.Split(wl, ",") {
		if w = strings.TrimSpace(w); w != "smallwrites" {
			fmt.Fprintf(os.Stderr, "sqlbench: unknown workload %q (want smallwrites)\n", w)
			os.Exit(2)
		}
	}
	if err := run(context.Background(), writes, dir, seed, strings.ToUpper(sync)); err != nil {
		fmt.Fprintln(os.Stderr, "sqlbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, writes int, dir string, seed uint64, sync string) error {
	if sync != "FULL" && sync != "NORMAL" {
		return fmt.Errorf("-synchronous %s: want FULL or NORMAL", sync)
	}
	if writes < 1 {
		return errors.New("-writes must be at least 1")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	g := bench.SmallWriteRows(writes, seed)
	warm := bench.SmallWriteWarmup(writes)
	rows := make([]bench.Row, warm+writes)
	for i := range rows {
		rows[i] = g.Row(int64(i))
	}
	for _, workers := range bench.SmallWriteWorkers {
		name := fmt.Sprintf("smallwrites_%d", workers)
		path := filepath.Join(dir, "sqlite-"+name+".db")
		res, err := runWrites(ctx, path, sync, workers, rows, warm)
		removeDB(path)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		res.Workload = name
		if err := res.WriteJSON(os.Stdout); err != nil {
			return err
		}
	}
	return nil
}

func runWrites(ctx context.Context, path, sync string, workers int, rows []bench.Row, warm int) (bench.Result, error) {
	res := bench.Result{Engine: Engine, Layout: string(bench.Random), Rows: int64(len(rows) - warm), Goroutines: workers}
	if sync != "FULL" {
		res.Engine += "-" + strings.ToLower(sync)
	}
	removeDB(path)
	// A busy writer makes the others wait (busy_timeout) rather than fail:
	// SQLite has one writer at a time.
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(" + sync + ")&_pragma=busy_timeout(60000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return res, err
	}
	defer db.Close()
	db.SetMaxOpenConns(workers)
	db.SetMaxIdleConns(workers)
	if _, err := db.ExecContext(ctx, `CREATE TABLE events (id INTEGER NOT NULL, event_time INTEGER, user_id INTEGER, amount REAL, message TEXT, ttl INTEGER)`); err != nil {
		return res, err
	}
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || !strings.EqualFold(mode, "wal") {
		return res, fmt.Errorf("journal_mode is %q (%v), want wal", mode, err)
	}
	stmt, err := db.PrepareContext(ctx, `INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return res, err
	}
	defer stmt.Close()
	insert := func(off int) func(i int) (time.Duration, error) {
		return func(i int) (time.Duration, error) {
			r := rows[off+i]
			var ttl any
			if r.HasTTL {
				ttl = r.TTL
			}
			// One autocommit statement: one transaction, synced on commit.
			return bench.Timed(func() error {
				_, err := stmt.ExecContext(ctx, r.ID, r.EventTime, r.UserID, r.Amount, r.Message, ttl)
				return err
			})
		}
	}
	if _, _, err := bench.RunConcurrent(warm, workers, insert(0)); err != nil {
		return res, err
	}
	cpu0 := bench.CPUTime()
	lat, wall, err := bench.RunConcurrent(len(rows)-warm, workers, insert(warm))
	if err != nil {
		return res, err
	}
	cpu := bench.CPUTime() - cpu0
	bench.SmallWriteResult(&res, lat, wall)
	res.CPUSeconds = cpu.Seconds()
	var live int64
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE ttl IS NULL OR ttl > ?`, bench.Now.UnixMicro()).Scan(&live); err != nil {
		return res, err
	}
	res.Answer = fmt.Sprintf("live=%d", live)
	for _, suffix := range []string{"", "-wal"} {
		if st, err := os.Stat(path + suffix); err == nil {
			res.BytesOnDisk += st.Size()
		}
	}
	res.PeakRSSBytes = bench.PeakRSS()
	return res, nil
}

func removeDB(path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
}
