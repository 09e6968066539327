package bench

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/table"
)

// benchRows is the size of the table the end-to-end benchmarks read
// (override with ROWTTL_BENCH_ROWS).
func benchRows() int64 {
	if n, err := strconv.ParseInt(os.Getenv("ROWTTL_BENCH_ROWS"), 10, 64); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

// BenchmarkGenerate measures the data generator.
func BenchmarkGenerate(b *testing.B) {
	g := Events(int64(DefaultBatchRows), Random, DefaultSeed)
	b.ReportAllocs()
	for b.Loop() {
		g.Batch(memory.DefaultAllocator, 0).Release()
	}
	b.ReportMetric(float64(DefaultBatchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// benchTables holds, per layout, the table the read benchmarks prepare.
var benchTables sync.Map // Layout -> *preparedBench

type preparedBench struct {
	once sync.Once
	dir  string
	err  error
}

// preparedTable prepares (once per process and layout, cached on disk under
// the system temp dir) the events table the read benchmarks scan.
func preparedTable(b *testing.B, layout Layout) Options {
	o := Options{Dir: filepath.Join(os.TempDir(), "rowttl-gobench"), Rows: benchRows(), Layout: layout}
	v, _ := benchTables.LoadOrStore(layout, &preparedBench{})
	p := v.(*preparedBench)
	p.once.Do(func() { p.err = Prepare(context.Background(), o) })
	if p.err != nil {
		b.Fatal(p.err)
	}
	return o
}

// BenchmarkRead runs the read workloads end to end over a prepared table of
// each layout (1M rows unless ROWTTL_BENCH_ROWS says otherwise).
func BenchmarkRead(b *testing.B) {
	ctx := context.Background()
	for _, layout := range []Layout{Random, Correlated} {
		b.Run(string(layout), func(b *testing.B) {
			o := preparedTable(b, layout)
			tbl, err := table.Open(o.EventsDir(), o.tableOptions())
			if err != nil {
				b.Fatal(err)
			}
			defer tbl.Close()
			for _, w := range []string{"count", "sum", "groupby", "project"} {
				b.Run(w, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if _, err := ReadWorkload(ctx, tbl, w); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(o.Rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
				})
			}
		})
	}
}

// BenchmarkLoad writes the generated rows into a fresh table.
func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	rows := benchRows()
	batches := Events(rows, Random, DefaultSeed).Batches(memory.DefaultAllocator)
	defer releaseAll(batches)
	o := Options{}
	o.defaults()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		tbl, err := table.Create(b.TempDir(), EventsDefinition(schema.Duplicate), o.tableOptions())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := tbl.WriteBatches(ctx, batches, table.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		tbl.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
