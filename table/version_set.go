package table

import (
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/ttlcol"
	"github.com/rowttl/rowttl/vfs"
)

// versionSet owns what the manifest describes: the live manifest, the
// current version, the numbering of files and rowsets, the labels applied,
// the counters, and the failed state an append that went wrong leaves. Every
// change of the published state — a write, a DELETE, an ALTER, a compaction
// install — is one edit through logAndApply, which makes it durable first
// and installs the version it describes second, so that no change is
// visible before it is durable and no two copies of that sequence can
// drift apart. Replay (load), rotation and recovery from a failed append
// live here for the same reason: they rebuild the same state.
//
// Locking: the fields below manifest are guarded by mu, the table's mutex,
// so a reader pins the current version without waiting for a writer. The
// manifest, and every method that appends to it or replaces it
// (logAndApply, rotate, recover, recordPublished), belong to the holder of
// the table's writer lock: there is one append in flight at most, which is
// what the manifest format's checks of published records rely on.
type versionSet struct {
	fs   vfs.FS
	dir  string
	name func() string
	logf func(format string, args ...any)
	// onRelease is given to every rowset the set opens.
	onRelease func(h *rowset.Handle, removed bool)
	// flushedThrough drops the memtables whose records the rowsets hold
	// through log record walSeq (a flush whose manifest append failed may
	// have been durable after all) and returns the views of those left.
	flushedThrough func(mems []memView, walSeq uint64) []memView
	mu             *sync.Mutex

	manifest *manifest
	// tagSeq is the manifest's last record, for the tags of segment files
	// written without the writer lock (a load encodes before it
	// publishes). Read stale it only names an earlier record, which the
	// open-time checks accept.
	tagSeq atomic.Uint64

	current      *version
	nextFileNum  uint64
	nextRowsetID uint64
	labels       map[string]bool
	counters     LifetimeCounters
	// failed is set when a manifest append failed: the manifest may hold
	// the record or part of it. The next writer recovers first (recover);
	// unsettled are the files of that record.
	failed    error
	unsettled map[uint64]bool
	// published is the last record CURRENT records as published.
	published uint64
	// walSeq is the last write-ahead log record the rowsets account for
	// (see versionEdit.WALSeq).
	walSeq uint64
}

// The parts of a versionEdit that logAndApply installs besides the record:
// they never reach the manifest (unexported fields are not encoded).
type editApply struct {
	// handles are the opened rowsets of Added; the edit holds a reference
	// to each, which logAndApply takes over whatever happens.
	handles []*rowset.Handle
	// marks are the delete marks Deletes encodes.
	marks map[uint64]*roaring.Bitmap
	// updateCounters changes a copy of the counters; the record carries the
	// result.
	updateCounters func(*LifetimeCounters)
	// flushed is the memtable whose rows Added holds: the new version no
	// longer reads it. installed runs under the set's mutex once the
	// version is current.
	flushed   *memtable
	installed func()
}

// newFileNum hands out the number of a new file.
func (vs *versionSet) newFileNum() uint64 {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	n := vs.nextFileNum
	vs.nextFileNum++
	return n
}

// newRowsetID hands out the ID of a new rowset.
func (vs *versionSet) newRowsetID() uint64 {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	id := vs.nextRowsetID
	vs.nextRowsetID++
	return id
}

// lastSeq is the sequence number of the last record known durable. Writers
// under the writer lock read the exact last record; a load encoding
// without it may read one a concurrent publish has just passed, an earlier
// record, which is what a file written before that publish would carry
// anyway.
func (vs *versionSet) lastSeq() uint64 { return vs.tagSeq.Load() }

// setManifest makes m the live manifest.
func (vs *versionSet) setManifest(m *manifest) {
	vs.manifest = m
	vs.tagSeq.Store(m.seq)
}

// mayRemoveFiles reports whether the files of a record that failed to
// append can be deleted (see manifest.mayRemoveFiles).
func (vs *versionSet) mayRemoveFiles() bool { return vs.manifest.mayRemoveFiles() }

