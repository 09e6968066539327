package table

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/rowset"
)

// Running a compaction. The writer lock is held only to plan (on a pinned
// version) and to install; the rewrite, which is nearly all of the time,
// runs without it, so writes, DELETEs, UPDATEs and load publishes go on
// meanwhile. They never remove a rowset, but they can mark rows of the
// inputs (a DELETE, or a merge-on-write write superseding a key) and they
// can change the definition (an ALTER). The install, under the lock, checks
// that every input is still current and the definition unchanged — if not
// the output is deleted and the compaction planned again — and carries the
// marks that landed on the inputs meanwhile to the output's ordinals in the
// same record, so that no row a newer write superseded or a DELETE removed
// comes back. Rows written meanwhile are in newer rowsets, after the output
// in version order. Compactions run one at a time (compactMu), so two never
// rewrite the same rowsets.

// errInputsChanged is what a compaction that gave up wraps.
var errInputsChanged = errors.New("its inputs or the definition changed while each attempt ran")

// compactAttempts bounds how often a compaction whose inputs changed under
// it is planned again before it gives up.
const compactAttempts = 4

// carryRounds bounds how often an install releases the writer lock to map
// the marks that landed meanwhile by key (merge-on-write) before it maps
// the last ones under the lock.
const carryRounds = 3

// compact plans a compaction on the current version and runs it; it
// reports whether anything changed.
func (t *Table) compact(ctx context.Context, now time.Time, plan func(*version) (job, bool, error)) (bool, error) {
	if err := t.compactMu.LockContext(ctx); err != nil {
		return false, fmt.Errorf("table %s: waiting for a running compaction: %w", t.Name(), err)
	}
	defer t.compactMu.Unlock()
	for attempt := 1; ; attempt++ {
		v, j, ok, err := t.planJob(ctx, plan)
		if err != nil || !ok {
			return false, err
		}
		installed, err := t.runJob(ctx, v, j, now)
		v.unref()
		if err != nil || installed {
			return installed, err
		}
		if attempt == compactAttempts {
			return false, rowttl.Errorf(rowttl.ErrNotSupported, "table %s: a %s compaction gave up after %d attempts: %w; nothing was compacted", t.Name(), j.kind, attempt, errInputsChanged)
		}
	}
}

// planJob pins the current version and plans a compaction on it, under
// the writer lock (recovering first from a failed manifest append). The
// caller owns the reference to the version returned with ok.
func (t *Table) planJob(ctx context.Context, plan func(*version) (job, bool, error)) (*version, job, bool, error) {
	l, err := t.lockForCompaction(ctx)
	if err != nil {
		return nil, job{}, false, fmt.Errorf("table %s: waiting to plan a compaction: %w", t.Name(), err)
	}
	defer l.unlock()
	v, err := t.writable()
	if err != nil {
		return nil, job{}, false, err
	}
	j, ok, err := plan(v)
	if err != nil || !ok {
		v.unref()
		return nil, job{}, false, err
	}
	return v, j, true, nil
}

// runJob rewrites the inputs of j, planned on v (pinned by the caller),
// without the writer lock, then installs the output. installed is false
// when the inputs changed meanwhile: nothing was published and the output
// is gone.
func (t *Table) runJob(ctx context.Context, v *version, j job, now time.Time) (installed bool, err error) {
	var out *compactOutput
	if !j.dropOnly {
		if out, err = t.rewrite(ctx, v, j, now); err != nil {
			return false, err
		}
	}
	if t.testHooks.rewritten != nil {
		t.testHooks.rewritten()
	}
	return t.install(ctx, v, j, out)
}

// compactOutput is a rewritten rowset waiting for its install.
type compactOutput struct {
	w    *rowset.Writer
	meta rowset.Meta
	// h is the opened output, nil when it has no rows; the output owns
	// its reference until the install hands it to the version set.
	h *rowset.Handle
	// installing is set, under the writer lock, once the install appends
	// its record: from then on the record's fate decides whether the
	// files may go (see rowset.WriterOptions.MayRemove).
	installing bool
	carry      carrier
}

// abort deletes an output no record lists.
func (o *compactOutput) abort() {
	if o == nil {
		return
	}
	if o.h != nil {
		o.h.Unref()
		o.h = nil
	}
	o.w.Abort()
}

// carrier maps rows of a compaction's inputs to the output's ordinals, for
// the marks that land on the inputs while the rewrite runs.
//
// An output that keeps its inputs' order (a DUPLICATE compaction, a
// merge-on-write rewrite of one rowset page by page) records, per input, the
// ordinals it kept: input row o of input i is output row offset(i) +
// rank(o) − 1. A merge-on-write merge places rows by key, and every key has
// at most one unmarked row in a version (each write marks the older ones),
// so an input row marked meanwhile is the output's row of the same key, if
// the output has it. A merge-on-read merge cannot be mapped, but no
// merge-on-read operation marks rows: marks there abandon the install.
type carrier struct {
	kept     []*roaring.Bitmap
	offsets  []uint64
	byKey    bool
	keyCount int
	// unordered is set when kept rows did not come in stored order, or do
	// not add up to the output: the ordinal map cannot be trusted.
	unordered bool
}

