package table

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
)

// WriteOptions qualify one write.
type WriteOptions struct {
	// Now is the statement's now: CURRENT_TIMESTAMP defaults take it. Zero
	// means the table's clock.
	Now time.Time
	// TimeZone reads DATETIME and DATE values written into __TTL__ in
	// direct mode, and renders CURRENT_TIMESTAMP defaults; nil means UTC.
	TimeZone *time.Location
	// Label makes the write idempotent: a second write with a label this
	// table has applied fails with ErrLabelExists and changes nothing.
	Label string
	// Partial marks a partial-column update, which row TTL tables refuse.
	Partial bool
	// NoSync acknowledges a small write once its write-ahead log record is
	// written, before the log is synced (SQLite's synchronous=NORMAL): a
	// crash of the process loses nothing, but a power cut or a crash of the
	// operating system may lose the writes acknowledged since the last
	// sync of the log — whole writes, the newest ones, never part of one
	// nor one without those before it. The next durable write (or flush)
	// syncs them. Writes that make a rowset directly are durable whatever
	// it says.
	NoSync bool
}

// Write appends the rows of rec as one new version: atomic (all rows become
// visible together, or none do) and durable when it returns nil. Columns of
// rec are matched to the table's by name; omitted columns take their
// defaults. In direct mode __TTL__ (or __DORIS_TTL_COL__) is an optional
// column; in source mode it is derived from the source column.
func (t *Table) Write(ctx context.Context, rec arrow.RecordBatch) error {
	return t.WriteWith(ctx, rec, WriteOptions{})
}

// WriteWith is Write with options.
func (t *Table) WriteWith(ctx context.Context, rec arrow.RecordBatch, o WriteOptions) error {
	return t.WriteBatches(ctx, []arrow.RecordBatch{rec}, o)
}

// WriteBatches writes several batches as one version. A write of at most
// Options.SmallWriteRows rows goes through the write-ahead log into a
// memtable (see the package doc); a larger one makes a rowset directly.
func (t *Table) WriteBatches(ctx context.Context, recs []arrow.RecordBatch, o WriteOptions) error {
	if t.smallWrite(recs, o) {
		t.lastSmallWrite.Store(time.Now().UnixNano())
		if done, err := t.writeLogged(ctx, recs, o); done {
			return err
		}
	}
	if err := t.writeMu.LockContext(ctx); err != nil {
		return fmt.Errorf("table %s: waiting to write: %w", t.Name(), err)
	}
	defer t.writeMu.Unlock()
	v, err := t.writableDrained(ctx)
	if err != nil {
		return err
	}
	defer v.unref()
	if o.Partial && v.policy.HasRowTTL() {
		return rowttl.Errorf(rowttl.ErrNotSupported, "table %s: Partial update is not supported on tables with row TTL", t.Name())
	}
	if o.Partial {
		return rowttl.Errorf(rowttl.ErrNotSupported, "table %s: partial-column updates", t.Name())
	}
	if err := t.checkLabel(o.Label); err != nil {
		return err
	}
	return t.writeLocked(ctx, v, recs, o, writeExtras{})
}

// writeExtras are what a version carries besides ordinary rows.
type writeExtras struct {
	// marks are rows of older rowsets this version deletes.
	marks map[uint64]*roaring.Bitmap
	// tombstones makes every written row the deletion of its key
	// (merge-on-read DELETE).
	tombstones bool
}

