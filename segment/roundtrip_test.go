package segment

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestRoundTrip writes every type, shape and null density at several page
// and batch sizes, from sliced inputs, and reads it back.
func TestRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(1, 2))
	type layout struct{ rows, pageRows, batch int }
	layouts := []layout{
		{0, 0, 0},
		{1, 0, 0},
		{5, 1, 2},
		{100, 7, 13},
		{100, 100, 1},
		{1000, 64, 1000},
		{1000, 300, 77},
		{10000, 0, 999},
	}
	for _, dt := range allTypes {
		for _, sh := range shapes {
			for _, nullFrac := range []float64{0, 0.3, 1} {
				for _, l := range layouts {
					name := fmt.Sprintf("%s/%s/nulls=%v/rows=%d/page=%d/batch=%d", dt, sh, nullFrac, l.rows, l.pageRows, l.batch)
					// A sliced source: the array starts 3 rows into its buffers.
					full := genArray(mem, dt, l.rows+5, rng, sh, nullFrac)
					src := array.NewSlice(full, 3, int64(l.rows+3))
					full.Release()
					roundTrip(t, mem, name, src, WriterOptions{PageRows: l.pageRows}, l.batch)
					src.Release()
				}
			}
		}
	}
}

func roundTrip(t *testing.T, mem memory.Allocator, name string, src arrow.Array, opts WriterOptions, batch int) {
	t.Helper()
	rec := newRecord(src)
	defer rec.Release()
	b, sum := writeBatches(t, rec, opts, batch)
	r := openBytes(t, b, name)
	if r.NumRows() != int64(src.Len()) || sum.Rows != r.NumRows() || r.Size() != int64(len(b)) {
		t.Fatalf("%s: rows %d summary %d, want %d", name, r.NumRows(), sum.Rows, src.Len())
	}
	if !r.Schema().Equal(rec.Schema()) {
		t.Fatalf("%s: schema %s, want %s", name, r.Schema(), rec.Schema())
	}
	pageRows := opts.PageRows
	if pageRows == 0 {
		pageRows = DefaultPageRows
	}
	if want := (src.Len() + pageRows - 1) / pageRows; r.NumPages() != want {
		t.Fatalf("%s: %d pages, want %d", name, r.NumPages(), want)
	}
	for p := 0; p < r.NumPages(); p++ {
		first, n := r.Page(p)
		if first != int64(p*pageRows) || n != min(pageRows, src.Len()-p*pageRows) {
			t.Fatalf("%s: page %d covers [%d,+%d)", name, p, first, n)
		}
	}
	got := readColumn(t, r, mem, 0)
	defer got.Release()
	if !arraysIdentical(got, src) {
		t.Fatalf("%s: read back\n%v\nwant\n%v", name, got, src)
	}
	if got.NullN() != src.NullN() {
		t.Fatalf("%s: %d nulls, want %d", name, got.NullN(), src.NullN())
	}
	if z := r.ColumnStats(0); !zoneEqual(z, sum.Columns[0]) {
		t.Fatalf("%s: column stats %v, summary %v", name, z, sum.Columns[0])
	}
	checkZones(t, name, r, src, pageRows)
}
