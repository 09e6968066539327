package table

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/vfs"
)

// Small writes go through the write-ahead log (wal.go) into memtables
// (memtable.go); this file owns the state that ties them to the version
// set: the active and frozen memtables, the write path under group commit,
// flushes (a new kind of install through logAndApply), the background
// flusher, back-pressure, and the replay of the log at open.
//
// Ordering. Versions are handed out in the log's queue order, under its
// mutex, so a record's version and number grow together; a write is
// applied (its rows in the active memtable) by the leader of its group
// after the sync that covers it, in number order, and the group's writes
// then become current as one version (installLogged).
// Every other publish — a write of a rowset, DELETE, UPDATE, ALTER, a
// load — first drains the memtables under the exclusive writer lock
// (drainLocked), so rowsets always hold the versions before every
// memtable's and a flush's rowset [lo, hi] never interleaves with another.
// Compaction needs no drain: its inputs are rowsets, older than every
// memtable row.

// Defaults of the memtable options.
const (
	defaultMemtableBytes = 64 << 20
	defaultMemtableAge   = 10 * time.Second
	defaultSmallRows     = 4096
	// maxFrozenMemtables is how many frozen memtables may wait for their
	// flush before writers stall.
	maxFrozenMemtables = 2
)

// memState is the table's memtables; guarded by Table.mu.
type memState struct {
	active *memtable
	frozen []*memtable // oldest first
	// nextVersion is the version the next logged write gets, at least.
	nextVersion int64
	nextID      uint64
	// pending are the labels of logged writes not yet applied.
	pending map[string]bool
	// added is the newest version of the logged writes added to the
	// memtables since the last install (0: none); full says that one of
	// them froze the active memtable.
	added int64
	full  bool
	// flushErr is the last failure of the background flusher.
	flushErr error
	// progress is closed (and replaced) when a flush installs or fails.
	progress chan struct{}
	// Counters for Stats.
	flushes, stalls int64
	// installs counts the versions installLogged made (tests).
	installs int64
}

// memCommon is what every memtable of a table shares.
type memCommon struct {
	fs   vfs.FS
	nums atomic.Uint64
}

func (t *Table) progressLocked() chan struct{} {
	if t.mem.progress == nil {
		t.mem.progress = make(chan struct{})
	}
	return t.mem.progress
}

func (t *Table) signalProgressLocked() {
	if t.mem.progress != nil {
		close(t.mem.progress)
		t.mem.progress = nil
	}
}

// views lists what a version sees of the memtables now. Called with t.mu.
func (t *Table) viewsLocked() []memView {
	out := make([]memView, 0, len(t.mem.frozen)+1)
	for _, mt := range t.mem.frozen {
		n, hi := mt.state()
		out = append(out, memView{mt: mt, n: n, hi: hi})
	}
	if mt := t.mem.active; mt != nil {
		n, hi := mt.state()
		out = append(out, memView{mt: mt, n: n, hi: hi})
	}
	return out
}

// memsWithout is mems without the view of flushed.
func memsWithout(mems []memView, flushed *memtable) []memView {
	out := make([]memView, 0, len(mems))
	for _, m := range mems {
		if m.mt != flushed {
			out = append(out, m)
		}
	}
	return out
}

// smallWrite reports whether a write goes through the log.
func (t *Table) smallWrite(recs []arrow.RecordBatch, o WriteOptions) bool {
	if t.wal == nil || o.Partial || t.opts.SmallWriteRows < 0 {
		return false
	}
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	return n <= int64(t.opts.SmallWriteRows)
}