func newKept(n int) []*roaring.Bitmap {
	kept := make([]*roaring.Bitmap, n)
	for i := range kept {
		kept[i] = roaring.New()
	}
	return kept
}

// check computes the offsets of an ordered output of rows rows, and
// distrusts the map when the kept rows do not add up to them.
func (c *carrier) check(rows int64) {
	if c.kept == nil {
		return
	}
	c.offsets = make([]uint64, len(c.kept))
	var n uint64
	for i, k := range c.kept {
		c.offsets[i] = n
		n += k.GetCardinality()
	}
	if n != uint64(rows) {
		c.unordered = true
	}
}

// canMap reports whether marks on the inputs can be carried to the output.
func (c *carrier) canMap() bool { return (c.kept != nil && !c.unordered) || c.byKey }

// mapOrdered returns the output ordinals of the input rows in fresh
// (marks by input rowset ID) that the output kept.
func (c *carrier) mapOrdered(inputs []*rowset.Handle, fresh map[uint64]*roaring.Bitmap) *roaring.Bitmap {
	out := roaring.New()
	for i, in := range inputs {
		f := fresh[in.Meta.ID]
		if f == nil {
			continue
		}
		k := c.kept[i]
		it := f.Iterator()
		for it.HasNext() {
			o := it.Next()
			if k.Contains(o) {
				out.Add(uint32(c.offsets[i] + k.Rank(o) - 1))
			}
		}
	}
	return out
}

// mapByKey returns the output ordinals of the rows of the output whose
// keys are those of the input rows in fresh.
func (c *carrier) mapByKey(ctx context.Context, t *Table, inputs []*rowset.Handle, fresh map[uint64]*roaring.Bitmap, out *rowset.Handle) (*roaring.Bitmap, error) {
	var keys [][]byte
	for _, in := range inputs {
		f := fresh[in.Meta.ID]
		if f == nil {
			continue
		}
		cur := rowset.NewKeyCursor(in, t.opts.Allocator, c.keyCount)
		for {
			ok, err := cur.Next()
			if err != nil {
				cur.Close()
				return nil, err
			}
			if !ok {
				break
			}
			if f.Contains(uint32(cur.Ordinal)) {
				keys = append(keys, append([]byte(nil), cur.Key...))
			}
		}
		cur.Close()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(keys, bytes.Compare)
	sk := &sortedKeys{}
	for _, k := range keys {
		sk.data = append(sk.data, k...)
		sk.ends = append(sk.ends, uint32(len(sk.data)))
	}
	b, err := keyMatches(ctx, t.opts.Allocator, sk, out, nil, c.keyCount)
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = roaring.New()
	}
	return b, nil
}

// freshMarks compares cur, the current version, with v, the one the
// compaction was planned on: ok is false when an input is no longer
// current or the definition changed; fresh holds, by input rowset ID, the
// marks cur has on the inputs that v has not and carried does not hold.
func freshMarks(v, cur *version, inputs []*rowset.Handle, carried map[uint64]*roaring.Bitmap) (fresh map[uint64]*roaring.Bitmap, ok bool) {
	if cur.def != v.def || cur.policy != v.policy {
		return nil, false
	}
	live := make(map[uint64]bool, len(cur.rowsets))
	for _, h := range cur.rowsets {
		live[h.Meta.ID] = true
	}
	for _, in := range inputs {
		id := in.Meta.ID
		if !live[id] {
			return nil, false
		}
		now, old := cur.deleted[id], v.deleted[id]
		if now == nil || now == old {
			continue
		}
		d := now.Clone()
		if old != nil {
			d.AndNot(old)
		}
		if c := carried[id]; c != nil {
			d.AndNot(c)
		}
		if !d.IsEmpty() {
			if fresh == nil {
				fresh = map[uint64]*roaring.Bitmap{}
			}
			fresh[id] = d
		}
	}
	return fresh, true
}

// install publishes out (nil for a drop) in place of j's inputs. It takes
// the writer lock; when marks landed on the inputs since v and the output
// is placed by key, it maps them without the lock and checks again, up to
// carryRounds times. It reports false, having deleted the output, when the
// inputs are no longer current or the definition changed.
func (t *Table) install(ctx context.Context, v *version, j job, out *compactOutput) (bool, error) {
	carried := map[uint64]*roaring.Bitmap{}
	outMarks := roaring.New()
	for round := 1; ; round++ {
		l, err := t.lockForCompaction(ctx)
		if err != nil {
			out.abort()
			return false, fmt.Errorf("table %s: waiting to install a compaction: %w", t.Name(), err)
		}
		done, installed, err := t.installRound(ctx, l, v, j, out, carried, outMarks, round)
		l.unlock()
		if done {
			return installed, err
		}
	}
}

