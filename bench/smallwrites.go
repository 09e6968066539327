package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/trace"
	"slices"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/table"
)

// The small-writes workloads time what a service writing events as they
// happen gets: durable writes of one row each, from one goroutine and from
// SmallWriteWorkers[1] at once (rows per second, and each write's latency),
// and the latency of 10-row writes into the prepared events table while a
// full compaction of it runs, beside the same writes on the idle table.
// They run once, after a short warm-up: their many writes are their own
// repetitions.

// DefaultSmallWrites is the number of single-row writes of a small-writes
// run.
const DefaultSmallWrites = 20000

// SmallWriteWorkers are the numbers of concurrent writers timed.
var SmallWriteWorkers = []int{1, 16}

// CompactionWriteRows is the size of the writes timed during a compaction.
const CompactionWriteRows = 10

// SmallWriteRows generates the rows of the small-writes workloads: row i is
// the i-th write of a run, its warm-up first.
func SmallWriteRows(writes int, seed uint64) *Generator {
	return Events(int64(writes)*2, Random, seed)
}

// SmallWriteWarmup is the number of warm-up writes before writes measured
// ones.
func SmallWriteWarmup(writes int) int { return min(100, writes/10) }

// Percentile returns the p-th percentile (0 < p < 1) of ds, nearest rank.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// SmallWriteResult fills the rates and latencies of a small-writes result
// from the latency of every write and the wall time of all of them.
func SmallWriteResult(res *Result, lat []time.Duration, wall time.Duration) {
	res.OpRows = int64(len(lat))
	res.Seconds = wall.Seconds()
	res.P50Seconds = Percentile(lat, 0.50).Seconds()
	res.P99Seconds = Percentile(lat, 0.99).Seconds()
	res.Runs = []float64{res.Seconds}
}

// RunConcurrent calls write(i) for i in [0, n) from workers goroutines,
// each taking the next i, and returns the latency each call reports (what
// it timed: the write alone, not the making of its row) and the wall time
// of all; the first error stops every worker.
func RunConcurrent(n, workers int, write func(i int) (time.Duration, error)) ([]time.Duration, time.Duration, error) {
	lat := make([]time.Duration, n)
	var next int
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil
				mu.Unlock()
				if stop || i >= n {
					return
				}
				d, err := write(i)
				lat[i] = d
				if err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("write %d: %w", i, err)
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return lat, time.Since(start), first
}

// Timed runs f and returns how long it took, and its error.
func Timed(f func() error) (time.Duration, error) {
	t0 := time.Now()
	err := f()
	return time.Since(t0), err
}

func (o *Options) smallWrites() int {
	if o.Writes > 0 {
		return o.Writes
	}
	return DefaultSmallWrites
}

// runSmallWrites runs the small-writes workloads: smallwrites_1 and
// smallwrites_16 into a fresh table with the engine's defaults (background
// compaction on, as a user gets it), then smallwrites_compaction on a copy
// of the prepared events table.
func runSmallWrites(ctx context.Context, o *Options) ([]Result, error) {
	n := o.smallWrites()
	g := SmallWriteRows(n, o.Seed)
	var out []Result
	for _, workers := range SmallWriteWorkers {
		name := fmt.Sprintf("smallwrites_%d", workers)
		dir := filepath.Join(o.Dir, "rowttl-"+name)
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		// The table's clock is the benchmark's now, so that background
		// compaction reclaims what has expired by then and no more: the
		// count at the end is comparable with another engine's.
		tbl, err := table.Create(dir, EventsDefinition(schema.Duplicate), &table.Options{Allocator: o.Mem,
			PageRows: o.PageRows, SegmentRows: o.SegmentRows, ZstdLevel: o.ZstdLevel, Clock: func() time.Time { return Now }})
		if err != nil {
			return nil, err
		}
		// Every row is made before the timed writes, as the SQLite and
		// DuckDB drivers make theirs: the rate and the CPU time are the
		// engine's work, not the generator's. One-row records are small
		// (a few hundred bytes each), so holding them all is cheap.
		warm := SmallWriteWarmup(n)
		recs := make([]arrow.RecordBatch, warm+n)
		for i := range recs {
			recs[i] = g.Range(o.Mem, int64(i), 1)
		}
		write := func(off int) func(i int) (time.Duration, error) {
			return func(i int) (time.Duration, error) {
				rec := recs[off+i]
				return Timed(func() error { return tbl.Write(ctx, rec) })
			}
		}
		o.logf("%s: %d warm-up writes, then %d durable one-row writes from %d goroutines", name, warm, n, workers)
		_, _, err = RunConcurrent(warm, workers, write(0))
		var lat []time.Duration
		var wall time.Duration
		cpu0 := CPUTime()
		if err == nil {
			lat, wall, err = RunConcurrent(n, workers, write(warm))
		}
		cpu := CPUTime() - cpu0
		for _, r := range recs {
			r.Release()
		}
		var rows int64
		if err == nil {
			rows, err = tbl.Count(ctx, Now, nil)
		}
		if cerr := tbl.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		res := Result{Engine: Engine, Workload: name, Layout: string(o.Layout), Rows: int64(n), Goroutines: workers}
		SmallWriteResult(&res, lat, wall)
		res.CPUSeconds = cpu.Seconds()
		res.Answer = fmt.Sprintf("live=%d", rows)
		res.BytesOnDisk, _ = bytesOnDisk(dir)
		res.PeakRSSBytes = PeakRSS()
		os.RemoveAll(dir)
		out = append(out, res)
	}
	res, err := runCompactionWrites(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("smallwrites_compaction: %w", err)
	}
	return append(out, res), nil
}

