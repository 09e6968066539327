package bench

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rowttl/rowttl/table"
)

// The memtable workload times reads over a table whose newest rows sit in
// memtables, as a service's recent small writes do until their flush: a
// copy of the prepared data directory gets MemtableRows(rows) more events,
// written as durable writes of MemtableWriteRows rows each (the write-ahead
// log path, not a rowset per write), with the memtable thresholds raised so
// that nothing flushes them meanwhile. Then count and sum (the Go API's) and
// every query of the SQL suite run over it and over a second copy given the
// same writes and then flushed, a run over one and a run over the other in
// turns, each copy going first every other run. Each result carries both
// timings: Seconds over the memtables, FlushedSeconds after the flush; the
// two answers must agree.

// DefaultMemtableRows bounds the rows the memtable workload keeps in
// memtables: the newest million rows of a table of ten million, the size
// the workload's target is stated at.
const DefaultMemtableRows = 1_000_000

// MemtableWriteRows is the size of the memtable workload's writes: small
// enough to go through the write-ahead log into a memtable.
const MemtableWriteRows = 1000

// MemtableRows is the number of rows the memtable workload writes over a
// table of rows rows: a tenth of them, at most DefaultMemtableRows, so that
// at ten million rows the newest million sit in memtables and a smaller
// table keeps the same share.
func MemtableRows(rows int64) int64 { return min(DefaultMemtableRows, max(rows/10, 1)) }

// memtableReads are the reads the memtable workload times, in order.
func memtableReads() []string { return append([]string{"count", "sum"}, suiteNames()...) }

// MemtableWorkload is the result name of read r of the memtable workload.
func MemtableWorkload(r string) string { return "memtable_" + r }

func runMemtable(ctx context.Context, o *Options) ([]Result, error) {
	if o.SQL == nil {
		return nil, fmt.Errorf("memtable needs a SQL session (Options.SQL)")
	}
	if _, err := os.Stat(o.readyFile()); err != nil {
		return nil, fmt.Errorf("the prepared data directory (run Prepare first): %w", err)
	}
	// Two copies get the same writes, and one is flushed: the reads of the
	// two alternate, so that what else the machine does weighs on both
	// alike.
	m := MemtableRows(o.Rows)
	if o.MemtableRows > 0 {
		m = o.MemtableRows
	}
	var sides [2]*memtableSide
	defer func() {
		for _, sd := range sides {
			if sd != nil {
				sd.close()
			}
		}
	}()
	for i, name := range []string{"memtables", "flushed"} {
		sd, err := openMemtableSide(ctx, o, filepath.Join(o.Dir, "rowttl-memtable-"+name), m, i == 1)
		if err != nil {
			return nil, fmt.Errorf("%s copy: %w", name, err)
		}
		sides[i] = sd
	}
	bytes, err := bytesOnDisk(sides[0].dir)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, r := range memtableReads() {
		res := Result{Engine: Engine, Workload: MemtableWorkload(r), Layout: string(o.Layout), Rows: o.Rows,
			OpRows: o.Rows + m, MemtableRows: m, BytesOnDisk: bytes}
		o.logf("memtable: %s: %d warm-up + %d runs on each copy, alternating", r, o.Warmup, o.Runs)
		var secs, cpus [2][]float64
		var answers [2]string
		refused := false
		for run := 0; run < o.Warmup+o.Runs && !refused; run++ {
			// The copies take turns going first, so that neither always
			// follows the other's garbage or cache.
			for k := range sides {
				i := k ^ run&1
				sd := sides[i]
				var cpu float64
				sec, _, a, err := Measure(0, 1, &cpu, Trial{Run: func() (string, error) { return sd.read(ctx, r) }})
				if err != nil {
					if _, ok := SuiteQuery(r); !ok {
						return nil, fmt.Errorf("%s: %w", res.Workload, err)
					}
					// As the suite reports a query the engine refuses.
					o.logf("memtable: %s: %v", r, err)
					a, refused = ErrorAnswer+err.Error(), true
				}
				answers[i] = a
				if run >= o.Warmup {
					secs[i] = append(secs[i], sec)
					cpus[i] = append(cpus[i], cpu)
				}
			}
		}
		if answers[0] != answers[1] {
			return nil, fmt.Errorf("%s: %q over the memtables, %q after their flush", res.Workload, answers[0], answers[1])
		}
		res.Answer = answers[0]
		if !refused {
			res.Runs, res.Seconds, res.CPUSeconds = secs[0], Median(secs[0]), Median(cpus[0])
			res.FlushedSeconds, res.FlushedCPUSeconds = Median(secs[1]), Median(cpus[1])
		}
		out = append(out, res)
	}
	rss := PeakRSS()
	for i := range out {
		out[i].PeakRSSBytes = rss
	}
	return out, nil
}