// writeLocked publishes recs (in the caller's shape) as one version. The
// caller holds writeMu and a reference to v, the current version.
func (t *Table) writeLocked(ctx context.Context, v *version, recs []arrow.RecordBatch, o WriteOptions, x writeExtras) error {
	if o.Now.IsZero() {
		o.Now = t.opts.Clock()
	}
	t.noteNow(o.Now)
	if o.TimeZone == nil {
		o.TimeZone = time.UTC
	}
	w := t.newRowsetWriter(v)
	fail := func(err error) error {
		w.Abort()
		return err
	}
	if v.def.Model.IsUnique() {
		rec, err := t.prepareRows(ctx, v, recs, o, x)
		if err != nil {
			return fail(err)
		}
		if rec != nil {
			err = w.Write(rec)
			rec.Release()
			if err != nil {
				return fail(err)
			}
		}
	} else {
		p := newPreparer(t.opts.Allocator, v.def, v.policy, o)
		p.deleteSign = x.tombstones
		for _, rec := range recs {
			if err := ctx.Err(); err != nil {
				return fail(err)
			}
			phys, err := p.prepare(ctx, rec)
			if err != nil {
				return fail(err)
			}
			err = w.Write(phys)
			phys.Release()
			if err != nil {
				return fail(err)
			}
		}
	}
	unique := v.def.Model.IsUnique()
	meta, err := w.Finish()
	if err != nil {
		return fail(err)
	}
	meta.Overlapping = !unique && len(meta.Segments) > 1
	return t.publish(ctx, v, meta, w, o.Label, x.marks)
}

// prepareRows turns recs into the physical rows of one version, as a
// rowset stores them: a UNIQUE write's rows sorted by key, the last row of
// each key winning. It returns one batch (an empty one for no rows) for
// the caller to release; for a UNIQUE table with no batch at all, nil.
func (t *Table) prepareRows(ctx context.Context, v *version, recs []arrow.RecordBatch, o WriteOptions, x writeExtras) (arrow.RecordBatch, error) {
	p := newPreparerPhys(t.opts.Allocator, v.def, v.policy, o, t.physOf(v))
	p.deleteSign = x.tombstones
	// The usual small write is one batch: its list on the stack.
	var pendingBuf [1]arrow.RecordBatch
	pending := pendingBuf[:0]
	defer func() {
		for _, r := range pending {
			r.Release()
		}
	}()
	for _, rec := range recs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		phys, err := p.prepare(ctx, rec)
		if err != nil {
			return nil, err
		}
		pending = append(pending, phys)
	}
	if len(pending) == 0 {
		if v.def.Model.IsUnique() {
			return nil, nil
		}
		return emptyBatch(t.opts.Allocator, t.physOf(v)), nil
	}
	all, err := concatBatches(t.opts.Allocator, pending)
	if err != nil {
		return nil, err
	}
	// The parts are in all now: let them go before sorting makes a second
	// copy, so a write peaks at two copies of its rows, not three.
	for _, r := range pending {
		r.Release()
	}
	pending = nil
	if !v.def.Model.IsUnique() {
		return all, nil
	}
	// The rows of one write are merged before they are stored, so that a
	// rowset holds each key once: the last row written wins.
	sorted, err := sortByKey(ctx, t.opts.Allocator, all, v.def.Schema.KeyCount)
	all.Release()
	if err != nil {
		return nil, err
	}
	deduped, err := dedupLastWins(ctx, t.opts.Allocator, sorted, v.def.Schema.KeyCount)
	sorted.Release()
	return deduped, err
}

// emptyBatch is a batch of no rows.
func emptyBatch(mem memory.Allocator, sc *arrow.Schema) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	return b.NewRecordBatch()
}

// pinWritable pins the current version of a table open for writing.
func (t *Table) pinWritable() (*version, error) {
	v, err := t.pin()
	if err != nil {
		return nil, err
	}
	if t.opts.ReadOnly {
		v.unref()
		return nil, rowttl.Errorf(rowttl.ErrNotSupported, "table %s is open read-only", t.Name())
	}
	return v, nil
}

// writableWithoutLock is writable for a caller that does not hold writeMu
// (a load starting): a table that must recover first takes the lock for
// that, since a recovery rewrites the manifest, which only the holder of
// the lock may touch.
func (t *Table) writableWithoutLock(ctx context.Context) (*version, error) {
	v, err := t.pinWritable()
	if err != nil || t.vs.failure() == nil {
		return v, err
	}
	v.unref()
	if err := t.writeMu.LockContext(ctx); err != nil {
		return nil, fmt.Errorf("table %s: waiting to recover from a failed manifest append: %w", t.Name(), err)
	}
	defer t.writeMu.Unlock()
	return t.writable()
}

