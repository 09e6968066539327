package table

import (
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
)

// The merge-on-read key merge, carried from version to version. The first
// read of a version pays the merge of the keys of all its rowsets (hidden);
// after a write, what that merge finds differs from the previous version's
// only by the older rows of the new rowset's keys. So an install that adds
// rowsets newer than every other works that out from an index of where the
// newest row of each key is (query.KeyOwners), and the new version starts
// with its superseded rows known. The index moves from version to version
// under the writer lock; an install it cannot follow (a compaction, an
// ALTER, keys that do not fit) drops it, and the first write after a read
// builds it again from every rowset (a table nothing reads, as one a
// one-shot load writes, never pays for one).

// keyStep is the key merge of a version about to be installed on top of
// base.
type keyStep struct {
	base       *version
	owners     *query.KeyOwners
	superseded map[uint64]*roaring.Bitmap
}

// nextKeyMerge works out the key merge of the version e installs on top of
// cur, the current version, whose index the caller took (takeOwners); nil
// when there is none to carry.
func nextKeyMerge(cur *version, owners *query.KeyOwners, e *versionEdit) *keyStep {
	sup, ok := cur.superseded, cur.supersededOK && owners != nil
	if cur.def.Model != schema.UniqueMOR || e.Definition != nil || len(e.Removed) > 0 {
		return nil
	}
	if len(e.apply.handles) == 0 {
		if !ok {
			return nil
		}
		return &keyStep{base: cur, owners: owners, superseded: sup}
	}
	// The new rowsets must come last, in this order, in the new version's
	// order of rowsets (by Lo), as in the merge a read would run.
	last := int64(-1 << 63)
	if n := len(cur.rowsets); n > 0 {
		last = cur.rowsets[n-1].Meta.Lo
	}
	for _, h := range e.apply.handles {
		if h.Meta.Lo <= last {
			return nil
		}
		last = h.Meta.Lo
	}
	// Not a caller's context: the merge belongs to the version, not to the
	// write that installs it.
	ctx := context.Background()
	if !ok {
		if len(cur.rowsets) > 0 && !cur.read.Load() && !cur.mergeKnown() {
			// Nothing read cur: building the index from every rowset
			// would be a merge no read may ever need (a one-shot load
			// exits after its write). After a read (or a merge for a
			// compaction's choice) the next write builds it.
			return nil
		}
		var err error
		if owners, sup, err = query.BuildKeyOwners(ctx, cur.rowsets, cur.def.Schema.KeyCount); err != nil || owners == nil {
			return nil
		}
	}
	for _, h := range e.apply.handles {
		marks, fits, err := owners.Add(ctx, h)
		if err != nil || !fits {
			// A read error fails the next read's own merge as well.
			return nil
		}
		sup = unionMarks(sup, marks)
	}
	return &keyStep{base: cur, owners: owners, superseded: sup}
}

// mergeKnown says whether v's key merge has run. A merge under way counts
// as not run: the write does not wait for a read's merge.
func (v *version) mergeKnown() bool {
	if !v.mergeMu.TryLock() {
		return false
	}
	defer v.mergeMu.Unlock()
	return v.mergedOK
}

// takeOwners takes v's index of keys away from it: the index follows one
// line of versions only. The caller holds the table's mutex.
func (v *version) takeOwners() *query.KeyOwners {
	o := v.owners
	v.owners = nil
	return o
}

// carryKeyMerge gives nv, a version of the same rowsets as old installed on
// top of it, old's key merge. The caller holds the table's mutex.
func (nv *version) carryKeyMerge(old *version) *version {
	nv.owners, nv.superseded, nv.supersededOK = old.takeOwners(), old.superseded, old.supersededOK
	nv.read.Store(old.read.Load())
	return nv
}

// install gives nv, the version installed on top of s.base, its key merge.
func (s *keyStep) install(old, nv *version) {
	if s == nil || s.base != old {
		// Another version was installed meanwhile: the merge worked out
		// on top of the one before is not nv's.
		return
	}
	nv.owners, nv.superseded, nv.supersededOK = s.owners, s.superseded, true
}

// unionMarks returns the union of a, whose bitmaps are never changed, and
// b, whose bitmaps the result may take over: a's bitmaps that gain marks
// are copies.
func unionMarks(a, b map[uint64]*roaring.Bitmap) map[uint64]*roaring.Bitmap {
	out := make(map[uint64]*roaring.Bitmap, len(a)+len(b))
	for id, m := range a {
		out[id] = m
	}
	for id, m := range b {
		if c, ok := out[id]; ok {
			c = c.Clone()
			c.Or(m)
			out[id] = c
		} else {
			out[id] = m
		}
	}
	return out
}

// checkCarriedMerge panics, in the invariants build, when the key merge a
// version was installed with differs from the one it would run itself.
func checkCarriedMerge(rowsets []*rowset.Handle, keyCount int, carried map[uint64]*roaring.Bitmap) {
	if !rowset.Invariants {
		return
	}
	full, err := query.Superseded(context.Background(), memory.DefaultAllocator, rowsets, keyCount, nil)
	if err != nil {
		return // the read's own merge would fail the same way
	}
	for _, h := range rowsets {
		a, b := full[h.Meta.ID], carried[h.Meta.ID]
		if cardinality(a) == 0 && cardinality(b) == 0 {
			continue
		}
		if a == nil || b == nil || !a.Equals(b) {
			panic(fmt.Sprintf("invariant: rowset %d: the key merge carried from the previous version hides %d rows, the full merge %d",
				h.Meta.ID, cardinality(b), cardinality(a)))
		}
	}
}

func cardinality(b *roaring.Bitmap) uint64 {
	if b == nil {
		return 0
	}
	return b.GetCardinality()
}