// logAndApply makes e durable in the manifest, then installs the version
// it describes on top of the current one: its rowsets added and removed
// (the removed ones go when their readers let go), its delete marks, its
// definition and policy, its last version, labels and counters. The record
// carries the numbering as it stands, so that a replay never hands out a
// number twice. When the append fails nothing is installed and the table
// is failed until recover settles the record. The caller holds the
// writer lock: its exclusive side, or for a compaction's install the
// shared one (see lockForCompaction), beside logged writes, which install
// their versions under the same mutex without appending.
func (vs *versionSet) logAndApply(e *versionEdit) error {
	vs.mu.Lock()
	if e.apply.updateCounters != nil {
		tot := vs.counters.clone()
		e.apply.updateCounters(&tot)
		e.Counters = &tot
	}
	e.NextFileNum, e.NextRowsetID = vs.nextFileNum, vs.nextRowsetID
	if e.WALSeq != 0 && e.WALSeq < vs.walSeq {
		e.WALSeq = vs.walSeq
	}
	cur, owners := vs.current, vs.current.takeOwners()
	vs.mu.Unlock()
	keys := nextKeyMerge(cur, owners, e)
	if len(e.apply.marks) > 0 {
		e.Deletes = encodeMarks(e.apply.marks)
	}
	if err := vs.append(e); err != nil {
		for _, h := range e.apply.handles {
			h.Unref()
		}
		return err
	}
	removed := make(map[uint64]bool, len(e.Removed))
	for _, id := range e.Removed {
		removed[id] = true
	}
	vs.mu.Lock()
	old := vs.current
	def, pol := old.def, old.policy
	if e.Definition != nil {
		def = e.Definition
	}
	if e.Policy != nil {
		pol = *e.Policy
	}
	deleted := old.deleted
	if e.apply.marks != nil {
		deleted = old.withMarks(e.apply.marks)
	}
	vs.current = newVersion(def, pol, old.with(removed, e.apply.handles...), max(old.lastVersion, e.LastVersion), deleted).
		withMems(memsWithout(old.mems, e.apply.flushed))
	keys.install(old, vs.current)
	vs.walSeq = max(vs.walSeq, e.WALSeq)
	if e.apply.installed != nil {
		e.apply.installed()
	}
	if e.Counters != nil {
		vs.counters = e.Counters.clone()
	}
	for _, l := range e.Labels {
		vs.labels[l] = true
	}
	vs.mu.Unlock()
	for _, h := range old.rowsets {
		if removed[h.Meta.ID] {
			h.MarkObsolete()
		}
	}
	for _, h := range e.apply.handles {
		h.Unref() // the version holds them now
	}
	old.unref()
	return nil
}

// append makes an edit durable. When it cannot, the record's fate is
// unknown: the next writer first recovers (recover), which settles it, and
// the files it lists stay until then.
func (vs *versionSet) append(e *versionEdit) error {
	if err := vs.manifest.append(e); err != nil {
		vs.mu.Lock()
		vs.failed = err
		if vs.unsettled == nil {
			vs.unsettled = map[uint64]bool{}
		}
		for _, m := range e.Added {
			for _, s := range m.Segments {
				vs.unsettled[s.FileNum] = true
			}
		}
		vs.mu.Unlock()
		return err
	}
	vs.tagSeq.Store(vs.manifest.seq)
	return nil
}

// failure returns the error of the failed append the set has not yet
// recovered from, or nil.
func (vs *versionSet) failure() error {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return vs.failed
}

// replayState is the state a manifest's records build, record by record.
type replayState struct {
	def          *Definition
	policy       ttlcol.Policy
	rowsets      map[uint64]rowset.Meta
	labels       map[string]bool
	counters     LifetimeCounters
	nextFileNum  uint64
	nextRowsetID uint64
	lastVersion  int64
	deleted      map[uint64]*roaring.Bitmap
	// obsolete are the segment files of rowsets a record removed.
	obsolete map[uint64]bool
	walSeq   uint64
}

func newReplayState() *replayState {
	return &replayState{
		rowsets: map[uint64]rowset.Meta{}, labels: map[string]bool{},
		counters: LifetimeCounters{Compactions: map[string]int64{}}, deleted: map[uint64]*roaring.Bitmap{},
		obsolete: map[uint64]bool{},
	}
}

// replayEdits applies the records of a replayed manifest in order.
func replayEdits(r *replayed) (*replayState, error) {
	st := newReplayState()
	for i, e := range r.edits {
		if err := st.apply(e); err != nil {
			return nil, rowttl.Errorf(rowttl.ErrCorruption, "manifest %s: record %d: %v", r.name, i, err)
		}
	}
	return st, nil
}

func (s *replayState) apply(e *versionEdit) error {
	if e.Definition != nil {
		s.def = e.Definition
	}
	if e.Policy != nil {
		s.policy = *e.Policy
	}
	for _, id := range e.Removed {
		for _, seg := range s.rowsets[id].Segments {
			s.obsolete[seg.FileNum] = true
		}
		delete(s.rowsets, id)
		delete(s.deleted, id)
	}
	for _, m := range e.Added {
		s.rowsets[m.ID] = m
	}
	for _, l := range e.Labels {
		s.labels[l] = true
	}
	if e.Counters != nil {
		s.counters = e.Counters.clone()
	}
	s.nextFileNum = max(s.nextFileNum, e.NextFileNum)
	s.nextRowsetID = max(s.nextRowsetID, e.NextRowsetID)
	s.lastVersion = max(s.lastVersion, e.LastVersion)
	s.walSeq = max(s.walSeq, e.WALSeq)
	for _, d := range e.Deletes {
		b := roaring.New()
		if _, err := b.FromBuffer(append([]byte(nil), d.Bits...)); err != nil {
			return fmt.Errorf("delete bitmap of rowset %d: %v", d.Rowset, err)
		}
		if cur, ok := s.deleted[d.Rowset]; ok {
			cur.Or(b)
		} else {
			s.deleted[d.Rowset] = b
		}
	}
	return nil
}

