package query

import (
	"context"
	"math"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
)

// The merge-on-read key merge made incremental, for dense BIGINT keys: a
// table that keeps, for every key, where its newest row is can add a rowset
// newer than all the others by looking up its keys alone, where the merge
// of supersededByMerge reads every key of every rowset again for each new
// version.

// maxOwnerSpan bounds the key range a KeyOwners covers: 8 bytes per key of
// the range, 64 MiB at the most.
const maxOwnerSpan = 1 << 23

// ownerSlackRows lets a small table's keys spread over a range this wide
// whatever its rows, so that its first writes keep an index.
const ownerSlackRows = 1 << 16

// maxOwnerSlots bounds the rowsets one KeyOwners names (31 bits of a slot).
const maxOwnerSlots = 1 << 31

// KeyOwners is the newest row of every key of a run of rowsets, as the key
// merge would find it: Add takes the rowsets in version order, each newer
// than the ones before it, and returns the rows of the older ones that the
// new rowset's keys supersede. Its keys are one non-NULL BIGINT column in a
// range at most maxOwnerSpan wide and at most eight keys of range per row
// (ownerSlackRows for small tables); Add reports a rowset that does not fit.
// It is not safe for concurrent use, and after an error or a misfit it no
// longer describes its rowsets.
type KeyOwners struct {
	lo int64
	// owner[k-lo] is (slot+1)<<32 | ordinal of the newest row of key k, 0
	// when no rowset holds k.
	owner []uint64
	ids   []uint64 // rowset ID of each slot
	rows  []int64  // rows of each slot's rowset
	total int64
}

// NewKeyOwners returns the index of no rowset.
func NewKeyOwners() *KeyOwners { return &KeyOwners{} }

// Rowsets is the number of rowsets added.
func (k *KeyOwners) Rowsets() int { return len(k.ids) }

// Add indexes h, newer than every rowset added before, and returns the rows
// of those rowsets whose keys h holds, by rowset ID. It returns ok false,
// having changed nothing, when h's keys do not fit the index (see
// KeyOwners).
func (k *KeyOwners) Add(ctx context.Context, h *rowset.Handle) (marks map[uint64]*roaring.Bitmap, ok bool, err error) {
	var rows int64
	lo, hi, any := int64(0), int64(0), false
	for _, r := range h.Segments {
		if r.Schema().Field(0).Type.ID() != arrow.INT64 {
			return nil, false, nil
		}
		rows += r.NumRows()
		if r.NumRows() == 0 {
			continue
		}
		z := r.ColumnStats(0)
		if z.NullCount > 0 || z.Min.Kind != schema.IntValue || z.Max.Kind != schema.IntValue {
			return nil, false, nil
		}
		if !any || z.Min.Int < lo {
			lo = z.Min.Int
		}
		if !any || z.Max.Int > hi {
			hi = z.Max.Int
		}
		any = true
	}
	if rows > math.MaxUint32+1 || len(k.ids)+1 >= maxOwnerSlots {
		return nil, false, nil
	}
	if any && !k.cover(lo, hi, k.total+rows) {
		return nil, false, nil
	}
	slot := len(k.ids)
	k.ids = append(k.ids, h.Meta.ID)
	k.rows = append(k.rows, rows)
	k.total += rows
	// dense[s] collects the superseded rows of slot s a bit per row,
	// turned into a roaring bitmap once at the end.
	dense := make([][]uint64, slot)
	tag := uint64(slot+1) << 32
	var v segment.Values
	var base int64
	for _, r := range h.Segments {
		for p := 0; p < r.NumPages(); p++ {
			if err := ctx.Err(); err != nil {
				return nil, false, err
			}
			if err := r.ReadValues(0, p, &v, false); err != nil {
				return nil, false, err
			}
			first, _ := r.Page(p)
			ord0 := base + first
			if ord0+int64(len(v.Ints)) > rows {
				return nil, false, rowttl.Errorf(rowttl.ErrCorruption, "segment %s: page %d ends past the rowset's %d rows", r.Name(), p, rows)
			}
			for i, key := range v.Ints {
				d := uint64(key - k.lo)
				if d >= uint64(len(k.owner)) {
					return nil, false, rowttl.Errorf(rowttl.ErrCorruption, "segment %s: key %d outside its column's zone map", r.Name(), key)
				}
				o := k.owner[d]
				k.owner[d] = tag | uint64(ord0+int64(i))
				if o == 0 {
					continue
				}
				s, ord := int(o>>32)-1, uint32(o)
				if s >= slot {
					return nil, false, rowttl.Errorf(rowttl.ErrCorruption, "segment %s: key %d twice in rowset %d", r.Name(), key, h.Meta.ID)
				}
				m := dense[s]
				if m == nil {
					m = make([]uint64, (k.rows[s]+63)/64)
					dense[s] = m
				}
				m[ord>>6] |= 1 << (ord & 63)
			}
		}
		base += r.NumRows()
	}
	marks = make(map[uint64]*roaring.Bitmap)
	for s, m := range dense {
		if m != nil {
			// No copy: m is never written again.
			marks[k.ids[s]] = roaring.FromDense(m, false)
		}
	}
	return marks, true, nil
}

// cover makes the index's range hold [lo, hi] for total rows, or reports
// that it cannot. A range growing upwards, as increasing keys make it, gets
// room to spare so that each write does not copy the whole index.
func (k *KeyOwners) cover(lo, hi int64, total int64) bool {
	if k.owner == nil {
		k.lo = lo
	}
	curHi := k.lo + int64(len(k.owner)) - 1
	if lo >= k.lo && hi <= curHi && k.owner != nil {
		return true
	}
	newLo, newHi := min(lo, k.lo), max(hi, curHi)
	if newHi-newLo < 0 || uint64(newHi-newLo) >= maxOwnerSpan {
		return false
	}
	span := uint64(newHi-newLo) + 1
	limit := uint64(max(8*total, ownerSlackRows))
	if span > limit {
		return false
	}
	if k.owner != nil && hi > curHi {
		span = min(max(span, uint64(len(k.owner))*3/2), maxOwnerSpan, limit)
	}
	owner := make([]uint64, span)
	copy(owner[k.lo-newLo:], k.owner)
	k.lo, k.owner = newLo, owner
	return true
}

// BuildKeyOwners indexes rowsets (in version order, each one sorted run of
// unique keys) and returns the index with every row a newer version of its
// key hides, as Superseded finds them without the deleted rows; nil when
// the rowsets' keys do not fit an index.
func BuildKeyOwners(ctx context.Context, rowsets []*rowset.Handle, keyCount int) (*KeyOwners, map[uint64]*roaring.Bitmap, error) {
	if keyCount != 1 {
		return nil, nil, nil
	}
	k := NewKeyOwners()
	hidden := map[uint64]*roaring.Bitmap{}
	for _, h := range rowsets {
		marks, ok, err := k.Add(ctx, h)
		if err != nil || !ok {
			return nil, nil, err
		}
		for id, m := range marks {
			if b := hidden[id]; b != nil {
				b.Or(m)
			} else {
				hidden[id] = m
			}
		}
	}
	return k, hidden, nil
}
