package query

import (
	"context"
	"math"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
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

// supersededInt64 is supersededByMerge for int64 keys; out already holds
// the deleted rows.
func supersededInt64(ctx context.Context, mem memory.Allocator, rowsets []*rowset.Handle, out map[uint64]*roaring.Bitmap) error {
	m := rowset.NewInt64Merge()
	all := make([]*intCursor, 0, len(rowsets))
	defer func() {
		for _, c := range all {
			c.close()
		}
	}()
	for rank, rs := range rowsets {
		c := &intCursor{h: rs, mem: mem}
		all = append(all, c)
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			m.PushInt(rank, c.key)
		}
	}
	steps := 0
	for m.Len() > 0 {
		if steps++; steps&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		rank, wins := m.Next()
		c := all[rank]
		if !wins {
			c.marks = append(c.marks, uint32(c.ordinal))
		}
		ok, err := c.next()
		if err != nil {
			return err
		}
		if !ok {
			m.Drop()
			continue
		}
		m.AdvanceInt(c.key)
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

// maxDenseSpan bounds the key range of the dense merge: a bit per key of
// the range, 64 MiB at the most.
const maxDenseSpan = 1 << 29

// denseKeys reports whether the int64 keys of the rowsets span a range
// small enough, next to the rows, for supersededDense: at most 64 keys of
// range per row, and maxDenseSpan. It returns the smallest key and the span.
func denseKeys(rowsets []*rowset.Handle) (lo int64, span uint64, ok bool) {
	var rows int64
	hi := int64(0)
	first := true
	for _, h := range rowsets {
		for _, r := range h.Segments {
			z := r.ColumnStats(0)
			rows += r.NumRows()
			if z.Rows == 0 || z.Min.Kind != schema.IntValue {
				continue
			}
			if first || z.Min.Int < lo {
				lo = z.Min.Int
			}
			if first || z.Max.Int > hi {
				hi = z.Max.Int
			}
			first = false
		}
	}
	if first || hi < lo {
		return 0, 0, false
	}
	span = uint64(hi-lo) + 1
	if span == 0 || span > maxDenseSpan || span > 64*uint64(max(rows, 1)) {
		return 0, 0, false
	}
	return lo, span, true
}

// supersededDense is supersededInt64 for keys in [lo, lo+span): it walks
// the rowsets from the newest, in any row order, with a bit per key of the
// range; a row whose key's bit is already set has a newer version. Each
// rowset's keys are unique, as its writer or compaction left them. A
// random probe into a bitmap that fits the cache costs a few nanoseconds
// per row, where the heap merge paid a mispredicted comparison per level.
func supersededDense(ctx context.Context, rowsets []*rowset.Handle, out map[uint64]*roaring.Bitmap, lo int64, span uint64) error {
	seen := make([]uint64, (span+63)/64)
	var v segment.Values
	for rank := len(rowsets) - 1; rank >= 0; rank-- {
		h := rowsets[rank]
		// The marks go into a bit per row of the rowset, turned into a
		// roaring bitmap once at the end: adding them one by one cost more
		// than the probes into seen.
		var rows int64
		for _, r := range h.Segments {
			rows += r.NumRows()
		}
		if rows > math.MaxUint32+1 {
			return rowttl.Errorf(rowttl.ErrCorruption, "rowset %d: %d rows, more than a delete bitmap holds", h.Meta.ID, rows)
		}
		marks := make([]uint64, (rows+63)/64)
		var hits uint64
		var base int64
		for _, r := range h.Segments {
			for p := 0; p < r.NumPages(); p++ {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := r.ReadValues(0, p, &v, false); err != nil {
					return err
				}
				first, _ := r.Page(p)
				ord0 := base + first
				if ord0+int64(len(v.Ints)) > rows {
					return rowttl.Errorf(rowttl.ErrCorruption, "segment %s: page %d ends past the rowset's %d rows", r.Name(), p, rows)
				}
				for i, k := range v.Ints {
					d := uint64(k - lo)
					if d >= span {
						return rowttl.Errorf(rowttl.ErrCorruption, "segment %s: key %d outside its column's zone map", r.Name(), k)
					}
					// Branch-free: whether a newer rowset holds the key
					// is a coin toss the predictor would lose.
					w := seen[d>>6]
					hit := w >> (d & 63) & 1
					seen[d>>6] = w | 1<<(d&63)
					o := uint64(ord0 + int64(i))
					marks[o>>6] |= hit << (o & 63)
					hits |= hit
				}
			}
			base += r.NumRows()
		}
		if hits != 0 {
			// No copy: marks is never written again, and the bitmap's
			// containers copy it before any change of their own.
			m := roaring.FromDense(marks, false)
			if b := out[h.Meta.ID]; b != nil {
				b.Or(m)
			} else {
				out[h.Meta.ID] = m
			}
		}
	}
	return nil
}
