package query

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestFilterArrayEmpty filters arrays of no rows, whose buffers may be
// missing, of every gathered type.
func TestFilterArrayEmpty(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, typ := range []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.BinaryTypes.String, arrow.BinaryTypes.Binary, arrow.FixedWidthTypes.Boolean,
	} {
		b := array.NewBuilder(mem, typ)
		a := b.NewArray()
		b.Release()
		got, err := filterArray(context.Background(), mem, a, nil, 0, 0)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if got.Len() != 0 {
			t.Fatalf("%s: %d rows", typ, got.Len())
		}
		got.Release()
		a.Release()
	}
}
