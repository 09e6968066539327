package sql

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
)

// batchesOp streams its batches as they are, empty ones included: no
// operator of the repository is bound to skip them, so scalarOp must not
// count them as rows.
type batchesOp struct {
	schema  exec.Schema
	batches []arrow.RecordBatch
}

func (o *batchesOp) Schema() exec.Schema { return o.schema }

func (o *batchesOp) Next(context.Context) (arrow.RecordBatch, error) {
	if len(o.batches) == 0 {
		return nil, nil
	}
	b := o.batches[0]
	o.batches = o.batches[1:]
	return b, nil
}

func (o *batchesOp) Close() {
	for _, b := range o.batches {
		b.Release()
	}
	o.batches = nil
}

func TestScalarOpEmptyBatches(t *testing.T) {
	sc := exec.Schema{{Name: "v", Type: schema.Type{Kind: schema.BigInt}, Nullable: true}}
	for _, tc := range []struct {
		name  string
		sizes []int
		want  string // the one row's value, "NULL", or the error
	}{
		{"empty then one", []int{0, 1}, "0"},
		{"one then empty", []int{1, 0}, "0"},
		{"only empty", []int{0, 0}, "NULL"},
		{"none", nil, "NULL"},
		{"empty then two", []int{0, 2}, "Subquery returns more than 1 row"},
		{"one, empty, one", []int{1, 0, 1}, "Subquery returns more than 1 row"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			in := &batchesOp{schema: sc}
			for _, n := range tc.sizes {
				bld := array.NewInt64Builder(mem)
				for i := range n {
					bld.Append(int64(i))
				}
				arr := bld.NewArray()
				bld.Release()
				in.batches = append(in.batches, array.NewRecordBatch(sc.Arrow(), []arrow.Array{arr}, int64(n)))
				arr.Release()
			}
			op := &scalarOp{in: in, mem: mem}
			defer op.Close()
			b, err := op.Next(context.Background())
			got := ""
			switch {
			case err != nil:
				got = err.Error()
			case b == nil:
				t.Fatal("no batch: a scalar subquery yields one row")
			default:
				defer b.Release()
				if b.NumRows() != 1 {
					t.Fatalf("%d rows, want 1", b.NumRows())
				}
				if v := schema.ValueAt(b.Column(0), 0); v.IsNull() {
					got = "NULL"
				} else {
					got = v.String()
				}
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
