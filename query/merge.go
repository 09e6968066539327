package query

import (
	"context"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/rowset"
)

// supersededByMerge finds, for a merge-on-read table, every row that a newer
// version of its key hides. It k-way merges the key columns of all rowsets
// (each one sorted run with unique keys) in rowset.Merge's order and, for
// each key, keeps only the occurrence of the newest rowset, the highest rank. Only after this may the TTL rule be
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
	cursors := make([]*rowset.KeyCursor, len(rowsets))
	defer func() {
		for _, c := range cursors {
			if c != nil {
				c.Close()
			}
		}
	}()
	m := rowset.NewBytesMerge()
	for rank, rs := range rowsets {
		c := rowset.NewKeyCursor(rs, mem, keyCount)
		cursors[rank] = c
		ok, err := c.Next()
		if err != nil {
			return nil, err
		}
		if ok {
			m.Push(rank, c.Key)
		}
	}
	steps := 0
	for m.Len() > 0 {
		if steps++; steps&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		rank, wins := m.Next()
		c := cursors[rank]
		if !wins {
			mark(rowsets[rank].Meta.ID, c.Ordinal)
		}
		ok, err := c.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			m.Drop()
			continue
		}
		m.Advance(c.Key)
	}
	return out, nil
}

// Superseded returns deleted plus every row of rowsets (in version order,
// each one sorted run of unique keys) that a newer version of its key in
// rowsets hides. The result can serve as Snapshot.Deleted with Merged set.
func Superseded(ctx context.Context, mem memory.Allocator, rowsets []*rowset.Handle, keyCount int, deleted map[uint64]*roaring.Bitmap) (map[uint64]*roaring.Bitmap, error) {
	return supersededByMerge(ctx, mem, rowsets, keyCount, deleted)
}
