package table

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
)

const benchRows = 1_000_000

func benchBatches(b *testing.B) []arrow.RecordBatch {
	rng := rand.New(rand.NewPCG(9, 9))
	var recs []arrow.RecordBatch
	for i := 0; i < benchRows; i += 100_000 {
		recs = append(recs, eventBatch(memory.DefaultAllocator, genEvents(rng, int64(i), 100_000), true))
	}
	return recs
}

// BenchmarkWrite writes 1M rows of the events shape as one version.
func BenchmarkWrite(b *testing.B) {
	recs := benchBatches(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		tbl := mustCreate(b, b.TempDir(), directDef(), quiet())
		b.StartTimer()
		if err := tbl.WriteBatches(context.Background(), recs, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		tbl.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkScanTTL streams every column of the live rows of 1M, about half
// expired at now.
func BenchmarkScanTTL(b *testing.B) {
	recs := benchBatches(b)
	tbl := mustCreate(b, b.TempDir(), directDef(), quiet())
	defer tbl.Close()
	if err := tbl.WriteBatches(context.Background(), recs, WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		cols    []string
		workers int
	}{{"all-columns", nil, 0}, {"all-columns-serial", nil, 1}, {"count", []string{}, 0}, {"count-serial", []string{}, 1}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r, err := tbl.Scan(context.Background(), query.Request{Now: base, Columns: c.cols, Parallelism: c.workers})
				if err != nil {
					b.Fatal(err)
				}
				for r.Next() {
				}
				r.Release()
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