// writeLogged writes recs as one version through the log. It reports
// false, having done nothing, when the table must first recover from a
// failed manifest append, which the direct path does under the exclusive
// lock.
func (t *Table) writeLogged(ctx context.Context, recs []arrow.RecordBatch, o WriteOptions) (bool, error) {
	if err := t.waitForFlushes(ctx); err != nil {
		return true, err
	}
	if err := t.writeMu.RLockContext(ctx); err != nil {
		return true, fmt.Errorf("table %s: waiting to write: %w", t.Name(), err)
	}
	defer t.writeMu.RUnlock()
	if o.Now.IsZero() {
		o.Now = t.opts.Clock()
	}
	v, failed, err := t.pinLogged(o.Now)
	if err != nil {
		return true, err
	}
	defer v.unref()
	if failed {
		return false, nil
	}
	if o.Partial && v.policy.Mode != 0 {
		return true, rowttl.Errorf(rowttl.ErrNotSupported, "table %s: Partial update is not supported on tables with row TTL", t.Name())
	}
	if o.TimeZone == nil {
		o.TimeZone = time.UTC
	}
	// From here the writer is about to queue: a leader gathering its
	// group waits for it.
	t.wal.arrive()
	queued := false
	defer func() {
		if !queued {
			t.wal.depart()
		}
	}()
	rec, err := t.prepareRows(ctx, v, recs, o, writeExtras{})
	if err != nil {
		return true, err
	}
	if rec == nil {
		rec = emptyBatch(t.opts.Allocator, t.physOf(v))
	}
	lw := loggedWrites.Get().(*loggedWrite)
	body, err := appendRows(lw.body, t.opts.Allocator, rec, o.Label)
	if err != nil {
		rec.Release()
		loggedWrites.Put(lw)
		return true, err
	}
	if o.Label != "" {
		t.mu.Lock()
		dup := t.vs.labels[o.Label] || t.mem.pending[o.Label]
		if !dup {
			t.mem.pending[o.Label] = true
		}
		t.mu.Unlock()
		if dup {
			rec.Release()
			lw.reset(body)
			return true, rowttl.Errorf(rowttl.ErrLabelExists, "Label [%s] has already been used", o.Label)
		}
		defer func() {
			t.mu.Lock()
			delete(t.mem.pending, o.Label)
			t.mu.Unlock()
		}()
	}
	lw.t, lw.rec, lw.label, lw.size = t, rec, o.Label, int64(len(body))
	lw.op.hooks, lw.op.body, lw.op.sync, lw.op.arrived = lw, body, !o.NoSync, true
	queued = true
	_, err = t.wal.commitRecord(&lw.op)
	if !lw.applied {
		rec.Release()
	}
	lw.reset(body)
	return true, err
}

// walKeepBody is the largest record body a pooled loggedWrite keeps for
// the next write: one-row bodies fit many times over, and a large small
// write does not pin its size in the pool.
const walKeepBody = 4 << 10

// reset empties lw, keeping body's space (once the log holds no reference
// to it: commitRecord returned) for the next write's record, and returns
// lw to the pool.
func (lw *loggedWrite) reset(body []byte) {
	if cap(body) > walKeepBody {
		body = nil
	}
	*lw = loggedWrite{op: walOp{wake: lw.op.wake}, body: body[:0]}
	loggedWrites.Put(lw)
}

// loggedWrite is one write through the log: its queued record and what
// its hooks (walHooks) share, reused through loggedWrites with the
// record's wake channel.
type loggedWrite struct {
	op    walOp
	t     *Table
	rec   arrow.RecordBatch
	label string
	size  int64
	// ver is the write's version, handed out by stamp.
	ver     int64
	applied bool
	verBuf  [binary.MaxVarintLen64]byte
	// body is the space of the record's body, kept from a previous write
	// through the pool: the body of a one-row write is its largest
	// allocation.
	body []byte
}

var loggedWrites = sync.Pool{New: func() any {
	return &loggedWrite{op: walOp{wake: make(chan struct{}, 1)}}
}}

func (lw *loggedWrite) stamp(uint64) []byte {
	t := lw.t
	t.mu.Lock()
	lw.ver = max(t.mem.nextVersion, t.vs.current.lastVersion+1)
	t.mem.nextVersion = lw.ver + 1
	t.mu.Unlock()
	return lw.verBuf[:binary.PutUvarint(lw.verBuf[:], uint64(lw.ver))]
}

func (lw *loggedWrite) apply(seq uint64) {
	// The leader publishes the group's writes as one version after the
	// last of them (installLogged).
	lw.t.addLogged(lw.rec, lw.ver, seq, lw.label, lw.size)
	lw.applied = true
}

// pinLogged is pinWritable, noteNow and the check for a failed manifest
// append (failed) of a logged write under one hold of the table's mutex,
// which every writer of a group and its leader take in turn.
func (t *Table) pinLogged(now time.Time) (v *version, failed bool, err error) {
	us := now.UnixMicro()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed {
		return nil, false, rowttl.Errorf(rowttl.ErrClosed, "table %s", t.Name())
	}
	if t.opts.ReadOnly {
		return nil, false, rowttl.Errorf(rowttl.ErrNotSupported, "table %s is open read-only", t.Name())
	}
	if us > t.mu.latestNow {
		t.mu.latestNow = us
	}
	v = t.vs.current
	v.ref()
	return v, t.vs.failed != nil, nil
}

// addLogged adds a logged write's rows (taken over) to the active
// memtable, at version ver; installLogged makes it current, with the
// writes added since the last install. Until then no version sees it: a
// version's view of a memtable counts the writes it sees.
func (t *Table) addLogged(rec arrow.RecordBatch, ver int64, seq uint64, label string, size int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	mt := t.mem.active
	if mt == nil {
		mt = t.newMemtableLocked(t.vs.current)
		t.mem.active = mt
	}
	mt.add(rec, ver, seq, size)
	t.mem.added = max(t.mem.added, ver)
	if label != "" {
		t.vs.labels[label] = true
	}
	if _, b := mt.size(); b >= t.opts.MemtableBytes {
		t.freezeLocked()
		t.mem.full = true
	}
}

