package table

import (
	"context"
	"runtime"
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
	if now.IsZero() {
		now = t.reclaimNow()
	} else {
		t.noteNow(now)
	}
	_, err := t.compactKind(ctx, kind, now)
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

// compactKind runs one compaction of a kind; it reports whether anything
// changed.
func (t *Table) compactKind(ctx context.Context, kind CompactionKind, now time.Time) (bool, error) {
	return t.compact(ctx, now, func(v *version) (job, bool, error) {
		j, ok := manualJob(v, kind, now)
		return j, ok, nil
	})
}

// rewrite writes the rows job j keeps from its inputs, as v (pinned by the
// caller) has them, into a new rowset that no record lists yet. It runs
// without the writer lock: writers go on meanwhile, and install reconciles
// what they did to the inputs.
func (t *Table) rewrite(ctx context.Context, v *version, j job, now time.Time) (*compactOutput, error) {
	par := t.compactionParallelism()
	ctx = query.WithParallelism(ctx, par)
	threshold := v.policy.Threshold(now.UnixMicro())
	model := v.def.Model
	inputs, fromBase := j.inputs, j.fromBase
	drop := compaction.DropsExpired(model, fromBase)
	phys := physicalSchema(v.def, v.policy)
	out := &compactOutput{}
	newWriter := func() *rowset.Writer {
		// Until the install appends its record no record names the
		// output's files, so an abort removes them; once it has, the
		// record's fate decides.
		w := t.newRowsetWriterWith(v, func() bool { return !out.installing || t.vs.mayRemoveFiles() })
		w.SetTag(t.tagFor(kindOutput))
		w.SetParallelism(par)
		w.SetPace(t.pacer.pace)
		return w
	}

	// finish seals the output and opens it, ready to install.
	finish := func(w *rowset.Writer) (*compactOutput, error) {
		meta, err := w.Finish()
		if err != nil {
			w.Abort()
			return nil, err
		}
		meta.Overlapping = !model.IsUnique() && len(meta.Segments) > 1
		meta.Lo, meta.Hi = inputs[0].Meta.Lo, inputs[len(inputs)-1].Meta.Hi
		if fromBase {
			meta.Lo = 0
		}
		out.w, out.meta = w, meta
		if meta.Rows > 0 {
			meta.ID = t.vs.newRowsetID()
			out.meta = meta
			h, err := rowset.Open(t.fs, t.dir, meta, t.onRelease)
			if err != nil {
				w.Abort()
				return nil, err
			}
			out.h = h
		}
		out.carry.check(out.meta.Rows)
		return out, nil
	}

	if model == schema.Duplicate || (model == schema.UniqueMOW && len(inputs) == 1) {
		w := newWriter()
		kept := newKept(len(inputs))
		deleted := make([]*roaring.Bitmap, len(inputs))
		for i, h := range inputs {
			deleted[i] = v.deleted[h.Meta.ID]
		}
		// The decoded pages and their filtered rows live until the writer
		// has copied them: the page allocator recycles them, as a scan's,
		// rather than leave a rewrite's worth of garbage to collect while
		// writes wait for the processor the collector takes.
		handled, err := compaction.CopyPages(ctx, t.opts.Allocator, t.opts.PageAllocator, inputs, deleted, v.policy, drop, threshold, phys, w, kept)
		if err != nil {
			w.Abort()
			return nil, err
		}
		if handled {
			out.carry = carrier{kept: kept}
			return finish(w)
		}
	}

	// Rows that newer versions of their keys hide go first: the delete
	// bitmaps say which for merge-on-write; on merge-on-read tables a key
	// merge over the whole version does, so that the inputs lose every
	// version a newer one hides, inside the inputs or above them. The newest
	// version of each key stays, expired or a deletion, unless nothing lies
	// below the inputs (see the scan options below). Rowsets above the
	// inputs that hide rows stay while the rewrite runs: only compactions
	// remove rowsets, one at a time.
	hidden, err := v.hidden(t.opts.Allocator)
	if err != nil {
		return nil, err
	}
	// A concatenation keeps the inputs' order, so the scans' row locations
	// say where each input row lands; a merge by key places rows by key,
	// which is how merge-on-write marks are carried (see carrier).
	var kept []*roaring.Bitmap
	switch model {
	case schema.Duplicate:
		kept = newKept(len(inputs))
		out.carry = carrier{kept: kept}
	case schema.UniqueMOW:
		out.carry = carrier{byKey: true, keyCount: v.def.Schema.KeyCount}
	}
	var readers []array.RecordReader
	defer func() {
		for _, r := range readers {
			r.Release()
		}
	}()
	for i, h := range inputs {
		if drop && model != schema.UniqueMOR && compaction.WhollyExpired(&h.Meta, v.policy, threshold) {
			continue // nothing to read: every row goes
		}
		v.ref()
		snap := &query.Snapshot{
			Schema: &v.def.Schema, Policy: v.policy, Model: model,
			Rowsets: []*rowset.Handle{h}, Deleted: hidden, Merged: true, Release: v.unref,
			PageMem: t.opts.PageAllocator,
		}
		req := query.Request{Now: now, ShowHidden: v.policy.Mode != ttlcol.NoTTL, RowIDs: kept != nil}
		raw := rawscan.Options{
			RawTTL: true, IncludeExpired: !drop,
			// A merge-on-read compaction that cannot drop expired rows keeps
			// the newest version of every key, deletions included: they hide
			// what lies below the inputs.
			DeleteSign: model == schema.UniqueMOR && !fromBase,
		}
		r, err := query.NewStoredScan(ctx, t.opts.Allocator, snap, req, raw)
		if err != nil {
			return nil, err
		}
		pr := &physReader{Scan: r, phys: phys, mem: t.opts.Allocator, addSign: model == schema.UniqueMOR && fromBase}
		if kept != nil {
			pr.kept, pr.carry = kept[i], &out.carry
		}
		readers = append(readers, pr)
	}

	w := newWriter()
	if model.IsUnique() {
		_, err = compaction.MergeByKey(ctx, t.opts.Allocator, phys, readers, v.def.Schema.KeyCount, w)
	} else {
		_, err = compaction.Concat(ctx, t.opts.Allocator, phys, readers, w)
	}
	if err != nil {
		w.Abort()
		return nil, err
	}
	return finish(w)
}

// smallWritesRecent is how long after a logged write a compaction still
// counts on more of them.
const smallWritesRecent = 2 * time.Second

// compactionParallelism is the number of goroutines a rewrite keeps busy
// (Options.CompactionParallelism). By default every processor, but one
// fewer when small writes came in lately: a write waits for a processor
// after its sync, and a rewrite holding them all made its latency several
// times its idle one. A rewrite with no writes beside it (a reclaim, a
// one-shot load's debt) keeps its full speed.
func (t *Table) compactionParallelism() int {
	if n := t.opts.CompactionParallelism; n > 0 {
		return n
	}
	procs := runtime.GOMAXPROCS(0)
	if last := t.lastSmallWrite.Load(); last != 0 && time.Since(time.Unix(0, last)) < smallWritesRecent {
		return max(1, procs-1)
	}
	return procs
}

// physReader turns scan batches into batches of the physical schema.
type physReader struct {
	*query.Scan
	phys    *arrow.Schema
	mem     memory.Allocator
	addSign bool
	cur     arrow.RecordBatch
	// kept, when set, receives the input ordinals of the rows read (the
	// scan was asked for row locations, which are dropped here); carry
	// learns when they do not come in stored order.
	kept  *roaring.Bitmap
	carry *carrier
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
	if p.kept != nil {
		ords := cols[len(cols)-1].(*array.Int64).Int64Values()
		cols = cols[:len(cols)-2]
		for _, o := range ords {
			if !p.kept.IsEmpty() && uint32(o) <= p.kept.Maximum() {
				p.carry.unordered = true
			}
			p.kept.Add(uint32(o))
		}
	}
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
