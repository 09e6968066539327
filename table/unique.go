package table

import (
	"bytes"
	"context"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/rowset"
)

// concatBatches joins physical batches of one schema into one.
func concatBatches(mem memory.Allocator, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	sc := recs[0].Schema()
	cols := make([]arrow.Array, sc.NumFields())
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	for c := range cols {
		parts := make([]arrow.Array, len(recs))
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		a, err := array.Concatenate(parts, mem)
		if err != nil {
			for _, x := range cols[:c] {
				x.Release()
			}
			return nil, err
		}
		cols[c] = a
	}
	out := array.NewRecordBatch(sc, cols, n)
	for _, a := range cols {
		a.Release()
	}
	return out, nil
}

// dedupLastWins keeps, of each run of equal keys in a batch sorted stably by
// key, only the last row: within one write, the last row for a key wins.
func dedupLastWins(ctx context.Context, mem memory.Allocator, rec arrow.RecordBatch, keyCount int) (arrow.RecordBatch, error) {
	n := int(rec.NumRows())
	keyCols := make([]arrow.Array, keyCount)
	for k := range keyCols {
		keyCols[k] = rec.Column(k)
	}
	enc := rowset.NewKeyEncoder(keyCols)
	var cur, next []byte
	keep := make([]int32, 0, n)
	for i := 0; i < n; i++ {
		if i == 0 {
			cur = enc.Append(cur[:0], 0)
		}
		if i+1 < n {
			next = enc.Append(next[:0], i+1)
			if bytes.Equal(cur, next) {
				cur, next = next, cur
				continue
			}
			cur, next = next, cur
		}
		keep = append(keep, int32(i))
	}
	if len(keep) == n {
		rec.Retain()
		return rec, nil
	}
	return takeRows(ctx, mem, rec, keep)
}

// sortedKeys holds the encoded keys of one rowset, sorted, in one buffer:
// the memory a merge-on-write publish needs is the key bytes plus 4 bytes
// per key of the write being published, never the older data.
type sortedKeys struct {
	data []byte
	ends []uint32
}

func (k *sortedKeys) len() int { return len(k.ends) }
func (k *sortedKeys) at(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = k.ends[i-1]
	}
	return k.data[start:k.ends[i]]
}

// lowerBound is the first index whose key is >= key.
func (k *sortedKeys) lowerBound(key []byte) int {
	return sort.Search(k.len(), func(i int) bool { return bytes.Compare(k.at(i), key) >= 0 })
}

func readKeys(h *rowset.Handle, mem memory.Allocator, keyCount int) (*sortedKeys, error) {
	c := rowset.NewKeyCursor(h, mem, keyCount)
	defer c.Close()
	k := &sortedKeys{}
	for {
		ok, err := c.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return k, nil
		}
		k.data = append(k.data, c.Key...)
		k.ends = append(k.ends, uint32(len(k.data)))
	}
}

// mowMarks finds the rows of older rowsets whose keys the new rowset
// rewrites: a merge join of the new keys with each older rowset's keys,
// reading only the key pages whose first-column zone map can hold a new key.
// Rows already deleted are left alone.
func mowMarks(ctx context.Context, mem memory.Allocator, nh *rowset.Handle, older []*rowset.Handle, deleted map[uint64]*roaring.Bitmap, keyCount int) (map[uint64]*roaring.Bitmap, error) {
	keys, err := readKeys(nh, mem, keyCount)
	if err != nil || keys.len() == 0 {
		return nil, err
	}
	marks := map[uint64]*roaring.Bitmap{}
	for _, o := range older {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := keyMatches(ctx, mem, keys, o, deleted[o.Meta.ID], keyCount)
		if err != nil {
			return nil, err
		}
		if b != nil {
			marks[o.Meta.ID] = b
		}
	}
	return marks, nil
}

// keyMatches returns the ordinals of the rows of o, a rowset sorted by key,
// whose keys are in keys and which del does not hold; nil when there are
// none.
func keyMatches(ctx context.Context, mem memory.Allocator, keys *sortedKeys, o *rowset.Handle, del *roaring.Bitmap, keyCount int) (*roaring.Bitmap, error) {
	if keys.len() == 0 {
		return nil, nil
	}
	var b *roaring.Bitmap
	c := rowset.NewKeyCursor(o, mem, keyCount)
	defer c.Close()
	keep := func(lo, hi []byte) bool {
		if lo == nil {
			return true
		}
		i := keys.lowerBound(lo)
		return i < keys.len() && bytes.Compare(keys.at(i), hi) <= 0
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ok, err := c.NextPageWhere(keep)
		if err != nil {
			return nil, err
		}
		if !ok {
			return b, nil
		}
		j := -1
		for {
			more, err := c.Next()
			if err != nil {
				return nil, err
			}
			if !more {
				break
			}
			if j < 0 {
				j = keys.lowerBound(c.Key)
			}
			for j < keys.len() && bytes.Compare(keys.at(j), c.Key) < 0 {
				j++
			}
			if j < keys.len() && bytes.Equal(keys.at(j), c.Key) {
				if del == nil || !del.Contains(uint32(c.Ordinal)) {
					if b == nil {
						b = roaring.New()
					}
					b.Add(uint32(c.Ordinal))
				}
			}
			if c.AtPageEnd() {
				break
			}
		}
	}
}