// installLogged publishes the writes added since the last install as one
// version: a version costs a copy of the rowset list and a reference to
// each rowset, which a group of one-row writes pays once, not per write.
func (t *Table) installLogged() {
	t.mu.Lock()
	old := t.vs.current
	if t.mem.added == 0 {
		t.mu.Unlock()
		return
	}
	nv := newVersion(old.def, old.policy, append([]*rowset.Handle(nil), old.rowsets...), max(old.lastVersion, t.mem.added), old.deleted).
		withMems(t.viewsLocked()).carryKeyMerge(old)
	t.vs.current = nv
	t.mem.installs++
	full := t.mem.full
	t.mem.added, t.mem.full = 0, false
	t.mu.Unlock()
	old.unref()
	if full {
		t.kickFlush()
	}
}

func (t *Table) newMemtableLocked(v *version) *memtable {
	t.mem.nextID++
	return newMemtable(t.mem.nextID, v.def, physicalSchema(v.def, v.policy), t.opts.Allocator, t.memFS.fs, &t.memFS.nums, t.opts.PageRows, t.opts.memChunkRows, time.Now())
}

// freezeLocked makes the active memtable frozen, to be flushed.
func (t *Table) freezeLocked() {
	if mt := t.mem.active; mt != nil {
		t.mem.frozen = append(t.mem.frozen, mt)
		t.mem.active = nil
	}
}

func (t *Table) kickFlush() { nudge(t.flushKick) }

// waitForFlushes holds a writer back while more memtables wait for their
// flush than the table allows, so memory stays bounded when the disk is
// slower than the writers. It waits until a flush installs (or fails, and
// then returns its error) or ctx ends.
func (t *Table) waitForFlushes(ctx context.Context) error {
	stalled := false
	for {
		t.mu.Lock()
		if len(t.mem.frozen) <= maxFrozenMemtables || t.flushKick == nil {
			t.mu.Unlock()
			return nil
		}
		if !stalled {
			stalled = true
			t.mem.stalls++
		}
		if err := t.mem.flushErr; err != nil {
			t.mu.Unlock()
			return fmt.Errorf("table %s: memtables wait for a flush that failed: %w", t.Name(), err)
		}
		ch := t.progressLocked()
		t.mu.Unlock()
		t.kickFlush()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("table %s: waiting for memtables to flush: %w", t.Name(), context.Cause(ctx))
		}
	}
}

// flushLocked flushes mt, the oldest frozen memtable, to a rowset [lo, hi]
// and installs it with the log position it covers; the log segments it
// covers then go. The caller holds the exclusive writer lock.
func (t *Table) flushLocked(ctx context.Context, mt *memtable) error {
	f, err := t.encodeFlush(ctx, mt, t.vs.mayRemoveFiles)
	if err != nil {
		return err
	}
	return t.installFlush(ctx, f)
}

// pendingFlush is a frozen memtable's rowset, written but not installed.
type pendingFlush struct {
	mt         *memtable
	hi         int64
	w          *rowset.Writer
	meta       rowset.Meta
	publishing bool
}

func (f *pendingFlush) abort() {
	if f.w != nil {
		f.w.Abort()
	}
}

// encodeFlush writes the rows of mt, a frozen memtable, as a rowset; it
// needs no lock: frozen, mt changes no more, and a definition changes only
// after every memtable is flushed.
func (t *Table) encodeFlush(ctx context.Context, mt *memtable, mayRemove func() bool) (*pendingFlush, error) {
	v, err := t.pinWritable()
	if err != nil {
		return nil, err
	}
	defer v.unref()
	// Records after this point go to a new segment, so that the ones of mt
	// lie in segments that can go once it is flushed.
	if _, err := t.wal.rotate(); err != nil {
		return nil, err
	}
	n, hi := mt.state()
	f := &pendingFlush{mt: mt, hi: hi}
	rows, err := mt.rowsOf(ctx, n)
	if err != nil || rows == nil {
		return f, err
	}
	defer rows.Release()
	if rows.NumRows() == 0 {
		return f, nil
	}
	f.w = t.newRowsetWriterWith(v, func() bool { return !f.publishing || mayRemove() })
	if err := f.w.Write(rows); err != nil {
		f.abort()
		return nil, err
	}
	meta, err := f.w.Finish()
	if err != nil {
		f.abort()
		return nil, err
	}
	f.meta = meta
	return f, nil
}