// writable pins the current version of a table that accepts writes,
// recovering it first from a failed manifest append. The caller holds
// writeMu.
func (t *Table) writable() (*version, error) {
	v, err := t.pinWritable()
	if err != nil {
		return nil, err
	}
	failed := t.vs.failure()
	if failed == nil {
		return v, nil
	}
	// The caller holds writeMu, as every caller of writable does.
	v.unref()
	if err := t.vs.recover(); err != nil {
		return nil, fmt.Errorf("table %s takes no writes until it recovers from a failed manifest append (%v); recovering failed: %w", t.Name(), failed, err)
	}
	return t.pin()
}

func (t *Table) newRowsetWriter(v *version) *rowset.Writer {
	// Called with writeMu held, as every manifest append is.
	return t.newRowsetWriterWith(v, t.vs.mayRemoveFiles)
}

// newRowsetWriterWith is newRowsetWriter whose Abort asks mayRemove before
// it deletes the rowset's files.
func (t *Table) newRowsetWriterWith(v *version, mayRemove func() bool) *rowset.Writer {
	phys := physicalSchema(v.def, v.policy)
	ttlIdx := -1
	if idx := phys.FieldIndices(schema.TTLColumn); len(idx) > 0 {
		ttlIdx = idx[0]
	}
	seg := segment.WriterOptions{PageRows: t.opts.PageRows, ZstdLevel: t.opts.ZstdLevel, Codec: v.def.codec(), Tag: t.tagFor(kindData)}
	if ttlIdx >= 0 {
		// Every scan reads __TTL__ where zone maps cannot decide: keep it
		// at the speed of its light encoding.
		seg.HotColumns = []int{ttlIdx}
	}
	return rowset.NewWriter(rowset.WriterOptions{
		FS: t.fs, Dir: t.dir, Schema: phys, TTLIndex: ttlIdx,
		Segment: seg, SegmentRows: t.opts.SegmentRows,
		NewFileNum: t.vs.newFileNum,
		MayRemove:  mayRemove,
	})
}

// publish makes a written rowset the next version: it opens the files (so
// that a bad file fails the write, not a later scan), appends one manifest
// record, and installs the new version.
func (t *Table) publish(ctx context.Context, v *version, meta rowset.Meta, w *rowset.Writer, label string, marks map[uint64]*roaring.Bitmap) error {
	meta.ID = t.vs.newRowsetID()
	meta.Lo = v.lastVersion + 1
	meta.Hi = meta.Lo

	h, err := rowset.Open(t.fs, t.dir, meta, t.onRelease)
	if err != nil {
		w.Abort()
		return err
	}
	if v.def.Model == schema.UniqueMOW && meta.Rows > 0 {
		// Merge-on-write: the new rows supersede every older row of their
		// keys, expired or not, in the same record that publishes them.
		m, err := mowMarks(ctx, t.opts.Allocator, h, v.rowsets, v.deleted, v.def.Schema.KeyCount)
		if err != nil {
			h.Unref()
			w.Abort()
			return err
		}
		for id, b := range marks {
			if cur, ok := m[id]; ok {
				cur.Or(b)
			} else {
				if m == nil {
					m = map[uint64]*roaring.Bitmap{}
				}
				m[id] = b
			}
		}
		marks = m
	}
	e := &versionEdit{LastVersion: meta.Hi}
	e.apply.marks = marks
	e.apply.updateCounters = func(tot *LifetimeCounters) { tot.IngestedBytes += meta.Bytes }
	if meta.Rows > 0 {
		e.Added = []rowset.Meta{meta}
		e.apply.handles = []*rowset.Handle{h}
	} else {
		// An empty write publishes a version and no rowset.
		defer h.Unref()
	}
	if label != "" {
		e.Labels = []string{label}
	}
	if err := t.vs.logAndApply(e); err != nil {
		w.Abort()
		return err
	}
	t.wake()
	return nil
}

func sortMetas(ms []rowset.Meta) {
	sort.Slice(ms, func(i, j int) bool { return ms[i].Lo < ms[j].Lo })
}
