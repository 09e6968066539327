package table

import (
	"context"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/compaction"
	"github.com/rowttl/rowttl/internal/rawscan"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
)

// CompactionKind names a compaction of SPEC §3 (see compaction.Kind).
type CompactionKind = compaction.Kind

// The compaction kinds (see compaction.Kind).
const (
	Cumulative = compaction.Cumulative
	Base       = compaction.Base
	Full       = compaction.Full
	TTLDrop    = compaction.TTLDrop
)

// ParseCompactionKind accepts "cumulative", "base" or "full".
func ParseCompactionKind(s string) (CompactionKind, error) {
	switch k := CompactionKind(s); k {
	case Cumulative, Base, Full:
		return k, nil
	}
	return "", rowttl.Errorf(rowttl.ErrInvalidArgument, "unknown compaction type %q (want cumulative, base or full)", s)
}

// Compact runs one compaction of the given kind and returns when it is
// published (or when there was nothing to do). Expiry is judged at the
// table's clock, bounded by the latest now a request has used. Readers that
// pinned an earlier version keep its files until they let go.
func (t *Table) Compact(ctx context.Context, kind CompactionKind) error {
	return t.CompactAt(ctx, kind, time.Time{})
}

// CompactAt is Compact judging expiry at now (zero: as Compact does). Rows
// that expired by now may be reclaimed, so a later read at an earlier now
// may miss them: reads do not travel back in time.
func (t *Table) CompactAt(ctx context.Context, kind CompactionKind, now time.Time) error {
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	if now.IsZero() {
		now = t.reclaimNow()
	} else {
		t.noteNow(now)
	}
	_, err := t.compactLocked(ctx, kind, now)
	return err
}

// job is one compaction to run: its inputs are a run of the rowsets of the
// version it was planned on, in version order.
type job struct {
	kind CompactionKind
	// trigger says why it runs: "manual", "size", "ttl" or "deadline".
	trigger  string
	inputs   []*rowset.Handle
	fromBase bool
	// dropOnly removes the inputs without writing anything: every row of
	// each has expired.
	dropOnly bool
}

// view is what the picker sees of v, given the rows v hides (v.deleted, or
// v.hidden).
func (v *version) view(hidden map[uint64]*roaring.Bitmap) compaction.View {
	cv := compaction.View{Model: v.def.Model, Policy: v.policy, Deadline: reclaimDeadline(v.def), Rowsets: make([]compaction.Rowset, len(v.rowsets))}
	for i, h := range v.rowsets {
		cv.Rowsets[i].Meta = &h.Meta
		if d := hidden[h.Meta.ID]; d != nil {
			cv.Rowsets[i].Deleted = int64(d.GetCardinality())
		}
	}
	return cv
}

// manualJob asks compaction.PickManual for a compaction of a kind on v at
// now.
func manualJob(v *version, kind CompactionKind, now time.Time) (job, bool) {
	p, ok := compaction.PickManual(kind, v.view(v.deleted), now.UnixMicro())
	return jobOf(v, p), ok
}

// jobOf turns a plan over v.view() into a job on v.
func jobOf(v *version, p compaction.Plan) job {
	return job{kind: p.Kind, trigger: p.Trigger, inputs: p.Handles(v.rowsets), fromBase: p.FromBase, dropOnly: p.DropOnly}
}

// compactLocked runs one compaction of a kind with writeMu held; it
// reports whether anything changed.
func (t *Table) compactLocked(ctx context.Context, kind CompactionKind, now time.Time) (bool, error) {
	v, err := t.writable()
	if err != nil {
		return false, err
	}
	defer v.unref()
	j, ok := manualJob(v, kind, now)
	if !ok {
		return false, nil
	}
	return true, t.runJob(ctx, v, j, now)
}

