package query

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// filterArray must agree with Arrow's own filter on every type, with and
// without NULLs, on sliced inputs and every mask density.
func TestFilterArrayMatchesCompute(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(1, 2))
	types := []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Date32,
		&arrow.TimestampType{Unit: arrow.Microsecond}, arrow.BinaryTypes.String, arrow.FixedWidthTypes.Boolean,
	}
	ctx := compute.WithAllocator(context.Background(), mem)
	for _, typ := range types {
		for _, n := range []int{0, 1, 63, 64, 65, 200, 1000} {
			for _, density := range []float64{0, 0.1, 0.5, 0.97, 1} {
				t.Run(fmt.Sprintf("%s/%d/%v", typ, n, density), func(t *testing.T) {
					b := array.NewBuilder(mem, typ)
					for i := 0; i < n+3; i++ {
						if rng.IntN(5) == 0 {
							b.AppendNull()
							continue
						}
						switch bb := b.(type) {
						case *array.StringBuilder:
							bb.Append(fmt.Sprint("s", rng.IntN(100)))
						case *array.BooleanBuilder:
							bb.Append(rng.IntN(2) == 0)
						default:
							bb.AppendValueFromString(fmt.Sprint(rng.IntN(100)))
						}
					}
					whole := b.NewArray()
					b.Release()
					defer whole.Release()
					a := array.NewSlice(whole, 3, int64(n+3))
					defer a.Release()
					mask := make([]byte, (n+7)/8)
					selected := 0
					for i := 0; i < n; i++ {
						if rng.Float64() < density {
							bitutil.SetBit(mask, i)
							selected++
						}
					}
					got, err := filterArray(ctx, mem, a, mask, n, selected)
					if err != nil {
						t.Fatal(err)
					}
					defer got.Release()
					if n == 0 {
						// Arrow's own string filter panics on empty input.
						if got.Len() != 0 {
							t.Fatalf("%d rows from nothing", got.Len())
						}
						return
					}
					m := array.NewBoolean(n, memory.NewBufferBytes(mask), nil, 0)
					defer m.Release()
					want, err := compute.FilterArray(ctx, a, m, *compute.DefaultFilterOptions())
					if err != nil {
						t.Fatal(err)
					}
					defer want.Release()
					if !array.Equal(got, want) {
						t.Fatalf("got %v, want %v", got, want)
					}
				})
			}
		}
	}
}