// installFlush installs an encoded flush, unless a drain flushed its
// memtable meanwhile. The caller holds the exclusive writer lock.
func (t *Table) installFlush(ctx context.Context, f *pendingFlush) error {
	mt := f.mt
	v, err := t.writable()
	if err != nil {
		f.abort()
		return err
	}
	defer v.unref()
	t.mu.Lock()
	frozen := len(t.mem.frozen) > 0 && t.mem.frozen[0] == mt
	t.mu.Unlock()
	if !frozen {
		f.abort()
		return nil
	}
	e := &versionEdit{LastVersion: f.hi, WALSeq: mt.lastSeq}
	e.apply.flushed = mt
	if f.w != nil {
		meta := f.meta
		meta.ID = t.vs.newRowsetID()
		meta.Lo, meta.Hi = mt.lo, f.hi
		h, err := rowset.Open(t.fs, t.dir, meta, t.onRelease)
		if err != nil {
			f.abort()
			return err
		}
		if v.def.Model == schema.UniqueMOW {
			// The rows supersede the older rows of their keys, in the
			// record that publishes them, as a write of a rowset does.
			marks, err := mowMarks(ctx, t.opts.Allocator, h, v.rowsets, v.deleted, v.def.Schema.KeyCount)
			if err != nil {
				h.Unref()
				f.abort()
				return err
			}
			e.apply.marks = marks
		}
		e.Added = []rowset.Meta{meta}
		e.apply.handles = []*rowset.Handle{h}
		e.apply.updateCounters = func(tot *LifetimeCounters) { tot.IngestedBytes += meta.Bytes }
	}
	e.apply.installed = func() {
		t.mem.frozen = t.mem.frozen[1:]
		t.mem.flushes++
		t.mem.flushErr = nil
		t.signalProgressLocked()
	}
	f.publishing = true
	if err := t.vs.logAndApply(e); err != nil {
		f.abort()
		return err
	}
	mt.unref() // the table's reference; versions that read it keep theirs
	if err := t.wal.retire(mt.lastSeq); err != nil {
		t.logf("table %s: %v", t.Name(), err)
	}
	t.wake()
	return nil
}

// drainLocked flushes every memtable, so that a publish of a rowset gets a
// version after all of theirs, and records in the manifest that the log
// holds nothing more it must replay: versions and numbers a failed write
// took are thus never reused. The caller holds the exclusive writer lock.
func (t *Table) drainLocked(ctx context.Context) error {
	if t.wal == nil {
		return nil
	}
	t.mu.Lock()
	t.freezeLocked()
	t.mu.Unlock()
	for {
		t.mu.Lock()
		var mt *memtable
		if len(t.mem.frozen) > 0 {
			mt = t.mem.frozen[0]
		}
		t.mu.Unlock()
		if mt == nil {
			break
		}
		if err := t.flushLocked(ctx, mt); err != nil {
			return fmt.Errorf("table %s: flush memtable: %w", t.Name(), err)
		}
	}
	last := t.wal.lastSeq()
	t.mu.Lock()
	burned := t.mem.nextVersion - 1
	behind := last > t.vs.walSeq || burned > t.vs.current.lastVersion
	t.mu.Unlock()
	if !behind {
		return nil
	}
	v, err := t.writable()
	if err != nil {
		return err
	}
	v.unref()
	return t.vs.logAndApply(&versionEdit{LastVersion: burned, WALSeq: last})
}

// writableDrained is writable after drainLocked.
func (t *Table) writableDrained(ctx context.Context) (*version, error) {
	if err := t.drainLocked(ctx); err != nil {
		return nil, err
	}
	return t.writable()
}

// startFlusher runs the flushes of frozen memtables, and freezes the
// active one when it is older than MemtableAge, until stopFlusher.
func (t *Table) startFlusher() {
	t.flushKick = make(chan struct{}, 1)
	t.flushStop = make(chan struct{})
	t.flushDone = make(chan struct{})
	age := t.opts.MemtableAge
	kick, stop, done := t.flushKick, t.flushStop, t.flushDone
	go func() {
		defer close(done)
		tick := time.NewTicker(max(age/4, time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-kick:
			case <-tick.C:
				t.mu.Lock()
				if mt := t.mem.active; mt != nil && time.Since(mt.created) >= age {
					t.freezeLocked()
				}
				t.mu.Unlock()
			}
			t.flushFrozen()
		}
	}()
}

// flushFrozen flushes the frozen memtables, oldest first, each under the
// exclusive lock only for its own flush.
func (t *Table) flushFrozen() {
	for {
		t.mu.Lock()
		var mt *memtable
		if len(t.mem.frozen) > 0 && !t.mu.closed {
			mt = t.mem.frozen[0]
		}
		t.mu.Unlock()
		if mt == nil {
			return
		}
		// Written without the lock, so writers go on meanwhile; installed
		// under it.
		ctx := context.Background()
		f, err := t.encodeFlush(ctx, mt, func() bool {
			// Abort runs under the lock when the install failed.
			return t.vs.mayRemoveFiles()
		})
		if err == nil {
			t.writeMu.Lock()
			err = t.installFlush(ctx, f)
			t.writeMu.Unlock()
		}
		if err != nil {
			t.mu.Lock()
			t.mem.flushErr = err
			t.signalProgressLocked()
			t.mu.Unlock()
			t.logf("table %s: flush memtable: %v", t.Name(), err)
			return // the next tick tries again
		}
	}
}