func (s *replayState) sortedRowsets() []rowset.Meta {
	out := make([]rowset.Meta, 0, len(s.rowsets))
	for _, m := range s.rowsets {
		out = append(out, m)
	}
	sortMetas(out)
	return out
}

// openRowsets opens the live rowsets of a replayed state; reuse supplies
// handles already open (by rowset ID), which are shared, not reopened.
// The caller owns one reference to each handle returned.
func (vs *versionSet) openRowsets(st *replayState, reuse map[uint64]*rowset.Handle) ([]*rowset.Handle, error) {
	var handles []*rowset.Handle
	for _, m := range st.sortedRowsets() {
		if h, ok := reuse[m.ID]; ok {
			h.Ref()
			handles = append(handles, h)
			continue
		}
		h, err := rowset.Open(vs.fs, vs.dir, m, vs.onRelease)
		if err != nil {
			for _, h := range handles {
				h.Unref()
			}
			return nil, err
		}
		handles = append(handles, h)
	}
	return handles, nil
}

// load installs a replayed state whose live rowsets are open (handles, one
// reference each, taken over) as the current version. nextFile is the
// first file number that nothing on disk uses.
func (vs *versionSet) load(st *replayState, handles []*rowset.Handle, nextFile, published uint64) {
	vs.current = newVersion(st.def, st.policy, handles, st.lastVersion, st.deleted)
	for _, h := range handles {
		h.Unref() // the version holds them now
	}
	vs.nextFileNum = nextFile
	vs.nextRowsetID = st.nextRowsetID
	vs.labels = st.labels
	vs.counters = st.counters
	vs.published = published
	vs.walSeq = st.walSeq
}

// snapshotEdit describes the whole current state as one edit.
func (vs *versionSet) snapshotEdit() *versionEdit {
	e := snapshotEdit(vs.current, vs.labels, vs.counters, vs.nextFileNum, vs.nextRowsetID)
	e.WALSeq = vs.walSeq
	return e
}

// snapshotEdit describes a state as one edit, with no sequence number.
func snapshotEdit(v *version, labels map[string]bool, counters LifetimeCounters, nextFile, nextRowset uint64) *versionEdit {
	pol := v.policy
	tot := counters.clone()
	e := &versionEdit{
		Format: manifestFormat, Definition: v.def, Policy: &pol,
		NextFileNum: nextFile, NextRowsetID: nextRowset,
		LastVersion: v.lastVersion, Counters: &tot,
	}
	for _, h := range v.rowsets {
		e.Added = append(e.Added, h.Meta)
	}
	for l := range labels {
		e.Labels = append(e.Labels, l)
	}
	sort.Strings(e.Labels)
	e.Deletes = encodeMarks(v.deleted)
	return e
}

// rotate writes the state, whose last record is numbered seq, into a
// fresh manifest and switches CURRENT to it; the old manifest becomes an
// orphan.
func (vs *versionSet) rotate(seq uint64) error {
	num := vs.newFileNum()
	vs.mu.Lock()
	e := vs.snapshotEdit()
	vs.mu.Unlock()
	e.Seq = seq
	m, err := createManifest(vs.fs, vs.dir, num, e)
	if err != nil {
		return fmt.Errorf("rewrite manifest: %w", err)
	}
	if vs.manifest != nil {
		vs.manifest.close()
	}
	vs.setManifest(m)
	vs.mu.Lock()
	vs.published = seq
	vs.mu.Unlock()
	return nil
}

// recordPublished records in CURRENT the last record the manifest made
// durable, when CURRENT is behind it: after a crash, a cut of the records
// it names is then told from a torn tail (see the manifest format). A
// failed set records nothing: what its manifest holds is unknown.
func (vs *versionSet) recordPublished() error {
	vs.mu.Lock()
	skip := vs.failed != nil
	published := vs.published
	vs.mu.Unlock()
	m := vs.manifest
	if skip || m == nil || m.seq <= published {
		return nil
	}
	if err := writeCurrent(vs.fs, vs.dir, m.num, m.seq); err != nil {
		return err
	}
	vs.mu.Lock()
	vs.published = m.seq
	vs.mu.Unlock()
	return nil
}

