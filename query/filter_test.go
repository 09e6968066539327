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

// filterArray must keep exactly the selected values, NULLs included, on
// every type, on sliced inputs and every mask density. The reference is a
// value-by-value comparison, not Arrow's compute filter, which loses the
// validity of booleans.
func TestFilterArrayMatchesNaive(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(1, 2))
	types := []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Date32,
		&arrow.TimestampType{Unit: arrow.Microsecond}, arrow.BinaryTypes.String, arrow.BinaryTypes.Binary,
		arrow.FixedWidthTypes.Boolean, &arrow.Decimal128Type{Precision: 9, Scale: 2},
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
						case *array.BinaryBuilder:
							bb.Append([]byte(fmt.Sprint("b", rng.IntN(100))))
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
					if got.Len() != selected {
						t.Fatalf("%d rows, want %d", got.Len(), selected)
					}
					j, nulls := 0, 0
					for i := 0; i < n; i++ {
						if !bitutil.BitIsSet(mask, i) {
							continue
						}
						if got.IsNull(j) != a.IsNull(i) || (a.IsValid(i) && got.ValueStr(j) != a.ValueStr(i)) {
							t.Fatalf("row %d (input %d): %q (null %t), want %q (null %t)\ngot %v\nfrom %v", j, i, got.ValueStr(j), got.IsNull(j), a.ValueStr(i), a.IsNull(i), got, a)
						}
						if a.IsNull(i) {
							nulls++
						}
						j++
					}
					if got.NullN() != nulls {
						t.Fatalf("NullN %d, want %d", got.NullN(), nulls)
					}
				})
			}
		}
	}
}

// BenchmarkFilterExport filters a page as an export's scan does: strings
// and a column with a tenth NULL, half of the rows selected at random.
func BenchmarkFilterExport(b *testing.B) {
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 8192
	sb := array.NewStringBuilder(mem)
	ib := array.NewInt64Builder(mem)
	for i := range n {
		sb.Append(fmt.Sprintf("click #%d", 1_000_000_000+rng.IntN(900_000_000)))
		if rng.IntN(10) == 0 {
			ib.AppendNull()
		} else {
			ib.Append(int64(i))
		}
	}
	s, v := sb.NewArray(), ib.NewArray()
	sb.Release()
	ib.Release()
	defer s.Release()
	defer v.Release()
	mask := make([]byte, n/8)
	selected := 0
	for i := range n {
		if rng.IntN(2) == 0 {
			bitutil.SetBit(mask, i)
			selected++
		}
	}
	ctx := context.Background()
	for b.Loop() {
		for _, a := range []arrow.Array{s, v} {
			f, err := filterArray(ctx, mem, a, mask, n, selected)
			if err != nil {
				b.Fatal(err)
			}
			f.Release()
		}
	}
}
