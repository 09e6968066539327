package table

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
)

// TestSupersededPaths checks the key merge of a merge-on-read version
// against a model, on keys dense enough for the bitmap walk and on keys too
// sparse for it (the heap merge): every row whose key a newer rowset holds
// is hidden, the deleted rows stay hidden, and the version's own delete
// bitmaps are left as they were. The rowsets span several segments and
// enough rows for full bitmap containers.
func TestSupersededPaths(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, c := range []struct {
		name  string
		scale int64
	}{{"dense", 1}, {"sparse", 1 << 20}} {
		t.Run(c.name, func(t *testing.T) {
			const writes, rows, keys = 4, 20_000, 30_000
			def := directDef()
			def.Model = schema.UniqueMOR
			def.Properties[PropMergeOnWrite] = "false"
			opts := quiet()
			opts.PageRows, opts.SegmentRows = 1024, 7000
			tbl := mustCreate(t, t.TempDir(), def, opts)
			defer tbl.Close()
			rng := rand.New(rand.NewPCG(seed, uint64(c.scale)))
			var sets [][]int64 // each write's keys, sorted: ordinal order
			for w := 0; w < writes; w++ {
				perm := rng.Perm(keys)[:rows]
				ev := genEvents(rng, 0, rows)
				set := make([]int64, rows)
				for i := range ev {
					ev[i].id = int64(perm[i]) * c.scale
					set[i] = ev[i].id
				}
				slices.Sort(set)
				sets = append(sets, set)
				rec := eventBatch(memory.DefaultAllocator, ev, true)
				mustWrite(t, tbl, rec)
				rec.Release()
			}
			v, err := tbl.pin()
			if err != nil {
				t.Fatal(err)
			}
			defer v.unref()
			if len(v.rowsets) != writes {
				t.Fatalf("%d rowsets, want one per write (%d)", len(v.rowsets), writes)
			}
			if len(v.rowsets[0].Segments) < 2 {
				t.Fatalf("rowset of %d segments, want several", len(v.rowsets[0].Segments))
			}
			first, second := v.rowsets[0].Meta.ID, v.rowsets[1].Meta.ID
			deleted := map[uint64]*roaring.Bitmap{first: roaring.BitmapOf(1, 3, 12345), second: roaring.BitmapOf(7)}
			got, err := query.Superseded(context.Background(), memory.DefaultAllocator, v.rowsets, 1, deleted)
			if err != nil {
				t.Fatal(err)
			}
			if !deleted[first].Equals(roaring.BitmapOf(1, 3, 12345)) || !deleted[second].Equals(roaring.BitmapOf(7)) {
				t.Fatalf("the deleted bitmaps changed: %v %v", deleted[first], deleted[second])
			}
			for w, set := range sets {
				want := roaring.New()
				if d := deleted[v.rowsets[w].Meta.ID]; d != nil {
					want.Or(d)
				}
				newer := map[int64]bool{}
				for _, later := range sets[w+1:] {
					for _, k := range later {
						newer[k] = true
					}
				}
				for ord, k := range set {
					if newer[k] {
						want.Add(uint32(ord))
					}
				}
				g := got[v.rowsets[w].Meta.ID]
				if g == nil {
					g = roaring.New()
				}
				if !g.Equals(want) {
					t.Fatalf("rowset %d: %d rows hidden, want %d%s", w, g.GetCardinality(), want.GetCardinality(), supersededDiff(g, want))
				}
			}
		})
	}
}

func supersededDiff(got, want *roaring.Bitmap) string {
	extra, missing := roaring.AndNot(got, want), roaring.AndNot(want, got)
	return fmt.Sprintf(" (%d extra, first %v; %d missing, first %v)", extra.GetCardinality(), minOrNone(extra), missing.GetCardinality(), minOrNone(missing))
}

func minOrNone(b *roaring.Bitmap) any {
	if b.IsEmpty() {
		return "none"
	}
	return b.Minimum()
}
