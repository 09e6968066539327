package fileformat_test

import (
	"io"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/bench"
	"github.com/rowttl/rowttl/fileformat"
	"github.com/rowttl/rowttl/schema"
)

var (
	eventsOnce sync.Once
	eventsRecs []arrow.RecordBatch
	eventsSc   *arrow.Schema
)

// liveEvents returns the live rows of the first 1M rows of the bench
// events table in batches of the scan's size, as an export reads them.
func liveEvents() ([]arrow.RecordBatch, *arrow.Schema) {
	eventsOnce.Do(func() {
		cols := []schema.Column{{Name: bench.ColID, Type: schema.BigIntType}, {Name: bench.ColEventTime, Type: schema.DatetimeType(6)},
			{Name: bench.ColUserID, Type: schema.BigIntType}, {Name: bench.ColAmount, Type: schema.DoubleType}, {Name: bench.ColMessage, Type: schema.StringType}}
		eventsSc = fileformat.FileSchema(cols, true)
		g := bench.Events(1_000_000, bench.Random, 1)
		now := bench.Now.UnixMicro()
		b := array.NewRecordBuilder(memory.DefaultAllocator, eventsSc)
		defer b.Release()
		for i := int64(0); i < g.Rows; i++ {
			r := g.Row(i)
			if !r.Live(now) {
				continue
			}
			b.Field(0).(*array.Int64Builder).Append(r.ID)
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(r.EventTime))
			b.Field(2).(*array.Int64Builder).Append(r.UserID)
			b.Field(3).(*array.Float64Builder).Append(r.Amount)
			b.Field(4).(*array.StringBuilder).Append(r.Message)
			if r.HasTTL {
				b.Field(5).(*array.Int64Builder).Append(r.TTL)
			} else {
				b.Field(5).AppendNull()
			}
			if b.Field(0).Len() == 32<<10 {
				eventsRecs = append(eventsRecs, b.NewRecordBatch())
			}
		}
		eventsRecs = append(eventsRecs, b.NewRecordBatch())
	})
	return eventsRecs, eventsSc
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)

// BenchmarkParquetEvents writes the live rows of 1M bench events rows
// (about 500K) with the default options.
func BenchmarkParquetEvents(b *testing.B) {
	recs, sc := liveEvents()
	for _, par := range []int{1, 2} {
		b.Run(map[int]string{1: "serial", 2: "parallel"}[par], func(b *testing.B) {
			var size int64
			for b.Loop() {
				cw := &countWriter{}
				w, err := fileformat.NewParquetWriter(cw, sc, fileformat.ParquetOptions{Parallelism: par}, memory.DefaultAllocator)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range recs {
					if err := w.Write(r); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				size = cw.n
			}
			b.ReportMetric(float64(size)/1e6, "MB")
		})
	}
}
