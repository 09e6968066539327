//go:build duckdb_arrow

// Command duckbench runs the workloads of `rowttl bench` in DuckDB, on the
// same generated rows, and prints the same JSON lines, so that
// bench/compare.sh can put the two engines side by side.
//
// It is its own Go module (it needs cgo and the DuckDB library) so that the
// main module stays pure Go; build it with the duckdb_arrow tag:
//
//	cd bench/duckdb && go build -tags duckdb_arrow -o duckbench .
//
// The TTL filter is `ttl IS NULL OR ttl > now` over a BIGINT column of
// epoch microseconds, as rowttl's direct mode stores it.
//
// With -diff n it is instead a differential test of rowttl's SQL: n random
// queries of the suite's kinds (-diffseed picks them) run in rowttl's SQL
// session and in DuckDB over the same tables, and the answers that differ
// are printed (see diff.go):
//
//	duckbench -diff 300 -diffseed 3 -rows 1000000
package main

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/duckdb/duckdb-go/v2"
	"github.com/rowttl/rowttl/bench"
)

// Engine is the engine name of the results.
const Engine = "duckdb"

// workloads this side runs; load_arrow (loading through an Arrow view
// instead of the Appender) is extra and not in the default list.
var workloads = append([]string{"load", "load_arrow", "count", "sum", "groupby", "project", "reclaim", "upsert", "export", "import", "smallwrites"}, suiteNames()...)

func suiteNames() []string {
	var out []string
	for _, q := range bench.Suite {
		out = append(out, q.Name)
	}
	return out
}

type config struct {
	rows      int64
	layout    bench.Layout
	workloads []string
	runs      int
	writes    int
	warmup    int
	dir       string
	seed      uint64
	threads   int
	isolate   bool
	child     bool
	progress  io.Writer
}

