package table

import (
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
)

// dirtyAllocator hands out memory full of garbage, as a recycling pool may:
// page buffers must be overwritten entirely, whatever they held.
type dirtyAllocator struct{ memory.Allocator }

func (d dirtyAllocator) Allocate(size int) []byte {
	b := d.Allocator.Allocate(size)
	for i := range b {
		b[i] = 0xa5
	}
	return b
}

func (d dirtyAllocator) Reallocate(size int, b []byte) []byte {
	old := len(b)
	b = d.Allocator.Reallocate(size, b)
	for i := old; i < len(b); i++ {
		b[i] = 0xa5
	}
	return b
}

// TestScanWithDirtyPageMemory reads pages with no, some and only NULLs in
// every column through a page allocator that returns garbage, and compares
// with reads through zeroed memory.
func TestScanWithDirtyPageMemory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	opts := quiet()
	opts.PageRows = 64
	tbl := mustCreate(t, dir, directDef(), opts)
	rng := rand.New(rand.NewPCG(5, 6))
	for k := 0; k < 6; k++ {
		rows := genEvents(rng, int64(k*1000), 200+rng.IntN(300))
		rec := aggBatch(memory.DefaultAllocator, rows, func(i int) float64 {
			switch {
			case k == 1 || (k == 2 && i < 128):
				return nanAmount // whole pages of NULL
			case k == 3 && i%2 == 0:
				return nanAmount
			}
			return float64(i) / 8
		})
		mustWrite(t, tbl, rec)
		rec.Release()
	}
	checkClose(t, tbl)

	clean := memory.NewCheckedAllocator(memory.NewGoAllocator())
	dirty := memory.NewCheckedAllocator(dirtyAllocator{memory.NewGoAllocator()})
	read := func(pageMem memory.Allocator, at time.Time, filter query.Expr) [][]any {
		o := quiet()
		o.Allocator, o.PageAllocator = clean, pageMem
		tb, err := Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		defer checkClose(t, tb)
		var out [][]any
		for _, r := range scanAll(t, tb, query.Request{Now: at, Filter: filter, ShowHidden: true}) {
			row := make([]any, len(r))
			for i, v := range r {
				row[i] = v
			}
			out = append(out, row)
		}
		return out
	}
	for _, at := range []time.Time{base.Add(-10 * 24 * time.Hour), base} {
		for _, f := range []query.Expr{nil, query.Compare("user_id", query.Lt, int64(300))} {
			want, got := read(clean, at, f), read(dirty, at, f)
			if len(want) == 0 || !reflect.DeepEqual(got, want) {
				t.Fatalf("at %v filter %v: %d rows through dirty memory differ from %d through zeroed memory", at, f, len(got), len(want))
			}
		}
	}
	clean.AssertSize(t, 0)
	dirty.AssertSize(t, 0)
}
