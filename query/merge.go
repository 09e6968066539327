package query

import (
	"bytes"
	"container/heap"
	"context"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/rowset"
)

// supersededByMerge finds, for a merge-on-read table, every row that a newer
// version of its key hides. It k-way merges the key columns of all rowsets
// (each one sorted run with unique keys) and, for each key, keeps only the
// occurrence of the newest rowset. Only after this may the TTL rule be
// applied: an expired newest version must still hide the older ones.
//
// Memory: one decoded key page per rowset, plus the bitmaps of superseded
// rows.
func supersededByMerge(ctx context.Context, mem memory.Allocator, rowsets []*rowset.Handle, keyCount int, deleted map[uint64]*roaring.Bitmap) (map[uint64]*roaring.Bitmap, error) {
	out := make(map[uint64]*roaring.Bitmap, len(rowsets))
	for id, b := range deleted {
		out[id] = b.Clone()
	}
	if len(rowsets) <= 1 {
		// One sorted run of unique keys hides nothing.
		return out, nil
	}
	if int64Keyed(rowsets, keyCount) {
		if lo, span, ok := denseKeys(rowsets); ok {
			return out, supersededDense(ctx, rowsets, out, lo, span)
		}
		return out, supersededInt64(ctx, mem, rowsets, out)
	}
	mark := func(id uint64, ord int64) {
		b := out[id]
		if b == nil {
			b = roaring.New()
			out[id] = b
		}
		b.Add(uint32(ord))
	}
	h := &cursorHeap{}
	defer func() {
		for _, c := range h.items {
			c.cur.Close()
		}
	}()
	// advance moves c to its next key and back onto the heap, or closes it
	// at its end or on an error.
	advance := func(c *mergeCursor) error {
		ok, err := c.cur.Next()
		if err != nil || !ok {
			c.cur.Close()
			return err
		}
		c.key = append(c.key[:0], c.cur.Key...)
		heap.Push(h, c)
		return nil
	}
	for rank, rs := range rowsets {
		if err := advance(&mergeCursor{cur: rowset.NewKeyCursor(rs, mem, keyCount), rank: rank, id: rs.Meta.ID}); err != nil {
			return nil, err
		}
	}
	var group []*mergeCursor
	steps := 0
	for h.Len() > 0 {
		if steps++; steps%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		first := heap.Pop(h).(*mergeCursor)
		group = append(group[:0], first)
		for h.Len() > 0 && bytes.Equal(h.items[0].key, first.key) {
			group = append(group, heap.Pop(h).(*mergeCursor))
		}
		if len(group) > 1 {
			newest := group[0]
			for _, c := range group[1:] {
				if c.rank > newest.rank {
					newest = c
				}
			}
			for _, c := range group {
				if c != newest {
					mark(c.id, c.cur.Ordinal)
				}
			}
		}
		for i, c := range group {
			if err := advance(c); err != nil {
				// The rest of the group is off the heap: close it here, the
				// others in the deferred clean-up.
				for _, g := range group[i+1:] {
					g.cur.Close()
				}
				return nil, err
			}
		}
	}
	return out, nil
}

type mergeCursor struct {
	cur  *rowset.KeyCursor
	key  []byte
	rank int
	id   uint64
}

type cursorHeap struct{ items []*mergeCursor }

func (h *cursorHeap) Len() int { return len(h.items) }
func (h *cursorHeap) Less(i, j int) bool {
	if c := bytes.Compare(h.items[i].key, h.items[j].key); c != 0 {
		return c < 0
	}
	return h.items[i].rank < h.items[j].rank
}
func (h *cursorHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *cursorHeap) Push(x any)    { h.items = append(h.items, x.(*mergeCursor)) }
func (h *cursorHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// Superseded returns deleted plus every row of rowsets (in version order,
// each one sorted run of unique keys) that a newer version of its key in
// rowsets hides. The result can serve as Snapshot.Deleted with Merged set.
func Superseded(ctx context.Context, mem memory.Allocator, rowsets []*rowset.Handle, keyCount int, deleted map[uint64]*roaring.Bitmap) (map[uint64]*roaring.Bitmap, error) {
	return supersededByMerge(ctx, mem, rowsets, keyCount, deleted)
}
