package table

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/compaction"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/ttlcol"
	"github.com/rowttl/rowttl/vfs"
)

// loadRunBytes is how many bytes of prepared rows a UNIQUE load gathers in
// memory before it sorts them, keeps the last row of each key and spills
// them as one sorted run. Tests lower it to exercise the merge.
var loadRunBytes int64 = 16 << 20

// LoadWriter writes one load of any size as one version: batches are handed
// to Write one at a time and become visible together when Commit returns
// nil; Abort (or a failed Commit) leaves the table as it was. One of the
// two must always be called.
//
// A load reads and encodes its rows without the table's writer lock, so a
// slow or stalled input holds up no other writer: only Commit's publish
// takes it. Loads running side by side get their versions in the order
// they publish, a label is applied by the first load to publish it (the
// others fail with ErrLabelExists), and merge-on-write marks are computed
// at publish against the rowsets current then, those published meanwhile
// included. A load whose table is altered before it publishes fails: its
// rows were encoded for the old definition.
//
// Memory is bounded whatever the load's size:
//
//   - DUPLICATE: each prepared batch goes straight to the rowset's segment
//     files (which buffer one page).
//   - UNIQUE: a load holds each key once, the last row written winning, and
//     its rowset is one sorted run. Prepared batches are gathered up to
//     loadRunBytes, sorted, deduplicated and spilled to a temporary segment
//     file (a "run"); Commit merges the runs by key, the later run winning
//     for a key both hold (compaction.MergeByKey), into the rowset. A load
//     that fits in one run is written directly. Runs are unpublished
//     segment files: a crash leaves them as orphans that the next open
//     deletes.
//
// Merge-on-write publishing still reads every key of the new rowset to mark
// the older rows it replaces (as any write does).
type LoadWriter struct {
	t      *Table
	ctx    context.Context
	v      *version
	o      WriteOptions
	p      *preparer
	w      *rowset.Writer
	unique bool
	keys   int
	// UNIQUE: batches of the run being gathered, their bytes, and the runs
	// spilled so far, oldest first.
	pending      []arrow.RecordBatch
	pendingBytes int64
	runs         []*rowset.Writer
	runMetas     []rowset.Meta

	rows    int64
	version int64
	done    bool
	// publishing is set, with the writer lock held, while Commit publishes:
	// only then may the load's files be named by a manifest record whose
	// fate is unknown (see rowset.WriterOptions.MayRemove).
	publishing bool
}

// NewLoadWriter starts a load of the table's current definition (see
// Definition) and checks the label (a label the table has applied fails
// with ErrLabelExists) and the options as WriteBatches does. It does not
// take the writer lock, except to recover first a table whose manifest
// append failed (waiting for it until ctx ends).
func (t *Table) NewLoadWriter(ctx context.Context, o WriteOptions) (*LoadWriter, error) {
	v, err := t.writableWithoutLock(ctx)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*LoadWriter, error) {
		v.unref()
		return nil, err
	}
	if o.Partial && v.policy.Mode != ttlcol.NoTTL {
		return fail(rowttl.Errorf(rowttl.ErrNotSupported, "table %s: Partial update is not supported on tables with row TTL", t.Name()))
	}
	if o.Partial {
		return fail(rowttl.Errorf(rowttl.ErrNotSupported, "table %s: partial-column updates", t.Name()))
	}
	if err := t.checkLabel(o.Label); err != nil {
		return fail(err)
	}
	if o.Now.IsZero() {
		o.Now = t.opts.Clock()
	}
	t.noteNow(o.Now)
	if o.TimeZone == nil {
		o.TimeZone = time.UTC
	}
	lw := &LoadWriter{
		t: t, ctx: ctx, v: v, o: o,
		p:      newPreparer(t.opts.Allocator, v.def, v.policy, o),
		unique: v.def.Model.IsUnique(),
		keys:   v.def.Schema.KeyCount,
	}
	if !lw.unique {
		lw.w = lw.newRowsetWriter()
	}
	return lw, nil
}

// newRowsetWriter returns the writer of the load's rowset. Until Commit
// publishes, no manifest record names its files, so aborting removes them.
func (lw *LoadWriter) newRowsetWriter() *rowset.Writer {
	t := lw.t
	return t.newRowsetWriterWith(lw.v, func() bool { return !lw.publishing || t.vs.mayRemoveFiles() })
}

// Definition is the definition the load encodes its rows for.
func (lw *LoadWriter) Definition() *Definition { return lw.v.def }

// Policy is the row TTL policy the load encodes its rows for.
func (lw *LoadWriter) Policy() ttlcol.Policy { return lw.v.policy }

