package segment_test

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/segment"
)

func Example() {
	mem := memory.NewGoAllocator()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "__TTL__", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	b.Field(1).(*array.Int64Builder).AppendValues([]int64{1000, 0, 3000}, []bool{true, false, true})
	rec := b.NewRecordBatch()
	defer rec.Release()

	var file bytes.Buffer
	w, _ := segment.NewWriter(&file, sc, segment.WriterOptions{PageRows: 2})
	_ = w.Write(rec)
	sum, _ := w.Finish()
	fmt.Println("rows", sum.Rows, "ttl", sum.Columns[1])

	r, err := segment.Open(bytes.NewReader(file.Bytes()), int64(file.Len()), "000001.seg")
	if err != nil {
		panic(err)
	}
	for p := 0; p < r.NumPages(); p++ {
		first, n := r.Page(p)
		ttl, _ := r.ReadPage(mem, 1, p)
		fmt.Println("page", p, "rows", first, "+", n, "ttl", r.PageStats(1, p), ttl)
		ttl.Release()
	}
	// Output:
	// rows 3 ttl rows=3 nulls=1 min=1000 max=3000
	// page 0 rows 0 + 2 ttl rows=2 nulls=1 min=1000 max=1000 sum=1000 [1000 (null)]
	// page 1 rows 2 + 1 ttl rows=1 nulls=0 min=3000 max=3000 sum=3000 [3000]
}
