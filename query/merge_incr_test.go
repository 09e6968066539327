package query

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/vfs"
)

// keyRowsets writes rowsets of the scan table's shape with the given keys
// (in the given order), oldest first.
type keyRowsets struct {
	t       *testing.T
	mem     memory.Allocator
	fs      vfs.FS
	fileNum uint64
	handles []*rowset.Handle
}

func (k *keyRowsets) add(keys []int64, pageRows, segRows int) *rowset.Handle {
	k.t.Helper()
	w := rowset.NewWriter(rowset.WriterOptions{
		FS: k.fs, Dir: "/t", Schema: scanPhysical(), TTLIndex: 2,
		Segment: segment.WriterOptions{PageRows: pageRows}, SegmentRows: int64(segRows),
		NewFileNum: func() uint64 { k.fileNum++; return k.fileNum },
	})
	b := array.NewRecordBuilder(k.mem, scanPhysical())
	for _, key := range keys {
		b.Field(0).(*array.Int64Builder).Append(key)
		b.Field(1).(*array.Int64Builder).Append(int64(len(k.handles)))
		b.Field(2).(*array.Int64Builder).AppendNull()
	}
	rec := b.NewRecordBatch()
	b.Release()
	err := w.Write(rec)
	rec.Release()
	if err != nil {
		k.t.Fatal(err)
	}
	m, err := w.Finish()
	if err != nil {
		k.t.Fatal(err)
	}
	m.ID = uint64(len(k.handles) + 1)
	m.Lo, m.Hi = int64(len(k.handles)), int64(len(k.handles))
	h, err := rowset.Open(k.fs, "/t", m, nil)
	if err != nil {
		k.t.Fatal(err)
	}
	k.handles = append(k.handles, h)
	return h
}

func (k *keyRowsets) release() {
	for _, h := range k.handles {
		h.Unref()
	}
}

func newKeyRowsets(t *testing.T, mem memory.Allocator) *keyRowsets {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/t")
	return &keyRowsets{t: t, mem: mem, fs: fs}
}

// TestKeyOwnersModel adds random rowsets of unique sorted keys one by one,
// over a range that drifts, with pages and segments of random sizes, and
// checks after
// each that the marks Add returned, gathered, equal the full merge of the
// rowsets so far (seed printed).
func TestKeyOwnersModel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	ctx := context.Background()
	for trial := 0; trial < 8; trial++ {
		rs := newKeyRowsets(t, mem)
		k := NewKeyOwners()
		got := map[uint64]*roaring.Bitmap{}
		lo := int64(rng.IntN(1000)) - 500
		for step := 0; step < 12; step++ {
			lo += int64(rng.IntN(200)) - 50
			set := map[int64]bool{}
			for n := 1 + rng.IntN(400); len(set) < n; {
				set[lo+rng.Int64N(600)] = true
			}
			var keys []int64
			for key := range set {
				keys = append(keys, key)
			}
			slices.Sort(keys)
			h := rs.add(keys, 1+rng.IntN(64), []int{0, 50}[rng.IntN(2)])
			marks, ok, err := k.Add(ctx, h)
			if err != nil || !ok {
				t.Fatalf("seed %d trial %d step %d: Add: ok %v, %v", seed, trial, step, ok, err)
			}
			for id, m := range marks {
				if b := got[id]; b != nil {
					if b.Intersects(m) {
						t.Fatalf("seed %d trial %d step %d: rowset %d: rows marked twice", seed, trial, step, id)
					}
					b.Or(m)
				} else {
					got[id] = m
				}
			}
			want, err := Superseded(ctx, mem, rs.handles, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range rs.handles {
				a, b := ordinals(want[h.Meta.ID]), ordinals(got[h.Meta.ID])
				if !slices.Equal(a, b) {
					t.Fatalf("seed %d trial %d step %d: rowset %d: Add marked %v, the full merge %v", seed, trial, step, h.Meta.ID, b, a)
				}
			}
		}
		built, hidden, err := BuildKeyOwners(ctx, rs.handles, 1)
		if err != nil || built == nil || built.Rowsets() != len(rs.handles) {
			t.Fatalf("seed %d trial %d: BuildKeyOwners: %v, %v", seed, trial, built, err)
		}
		for _, h := range rs.handles {
			if a, b := ordinals(hidden[h.Meta.ID]), ordinals(got[h.Meta.ID]); !slices.Equal(a, b) {
				t.Fatalf("seed %d trial %d: rowset %d: BuildKeyOwners hides %v, Add one by one %v", seed, trial, h.Meta.ID, a, b)
			}
		}
		rs.release()
	}
}

// TestKeyOwnersMisfits: keys too far apart for an index, or a key column
// that is not one BIGINT, make Add report a misfit; a rowset that holds a
// key twice is ErrCorruption.
func TestKeyOwnersMisfits(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	rs := newKeyRowsets(t, mem)
	defer rs.release()
	k := NewKeyOwners()
	if _, ok, err := k.Add(ctx, rs.add([]int64{1, 2, 3}, 16, 0)); !ok || err != nil {
		t.Fatalf("first rowset: ok %v, %v", ok, err)
	}
	// A range of 2^40 keys for four rows.
	if _, ok, err := k.Add(ctx, rs.add([]int64{2, 1 << 40}, 16, 0)); ok || err != nil {
		t.Fatalf("keys far apart: ok %v, %v; want a misfit", ok, err)
	}
	if k.Rowsets() != 1 {
		t.Fatalf("a misfit added a rowset: %d", k.Rowsets())
	}
	if o, _, err := BuildKeyOwners(ctx, rs.handles[:1], 2); o != nil || err != nil {
		t.Fatalf("two key columns: %v, %v; want no index", o, err)
	}
	_, ok, err := k.Add(ctx, rs.add([]int64{5, 6, 5}, 16, 0))
	if !errors.Is(err, rowttl.ErrCorruption) || !strings.Contains(err.Error(), "key 5 twice") {
		t.Fatalf("a key twice: ok %v, %v; want ErrCorruption", ok, err)
	}
}

func ordinals(b *roaring.Bitmap) []uint32 {
	if b == nil {
		return nil
	}
	return b.ToArray()
}