func (t *Table) checkLabel(label string) error {
	if label == "" {
		return nil
	}
	t.mu.Lock()
	dup := t.vs.labels[label]
	t.mu.Unlock()
	if dup {
		return rowttl.Errorf(rowttl.ErrLabelExists, "Label [%s] has already been used", label)
	}
	return nil
}

// HasLabel reports whether the table has applied a write with this label.
func (t *Table) HasLabel(label string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.vs.labels[label]
}

var errLoadDone = errors.New("load writer already committed or aborted")

// Write adds the rows of rec (in the caller's shape, as for Write). A
// failed Write leaves the load to be aborted.
func (lw *LoadWriter) Write(rec arrow.RecordBatch) error {
	if lw.done {
		return errLoadDone
	}
	if err := lw.ctx.Err(); err != nil {
		return err
	}
	phys, err := lw.p.prepare(lw.ctx, rec)
	if err != nil {
		return err
	}
	lw.rows += rec.NumRows()
	if !lw.unique {
		err = lw.w.Write(phys)
		phys.Release()
		return err
	}
	lw.pending = append(lw.pending, phys)
	lw.pendingBytes += batchBytes(phys)
	if lw.pendingBytes >= loadRunBytes {
		return lw.spill()
	}
	return nil
}

// Rows returns the number of rows written so far.
func (lw *LoadWriter) Rows() int64 { return lw.rows }

// Version returns the version Commit published (0 before).
func (lw *LoadWriter) Version() int64 { return lw.version }

// sortedPending turns the gathered batches into one batch sorted by key
// holding the last row of each key, and forgets them.
func (lw *LoadWriter) sortedPending() (arrow.RecordBatch, error) {
	mem := lw.t.opts.Allocator
	all, err := concatBatches(mem, lw.pending)
	lw.releasePending()
	if err != nil {
		return nil, err
	}
	sorted, err := sortByKey(lw.ctx, mem, all, lw.keys)
	all.Release()
	if err != nil {
		return nil, err
	}
	deduped, err := dedupLastWins(lw.ctx, mem, sorted, lw.keys)
	sorted.Release()
	return deduped, err
}

func (lw *LoadWriter) releasePending() {
	for _, r := range lw.pending {
		r.Release()
	}
	lw.pending = nil
	lw.pendingBytes = 0
}

// spill writes the gathered batches as one sorted run.
func (lw *LoadWriter) spill() error {
	if len(lw.pending) == 0 {
		return nil
	}
	run, err := lw.sortedPending()
	if err != nil {
		return err
	}
	t := lw.t
	phys := physicalSchema(lw.v.def, lw.v.policy)
	w := rowset.NewWriter(rowset.WriterOptions{
		FS: t.fs, Dir: t.dir, Schema: phys, TTLIndex: -1,
		// Runs are read back once: light encodings only, one file each.
		Segment:     segment.WriterOptions{PageRows: t.opts.PageRows, ZstdLevel: -1, Tag: t.tagFor(kindRun)},
		SegmentRows: math.MaxInt64, NewFileNum: t.vs.newFileNum,
	})
	lw.runs = append(lw.runs, w)
	err = w.Write(run)
	run.Release()
	if err != nil {
		return err
	}
	meta, err := w.Finish()
	if err != nil {
		return err
	}
	lw.runMetas = append(lw.runMetas, meta)
	return nil
}

// Commit finishes the load's files, then takes the writer lock (giving up
// when the load's context ends) and publishes them as one version; on
// failure nothing is published.
func (lw *LoadWriter) Commit() error {
	if lw.done {
		return errLoadDone
	}
	lw.done = true
	t := lw.t
	defer lw.v.unref()
	defer lw.removeRuns()
	if lw.unique {
		lw.w = lw.newRowsetWriter()
	}
	fail := func(err error) error {
		lw.releasePending()
		lw.w.Abort()
		return err
	}
	if err := lw.ctx.Err(); err != nil {
		return fail(err)
	}
	if lw.unique {
		if err := lw.finishUnique(); err != nil {
			return fail(err)
		}
	}
	meta, err := lw.w.Finish()
	if err != nil {
		return fail(err)
	}
	meta.Overlapping = !lw.unique && len(meta.Segments) > 1
	if err := t.writeMu.LockContext(lw.ctx); err != nil {
		return fail(fmt.Errorf("table %s: waiting to publish the load: %w", t.Name(), err))
	}
	defer t.writeMu.Unlock()
	// Other writers may have published since the load began: publish on
	// top of the current version, not the one the load started from.
	cur, err := t.writableDrained(lw.ctx)
	if err != nil {
		return fail(err)
	}
	defer cur.unref()
	if cur.def != lw.v.def {
		return fail(rowttl.Errorf(rowttl.ErrNotSupported, "table %s was altered while the load ran; the load wrote nothing, run it again", t.Name()))
	}
	if err := t.checkLabel(lw.o.Label); err != nil {
		return fail(err)
	}
	lw.publishing = true
	if err := t.publish(lw.ctx, cur, meta, lw.w, lw.o.Label, nil); err != nil {
		return err
	}
	lw.version = t.LastVersion() // still under the lock: the version just published
	return nil
}

