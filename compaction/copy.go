package compaction

import (
	"context"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
)

// CopyPages writes the rows a compaction keeps to w page by page,
// copying without decoding every page that keeps all its rows (TTL zone map
// proves them live, no row deleted) and filtering the others. It serves
// where the output need not be a key-ordered merge: DUPLICATE tables, and a
// merge-on-write rewrite of one rowset. It returns false, having written
// nothing, when an input's layout differs from the table's (a schema
// change), so the caller falls back to scans. kept[i] receives the
// ordinals of the rows of inputs[i] it writes.
// deleted[i] holds the ordinals of inputs[i] that delete marks hide (nil:
// none); pol is the table's TTL policy, which judges a wholly expired
// input.
func CopyPages(ctx context.Context, mem, pageMem memory.Allocator, inputs []*rowset.Handle, deleted []*roaring.Bitmap, pol ttlcol.Policy, drop bool, threshold int64, phys *arrow.Schema, w *rowset.Writer, kept []*roaring.Bitmap) (bool, error) {
	for _, h := range inputs {
		for _, r := range h.Segments {
			if !r.SameLayout(phys) {
				return false, nil
			}
		}
	}
	ttlIdx := -1
	if idx := phys.FieldIndices(schema.TTLColumn); len(idx) > 0 {
		ttlIdx = idx[0]
	}
	for i, h := range inputs {
		if drop && WhollyExpired(&h.Meta, pol, threshold) {
			continue
		}
		del := deleted[i]
		var base int64
		for _, r := range h.Segments {
			for p := 0; p < r.NumPages(); p++ {
				if err := ctx.Err(); err != nil {
					return true, err
				}
				first, n := r.Page(p)
				ord0 := base + first
				state := ttlcol.AllLive
				if drop && ttlIdx >= 0 {
					state = query.ClassifyPage(r.PageStats(ttlIdx, p), threshold)
				}
				if state == ttlcol.AllExpired {
					continue
				}
				hidden := del != nil && del.IntersectsWithInterval(uint64(ord0), uint64(ord0)+uint64(n))
				if state == ttlcol.AllLive && !hidden {
					if err := w.CopyPage(pageMem, r, p); err != nil {
						return true, err
					}
					kept[i].AddRange(uint64(ord0), uint64(ord0)+uint64(n))
					continue
				}
				if err := filterPage(ctx, mem, pageMem, r, p, ord0, n, state, threshold, ttlIdx, del, phys, w, kept[i]); err != nil {
					return true, err
				}
			}
			base += r.NumRows()
		}
	}
	return true, nil
}

// filterPage decodes one page and writes the rows that are neither expired
// (when state says some are) nor deleted, adding their ordinals to kept.
func filterPage(ctx context.Context, mem, pageMem memory.Allocator, r interface {
	ReadPage(memory.Allocator, int, int) (arrow.Array, error)
}, p int, ord0 int64, n int, state ttlcol.PageState, threshold int64, ttlIdx int, del *roaring.Bitmap, phys *arrow.Schema, w *rowset.Writer, kept *roaring.Bitmap) error {
	cols := make([]arrow.Array, phys.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for c := range cols {
		a, err := r.ReadPage(pageMem, c, p)
		if err != nil {
			return err
		}
		cols[c] = a
	}
	mask := make([]byte, (n+7)/8)
	var ttl arrow.Array
	if state == ttlcol.Mixed {
		ttl = cols[ttlIdx]
	}
	ttlcol.PageMask(state, ttl, n, threshold, mask)
	if del != nil {
		for i := 0; i < n; i++ {
			if del.Contains(uint32(ord0 + int64(i))) {
				bitutil.ClearBit(mask, i)
			}
		}
	}
	nkept := bitutil.CountSetBits(mask, 0, n)
	if nkept == 0 {
		return nil
	}
	for i := 0; i < n; i++ {
		if bitutil.BitIsSet(mask, i) {
			kept.Add(uint32(ord0 + int64(i)))
		}
	}
	rec := array.NewRecordBatch(phys, cols, int64(n))
	defer rec.Release()
	if nkept == n {
		return w.Write(rec)
	}
	out, err := query.FilterBatchInto(ctx, mem, pageMem, rec, mask)
	if err != nil {
		return err
	}
	defer out.Release()
	return w.Write(out)
}