// compactionLock is the side of the writer lock a compaction's planning
// or install holds.
type compactionLock struct {
	t      *Table
	shared bool
}

// lockForCompaction takes the writer lock for a compaction's planning or
// install. That is the shared side, beside small writes through the log,
// so that they do not wait for the install's manifest sync (nor for the
// writes in flight before it, which an exclusive holder waits out): a
// logged write changes no rowset and no delete mark, only memtable views,
// and it and logAndApply each install their version on top of the current
// one under the table's mutex. Every other publish holds the exclusive
// side, and compactions run one at a time (compactMu), so the install's
// manifest append still runs alone. A table that must first recover from
// a failed manifest append gets the exclusive side, which recovering
// needs; the failed state only arises from an append, so under the shared
// side it cannot arise meanwhile but from the compaction's own.
func (t *Table) lockForCompaction(ctx context.Context) (compactionLock, error) {
	if err := t.writeMu.RLockContext(ctx); err != nil {
		return compactionLock{}, err
	}
	if t.vs.failure() == nil {
		return compactionLock{t: t, shared: true}, nil
	}
	t.writeMu.RUnlock()
	if err := t.writeMu.LockContext(ctx); err != nil {
		return compactionLock{}, err
	}
	return compactionLock{t: t}, nil
}

func (l compactionLock) unlock() {
	if l.shared {
		l.t.writeMu.RUnlock()
	} else {
		l.t.writeMu.Unlock()
	}
}

// relock takes again the side unlock released, whatever happens.
func (l compactionLock) relock() {
	if l.shared {
		_ = l.t.writeMu.RLockContext(context.Background())
	} else {
		l.t.writeMu.Lock()
	}
}

// installRound is one attempt of install with the writer lock held (l).
// done is false when marks were mapped without the lock (their effect is
// in carried and outMarks) and the install must check again.
func (t *Table) installRound(ctx context.Context, l compactionLock, v *version, j job, out *compactOutput, carried map[uint64]*roaring.Bitmap, outMarks *roaring.Bitmap, round int) (done, installed bool, err error) {
	cur, err := t.writable()
	if err != nil {
		out.abort()
		return true, false, err
	}
	fresh, ok := freshMarks(v, cur, j.inputs, carried)
	if !ok {
		cur.unref()
		out.abort()
		return true, false, nil
	}
	if len(fresh) > 0 && out != nil && out.h != nil {
		c := &out.carry
		switch {
		case !c.canMap():
			cur.unref()
			out.abort()
			return true, false, nil
		case c.kept != nil:
			outMarks.Or(c.mapOrdered(j.inputs, fresh))
		case round < carryRounds:
			// Reading keys takes a while: let writers go on meanwhile.
			cur.unref()
			l.unlock()
			m, err := c.mapByKey(ctx, t, j.inputs, fresh, out.h)
			l.relock()
			if err != nil {
				out.abort()
				return true, false, err
			}
			outMarks.Or(m)
			for id, f := range fresh {
				if carried[id] == nil {
					carried[id] = roaring.New()
				}
				carried[id].Or(f)
			}
			return false, false, nil
		default:
			m, err := c.mapByKey(ctx, t, j.inputs, fresh, out.h)
			if err != nil {
				cur.unref()
				out.abort()
				return true, false, err
			}
			outMarks.Or(m)
		}
	}
	err = t.installLocked(j, out, outMarks)
	cur.unref()
	return true, err == nil, err
}

// installLocked publishes the swap of the inputs for the output (if it has
// rows), with marks on the output's rows, in one manifest record, and marks
// the inputs obsolete: their files go when the last reader lets go. The
// caller holds the writer lock and has checked that the inputs are current.
func (t *Table) installLocked(j job, out *compactOutput, marks *roaring.Bitmap) error {
	e := &versionEdit{}
	var outRows, outBytes int64
	if out != nil {
		outRows, outBytes = out.meta.Rows, out.meta.Bytes
		if out.h != nil {
			e.Added = []rowset.Meta{out.meta}
			e.apply.handles = []*rowset.Handle{out.h}
			out.h = nil // the edit holds it now
			if !marks.IsEmpty() {
				e.apply.marks = map[uint64]*roaring.Bitmap{out.meta.ID: marks}
			}
		}
		out.installing = true
	}
	var inRows, inBytes int64
	for _, in := range j.inputs {
		e.Removed = append(e.Removed, in.Meta.ID)
		inRows += in.Meta.Rows
		inBytes += in.Meta.Bytes
	}
	e.apply.updateCounters = func(tot *LifetimeCounters) {
		tot.ReclaimedRows += inRows - outRows
		tot.ReclaimedBytes += inBytes - outBytes
		tot.CompactedBytes += outBytes
		tot.Compactions[string(j.kind)]++
		if tot.Triggers == nil {
			tot.Triggers = map[string]int64{}
		}
		tot.Triggers[j.trigger]++
	}
	if err := t.vs.logAndApply(e); err != nil {
		if out != nil {
			out.w.Abort()
		}
		return err
	}
	return nil
}