// memtableSide is one copy of the memtable workload's data directory, open,
// with a SQL session on it.
type memtableSide struct {
	dir    string
	db     *table.DB
	events *table.Table
	sess   SQLSession
}

// openMemtableSide copies the prepared data directory into dir, writes m
// more events into it in small writes, and flushes them when flush is set.
func openMemtableSide(ctx context.Context, o *Options, dir string, m int64, flush bool) (*memtableSide, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := cloneDataDir(o.SQLDir(), dir); err != nil {
		return nil, err
	}
	opts := o.tableOptions()
	// Nothing but the workload's own Flush may turn the memtables into a
	// rowset: not their size, not their age while the reads run.
	opts.MemtableBytes = 1 << 40
	opts.MemtableAge = 24 * time.Hour
	db, err := table.OpenDB(dir, opts)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	sd := &memtableSide{dir: dir, db: db}
	fail := func(err error) (*memtableSide, error) {
		sd.close()
		return nil, err
	}
	if sd.events, err = db.Table(table.DefaultDatabase, "events"); err != nil {
		return fail(err)
	}
	g := Events(o.Rows+m, o.Layout, o.Seed)
	o.logf("memtable: %d rows in durable writes of %d rows over the %d of %s", m, MemtableWriteRows, o.Rows, dir)
	for off := int64(0); off < m; off += MemtableWriteRows {
		rec := g.Range(o.Mem, o.Rows+off, int(min(MemtableWriteRows, m-off)))
		err := sd.events.Write(ctx, rec)
		rec.Release()
		if err != nil {
			return fail(err)
		}
	}
	want := m
	if flush {
		if err := sd.events.Flush(ctx); err != nil {
			return fail(err)
		}
		want = 0
	}
	if err := checkMemtableRows(ctx, sd.events, want); err != nil {
		return fail(err)
	}
	if sd.sess, err = o.SQL(ctx, db); err != nil {
		return fail(err)
	}
	return sd, nil
}

// read runs read r of the memtable workload and returns its answer.
func (sd *memtableSide) read(ctx context.Context, r string) (string, error) {
	q, ok := SuiteQuery(r)
	if !ok {
		return ReadWorkload(ctx, sd.events, r)
	}
	rows, err := sd.sess.Run(ctx, q.Text)
	if err != nil {
		return "", err
	}
	return NormalizeRows(rows), nil
}

func (sd *memtableSide) close() {
	if sd.sess != nil {
		sd.sess.Close()
	}
	sd.db.Close()
	os.RemoveAll(sd.dir)
}

// checkMemtableRows fails unless tbl's memtables hold want rows.
func checkMemtableRows(ctx context.Context, tbl *table.Table, want int64) error {
	st, err := tbl.Stats(ctx, Now)
	if err != nil {
		return err
	}
	if st.MemtableRows != want {
		return fmt.Errorf("memtables hold %d rows, want %d", st.MemtableRows, want)
	}
	return nil
}

// cloneDataDir copies a closed data directory as cloneTable copies each of
// its tables.
func cloneDataDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case !d.Type().IsRegular() || d.Name() == "LOCK":
			return nil
		case strings.HasSuffix(d.Name(), ".seg") && os.Link(path, to) == nil:
			return nil
		}
		return CopyFile(path, to)
	})
}

// MemtableSummary is a memtable result for a person: both timings and
// their ratio.
func MemtableSummary(r Result) string {
	return fmt.Sprintf("%d rows in memtables: %.4f s, after their flush %.4f s (%.2fx)",
		r.MemtableRows, r.Seconds, r.FlushedSeconds, MemtableRatio(r))
}

// MemtableRatio is the time of a memtable result's read over the
// memtables divided by its time after the flush (0 when either is
// missing).
func MemtableRatio(r Result) float64 {
	if r.Seconds <= 0 || r.FlushedSeconds <= 0 {
		return 0
	}
	return r.Seconds / r.FlushedSeconds
}
