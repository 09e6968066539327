package query

import (
	"container/heap"
	"context"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/rowset"
)

// The merge-on-read key merge for the common key, one BIGINT column with no
// NULLs: keys compare as int64 values, not encoded bytes.

// int64Keyed reports whether every rowset keys on one non-NULL int64
// column, judging by the first segment's schema and zone maps.
func int64Keyed(rowsets []*rowset.Handle, keyCount int) bool {
	if keyCount != 1 {
		return false
	}
	for _, h := range rowsets {
		for _, r := range h.Segments {
			if r.Schema().Field(0).Type.ID() != arrow.INT64 || r.ColumnStats(0).NullCount > 0 {
				return false
			}
		}
	}
	return true
}

type intCursor struct {
	h       *rowset.Handle
	mem     memory.Allocator
	rank    int
	seg     int
	page    int
	base    int64 // ordinal of the current segment's first row
	first   int64 // ordinal of the current page's first row
	arr     *array.Int64
	vals    []int64
	i       int
	key     int64
	ordinal int64
}

func (c *intCursor) next() (bool, error) {
	for c.vals == nil || c.i >= len(c.vals) {
		if c.arr != nil {
			c.arr.Release()
			c.arr, c.vals = nil, nil
		}
		if c.seg >= len(c.h.Segments) {
			return false, nil
		}
		r := c.h.Segments[c.seg]
		if c.page >= r.NumPages() {
			c.base += r.NumRows()
			c.seg++
			c.page = 0
			continue
		}
		a, err := r.ReadPage(c.mem, 0, c.page)
		if err != nil {
			return false, err
		}
		first, _ := r.Page(c.page)
		c.first = c.base + first
		c.page++
		c.arr = a.(*array.Int64)
		c.vals = c.arr.Int64Values()
		c.i = 0
	}
	c.key = c.vals[c.i]
	c.ordinal = c.first + int64(c.i)
	c.i++
	return true, nil
}

func (c *intCursor) close() {
	if c.arr != nil {
		c.arr.Release()
		c.arr, c.vals = nil, nil
	}
}

type intHeap []*intCursor

func (h intHeap) Len() int { return len(h) }
func (h intHeap) Less(i, j int) bool {
	if h[i].key != h[j].key {
		return h[i].key < h[j].key
	}
	return h[i].rank < h[j].rank
}
func (h intHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)   { *h = append(*h, x.(*intCursor)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// supersededInt64 is supersededByMerge for int64 keys; out already holds
// the deleted rows.
func supersededInt64(ctx context.Context, mem memory.Allocator, rowsets []*rowset.Handle, out map[uint64]*roaring.Bitmap) error {
	marks := make(map[uint64][]uint32, len(rowsets))
	h := &intHeap{}
	var all []*intCursor
	defer func() {
		for _, c := range all {
			c.close()
		}
	}()
	for rank, rs := range rowsets {
		c := &intCursor{h: rs, mem: mem, rank: rank}
		all = append(all, c)
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			*h = append(*h, c)
		}
	}
	heap.Init(h)
	steps := 0
	for h.Len() > 0 {
		if steps++; steps&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		c := (*h)[0]
		// Equal keys pop oldest first (lower rank); every occurrence but the
		// last (newest) one is superseded.
		if h.Len() > 1 {
			second := (*h)[1]
			if h.Len() > 2 && (*h)[2].key < second.key || (h.Len() > 2 && (*h)[2].key == second.key && (*h)[2].rank < second.rank) {
				second = (*h)[2]
			}
			if second.key == c.key {
				marks[c.h.Meta.ID] = append(marks[c.h.Meta.ID], uint32(c.ordinal))
			}
		}
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	for id, ords := range marks {
		b := out[id]
		if b == nil {
			b = roaring.New()
			out[id] = b
		}
		b.AddMany(ords)
	}
	return nil
}