func (t *Table) stopFlusher() {
	t.flushOnce.Do(func() {
		if t.flushStop != nil {
			close(t.flushStop)
			<-t.flushDone
		}
	})
}

// The rows of a log record come in one of three shapes, told apart by
// their first byte:
//
//	0xFF...        an Arrow IPC stream: schema, one batch, end of stream
//	               (the first format, still replayed)
//	walRowsBatch   then the batch's encapsulated IPC message alone
//	walRowsRaw     then the columns' Arrow buffers (wal_raw.go)
//
// A stream begins with the IPC continuation marker, so its first byte is
// always 0xFF. The second shape leaves the schema out, since replay checks
// the rows against the table's physical schema anyway: encoding the schema
// cost more CPU than the row itself in a one-row write. The third leaves
// out the IPC metadata too, whose flatbuffer still cost more than the row;
// it carries the flat column types a physical schema has, and a batch of
// any other type goes as walRowsBatch.
const (
	walRowsBatch = 0x01
	walRowsRaw   = 0x02
)

// encodeRows is the body of a log record after its version: the label,
// then the rows as walRowsRaw, or walRowsBatch where that cannot carry
// them.
func encodeRows(mem memory.Allocator, rec arrow.RecordBatch, label string) ([]byte, error) {
	return appendRows(nil, mem, rec, label)
}

// appendRows is encodeRows into the space of dst (its contents are
// overwritten) when the raw shape carries rec and dst is large enough.
func appendRows(dst []byte, mem memory.Allocator, rec arrow.RecordBatch, label string) ([]byte, error) {
	if body, ok := appendRowsRaw(dst, rec, label); ok {
		return body, nil
	}
	return encodeRowsBatch(mem, rec, label)
}

// encodeRowsBatch is encodeRows in the walRowsBatch shape.
func encodeRowsBatch(mem memory.Allocator, rec arrow.RecordBatch, label string) ([]byte, error) {
	p, err := ipc.GetRecordBatchPayload(rec, ipc.WithAllocator(mem))
	if err != nil {
		return nil, fmt.Errorf("encode write-ahead log record: %w", err)
	}
	defer p.Release()
	buf := bytes.NewBuffer(make([]byte, 0, 256))
	var lb [binary.MaxVarintLen64]byte
	buf.Write(lb[:binary.PutUvarint(lb[:], uint64(len(label)))])
	buf.WriteString(label)
	buf.WriteByte(walRowsBatch)
	if _, err := p.WritePayload(buf); err != nil {
		return nil, fmt.Errorf("encode write-ahead log record: %w", err)
	}
	return buf.Bytes(), nil
}

// schemaMessage is the encapsulated IPC message of phys, which a record of
// the walRowsBatch shape needs before its batch to be read as a stream.
func schemaMessage(mem memory.Allocator, phys *arrow.Schema) ([]byte, error) {
	p := ipc.GetSchemaPayload(phys, mem)
	defer p.Release()
	var buf bytes.Buffer
	if _, err := p.WritePayload(&buf); err != nil {
		return nil, fmt.Errorf("encode schema of write-ahead log records: %w", err)
	}
	return buf.Bytes(), nil
}

