package table_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/table"
)

// A table whose rows expire one day after their event time: a query at a
// later now sees fewer rows, without any clean-up having run.
func Example() {
	dir, _ := os.MkdirTemp("", "rowttl-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

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
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tbl.Close()

	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
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
		r, err := tbl.Scan(ctx, query.Request{Now: now, Columns: []string{"id"}})
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
