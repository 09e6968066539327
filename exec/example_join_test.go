package exec_test

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
)

// idNames is a source of (id BIGINT, name STRING) rows.
func idNames(mem memory.Allocator, ids []int64, names []string) exec.Operator {
	s := exec.Schema{{Name: "id", Type: schema.BigIntType, Nullable: true}, {Name: "name", Type: schema.StringType}}
	b := array.NewRecordBuilder(mem, s.Arrow())
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	b.Field(1).(*array.StringBuilder).AppendValues(names, nil)
	return exec.NewSliceSource(s, []arrow.RecordBatch{b.NewRecordBatch()})
}

func printRows(ctx context.Context, op exec.Operator) {
	batches, err := exec.Drain(ctx, op)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, b := range batches {
		for i := 0; i < int(b.NumRows()); i++ {
			for c := 0; c < int(b.NumCols()); c++ {
				if c > 0 {
					fmt.Print(" ")
				}
				fmt.Print(b.Column(c).ValueStr(i))
			}
			fmt.Println()
		}
		b.Release()
	}
}

// A LEFT JOIN ... ON users.id = orders.user_id: the build side is the
// right input (orders), the left input streams through it.
func ExampleNewHashJoin() {
	mem := memory.NewGoAllocator()
	env := &exec.Env{Mem: mem, Budget: exec.NewBudget(64 << 20)}
	users := idNames(mem, []int64{1, 2, 3}, []string{"ann", "bob", "cy"})
	orders := idNames(mem, []int64{1, 1, 3}, []string{"book", "pen", "ink"})
	join, err := exec.NewHashJoin(env, users, orders, exec.LeftJoin, []int{0}, []int{0}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	printRows(context.Background(), join)
	// Output:
	// 1 ann 1 book
	// 1 ann 1 pen
	// 3 cy 3 ink
	// 2 bob (null) (null)
}

// row_number() OVER (PARTITION BY id ORDER BY name).
func ExampleNewWindow() {
	mem := memory.NewGoAllocator()
	env := &exec.Env{Mem: mem, Budget: exec.NewBudget(64 << 20)}
	in := idNames(mem, []int64{2, 1, 2, 1}, []string{"b", "z", "a", "y"})
	w, err := exec.NewWindow(env, in, []exec.WindowSpec{{Func: exec.RowNumber, Partition: []int{0},
		Order: []exec.SortKey{{Column: 1, NullsFirst: true}}, Name: "rn"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	printRows(context.Background(), w)
	// Output:
	// 1 y 1
	// 1 z 2
	// 2 a 1
	// 2 b 2
}