// compactionWrites is the number of writes timed idle and during
// compactions: each round writes into a fresh copy of the prepared table,
// idle and then while a full compaction of it runs, until so many writes
// ran in both (or maxCompactions ran), so that a p99 stands on enough of
// them whatever the table's size, and every compaction rewrites the same
// table. The idle writes of a round are as many as the previous round's
// writes during its compaction (a quarter of compactionWrites in the
// first): idle and busy writes take turns through the run, so that a
// machine whose load changes meanwhile weighs on both alike.
const (
	compactionWrites = 300
	maxCompactions   = 20
)

// runCompactionWrites times 10-row writes into copies of the prepared
// events table, idle and while a full compaction of each runs, until
// compactionWrites ran of both.
func runCompactionWrites(ctx context.Context, o *Options) (Result, error) {
	res := Result{Engine: Engine, Workload: "smallwrites_compaction", Layout: string(o.Layout), Rows: o.Rows, Goroutines: 1}
	dir := filepath.Join(o.Dir, "rowttl-smallwrites-compaction")
	defer os.RemoveAll(dir)
	g := Events(o.Rows*2, o.Layout, o.Seed)
	var idle, during []time.Duration
	var compacting, cpu time.Duration
	compactions := 0
	o.logf("smallwrites_compaction: %d-row writes into %d rows, idle and during full compactions of fresh copies, in turns", CompactionWriteRows, o.Rows)
	nidle := compactionWrites / 4
	for compactions < maxCompactions && (len(during) < compactionWrites || len(idle) < compactionWrites) {
		compactions++
		tbl, err := openCopy(o, dir)
		if err != nil {
			return res, err
		}
		next := o.Rows // the rows written go after the table's own
		region := "write idle"
		write := func() (d time.Duration, err error) {
			rec := g.Range(o.Mem, next, CompactionWriteRows)
			defer rec.Release()
			next += CompactionWriteRows
			trace.WithRegion(ctx, region, func() { d, err = Timed(func() error { return tbl.Write(ctx, rec) }) })
			return d, err
		}
		stopTrace := func() error { return nil }
		if o.TraceDir != "" && compactions == 1 {
			if stopTrace, err = startTrace(o.TraceDir, fmt.Sprintf("smallwrites_compaction-%s.trace", o.Layout)); err != nil {
				tbl.Close()
				return res, err
			}
		}
		for i := 0; i < nidle && err == nil; i++ {
			var d time.Duration
			if d, err = write(); err == nil {
				idle = append(idle, d)
			}
		}
		region = "write during compaction"
		done := make(chan error, 1)
		start, cpu0 := time.Now(), CPUTime()
		before := len(during)
		if err == nil {
			go func() { done <- tbl.CompactAt(ctx, table.Full, Now) }()
			for running := true; running; {
				select {
				case err = <-done:
					running = false
					continue
				default:
				}
				d, werr := write()
				if werr != nil {
					<-done
					err = werr
					break
				}
				during = append(during, d)
			}
		}
		compacting += time.Since(start)
		cpu += CPUTime() - cpu0
		if terr := stopTrace(); err == nil {
			err = terr
		}
		nidle = max(len(during)-before, 1)
		if cerr := tbl.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return res, err
		}
	}
	SmallWriteResult(&res, during, compacting)
	res.CPUSeconds = cpu.Seconds()
	res.IdleP50Seconds = Percentile(idle, 0.50).Seconds()
	res.IdleP99Seconds = Percentile(idle, 0.99).Seconds()
	res.Answer = fmt.Sprintf("compactions=%d writes_during=%d writes_idle=%d", compactions, len(during), len(idle))
	res.PeakRSSBytes = PeakRSS()
	return res, nil
}

// startTrace starts an execution trace into the file name of dir; stop
// ends it and closes the file.
func startTrace(dir, name string) (stop func() error, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("trace: %w", err)
	}
	return func() error {
		trace.Stop()
		return f.Close()
	}, nil
}

// openCopy opens a fresh copy of the prepared events table in dir.
func openCopy(o *Options, dir string) (*table.Table, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := cloneTable(o.EventsDir(), dir); err != nil {
		return nil, fmt.Errorf("the prepared events table (run Prepare first): %w", err)
	}
	return table.Open(dir, o.tableOptions())
}

// SmallWriteSummary is a small-writes result for a person: its rate and
// latencies.
func SmallWriteSummary(r Result) string {
	ms := func(s float64) string { return fmt.Sprintf("%.2f ms", s*1e3) }
	if r.IdleP99Seconds > 0 {
		return fmt.Sprintf("%d writes of %d rows during %.2f s of full compactions of %d rows: p50 %s, p99 %s; idle p50 %s, p99 %s (p99 %.1fx idle)",
			r.OpRows, CompactionWriteRows, r.Seconds, r.Rows, ms(r.P50Seconds), ms(r.P99Seconds), ms(r.IdleP50Seconds), ms(r.IdleP99Seconds), r.P99Seconds/r.IdleP99Seconds)
	}
	rate := 0.0
	if r.Seconds > 0 {
		rate = float64(r.OpRows) / r.Seconds
	}
	return fmt.Sprintf("%.0f rows/s, p50 %s, p99 %s", rate, ms(r.P50Seconds), ms(r.P99Seconds))
}
