package exec

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkWindowRowNumber: row_number() OVER (PARTITION BY k ORDER BY v)
// over 1M rows in 10K partitions.
func BenchmarkWindowRowNumber(b *testing.B) {
	benchWindow(b, []WindowSpec{{Func: RowNumber, Partition: []int{0}, Order: []SortKey{{Column: 1}}, Name: "rn"}})
}

// BenchmarkWindowSlidingSum: sum(v) OVER (PARTITION BY k ORDER BY v ROWS
// BETWEEN 10 PRECEDING AND 10 FOLLOWING) over the same rows, BIGINTs
// entering and leaving the frame's accumulator.
func BenchmarkWindowSlidingSum(b *testing.B) {
	frame := &WindowFrame{Start: FrameBound{Kind: Preceding, Offset: 10}, End: FrameBound{Kind: Following, Offset: 10}}
	benchWindow(b, []WindowSpec{{Func: WindowAgg, Agg: Sum, Arg: 1, Partition: []int{0}, Order: []SortKey{{Column: 1}}, Frame: frame, Name: "s"}})
}

func benchWindow(b *testing.B, specs []WindowSpec) {
	mem := memory.NewGoAllocator()
	s, in := benchInt64Batches(mem, 1_000_000, 7919, 10_000, false)
	env := &Env{Mem: mem, Budget: NewBudget(0)}
	b.ReportAllocs()
	for b.Loop() {
		op, err := NewWindow(env, reusableSource(s, in), specs)
		if err != nil {
			b.Fatal(err)
		}
		rows := 0
		for {
			r, err := op.Next(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			if r == nil {
				break
			}
			rows += int(r.NumRows())
			r.Release()
		}
		op.Close()
		if rows != 1_000_000 {
			b.Fatalf("%d rows", rows)
		}
	}
}
