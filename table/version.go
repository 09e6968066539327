package table

import (
	"context"
	"sort"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"

	"github.com/RoaringBitmap/roaring/v2"
	"sync/atomic"

	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/ttlcol"
)

// versionEdit is one manifest record: a delta from the previous state. The
// first record of a manifest is a snapshot (Definition set, every live
// rowset in Added).
type versionEdit struct {
	Format int `json:"format,omitempty"`
	// Seq numbers the record: one more than the previous one (see the
	// manifest format).
	Seq          uint64         `json:"seq,omitempty"`
	Definition   *Definition    `json:"def,omitempty"`
	Policy       *ttlcol.Policy `json:"policy,omitempty"`
	NextFileNum  uint64         `json:"next_file,omitempty"`
	NextRowsetID uint64         `json:"next_rowset,omitempty"`
	LastVersion  int64          `json:"last_version,omitempty"`
	Added        []rowset.Meta  `json:"added,omitempty"`
	Removed      []uint64       `json:"removed,omitempty"`
	Labels       []string       `json:"labels,omitempty"`
	// Deletes adds marks to rowsets' delete bitmaps: rows deleted by a
	// DELETE, or superseded by a newer version of their key (merge-on-write).
	Deletes  []DeleteMarks     `json:"deletes,omitempty"`
	Counters *LifetimeCounters `json:"totals,omitempty"`
	// WALSeq says that every write-ahead log record numbered up to it is
	// in the rowsets (a flush) or was never applied: replay starts after
	// it.
	WALSeq uint64 `json:"wal_seq,omitempty"`

	// apply is what logAndApply installs besides the record; it is never
	// encoded.
	apply editApply
}

// LifetimeCounters count what a table has done since it was created —
// rows and bytes reclaimed, compactions by kind and trigger, bytes ingested
// and written by compaction — and survive restarts: each record that
// changes them carries them whole (under their first name, "totals").
// Stats reports them.
type LifetimeCounters struct {
	ReclaimedRows  int64            `json:"reclaimed_rows,omitempty"`
	ReclaimedBytes int64            `json:"reclaimed_bytes,omitempty"`
	Compactions    map[string]int64 `json:"compactions,omitempty"`
	// Triggers counts compactions by what started them: manual, size,
	// ttl, deadline.
	Triggers map[string]int64 `json:"triggers,omitempty"`
	// IngestedBytes and CompactedBytes measure write amplification.
	IngestedBytes  int64 `json:"ingested_bytes,omitempty"`
	CompactedBytes int64 `json:"compacted_bytes,omitempty"`
}

func (t LifetimeCounters) clone() LifetimeCounters {
	c := t
	c.Compactions = make(map[string]int64, len(t.Compactions))
	for k, v := range t.Compactions {
		c.Compactions[k] = v
	}
	c.Triggers = make(map[string]int64, len(t.Triggers))
	for k, v := range t.Triggers {
		c.Triggers[k] = v
	}
	return c
}

// DeleteMarks are rows of one rowset, as a serialised roaring bitmap of
// row ordinals.
type DeleteMarks struct {
	Rowset uint64 `json:"rowset"`
	Bits   []byte `json:"bits"`
}

