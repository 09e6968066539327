package table

import (
	"context"
	"testing"

	"github.com/rowttl/rowttl/query"
)

// BenchmarkAggregateTTL reduces 1M rows of the events shape, half expired
// at now with 10% NULL expirations, on one worker: a sum of the
// decimal-scaled amount, a count under two numeric comparisons (the first
// selecting a tenth of the rows), and one under an IN list of eight values.
func BenchmarkAggregateTTL(b *testing.B) {
	recs := benchBatches(b)
	tbl := mustCreate(b, b.TempDir(), directDef(), quiet())
	defer tbl.Close()
	if err := tbl.WriteBatches(context.Background(), recs, WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		cols   []string
		filter query.Expr
	}{
		{"sum-amount", []string{"amount"}, nil},
		{"count-two-comparisons", []string{}, query.AllOf(query.Compare("amount", query.Gt, 90.0), query.Compare("user_id", query.Lt, int64(500)))},
		{"count-in-list", []string{}, query.In{Column: "user_id", Values: []any{int64(1), int64(3), int64(5), int64(7), int64(11), int64(13), int64(17), int64(19)}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tbl.Aggregate(context.Background(), query.Request{Now: base, Columns: c.cols, Filter: c.filter, Parallelism: 1}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
