package table_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/table"
)

// A table whose rows expire one day after their event time: as its clock
// moves on, a query sees fewer rows. The clock is injected here so that the
// example runs the same on any day; by default a table uses the wall clock.
func Example() {
	dir, _ := os.MkdirTemp("", "rowttl-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var clock atomic.Int64 // background compaction reads it too
	clock.Store(day.UnixMicro())
	opts := &table.Options{Clock: func() time.Time { return time.UnixMicro(clock.Load()).UTC() }}

	tbl, err := table.Create(dir, &table.Definition{
		Model: schema.Duplicate,
		Schema: schema.Schema{KeyCount: 1, Columns: []schema.Column{
			{Name: "id", Type: schema.BigIntType},
			{Name: "event_time", Type: schema.DatetimeType(6)},
		}},
		Properties: map[string]string{
			"function_column.enable_row_ttl": "true",
			"function_column.ttl_col":        "event_time",
			"function_column.ttl":            "1 day",
			"function_column.ttl_time_zone":  "UTC",
		},
	}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()

	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "event_time", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
	}, nil))
	for i := 0; i < 3; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(day.Add(time.Duration(i) * time.Hour).UnixMicro()))
	}
	rec := b.NewRecordBatch()
	b.Release()
	if err := tbl.Write(ctx, rec); err != nil {
		fmt.Println(err)
	}
	rec.Release()

	for _, now := range []time.Time{day, day.Add(25 * time.Hour), day.Add(48 * time.Hour)} {
		clock.Store(now.UnixMicro()) // a zero Request.Now means the table's clock
		r, err := tbl.Scan(ctx, query.Request{Columns: []string{"id"}})
		if err != nil {
			fmt.Println(err)
			return
		}
		var ids []int64
		for r.Next() {
			ids = append(ids, r.RecordBatch().Column(0).(*array.Int64).Int64Values()...)
		}
		r.Release()
		fmt.Println(now.Format(time.DateTime), ids)
	}
	// Output:
	// 2026-01-01 00:00:00 [0 1 2]
	// 2026-01-02 01:00:00 [2]
	// 2026-01-03 00:00:00 []
}

// Count and sum the rows alive at a now without materialising them: the
// table answers pages whose rows are all live from their zone maps and
// decodes the others into reused buffers.
func ExampleTable_Aggregate() {
	dir, _ := os.MkdirTemp("", "rowttl-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tbl, err := table.Create(dir, &table.Definition{
		Model: schema.Duplicate,
		Schema: schema.Schema{KeyCount: 1, Columns: []schema.Column{
			{Name: "id", Type: schema.BigIntType},
			{Name: "amount", Type: schema.DoubleType, Nullable: true},
		}},
		Properties: map[string]string{"function_column.enable_row_ttl": "true"},
	}, &table.Options{DisableAutoCompaction: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()

	// Direct mode: __TTL__ is each row's expiration (NULL: never).
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "__TTL__", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil))
	for i, amount := range []float64{12.5, 7.25, 100, 0.75} {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Float64Builder).Append(amount)
		if i == 2 {
			b.Field(2).(*array.Int64Builder).Append(now.Add(-time.Hour).UnixMicro()) // expired
		} else {
			b.Field(2).AppendNull()
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	if err := tbl.Write(ctx, rec); err != nil {
		fmt.Println(err)
	}
	rec.Release()

	tot, err := tbl.Aggregate(ctx, query.Request{Now: now, Columns: []string{"amount", "id"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("rows", tot.Rows, "sum(amount)", tot.Sums[0].Float, "sum(id)", tot.Sums[1].Int)
	// Output:
	// rows 3 sum(amount) 20.5 sum(id) 4
}
