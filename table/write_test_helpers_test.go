package table

import (
	"context"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writeCols writes one row given as column name -> Go value (int64, string,
// float64, nil).
func writeCols(tbl *Table, mem memory.Allocator, row map[string]any) error {
	names := make([]string, 0, len(row))
	for k := range row {
		names = append(names, k)
	}
	sort.Strings(names)
	var fields []arrow.Field
	var cols []arrow.Array
	for _, n := range names {
		var a arrow.Array
		switch v := row[n].(type) {
		case int64:
			b := array.NewInt64Builder(mem)
			b.Append(v)
			a = b.NewArray()
			b.Release()
		case float64:
			b := array.NewFloat64Builder(mem)
			b.Append(v)
			a = b.NewArray()
			b.Release()
		case string:
			b := array.NewStringBuilder(mem)
			b.Append(v)
			a = b.NewArray()
			b.Release()
		case nil:
			a = array.NewNull(1)
		}
		fields = append(fields, arrow.Field{Name: n, Type: a.DataType(), Nullable: true})
		cols = append(cols, a)
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, 1)
	for _, a := range cols {
		a.Release()
	}
	defer rec.Release()
	return tbl.Write(context.Background(), rec)
}