// decodeRecord splits a replayed record's body into its version, label and
// rows, which must have the table's physical schema; physMsg is
// schemaMessage(phys).
func decodeRecord(mem memory.Allocator, name string, r walRecord, phys *arrow.Schema, physMsg []byte) (int64, string, arrow.RecordBatch, error) {
	bad := func(format string, args ...any) error {
		return rowttl.Errorf(rowttl.ErrCorruption, "write-ahead log %s: record %d: %s", name, r.seq, fmt.Sprintf(format, args...))
	}
	b := r.body
	ver, n := binary.Uvarint(b)
	if n <= 0 || ver == 0 {
		return 0, "", nil, bad("no version")
	}
	b = b[n:]
	ll, n := binary.Uvarint(b)
	if n <= 0 || ll > uint64(len(b)-n) {
		return 0, "", nil, bad("no label")
	}
	label := string(b[n : n+int(ll)])
	b = b[n+int(ll):]
	if len(b) > 0 && b[0] == walRowsRaw {
		rec, err := decodeRowsRaw(mem, b[1:], phys)
		if err != nil {
			return 0, "", nil, bad("rows: %v", err)
		}
		return int64(ver), label, rec, nil
	}
	var stream io.Reader = bytes.NewReader(b)
	if len(b) > 0 && b[0] == walRowsBatch {
		b = b[1:]
		fb, msg, bodyLen, _, ok := messageAt(b)
		if !ok || !plausibleBatch(fb, msg, bodyLen) {
			return 0, "", nil, bad("rows: not one IPC batch")
		}
		stream = io.MultiReader(bytes.NewReader(physMsg), bytes.NewReader(b))
	} else if !plausibleStream(b) {
		return 0, "", nil, bad("rows: not an IPC stream of one batch")
	}
	// A damaged length must not make the reader allocate more than the
	// record holds.
	limit := int64(len(b) + len(physMsg))
	mr := ipc.NewMessageReader(stream, ipc.WithAllocator(mem), ipc.WithBodySizeLimit(limit), ipc.WithMetadataSizeLimit(limit))
	rd, err := ipc.NewReaderFromMessageReader(mr, ipc.WithAllocator(mem))
	if err != nil {
		// The failed reader has released mr.
		return 0, "", nil, bad("rows: %v", err)
	}
	defer rd.Release()
	if !rd.Schema().Equal(phys) {
		return 0, "", nil, bad("rows of schema %v, the table's is %v", rd.Schema(), phys)
	}
	if !rd.Next() {
		return 0, "", nil, bad("no rows: %v", rd.Err())
	}
	rec := rd.RecordBatch()
	rec.Retain()
	if rd.Next() {
		rec.Release()
		return 0, "", nil, bad("more than one batch")
	}
	if err := rd.Err(); err != nil {
		rec.Release()
		return 0, "", nil, bad("rows: %v", err)
	}
	return int64(ver), label, rec, nil
}

// plausibleStream reports whether rows, an IPC stream of a schema and one
// batch, have the shape whose lengths the IPC reader can trust. The
// reader sizes slices by the lengths a schema claims and slices a batch's
// body by the offsets its buffers claim, before checking them: a damaged
// length would exhaust memory or panic instead of failing. A stream that
// passes can at worst fail to decode.
func plausibleStream(rows []byte) bool {
	fb, msg, bodyLen, next, ok := messageAt(rows)
	if !ok || !plausibleSchema(fb, msg) || bodyLen != 0 {
		return false
	}
	fb, msg, bodyLen, _, ok = messageAt(rows[next:])
	return ok && plausibleBatch(fb, msg, bodyLen)
}

// messageAt reads the encapsulated IPC message at the start of b: its
// metadata, the position of its Message table, its body length and where
// the next message starts.
func messageAt(b []byte) (fb flatBuf, msg int, bodyLen int64, next int, ok bool) {
	if len(b) < 8 || binary.LittleEndian.Uint32(b) != 0xFFFFFFFF {
		return nil, 0, 0, 0, false
	}
	n := binary.LittleEndian.Uint32(b[4:])
	if uint64(n) > uint64(len(b)-8) {
		return nil, 0, 0, 0, false
	}
	fb = flatBuf(b[8 : 8+n])
	if msg, ok = fb.root(); !ok || msg >= len(fb) {
		return nil, 0, 0, 0, false
	}
	// Message: body_length (slot 3, int64).
	if f, present := fb.field(msg, 3); present {
		if f > len(fb)-8 {
			return nil, 0, 0, 0, false
		}
		bodyLen = int64(binary.LittleEndian.Uint64(fb[f:]))
	}
	if bodyLen < 0 || bodyLen > int64(len(b)-8-int(n)) {
		return nil, 0, 0, 0, false
	}
	return fb, msg, bodyLen, 8 + int(n) + int(bodyLen), true
}

// headerOf is the header table of a Message whose header_type (slot 1) is
// want.
func (fb flatBuf) headerOf(msg int, want byte) (int, bool) {
	if ht, ok := fb.field(msg, 1); !ok || fb[ht] != want {
		return 0, false
	}
	return fb.table(msg, 2)
}

// plausibleSchema checks a Schema message (header type 1).
func plausibleSchema(fb flatBuf, msg int) bool {
	sc, ok := fb.headerOf(msg, 1)
	if !ok {
		return false
	}
	// Schema: fields (slot 1), custom_metadata (slot 2).
	if _, ok := fb.vector(sc, 2); !ok {
		return false
	}
	budget := len(fb) / 4
	return fb.plausibleFields(sc, 1, 0, &budget)
}