// runJob runs a planned compaction on v (pinned by the caller, writeMu
// held) and publishes it.
func (t *Table) runJob(ctx context.Context, v *version, j job, now time.Time) error {
	threshold := v.policy.Threshold(now.UnixMicro())
	model := v.def.Model
	if j.dropOnly {
		return t.installCompaction(v, j, rowset.Meta{}, nil)
	}
	inputs, fromBase := j.inputs, j.fromBase
	drop := compaction.DropsExpired(model, fromBase)
	phys := physicalSchema(v.def, v.policy)

	// finish seals the output and publishes it in place of the inputs.
	finish := func(w *rowset.Writer) error {
		meta, err := w.Finish()
		if err != nil {
			w.Abort()
			return err
		}
		meta.Overlapping = !model.IsUnique() && len(meta.Segments) > 1
		meta.Lo, meta.Hi = inputs[0].Meta.Lo, inputs[len(inputs)-1].Meta.Hi
		if fromBase {
			meta.Lo = 0
		}
		return t.installCompaction(v, j, meta, w)
	}

	if model == schema.Duplicate || (model == schema.UniqueMOW && len(inputs) == 1) {
		w := t.newRowsetWriter(v)
		handled, err := t.rewriteByPages(ctx, v, inputs, drop, threshold, phys, w)
		if err != nil {
			w.Abort()
			return err
		}
		if handled {
			return finish(w)
		}
	}

	// Rows that newer versions of their keys hide go first: the delete
	// bitmaps say which for merge-on-write; on merge-on-read tables a key
	// merge over the whole version does, so that the inputs lose every
	// version a newer one hides, inside the inputs or above them. The newest
	// version of each key stays, expired or a deletion, unless nothing lies
	// below the inputs (see the scan options below).
	hidden, err := v.hidden(t.opts.Allocator)
	if err != nil {
		return err
	}
	var readers []array.RecordReader
	defer func() {
		for _, r := range readers {
			r.Release()
		}
	}()
	for _, h := range inputs {
		if drop && model != schema.UniqueMOR && compaction.WhollyExpired(&h.Meta, v.policy, threshold) {
			continue // nothing to read: every row goes
		}
		v.ref()
		snap := &query.Snapshot{
			Schema: &v.def.Schema, Policy: v.policy, Model: model,
			Rowsets: []*rowset.Handle{h}, Deleted: hidden, Merged: true, Release: v.unref,
		}
		req := query.Request{Now: now, ShowHidden: v.policy.Mode != ttlcol.NoTTL}
		raw := rawscan.Options{
			RawTTL: true, IncludeExpired: !drop,
			// A merge-on-read compaction that cannot drop expired rows keeps
			// the newest version of every key, deletions included: they hide
			// what lies below the inputs.
			DeleteSign: model == schema.UniqueMOR && !fromBase,
		}
		r, err := query.NewStoredScan(ctx, t.opts.Allocator, snap, req, raw)
		if err != nil {
			return err
		}
		readers = append(readers, &physReader{Scan: r, phys: phys, mem: t.opts.Allocator, addSign: model == schema.UniqueMOR && fromBase})
	}

	w := t.newRowsetWriter(v)
	if model.IsUnique() {
		_, err = compaction.MergeByKey(ctx, t.opts.Allocator, phys, readers, v.def.Schema.KeyCount, w)
	} else {
		_, err = compaction.Concat(ctx, t.opts.Allocator, phys, readers, w)
	}
	if err != nil {
		w.Abort()
		return err
	}
	return finish(w)
}

// installCompaction publishes the swap of inputs for the output (if it has
// rows) in one manifest record, and marks the inputs obsolete: their files
// go when the last reader lets go.
func (t *Table) installCompaction(v *version, j job, out rowset.Meta, w *rowset.Writer) error {
	e := &versionEdit{}
	if w != nil && out.Rows > 0 {
		out.ID = t.vs.newRowsetID()
		h, err := rowset.Open(t.fs, t.dir, out, t.onRelease)
		if err != nil {
			w.Abort()
			return err
		}
		e.Added = []rowset.Meta{out}
		e.apply.handles = []*rowset.Handle{h}
	}
	var inRows, inBytes int64
	for _, in := range j.inputs {
		e.Removed = append(e.Removed, in.Meta.ID)
		inRows += in.Meta.Rows
		inBytes += in.Meta.Bytes
	}
	e.apply.updateCounters = func(tot *LifetimeCounters) {
		tot.ReclaimedRows += inRows - out.Rows
		tot.ReclaimedBytes += inBytes - out.Bytes
		tot.CompactedBytes += out.Bytes
		tot.Compactions[string(j.kind)]++
		if tot.Triggers == nil {
			tot.Triggers = map[string]int64{}
		}
		tot.Triggers[j.trigger]++
	}
	if err := t.vs.logAndApply(e); err != nil {
		if w != nil {
			w.Abort()
		}
		return err
	}
	return nil
}

// physReader turns scan batches into batches of the physical schema.
type physReader struct {
	*query.Scan
	phys    *arrow.Schema
	mem     memory.Allocator
	addSign bool
	cur     arrow.RecordBatch
}

func (p *physReader) Next() bool {
	if p.cur != nil {
		p.cur.Release()
		p.cur = nil
	}
	if !p.Scan.Next() {
		return false
	}
	rec := p.Scan.RecordBatch()
	cols := append([]arrow.Array{}, rec.Columns()...)
	var sign arrow.Array
	if p.addSign {
		sign = schema.ConstArray(p.mem, arrow.FixedWidthTypes.Boolean, schema.IntVal(0), int(rec.NumRows()))
		cols = append(cols, sign)
	}
	p.cur = array.NewRecordBatch(p.phys, cols, rec.NumRows())
	if sign != nil {
		sign.Release()
	}
	return true
}

func (p *physReader) Schema() *arrow.Schema          { return p.phys }
func (p *physReader) RecordBatch() arrow.RecordBatch { return p.cur }
func (p *physReader) Record() arrow.RecordBatch      { return p.cur }

func (p *physReader) Release() {
	if p.cur != nil {
		p.cur.Release()
		p.cur = nil
	}
	p.Scan.Release()
}
