package bench

import (
	"context"
	"runtime/trace"
	"testing"
	"time"

	"github.com/rowttl/rowttl/table"
)

// BenchmarkCompactionWrites times 10-row durable writes into a copy of a
// prepared events table while a full compaction of it runs, one compaction
// (of a fresh copy) an iteration, and reports their p50 and p99. Each write
// and each compaction is a trace region ("write", "compact"), so that an
// execution trace shows what a slow write waited for:
//
//	go test ./bench -run XXX -bench CompactionWrites -benchtime 4x -trace /tmp/cw.trace
//	go tool trace -pprof=sched /tmp/cw.trace > sched.pprof   # waiting for a processor
//	go tool trace -pprof=syscall /tmp/cw.trace > sys.pprof   # in the log's sync
func BenchmarkCompactionWrites(b *testing.B) {
	ctx := context.Background()
	o := Options{Dir: b.TempDir(), Rows: 1 << 18, Runs: 1}
	o.defaults()
	if err := Prepare(ctx, o); err != nil {
		b.Fatal(err)
	}
	g := Events(o.Rows*2, o.Layout, o.Seed)
	dir := b.TempDir()
	var during []time.Duration
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		tbl, err := openCopy(&o, dir)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		next := o.Rows
		done := make(chan error, 1)
		go trace.WithRegion(ctx, "compact", func() { done <- tbl.CompactAt(ctx, table.Full, Now) })
		for running := true; running; {
			select {
			case err = <-done:
				running = false
				continue
			default:
			}
			rec := g.Range(o.Mem, next, CompactionWriteRows)
			next += CompactionWriteRows
			var d time.Duration
			trace.WithRegion(ctx, "write", func() { d, err = Timed(func() error { return tbl.Write(ctx, rec) }) })
			rec.Release()
			if err != nil {
				<-done
				b.Fatal(err)
			}
			during = append(during, d)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := tbl.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(Percentile(during, 0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(Percentile(during, 0.99).Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(during))/float64(b.N), "writes/op")
}