// plausibleBatch checks a RecordBatch message (header type 3): every
// buffer lies within the body.
func plausibleBatch(fb flatBuf, msg int, bodyLen int64) bool {
	rb, ok := fb.headerOf(msg, 3)
	if !ok {
		return false
	}
	// RecordBatch: nodes (slot 1), buffers (slot 2), both of 16-byte
	// structs; a Buffer is offset, length (int64 each). The log never
	// compresses (slot 3), whose buffers would claim their own lengths;
	// variadic buffer counts (slot 4) are int64.
	if _, ok := fb.vectorOf(rb, 1, 16); !ok {
		return false
	}
	if _, present := fb.field(rb, 3); present {
		return false
	}
	if _, ok := fb.vectorOf(rb, 4, 8); !ok {
		return false
	}
	bufs, ok := fb.vectorOf(rb, 2, 16)
	if !ok {
		return false
	}
	for k := 0; k < bufs.n; k++ {
		e := bufs.pos + 16*k
		off := int64(binary.LittleEndian.Uint64(fb[e:]))
		n := int64(binary.LittleEndian.Uint64(fb[e+8:]))
		if off < 0 || n < 0 || off > bodyLen || n > bodyLen-off {
			return false
		}
	}
	return true
}

// flatBuf reads the flatbuffer of a schema message, checking every offset.
type flatBuf []byte

func (fb flatBuf) u32(pos int) (int, bool) {
	if pos < 0 || pos > len(fb)-4 {
		return 0, false
	}
	return int(binary.LittleEndian.Uint32(fb[pos:])), true
}

func (fb flatBuf) root() (int, bool) { return fb.u32(0) }

// field is the position of slot i of the table at pos; false when the slot
// is absent or out of bounds.
func (fb flatBuf) field(pos, i int) (int, bool) {
	soff, ok := fb.u32(pos)
	if !ok {
		return 0, false
	}
	vt := pos - int(int32(soff))
	if vt < 0 || vt > len(fb)-4 {
		return 0, false
	}
	vtLen := int(binary.LittleEndian.Uint16(fb[vt:]))
	slot := 4 + 2*i
	if slot+2 > vtLen || vt+slot+2 > len(fb) {
		return 0, false
	}
	off := int(binary.LittleEndian.Uint16(fb[vt+slot:]))
	if off == 0 || pos+off >= len(fb) {
		return 0, false
	}
	return pos + off, true
}

// table follows the reference in slot i to a table.
func (fb flatBuf) table(pos, i int) (int, bool) {
	f, ok := fb.field(pos, i)
	if !ok {
		return 0, false
	}
	off, ok := fb.u32(f)
	if !ok || f+off >= len(fb) {
		return 0, false
	}
	return f + off, true
}

// vector returns the position and length of the vector in slot i, whose
// elements take at least 4 bytes each; an absent one is empty. false means
// it does not fit.
func (fb flatBuf) vector(pos, i int) (vec vecRef, ok bool) { return fb.vectorOf(pos, i, 4) }

// vectorOf is vector of elements of size bytes.
func (fb flatBuf) vectorOf(pos, i, size int) (vec vecRef, ok bool) {
	f, present := fb.field(pos, i)
	if !present {
		return vecRef{}, true
	}
	off, ok := fb.u32(f)
	if !ok {
		return vecRef{}, false
	}
	n, ok := fb.u32(f + off)
	if !ok || f+off+4 > len(fb) || n > (len(fb)-(f+off+4))/size {
		return vecRef{}, false
	}
	return vecRef{pos: f + off + 4, n: n}, true
}

type vecRef struct{ pos, n int }

// plausibleFields checks the vector of fields in slot i of the table at
// pos and, recursively, each field's children, metadata and union type
// ids; budget bounds the fields visited, so that offsets that loop back
// end the walk.
func (fb flatBuf) plausibleFields(pos, i, depth int, budget *int) bool {
	vec, ok := fb.vector(pos, i)
	if !ok || depth > 64 {
		return false
	}
	for k := 0; k < vec.n; k++ {
		if *budget--; *budget < 0 {
			return false
		}
		e := vec.pos + 4*k
		off, ok := fb.u32(e)
		if !ok || e+off >= len(fb) {
			return false
		}
		fld := e + off
		// Field: type_type (slot 2), type (slot 3), children (slot 5),
		// custom_metadata (slot 6).
		if _, ok := fb.vector(fld, 6); !ok {
			return false
		}
		if tt, ok := fb.field(fld, 2); ok && fb[tt] == 14 { // Union
			if ty, ok := fb.table(fld, 3); ok {
				if _, ok := fb.vector(ty, 1); !ok { // typeIds
					return false
				}
			}
		}
		if !fb.plausibleFields(fld, 5, depth+1, budget) {
			return false
		}
	}
	return true
}