// recover makes a set whose manifest append failed usable again, in
// place: it reads the manifest back to learn what it holds — the failed
// record may be there, whole, or not at all — writes that state as the
// snapshot of a fresh manifest, switches CURRENT to it and installs it.
// The old file is never appended to again: after a failed write or sync
// what it holds on disk is unknown.
func (vs *versionSet) recover() error {
	failed := vs.failure()
	if failed == nil {
		return nil
	}
	old := vs.manifest
	r, err := replayManifest(vs.fs, vs.dir, old.num)
	if err != nil {
		return err
	}
	st, err := replayEdits(r)
	if err != nil {
		return err
	}
	if r.lastSeq < old.seq {
		return rowttl.Errorf(rowttl.ErrCorruption, "manifest %s reads back %d records, %d were acknowledged", r.name, r.lastSeq, old.seq)
	}
	vs.mu.Lock()
	cur := vs.current
	cur.ref()
	vs.mu.Unlock()
	defer cur.unref()
	byID := map[uint64]*rowset.Handle{}
	for _, h := range cur.rowsets {
		byID[h.Meta.ID] = h
	}
	handles, err := vs.openRowsets(st, byID)
	if err != nil {
		return err
	}
	// The memtables are not the manifest's: the recovered version keeps
	// those of the current one that the rowsets do not hold.
	mems := cur.mems
	if vs.flushedThrough != nil {
		mems = vs.flushedThrough(mems, st.walSeq)
	}
	next := newVersion(st.def, st.policy, handles, max(st.lastVersion, cur.lastVersion), st.deleted).withMems(mems)
	for _, h := range handles {
		h.Unref()
	}

	vs.mu.Lock()
	num := max(vs.nextFileNum, st.nextFileNum)
	nextFile := num + 1
	nextRowset := max(vs.nextRowsetID, st.nextRowsetID)
	vs.mu.Unlock()
	snap := snapshotEdit(next, st.labels, st.counters, nextFile, nextRowset)
	snap.Seq = r.lastSeq
	snap.WALSeq = st.walSeq
	m, err := createManifest(vs.fs, vs.dir, num, snap)
	if err != nil {
		// CURRENT may name the new manifest already; the next attempt
		// writes the same state under the same number.
		next.unref()
		return fmt.Errorf("rewrite manifest: %w", err)
	}
	old.close()
	vs.setManifest(m)
	vs.mu.Lock()
	vs.current = next
	vs.nextFileNum = nextFile
	vs.nextRowsetID = nextRowset
	// Labels of logged writes are in no manifest record yet.
	for l := range vs.labels {
		st.labels[l] = true
	}
	vs.labels = st.labels
	vs.counters = st.counters
	vs.failed = nil
	vs.published = r.lastSeq
	vs.walSeq = st.walSeq
	unsettled := vs.unsettled
	vs.unsettled = nil
	vs.mu.Unlock()
	live := map[uint64]bool{}
	for _, h := range next.rowsets {
		live[h.Meta.ID] = true
		for _, s := range h.Meta.Segments {
			delete(unsettled, s.FileNum)
		}
	}
	for _, h := range cur.rowsets {
		if !live[h.Meta.ID] {
			// The failed record was a compaction, and it is durable after
			// all: its inputs go when their readers let go.
			h.MarkObsolete()
		}
	}
	cur.unref() // the set's reference; the deferred one is ours
	// Files of the failed record that the manifest turned out not to hold,
	// and the old manifest, go; failing that they are orphans for the next
	// open.
	for n := range unsettled {
		vs.fs.Remove(rowset.SegmentFileName(vs.dir, n))
	}
	vs.fs.Remove(filepath.Join(vs.dir, manifestName(old.num)))
	vs.logf("table %s: recovered from a failed manifest append (%v): manifest %s holds %d records, continued in %s",
		vs.name(), failed, manifestName(old.num), r.lastSeq, manifestName(num))
	return nil
}

// close records in CURRENT what the manifest must hold at least, so that a
// cut of its last records is told from a torn tail, and closes the
// manifest. The caller holds the writer lock and has let go of current.
func (vs *versionSet) close() error {
	vs.mu.Lock()
	published := vs.published
	vs.mu.Unlock()
	var err error
	if m := vs.manifest; m != nil && m.seq > published {
		if werr := writeCurrent(vs.fs, vs.dir, m.num, m.seq); werr != nil {
			err = fmt.Errorf("close table %s: record the last published record in %s: %w", vs.name(), currentFile, werr)
		}
	}
	if cerr := vs.manifest.close(); err == nil {
		err = cerr
	}
	return err
}
