package table

import (
	"bytes"
	"cmp"
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
)

// keyCompare returns a comparison of rows i and j of one key column. NULL
// sorts first.
func keyCompare(a arrow.Array) func(i, j int) int {
	nulls := func(i, j int) (int, bool) {
		ni, nj := a.IsNull(i), a.IsNull(j)
		switch {
		case ni && nj:
			return 0, true
		case ni:
			return -1, true
		case nj:
			return 1, true
		}
		return 0, false
	}
	hasNulls := a.NullN() > 0
	switch x := a.(type) {
	case *array.Int64:
		v := x.Int64Values()
		if !hasNulls {
			return func(i, j int) int { return cmp.Compare(v[i], v[j]) }
		}
		return func(i, j int) int {
			if c, ok := nulls(i, j); ok {
				return c
			}
			return cmp.Compare(v[i], v[j])
		}
	case *array.Int32:
		v := x.Int32Values()
		return func(i, j int) int {
			if c, ok := nulls(i, j); ok {
				return c
			}
			return cmp.Compare(v[i], v[j])
		}
	case *array.String:
		return func(i, j int) int {
			if c, ok := nulls(i, j); ok {
				return c
			}
			return cmp.Compare(x.Value(i), x.Value(j))
		}
	case *array.Binary:
		return func(i, j int) int {
			if c, ok := nulls(i, j); ok {
				return c
			}
			return bytes.Compare(x.Value(i), x.Value(j))
		}
	}
	return func(i, j int) int {
		if c, ok := nulls(i, j); ok {
			return c
		}
		return schema.ValueAt(a, i).Compare(schema.ValueAt(a, j))
	}
}

// sortByKey returns rec with its rows stably sorted by the first keyCount
// columns. A batch already in order is returned as is (retained).
func sortByKey(ctx context.Context, mem memory.Allocator, rec arrow.RecordBatch, keyCount int) (arrow.RecordBatch, error) {
	n := int(rec.NumRows())
	if n <= 1 {
		// The one-row write: in order, without building comparators.
		rec.Retain()
		return rec, nil
	}
	cmps := make([]func(i, j int) int, keyCount)
	for k := 0; k < keyCount; k++ {
		cmps[k] = keyCompare(rec.Column(k))
	}
	compare := func(i, j int) int {
		for _, c := range cmps {
			if r := c(i, j); r != 0 {
				return r
			}
		}
		return 0
	}
	sorted := true
	for i := 1; i < n; i++ {
		if compare(i-1, i) > 0 {
			sorted = false
			break
		}
	}
	if sorted {
		rec.Retain()
		return rec, nil
	}
	perm := make([]int32, n)
	if k, ok := rec.Column(0).(*array.Int64); ok && keyCount == 1 && k.NullN() == 0 {
		// One BIGINT key, the common case: sort (key, row) pairs, the row
		// breaking ties, which keeps the sort stable without a merge sort.
		type pair struct {
			k int64
			i int32
		}
		pairs := make([]pair, n)
		for i, v := range k.Int64Values() {
			pairs[i] = pair{v, int32(i)}
		}
		slices.SortFunc(pairs, func(a, b pair) int {
			if a.k != b.k {
				return cmp.Compare(a.k, b.k)
			}
			return cmp.Compare(a.i, b.i)
		})
		for i, p := range pairs {
			perm[i] = p.i
		}
	} else {
		for i := range perm {
			perm[i] = int32(i)
		}
		slices.SortStableFunc(perm, func(a, b int32) int { return compare(int(a), int(b)) })
	}
	return takeRows(ctx, mem, rec, perm)
}

// takeRows returns the rows of rec at the given positions, in that order.
func takeRows(ctx context.Context, mem memory.Allocator, rec arrow.RecordBatch, rows []int32) (arrow.RecordBatch, error) {
	b := array.NewInt32Builder(mem)
	b.AppendValues(rows, nil)
	idx := b.NewArray()
	b.Release()
	defer idx.Release()
	ctx = compute.WithAllocator(ctx, mem)
	cols := make([]arrow.Array, rec.NumCols())
	for c := range cols {
		out, err := compute.TakeArray(ctx, rec.Column(c), idx)
		if err != nil {
			for _, a := range cols[:c] {
				a.Release()
			}
			return nil, err
		}
		cols[c] = out
	}
	out := array.NewRecordBatch(rec.Schema(), cols, int64(len(rows)))
	for _, a := range cols {
		a.Release()
	}
	return out, nil
}