func main() {
	var (
		c         config
		layouts   string
		wl        string
		jsonLines bool
	)
	flag.Int64Var(&c.rows, "rows", 2_000_000, "rows of the events table")
	flag.StringVar(&layouts, "layout", "random", "random, correlated, or both comma-separated")
	flag.StringVar(&wl, "workloads", "load,count,sum,groupby,project,reclaim,upsert", "comma-separated workloads ("+strings.Join(workloads, ",")+")")
	flag.IntVar(&c.runs, "runs", 3, "measured runs per workload (the median is reported)")
	flag.IntVar(&c.warmup, "warmup", 1, "warm-up runs per workload")
	flag.IntVar(&c.writes, "writes", bench.DefaultSmallWrites, "one-row writes of the smallwrites workload")
	flag.BoolVar(&jsonLines, "json", true, "print JSON lines (always on; accepted for symmetry with rowttl bench)")
	flag.StringVar(&c.dir, "dir", filepath.Join(os.TempDir(), "rowttl-bench"), "directory for the databases")
	flag.Uint64Var(&c.seed, "seed", bench.DefaultSeed, "seed of the data generator")
	flag.IntVar(&c.threads, "threads", 2, "DuckDB threads (SET threads)")
	flag.BoolVar(&c.isolate, "isolate", true, "run every workload in a fresh child process (per-workload peak RSS)")
	flag.BoolVar(&c.child, "child", false, "internal: run the workloads in this process")
	script := flag.String("sql", "", "run these ';'-separated statements in an in-memory database and print their rows (TAB-separated), e.g. to read a Parquet file rowttl wrote")
	diff := flag.Int("diff", 0, "run this many random queries in rowttl's SQL session and in DuckDB and print the answers that differ")
	diffSeed := flag.Uint64("diffseed", 1, "seed of the -diff query generator")
	splitPart := flag.Bool("splitpart", true, "-diff queries use split_part()")
	diffKinds := flag.String("diffkinds", "", "-diff draws only queries of these comma-separated kinds (e.g. join3,window2; default all)")
	flag.Parse()
	c.progress = os.Stderr
	if *diff > 0 {
		l, err := bench.ParseLayout(layouts)
		if err == nil {
			c.layout = l
			err = os.MkdirAll(c.dir, 0o755)
		}
		if err == nil {
			err = runDiff(context.Background(), c, *diff, *diffSeed, *splitPart, *diffKinds, os.Stdout)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "duckbench:", err)
			os.Exit(1)
		}
		return
	}
	if *script != "" {
		if err := runScript(context.Background(), *script, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "duckbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(context.Background(), c, layouts, wl); err != nil {
		fmt.Fprintln(os.Stderr, "duckbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config, layouts, wl string) error {
	for _, w := range strings.Split(wl, ",") {
		w = strings.TrimSpace(w)
		if w == "suite" {
			c.workloads = append(c.workloads, suiteNames()...)
			continue
		}
		ok := w == "prepare"
		for _, k := range workloads {
			ok = ok || k == w
		}
		if !ok {
			return fmt.Errorf("unknown workload %q", w)
		}
		c.workloads = append(c.workloads, w)
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	for _, ls := range strings.Split(layouts, ",") {
		l, err := bench.ParseLayout(strings.TrimSpace(ls))
		if err != nil {
			return err
		}
		c.layout = l
		if !c.child && needsPrepared(c.workloads) {
			if err := inChild(ctx, c, "prepare", io.Discard); err != nil {
				return err
			}
		}
		for _, w := range c.workloads {
			if !c.child && c.isolate {
				if err := inChild(ctx, c, w, os.Stdout); err != nil {
					return err
				}
				continue
			}
			rs, err := runWorkload(ctx, c, w)
			if err != nil {
				return fmt.Errorf("%s: %w", w, err)
			}
			for _, r := range rs {
				if err := r.WriteJSON(os.Stdout); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func needsPrepared(ws []string) bool {
	for _, w := range ws {
		switch w {
		case "load", "load_arrow", "upsert", "smallwrites", "prepare":
		default:
			return true
		}
	}
	return false
}

// inChild runs one workload in a fresh process of this binary.
func inChild(ctx context.Context, c config, w string, out io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, exe, "-child", "-workloads", w, "-layout", string(c.layout),
		"-rows", strconv.FormatInt(c.rows, 10), "-runs", strconv.Itoa(c.runs),
		"-warmup", strconv.Itoa(c.warmup), "-dir", c.dir,
		"-seed", strconv.FormatUint(c.seed, 10), "-threads", strconv.Itoa(c.threads),
		"-writes", strconv.Itoa(c.writes))
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s (%s) in a child process: %w", w, c.layout, err)
	}
	_, err = io.Copy(out, &buf)
	return err
}

func (c config) logf(format string, args ...any) {
	fmt.Fprintf(c.progress, "duckbench: "+format+"\n", args...)
}

func (c config) baseDir() string {
	return filepath.Join(c.dir, fmt.Sprintf("duckdb-g2-%s-%d-%d", c.layout, c.rows, c.seed))
}

func (c config) eventsDB() string { return filepath.Join(c.baseDir(), "events.db") }
func (c config) liveDB() string   { return filepath.Join(c.baseDir(), "live.db") }

// nowMicros is the benchmark's now as the filter compares it.
var nowMicros = bench.Now.UnixMicro()

// liveFilter is rowttl's expiry rule: NULL never expires, and a row
// expiring exactly at now is gone.
var liveFilter = fmt.Sprintf("(ttl IS NULL OR ttl > %d)", nowMicros)

const createUsers = `CREATE TABLE users (user_id BIGINT, country VARCHAR, plan VARCHAR)`

const createEvents = `CREATE TABLE events (id BIGINT, event_time TIMESTAMP, user_id BIGINT, amount DOUBLE, message VARCHAR, ttl BIGINT)`

// db is one open database with one connection, usable through SQL and
// through the driver (Appender, Arrow).
type db struct {
	connector *duckdb.Connector
	sqlDB     *sql.DB
	conn      *sql.Conn
	raw       driver.Conn
	arrow     *duckdb.Arrow
}

func openDB(ctx context.Context, path string, threads int) (*db, error) {
	connector, err := duckdb.NewConnector(path, nil)
	if err != nil {
		return nil, err
	}
	d := &db{connector: connector, sqlDB: sql.OpenDB(connector)}
	d.sqlDB.SetMaxOpenConns(1)
	if d.conn, err = d.sqlDB.Conn(ctx); err != nil {
		d.close()
		return nil, err
	}
	err = d.conn.Raw(func(dc any) error {
		d.raw = dc.(driver.Conn)
		var err error
		d.arrow, err = duckdb.NewArrowFromConn(d.raw)
		return err
	})
	if err != nil {
		d.close()
		return nil, err
	}
	if _, err := d.conn.ExecContext(ctx, fmt.Sprintf("SET threads = %d", threads)); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

func (d *db) close() error {
	var errs []error
	if d.conn != nil {
		errs = append(errs, d.conn.Close())
	}
	errs = append(errs, d.sqlDB.Close(), d.connector.Close())
	return errors.Join(errs...)
}

func (d *db) exec(ctx context.Context, q string) error {
	_, err := d.conn.ExecContext(ctx, q)
	return err
}

// appendBatches loads generated batches through the Appender, row by row.
func (d *db) appendBatches(batches []arrow.RecordBatch) error {
	a, err := duckdb.NewAppenderFromConn(d.raw, "", "events")
	if err != nil {
		return err
	}
	for _, rec := range batches {
		id := rec.Column(0).(*array.Int64).Int64Values()
		ts := rec.Column(1).(*array.Timestamp).TimestampValues()
		user := rec.Column(2).(*array.Int64).Int64Values()
		amount := rec.Column(3).(*array.Float64).Float64Values()
		msg := rec.Column(4).(*array.String)
		ttl := rec.Column(5).(*array.Int64)
		for i := range id {
			var t any
			if ttl.IsValid(i) {
				t = ttl.Value(i)
			}
			if err := a.AppendRow(id[i], time.UnixMicro(int64(ts[i])).UTC(), user[i], amount[i], msg.Value(i), t); err != nil {
				a.Close()
				return err
			}
		}
	}
	return a.Close()
}

// insertArrow loads batches through an Arrow view; extra columns of the
// batches (seq) are visible to the select.
func (d *db) insertArrow(ctx context.Context, batches []arrow.RecordBatch, view, insert string) error {
	rdr, err := array.NewRecordReader(batches[0].Schema(), batches)
	if err != nil {
		return err
	}
	release, err := d.arrow.RegisterView(rdr, view)
	if err != nil {
		rdr.Release()
		return err
	}
	defer release()
	if err := d.exec(ctx, insert); err != nil {
		return err
	}
	return d.exec(ctx, "DROP VIEW IF EXISTS "+view)
}

const insertFromArrow = `INSERT INTO events SELECT id, event_time, user_id, amount, message, "__TTL__" FROM arrow_in`

// fileBytes is the size of a database file and its WAL.
func fileBytes(path string) int64 {
	var n int64
	for _, p := range []string{path, path + ".wal"} {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

// freshDB opens an empty database at path, in place of whatever a run
// before left there, and runs ddl in it.
func freshDB(ctx context.Context, path string, threads int, ddl string) (*db, error) {
	if err := removeDB(path); err != nil {
		return nil, err
	}
	d, err := openDB(ctx, path, threads)
	if err != nil {
		return nil, err
	}
	if err := d.exec(ctx, ddl); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

func removeDB(path string) error {
	for _, p := range []string{path, path + ".wal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

func prepare(ctx context.Context, c config) error {
	ready := filepath.Join(c.baseDir(), "READY")
	if _, err := os.Stat(ready); err == nil {
		c.logf("reusing prepared %s", c.baseDir())
		return nil
	}
	if err := os.RemoveAll(c.baseDir()); err != nil {
		return err
	}
	if err := os.MkdirAll(c.baseDir(), 0o755); err != nil {
		return err
	}
	c.logf("preparing %d %s rows in %s", c.rows, c.layout, c.baseDir())
	batches := bench.Events(c.rows, c.layout, c.seed).Batches(memory.DefaultAllocator)
	defer releaseAll(batches)
	d, err := openDB(ctx, c.eventsDB(), c.threads)
	if err != nil {
		return err
	}
	defer d.close()
	for _, q := range []string{createEvents} {
		if err := d.exec(ctx, q); err != nil {
			return err
		}
	}
	if err := d.insertArrow(ctx, batches, "arrow_in", insertFromArrow); err != nil {
		return err
	}
	if err := d.exec(ctx, createUsers); err != nil {
		return err
	}
	users := bench.UsersBatches(memory.DefaultAllocator, c.seed)
	defer releaseAll(users)
	if err := d.insertArrow(ctx, users, "users_in", "INSERT INTO users SELECT * FROM users_in"); err != nil {
		return err
	}
	steps := []string{
		// The suite's queries name events and users; in schema suite,
		// events is the view of the live rows, as rowttl's engine sees it.
		"CREATE SCHEMA suite",
		"CREATE VIEW suite.events AS SELECT id, event_time, user_id, amount, message FROM main.events WHERE " + liveFilter,
		"CREATE VIEW suite.users AS SELECT * FROM main.users",
		"CHECKPOINT",
		fmt.Sprintf("ATTACH '%s' AS live", c.liveDB()),
		"CREATE TABLE live.events AS SELECT * FROM events WHERE " + liveFilter,
		"DETACH live",
	}
	for _, q := range steps {
		if err := d.exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if err := d.close(); err != nil {
		return err
	}
	return os.WriteFile(ready, nil, 0o644)
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

func runWorkload(ctx context.Context, c config, w string) ([]bench.Result, error) {
	if w == "prepare" {
		return nil, prepare(ctx, c)
	}
	bench.ResetPeakRSS()
	res := bench.Result{Engine: Engine, Workload: w, Layout: string(c.layout), Rows: c.rows, OpRows: c.rows}
	var err error
	c.logf("%s (%s): %d warm-up + %d runs", w, c.layout, c.warmup, c.runs)
	switch w {
	case "load", "load_arrow":
		err = runLoad(ctx, c, &res)
	case "count", "sum", "groupby", "project":
		err = runRead(ctx, c, &res)
	case "reclaim":
		if err = runReclaim(ctx, c, &res); err != nil {
			break
		}
		res.PeakRSSBytes = bench.PeakRSS()
		up, err := runReclaimUpsert(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("reclaim_upsert: %w", err)
		}
		return []bench.Result{res, up}, nil
	case "upsert":
		return runUpsert(ctx, c)
	case "smallwrites":
		return runSmallWrites(ctx, c)
	case "export":
		err = runExport(ctx, c, &res)
	case "import":
		err = runImport(ctx, c, &res)
	default:
		q, ok := bench.SuiteQuery(w)
		if !ok {
			err = fmt.Errorf("unknown workload %q", w)
			break
		}
		err = runQuery(ctx, c, &res, q)
	}
	if err != nil {
		return nil, err
	}
	res.PeakRSSBytes = bench.PeakRSS()
	return []bench.Result{res}, nil
}

func runLoad(ctx context.Context, c config, res *bench.Result) error {
	batches := bench.Events(c.rows, c.layout, c.seed).Batches(memory.DefaultAllocator)
	defer releaseAll(batches)
	path := filepath.Join(c.dir, "duckdb-load.db")
	var d *db
	t := bench.Trial{
		Setup: func() error {
			var err error
			d, err = freshDB(ctx, path, c.threads, createEvents)
			return err
		},
		Run: func() (string, error) {
			var err error
			if res.Workload == "load_arrow" {
				err = d.insertArrow(ctx, batches, "arrow_in", insertFromArrow)
			} else {
				err = d.appendBatches(batches)
			}
			return strconv.FormatInt(c.rows, 10), err
		},
		Teardown: func() error {
			// The checkpoint that writes the table into the file is not
			// timed: rowttl's load is timed to its durable commit, and so is
			// DuckDB's (the Appender commits when closed).
			if err := d.exec(ctx, "CHECKPOINT"); err != nil {
				d.close()
				return err
			}
			if err := d.close(); err != nil {
				return err
			}
			res.BytesOnDisk = fileBytes(path)
			return nil
		},
	}
	var err error
	res.Seconds, res.Runs, res.Answer, err = bench.Measure(c.warmup, c.runs, &res.CPUSeconds, t)
	removeDB(path)
	return err
}

func runRead(ctx context.Context, c config, res *bench.Result) error {
	d, err := openDB(ctx, c.eventsDB(), c.threads)
	if err != nil {
		return err
	}
	defer d.close()
	res.BytesOnDisk = fileBytes(c.eventsDB())
	var run func() (string, error)
	switch res.Workload {
	case "count":
		run = func() (string, error) {
			var n int64
			err := d.conn.QueryRowContext(ctx, "SELECT count(*) FROM events WHERE "+liveFilter).Scan(&n)
			return strconv.FormatInt(n, 10), err
		}
	case "sum":
		run = func() (string, error) {
			var s float64
			err := d.conn.QueryRowContext(ctx, "SELECT sum(amount) FROM events WHERE "+liveFilter).Scan(&s)
			return bench.FormatSum(s), err
		}
	case "groupby":
		run = func() (string, error) {
			r, err := d.arrow.QueryContext(ctx, "SELECT user_id, sum(amount) FROM events WHERE "+liveFilter+" GROUP BY user_id")
			if err != nil {
				return "", err
			}
			defer r.Release()
			var g bench.GroupDigest
			for r.Next() {
				rec := r.RecordBatch()
				k := rec.Column(0).(*array.Int64)
				v := rec.Column(1).(*array.Float64)
				for i := 0; i < k.Len(); i++ {
					g.Add(k.Value(i), v.Value(i))
				}
			}
			return bench.FormatDigest(g), r.Err()
		}
	case "project":
		run = func() (string, error) {
			r, err := d.arrow.QueryContext(ctx, "SELECT id, event_time, user_id, amount, message FROM events WHERE "+liveFilter)
			if err != nil {
				return "", err
			}
			defer r.Release()
			var p bench.Projection
			for r.Next() {
				p.Add(r.RecordBatch())
			}
			return p.String(), r.Err()
		}
	}
	res.Seconds, res.Runs, res.Answer, err = bench.Measure(c.warmup, c.runs, &res.CPUSeconds, bench.Trial{Run: run})
	return err
}

func runReclaim(ctx context.Context, c config, res *bench.Result) error {
	res.LiveOnlyBytes = fileBytes(c.liveDB())
	path := filepath.Join(c.dir, "duckdb-reclaim.db")
	var d *db
	var answer string
	t := bench.Trial{
		Setup: func() error {
			if err := removeDB(path); err != nil {
				return err
			}
			if err := bench.CopyFile(c.eventsDB(), path); err != nil {
				return err
			}
			res.BytesBefore = fileBytes(path)
			var err error
			d, err = openDB(ctx, path, c.threads)
			return err
		},
		Run: func() (string, error) {
			if err := d.exec(ctx, "DELETE FROM events WHERE NOT "+liveFilter); err != nil {
				return "", err
			}
			return "", d.exec(ctx, "CHECKPOINT")
		},
		Teardown: func() error {
			var n int64
			if err := d.conn.QueryRowContext(ctx, "SELECT count(*) FROM events").Scan(&n); err != nil {
				d.close()
				return err
			}
			answer = fmt.Sprintf("rows_on_disk=%d", n)
			if err := d.close(); err != nil {
				return err
			}
			res.BytesOnDisk = fileBytes(path)
			return nil
		},
	}
	var err error
	res.Seconds, res.Runs, _, err = bench.Measure(c.warmup, c.runs, &res.CPUSeconds, t)
	res.Answer = answer
	removeDB(path)
	return err
}

// upsertSQL writes one write of the upsert stream into a PRIMARY KEY
// table: the last row of a key within a write wins, as in rowttl.
const upsertSQL = `INSERT OR REPLACE INTO events
SELECT id, event_time, user_id, amount, message, "__TTL__" FROM arrow_up
QUALIFY row_number() OVER (PARTITION BY id ORDER BY seq DESC) = 1`

const createEventsPK = `CREATE TABLE events (id BIGINT PRIMARY KEY, event_time TIMESTAMP, user_id BIGINT, amount DOUBLE, message VARCHAR, ttl BIGINT)`

// writeUpserts writes the upsert stream into a new PRIMARY KEY table at
// path and checkpoints it.
func writeUpserts(ctx context.Context, c config, path string) error {
	g, writes := bench.Upserts(c.rows, c.seed)
	d, err := freshDB(ctx, path, c.threads, createEventsPK)
	if err != nil {
		return err
	}
	defer d.close()
	for _, wr := range bench.WriteRanges(g.Rows, writes) {
		rows := g.WriteBatches(memory.DefaultAllocator, wr)
		v := withSeq(rows, wr[0])
		releaseAll(rows)
		err := d.insertArrow(ctx, v, "arrow_up", upsertSQL)
		releaseAll(v)
		if err != nil {
			return err
		}
	}
	if err := d.exec(ctx, "CHECKPOINT"); err != nil {
		return err
	}
	return d.close()
}

// runReclaimUpsert is reclaim on the PRIMARY KEY table the upsert stream
// fed (written once, untimed): DELETE of the expired rows and CHECKPOINT
// on a copy. The live-only database holds the rows alive at now in a
// PRIMARY KEY table.
func runReclaimUpsert(ctx context.Context, c config) (bench.Result, error) {
	g, _ := bench.Upserts(c.rows, c.seed)
	res := bench.Result{Engine: Engine, Workload: "reclaim_upsert", Layout: string(c.layout), Rows: c.rows, OpRows: g.Rows}
	src := filepath.Join(c.dir, "duckdb-reclaim-upsert-src.db")
	live := filepath.Join(c.dir, "duckdb-reclaim-upsert-live.db")
	path := filepath.Join(c.dir, "duckdb-reclaim-upsert.db")
	defer removeDB(src)
	defer removeDB(live)
	c.logf("reclaim_upsert: writing %d upserts (untimed)", g.Rows)
	if err := writeUpserts(ctx, c, src); err != nil {
		return res, err
	}
	if err := removeDB(live); err != nil {
		return res, err
	}
	d, err := openDB(ctx, src, c.threads)
	if err != nil {
		return res, err
	}
	for _, q := range []string{
		fmt.Sprintf("ATTACH '%s' AS live", live),
		strings.Replace(createEventsPK, "TABLE events", "TABLE live.events", 1),
		"INSERT INTO live.events SELECT * FROM events WHERE " + liveFilter,
		"DETACH live",
	} {
		if err := d.exec(ctx, q); err != nil {
			d.close()
			return res, fmt.Errorf("%s: %w", q, err)
		}
	}
	if err := d.close(); err != nil {
		return res, err
	}
	res.LiveOnlyBytes = fileBytes(live)
	var answer string
	t := bench.Trial{
		Setup: func() error {
			if err := removeDB(path); err != nil {
				return err
			}
			if err := bench.CopyFile(src, path); err != nil {
				return err
			}
			res.BytesBefore = fileBytes(path)
			var err error
			d, err = openDB(ctx, path, c.threads)
			return err
		},
		Run: func() (string, error) {
			if err := d.exec(ctx, "DELETE FROM events WHERE NOT "+liveFilter); err != nil {
				return "", err
			}
			return "", d.exec(ctx, "CHECKPOINT")
		},
		Teardown: func() error {
			var n int64
			if err := d.conn.QueryRowContext(ctx, "SELECT count(*) FROM events").Scan(&n); err != nil {
				d.close()
				return err
			}
			answer = fmt.Sprintf("rows_on_disk=%d", n)
			if err := d.close(); err != nil {
				return err
			}
			res.BytesOnDisk = fileBytes(path)
			return nil
		},
	}
	res.Seconds, res.Runs, _, err = bench.Measure(c.warmup, c.runs, &res.CPUSeconds, t)
	res.Answer = answer
	res.PeakRSSBytes = bench.PeakRSS()
	removeDB(path)
	return res, err
}

// withSeq appends column seq (the row's position in the stream) to each
// batch, so that SQL can keep the last write of a key within one statement.
func withSeq(batches []arrow.RecordBatch, start int64) []arrow.RecordBatch {
	out := make([]arrow.RecordBatch, 0, len(batches))
	for _, rec := range batches {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		for i := int64(0); i < rec.NumRows(); i++ {
			b.Append(start + i)
		}
		start += rec.NumRows()
		seq := b.NewArray()
		b.Release()
		fields := append(append([]arrow.Field(nil), rec.Schema().Fields()...), arrow.Field{Name: "seq", Type: arrow.PrimitiveTypes.Int64})
		out = append(out, array.NewRecordBatch(arrow.NewSchema(fields, nil), append(append([]arrow.Array(nil), rec.Columns()...), seq), rec.NumRows()))
		seq.Release()
	}
	return out
}

// runUpsert writes the upsert stream into a PRIMARY KEY table with INSERT
// OR REPLACE, one statement per write (the last row of a key within a write
// wins, as in rowttl), then counts the live rows.
func runUpsert(ctx context.Context, c config) ([]bench.Result, error) {
	g, writes := bench.Upserts(c.rows, c.seed)
	ranges := bench.WriteRanges(g.Rows, writes)
	var untimed bench.Untimed
	path := filepath.Join(c.dir, "duckdb-upsert.db")
	w := bench.Result{Engine: Engine, Workload: "upsert", Layout: string(c.layout), Rows: c.rows, OpRows: g.Rows}
	cnt := bench.Result{Engine: Engine, Workload: "upsert_count", Layout: string(c.layout), Rows: c.rows, OpRows: g.Rows}
	var d *db
	var counts, countCPU []float64
	t := bench.Trial{
		Untimed: &untimed,
		Setup: func() error {
			var err error
			d, err = freshDB(ctx, path, c.threads, createEventsPK)
			return err
		},
		Run: func() (string, error) {
			// Each write is generated (untimed) just before it is written,
			// as rowttl bench does.
			for _, wr := range ranges {
				var v []arrow.RecordBatch
				untimed.Do(func() {
					rows := g.WriteBatches(memory.DefaultAllocator, wr)
					v = withSeq(rows, wr[0])
					releaseAll(rows)
				})
				err := d.insertArrow(ctx, v, "arrow_up", upsertSQL)
				releaseAll(v)
				if err != nil {
					return "", err
				}
			}
			return fmt.Sprintf("versions=%d", len(ranges)), nil
		},
		Teardown: func() error {
			start, cpu0 := time.Now(), bench.CPUTime()
			var n int64
			if err := d.conn.QueryRowContext(ctx, "SELECT count(*) FROM events WHERE "+liveFilter).Scan(&n); err != nil {
				d.close()
				return err
			}
			counts = append(counts, time.Since(start).Seconds())
			countCPU = append(countCPU, (bench.CPUTime() - cpu0).Seconds())
			cnt.Answer = strconv.FormatInt(n, 10)
			if err := d.exec(ctx, "CHECKPOINT"); err != nil {
				d.close()
				return err
			}
			if err := d.close(); err != nil {
				return err
			}
			w.BytesOnDisk = fileBytes(path)
			cnt.BytesOnDisk = w.BytesOnDisk
			return nil
		},
	}
	var err error
	w.Seconds, w.Runs, w.Answer, err = bench.Measure(c.warmup, c.runs, &w.CPUSeconds, t)
	removeDB(path)
	if err != nil {
		return nil, err
	}
	cnt.Runs = counts[c.warmup:]
	cnt.Seconds = bench.Median(cnt.Runs)
	cnt.CPUSeconds = bench.Median(countCPU[c.warmup:])
	rss := bench.PeakRSS()
	w.PeakRSSBytes, cnt.PeakRSSBytes = rss, rss
	return []bench.Result{w, cnt}, nil
}

// runQuery times one query of the SQL suite, its text unchanged, with
// events resolving to the view of the live rows.
func runQuery(ctx context.Context, c config, res *bench.Result, q bench.Query) error {
	d, err := openDB(ctx, c.eventsDB(), c.threads)
	if err != nil {
		return err
	}
	defer d.close()
	res.BytesOnDisk = fileBytes(c.eventsDB())
	if err := d.exec(ctx, "SET search_path = 'suite'"); err != nil {
		return err
	}
	res.Seconds, res.Runs, res.Answer, err = bench.Measure(c.warmup, c.runs, &res.CPUSeconds, bench.Trial{
		Run: func() (string, error) {
			rows, err := queryRows(ctx, d, q.Text)
			if err != nil {
				return "", err
			}
			return bench.NormalizeRows(rows), nil
		},
	})
	return err
}

// queryRows runs a query and formats its values as rowttl's shell does.
func queryRows(ctx context.Context, d *db, text string) ([][]string, error) {
	rs, err := d.conn.QueryContext(ctx, text)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				row[i] = "NULL"
			case time.Time:
				row[i] = v.UTC().Format("2006-01-02 15:04:05.000000")
			case float64:
				row[i] = strconv.FormatFloat(v, 'g', -1, 64)
			case []byte:
				row[i] = string(v)
			default:
				row[i] = fmt.Sprint(v)
			}
		}
		out = append(out, row)
	}
	return out, rs.Err()
}

// runExport times COPY of the live rows, expirations included, to a
// zstd Parquet file, the smaller of DuckDB's (its default, snappy, is
// larger for about the same CPU), which rowttl's export file is held to;
// the result's BytesOnDisk is the file's size.
func runExport(ctx context.Context, c config, res *bench.Result) error {
	d, err := openDB(ctx, c.eventsDB(), c.threads)
	if err != nil {
		return err
	}
	defer d.close()
	path := filepath.Join(c.baseDir(), "export.parquet")
	defer os.Remove(path)
	copyLive := fmt.Sprintf("COPY (SELECT id, event_time, user_id, amount, message, ttl AS __TTL__ FROM events WHERE %s) TO '%s' (FORMAT parquet, COMPRESSION zstd)", liveFilter, path)
	// As on rowttl's side, each run writes a new file (the unlink of the
	// run before's is not the export) and the rows are counted untimed.
	var untimed bench.Untimed
	setup := func() error {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	run := func() (string, error) {
		if err := d.exec(ctx, copyLive); err != nil {
			return "", err
		}
		var n int64
		var err error
		untimed.Do(func() {
			err = d.conn.QueryRowContext(ctx, fmt.Sprintf("SELECT count(*) FROM read_parquet('%s')", path)).Scan(&n)
		})
		return strconv.FormatInt(n, 10), err
	}
	res.Seconds, res.Runs, res.Answer, err = bench.Measure(c.warmup, c.runs, &res.CPUSeconds, bench.Trial{Setup: setup, Run: run, Untimed: &untimed})
	res.BytesOnDisk = fileBytes(path)
	return err
}

// runImport times INSERT INTO t SELECT * FROM 'x.parquet' of the file
// rowttl's import workload reads (bench.WriteImportFile writes the same
// bytes) into a fresh table of the events schema; the answer is the rows
// the table holds afterwards, counted untimed.
func runImport(ctx context.Context, c config, res *bench.Result) error {
	if err := os.MkdirAll(c.baseDir(), 0o755); err != nil {
		return err
	}
	file := filepath.Join(c.baseDir(), bench.ImportFile)
	n, err := bench.WriteImportFile(ctx, file, c.rows, c.layout, c.seed, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("write the file to import: %w", err)
	}
	bench.ResetPeakRSS() // writing the file is not the import
	defer os.Remove(file)
	res.OpRows = n
	path := filepath.Join(c.dir, "duckdb-import.db")
	defer removeDB(path)
	var d *db
	var untimed bench.Untimed
	t := bench.Trial{
		Untimed: &untimed,
		Setup: func() error {
			var err error
			d, err = freshDB(ctx, path, c.threads, createEvents)
			return err
		},
		Run: func() (string, error) {
			if err := d.exec(ctx, fmt.Sprintf("INSERT INTO events SELECT * FROM '%s'", file)); err != nil {
				return "", err
			}
			var rows int64
			var cerr error
			untimed.Do(func() { cerr = d.conn.QueryRowContext(ctx, "SELECT count(*) FROM events").Scan(&rows) })
			return strconv.FormatInt(rows, 10), cerr
		},
		Teardown: func() error {
			// As in load: the checkpoint is not timed.
			if err := d.exec(ctx, "CHECKPOINT"); err != nil {
				d.close()
				return err
			}
			if err := d.close(); err != nil {
				return err
			}
			res.BytesOnDisk = fileBytes(path)
			return nil
		},
	}
	res.Seconds, res.Runs, res.Answer, err = bench.Measure(c.warmup, c.runs, &res.CPUSeconds, t)
	return err
}

// runScript runs statements in an in-memory DuckDB and prints the rows of
// each, fields separated by TAB: the other side of rowttl's Parquet
// checks (DuckDB reads the files rowttl writes, and writes files for
// rowttl to read).
func runScript(ctx context.Context, script string, out io.Writer) error {
	d, err := openDB(ctx, "", 2)
	if err != nil {
		return err
	}
	defer d.close()
	for _, q := range strings.Split(script, ";") {
		if strings.TrimSpace(q) == "" {
			continue
		}
		rows, err := queryRows(ctx, d, q)
		if err != nil {
			return fmt.Errorf("%s: %w", strings.TrimSpace(q), err)
		}
		for _, r := range rows {
			fmt.Fprintln(out, strings.Join(r, "\t"))
		}
	}
	return nil
}