// finishUnique writes the deduplicated rows into lw.w: the gathered batches
// directly when nothing was spilled, else every run merged by key.
func (lw *LoadWriter) finishUnique() error {
	if len(lw.runs) == 0 {
		if len(lw.pending) == 0 {
			return nil
		}
		rec, err := lw.sortedPending()
		if err != nil {
			return err
		}
		err = lw.w.Write(rec)
		rec.Release()
		return err
	}
	if err := lw.spill(); err != nil {
		return err
	}
	t := lw.t
	phys := physicalSchema(lw.v.def, lw.v.policy)
	var readers []array.RecordReader
	defer func() {
		for _, r := range readers {
			r.Release()
		}
	}()
	for _, m := range lw.runMetas {
		for _, s := range m.Segments {
			r, err := openRunReader(t.fs, t.dir, s.FileNum, phys, t.opts.Allocator)
			if err != nil {
				return err
			}
			readers = append(readers, r)
		}
	}
	_, err := compaction.MergeByKey(lw.ctx, t.opts.Allocator, phys, readers, lw.keys, lw.w)
	return err
}

// removeRuns deletes the spilled runs.
func (lw *LoadWriter) removeRuns() {
	for _, w := range lw.runs {
		w.Abort()
	}
	lw.runs, lw.runMetas = nil, nil
}

// Abort drops the load: nothing is published and every file it wrote is
// removed. Calling it after Commit does nothing.
func (lw *LoadWriter) Abort() {
	if lw.done {
		return
	}
	lw.done = true
	lw.releasePending()
	if lw.w != nil {
		lw.w.Abort()
	}
	lw.removeRuns()
	lw.v.unref()
}

// batchBytes is the size of a batch's buffers.
func batchBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += arrayDataBytes(c.Data())
	}
	return n
}

func arrayDataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += arrayDataBytes(c)
	}
	return n
}

// runReader reads a spilled run page by page, as batches of the physical
// schema.
type runReader struct {
	f    vfs.File
	r    *segment.Reader
	sc   *arrow.Schema
	mem  memory.Allocator
	page int
	cur  arrow.RecordBatch
	err  error
}

func openRunReader(fsys vfs.FS, dir string, num uint64, sc *arrow.Schema, mem memory.Allocator) (*runReader, error) {
	name := rowset.SegmentFileName(dir, num)
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("open load run %s: %w", name, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat load run %s: %w", name, err)
	}
	r, err := segment.Open(f, st.Size(), name)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &runReader{f: f, r: r, sc: sc, mem: mem}, nil
}

func (rr *runReader) Retain() {}

// Release closes the file; the reader is used once, by one owner.
func (rr *runReader) Release() {
	if rr.cur != nil {
		rr.cur.Release()
		rr.cur = nil
	}
	if rr.f != nil {
		rr.f.Close()
		rr.f = nil
	}
}

func (rr *runReader) Schema() *arrow.Schema { return rr.sc }

func (rr *runReader) Next() bool {
	if rr.cur != nil {
		rr.cur.Release()
		rr.cur = nil
	}
	if rr.err != nil || rr.page >= rr.r.NumPages() {
		return false
	}
	_, n := rr.r.Page(rr.page)
	cols := make([]arrow.Array, rr.sc.NumFields())
	for c := range cols {
		a, err := rr.r.ReadPage(rr.mem, c, rr.page)
		if err != nil {
			for _, x := range cols[:c] {
				x.Release()
			}
			rr.err = err
			return false
		}
		cols[c] = a
	}
	rr.page++
	rr.cur = array.NewRecordBatch(rr.sc, cols, int64(n))
	for _, a := range cols {
		a.Release()
	}
	return true
}

func (rr *runReader) RecordBatch() arrow.RecordBatch { return rr.cur }

// Record is RecordBatch under its deprecated name.
func (rr *runReader) Record() arrow.RecordBatch { return rr.cur }

func (rr *runReader) Err() error { return rr.err }