// replayLog reads the write-ahead log into memtables: every record after
// the manifest's position, in number order, as the write it was; then,
// unless the table is read-only, opens the log for new records and deletes
// the segments the rowsets account for. A torn tail (a write never
// acknowledged) is ignored; damage before it is ErrCorruption naming the
// file.
func (t *Table) replayLog() error {
	segs, err := replayWAL(t.fs, t.dir)
	if err != nil {
		return err
	}
	t.mem.pending = map[string]bool{}
	v := t.vs.current
	phys := physicalSchema(v.def, v.policy)
	var rowsHi int64
	for _, h := range v.rowsets {
		rowsHi = max(rowsHi, h.Meta.Hi)
	}
	physMsg, err := schemaMessage(t.opts.Allocator, phys)
	if err != nil {
		return err
	}
	lastSeq := t.vs.walSeq
	prevVer := rowsHi
	var maxNum uint64
	replayed := 0
	for _, s := range segs {
		maxNum = max(maxNum, s.num)
		name := filepath.Join(t.dir, walName(s.num))
		for _, r := range s.records {
			if r.seq <= t.vs.walSeq {
				continue
			}
			ver, label, rec, err := decodeRecord(t.opts.Allocator, name, r, phys, physMsg)
			if err != nil {
				return err
			}
			if ver <= prevVer {
				rec.Release()
				return rowttl.Errorf(rowttl.ErrCorruption, "write-ahead log %s: record %d has version %d, not after version %d", name, r.seq, ver, prevVer)
			}
			prevVer = ver
			lastSeq = max(lastSeq, r.seq)
			t.addLogged(rec, ver, r.seq, label, int64(len(r.body)))
			replayed++
		}
	}
	t.installLogged()
	t.mu.Lock()
	t.mem.nextVersion = max(prevVer, t.vs.current.lastVersion) + 1
	t.vs.nextFileNum = max(t.vs.nextFileNum, maxNum+1)
	t.mu.Unlock()
	if t.opts.ReadOnly {
		return nil
	}
	if replayed > 0 {
		// What was replayed may never have been made durable (a write
		// acknowledged without a sync before a crash of the process): make
		// it durable before writes that follow it are acknowledged.
		for _, s := range segs {
			if err := syncFile(t.fs, filepath.Join(t.dir, walName(s.num))); err != nil {
				return err
			}
		}
	}
	w, err := openWALWriter(t.fs, t.dir, t.vs.newFileNum, lastSeq+1, segs)
	if err != nil {
		return err
	}
	t.wal = w
	w.afterGroup = t.installLogged
	if err := w.retire(t.vs.walSeq); err != nil {
		t.logf("table %s: %v", t.Name(), err)
	}
	return nil
}

func syncFile(fsys vfs.FS, name string) error {
	f, err := fsys.OpenAppend(name)
	if err != nil {
		return fmt.Errorf("sync write-ahead log %s: %w", name, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync write-ahead log %s: %w", name, err)
	}
	return nil
}

// closeLog flushes the memtables and closes the log. A failed flush loses
// nothing: the log keeps the rows for the next open.
func (t *Table) closeLog() error {
	if t.wal == nil {
		return nil
	}
	err := t.drainLocked(context.Background())
	if cerr := t.wal.close(); err == nil {
		err = cerr
	}
	return err
}

// Flush makes every row of the memtables part of a rowset, so that the
// write-ahead log holds nothing the next open must replay. Writes do not
// need it to be durable; tests and tools that look at rowsets do.
func (t *Table) Flush(ctx context.Context) error {
	if err := t.writeMu.LockContext(ctx); err != nil {
		return fmt.Errorf("table %s: waiting to flush: %w", t.Name(), err)
	}
	defer t.writeMu.Unlock()
	v, err := t.writableDrained(ctx)
	if err != nil {
		return err
	}
	v.unref()
	return nil
}

// memStats fills in the memtable and log figures of Stats.
func (t *Table) memStats(s *Stats) {
	t.mu.Lock()
	mems := append([]*memtable(nil), t.mem.frozen...)
	if t.mem.active != nil {
		mems = append(mems, t.mem.active)
	}
	s.Flushes, s.WriteStalls = t.mem.flushes, t.mem.stalls
	t.mu.Unlock()
	s.Memtables = len(mems)
	for _, mt := range mems {
		r, b := mt.size()
		s.MemtableRows += r
		s.MemtableBytes += b
	}
	if t.wal != nil {
		s.WALBytes = t.wal.bytes.Load()
	}
}

// flushedThrough forgets the frozen memtables whose records the rowsets
// hold through log record walSeq — a flush whose manifest append failed,
// found durable by the recovery — and returns the views of mems left.
func (t *Table) flushedThrough(mems []memView, walSeq uint64) []memView {
	t.mu.Lock()
	var gone []*memtable
	for len(t.mem.frozen) > 0 && t.mem.frozen[0].lastSeq <= walSeq && walSeq > 0 {
		gone = append(gone, t.mem.frozen[0])
		t.mem.frozen = t.mem.frozen[1:]
		t.mem.flushes++
	}
	if len(gone) > 0 {
		t.signalProgressLocked()
	}
	t.mu.Unlock()
	out := mems
	for _, mt := range gone {
		out = memsWithout(out, mt)
		mt.unref()
	}
	return out
}