func encodeMarks(m map[uint64]*roaring.Bitmap) []DeleteMarks {
	ids := make([]uint64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	out := make([]DeleteMarks, 0, len(ids))
	for _, id := range ids {
		b := m[id]
		b.RunOptimize()
		data, err := b.ToBytes()
		if err != nil {
			panic(err) // writing to memory cannot fail
		}
		out = append(out, DeleteMarks{Rowset: id, Bits: data})
	}
	return out
}

// version is an immutable state of the table: its definition and its
// rowsets in version order. Readers pin one with ref; the table holds a
// reference to the current one.
type version struct {
	refs        atomic.Int32
	def         *Definition
	policy      ttlcol.Policy
	rowsets     []*rowset.Handle
	lastVersion int64
	// deleted maps rowset IDs to the ordinals of their deleted rows. The
	// bitmaps are never changed once a version holds them.
	deleted map[uint64]*roaring.Bitmap

	// merged caches, for a merge-on-read table, deleted plus every row a
	// newer version of its key hides: the version is immutable, so the key
	// merge runs once per version, not once per scan or compaction. A failed
	// merge (a read error) is not kept: the next caller tries again.
	mergeMu  sync.Mutex
	merged   map[uint64]*roaring.Bitmap
	mergedOK bool
	// superseded, when supersededOK, holds the rows of rowsets a newer
	// version of their key hides (not the deleted ones), as the install
	// carried them over from the version before (see keymerge.go): merged
	// is then their union with deleted, no merge needed. Set before the
	// version is published, never changed after.
	superseded   map[uint64]*roaring.Bitmap
	supersededOK bool
	// owners indexes the newest row of each key of rowsets, for the next
	// install to carry the merge further; it moves to that version. Only
	// the holder of the writer lock touches it.
	owners *query.KeyOwners
	// read says that a scan read the version, or one of the same rowsets
	// before it (memtable writes in between): the next install may build
	// owners for the reads to come.
	read atomic.Bool

	// mems are the memtables whose rows the version holds beside its
	// rowsets, oldest first, all newer than every rowset. view caches what
	// a scan reads of them: the rowsets plus an in-memory rowset per
	// memtable, and the delete bitmaps with the rows their newer keys hide.
	mems     []memView
	viewOnce sync.Once
	scanView struct {
		handles []*rowset.Handle
		rowsets []*rowset.Handle
		deleted map[uint64]*roaring.Bitmap
		err     error
	}
}

// snapshot describes v for one scan; the scan holds a reference to v.
func (v *version) snapshot(ctx context.Context, mem memory.Allocator) (*query.Snapshot, error) {
	v.read.Store(true)
	if len(v.mems) > 0 {
		return v.memSnapshot(mem)
	}
	snap := &query.Snapshot{Schema: &v.def.Schema, Policy: v.policy, Model: v.def.Model, Rowsets: v.rowsets, Deleted: v.deleted}
	if v.def.Model == schema.UniqueMOR {
		merged, err := v.hidden(mem)
		if err != nil {
			return nil, err
		}
		snap.Deleted, snap.Merged = merged, true
	}
	v.ref()
	snap.Release = v.unref
	return snap, nil
}

// hidden returns the rows of v's rowsets that no read sees whatever its
// now: the deleted ones and, on a merge-on-read table, every row a newer
// version of its key supersedes (merged once per version).
func (v *version) hidden(mem memory.Allocator) (map[uint64]*roaring.Bitmap, error) {
	if v.def.Model != schema.UniqueMOR {
		return v.deleted, nil
	}
	v.mergeMu.Lock()
	defer v.mergeMu.Unlock()
	if !v.mergedOK && v.supersededOK {
		checkCarriedMerge(v.rowsets, v.def.Schema.KeyCount, v.superseded)
		v.merged, v.mergedOK = unionMarks(v.deleted, v.superseded), true
	}
	if !v.mergedOK {
		// Not the caller's context: one caller's cancellation must not
		// fail the others waiting for the same merge.
		m, err := query.Superseded(context.Background(), mem, v.rowsets, v.def.Schema.KeyCount, v.deleted)
		if err != nil {
			return nil, err
		}
		v.merged, v.mergedOK = m, true
	}
	return v.merged, nil
}

func newVersion(def *Definition, pol ttlcol.Policy, rowsets []*rowset.Handle, last int64, deleted map[uint64]*roaring.Bitmap) *version {
	sort.Slice(rowsets, func(i, j int) bool { return rowsets[i].Meta.Lo < rowsets[j].Meta.Lo })
	live := make(map[uint64]*roaring.Bitmap, len(deleted))
	for _, h := range rowsets {
		if b, ok := deleted[h.Meta.ID]; ok {
			live[h.Meta.ID] = b
		}
	}
	v := &version{def: def, policy: pol, rowsets: rowsets, lastVersion: last, deleted: live}
	v.refs.Store(1)
	for _, h := range rowsets {
		h.Ref()
	}
	return v
}

func (v *version) ref() { v.refs.Add(1) }

func (v *version) unref() {
	if v.refs.Add(-1) == 0 {
		for _, h := range v.rowsets {
			h.Unref()
		}
		for _, h := range v.scanView.handles {
			h.Unref()
		}
		for _, m := range v.mems {
			m.mt.unref()
		}
	}
}

// withMems sets the memtable views of a new version, taking a reference
// to each memtable.
func (v *version) withMems(mems []memView) *version {
	v.mems = mems
	for _, m := range mems {
		m.mt.ref()
	}
	return v
}

// memSnapshot is snapshot for a version with memtable rows: the memtables
// are read as in-memory rowsets after the version's rowsets, under the
// same rules. Merge-on-write: the rows of each memtable hide the older rows
// of their keys — in rowsets and older memtables — by delete marks computed
// here, once per version, as a write of a rowset computes them (the flush
// then records them in the manifest). Merge-on-read: the rowsets' key
// merge, carried from version to version, and the same marks for the rows
// of the memtables, which hide what a key merge of them all would.
func (v *version) memSnapshot(mem memory.Allocator) (*query.Snapshot, error) {
	v.viewOnce.Do(func() {
		// Not the caller's context: a cancelled scan must not leave a
		// failed view behind for the next one.
		ctx := context.Background()
		rowsets := append([]*rowset.Handle(nil), v.rowsets...)
		deleted := v.deleted
		if v.def.Model == schema.UniqueMOR {
			// The rowsets' own merge, carried from version to version;
			// each memtable rowset then hides the older rows of its keys
			// by marks, as on merge-on-write: the same rows the key merge
			// of them all would find (an expired or deleted newest row
			// hides the older ones too), without merging every key of
			// the table again for each version a write makes.
			hidden, err := v.hidden(mem)
			if err != nil {
				v.scanView.err = err
				return
			}
			deleted = hidden
		}
		// older names the rowsets before the next memtable rowset: the
		// marks a full chunk puts on them are computed once, not per
		// version.
		var older []byte
		for _, h := range rowsets {
			older = strconv.AppendUint(append(older, ' '), h.Meta.ID, 10)
		}
		for _, m := range v.mems {
			hs, cs, err := m.mt.materialize(ctx, m.n)
			v.scanView.handles = append(v.scanView.handles, hs...)
			if err != nil {
				v.scanView.err = err
				return
			}
			for i, h := range hs {
				if v.def.Model.IsUnique() {
					key := string(older)
					marks, ok := m.mt.cachedMarks(cs[i], h, key)
					if !ok {
						marks, err = mowMarks(ctx, mem, h, rowsets, deleted, v.def.Schema.KeyCount)
						if err != nil {
							v.scanView.err = err
							return
						}
						m.mt.cacheMarks(cs[i], h, key, marks)
					}
					if len(marks) > 0 {
						deleted = addMarks(deleted, marks)
					}
				}
				rowsets = append(rowsets, h)
				older = strconv.AppendUint(append(older, ' '), h.Meta.ID, 10)
			}
		}
		v.scanView.rowsets, v.scanView.deleted = rowsets, deleted
	})
	if v.scanView.err != nil {
		return nil, v.scanView.err
	}
	snap := &query.Snapshot{Schema: &v.def.Schema, Policy: v.policy, Model: v.def.Model, Rowsets: v.scanView.rowsets, Deleted: v.scanView.deleted,
		Merged: v.def.Model == schema.UniqueMOR}
	v.ref()
	snap.Release = v.unref
	return snap, nil
}

// withMarks returns v's delete bitmaps with more marks added; the bitmaps
// it changes are copies.
func (v *version) withMarks(marks map[uint64]*roaring.Bitmap) map[uint64]*roaring.Bitmap {
	return addMarks(v.deleted, marks)
}

// addMarks returns deleted with more marks added; the bitmaps it changes
// are copies.
func addMarks(deleted, marks map[uint64]*roaring.Bitmap) map[uint64]*roaring.Bitmap {
	out := make(map[uint64]*roaring.Bitmap, len(deleted)+len(marks))
	for id, b := range deleted {
		out[id] = b
	}
	for id, m := range marks {
		if b, ok := out[id]; ok {
			c := b.Clone()
			c.Or(m)
			out[id] = c
		} else {
			out[id] = m.Clone()
		}
	}
	return out
}

// with returns the rowsets of v after removing and adding some.
func (v *version) with(removed map[uint64]bool, added ...*rowset.Handle) []*rowset.Handle {
	out := make([]*rowset.Handle, 0, len(v.rowsets)+len(added))
	for _, h := range v.rowsets {
		if !removed[h.Meta.ID] {
			out = append(out, h)
		}
	}
	return append(out, added...)
}
