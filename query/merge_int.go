package query

import (
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
	marks   []uint32 // ordinals of its rows superseded by newer ones
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

// intHeap is a binary min-heap of cursors by (key, rank), written out
// rather than through container/heap: its interface calls were most of the
// merge's time.
type intHeap []*intCursor

func (h intHeap) less(i, j int) bool {
	if h[i].key != h[j].key {
		return h[i].key < h[j].key
	}
	return h[i].rank < h[j].rank
}

func (h intHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (h intHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// supersededInt64 is supersededByMerge for int64 keys; out already holds
// the deleted rows.
func supersededInt64(ctx context.Context, mem memory.Allocator, rowsets []*rowset.Handle, out map[uint64]*roaring.Bitmap) error {
	var h intHeap
	all := make([]*intCursor, 0, len(rowsets))
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
			h = append(h, c)
		}
	}
	h.init()
	steps := 0
	for len(h) > 0 {
		if steps++; steps&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		c := h[0]
		// Equal keys pop oldest first (lower rank); every occurrence but the
		// last (newest) one is superseded. The next in order is the smaller
		// of the root's children.
		if len(h) > 1 {
			second := 1
			if len(h) > 2 && h.less(2, 1) {
				second = 2
			}
			if h[second].key == c.key {
				c.marks = append(c.marks, uint32(c.ordinal))
			}
		}
		ok, err := c.next()
		if err != nil {
			return err
		}
		if !ok {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		h.down(0)
	}
	for _, c := range all {
		if len(c.marks) == 0 {
			continue
		}
		b := out[c.h.Meta.ID]
		if b == nil {
			b = roaring.New()
			out[c.h.Meta.ID] = b
		}
		b.AddMany(c.marks)
	}
	return nil
}
