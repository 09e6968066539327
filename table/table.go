package table

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/bufpool"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
	"github.com/rowttl/rowttl/vfs"
)

// Options tune a table. The zero value is usable.
type Options struct {
	// FS is the file system; nil means the operating system's.
	FS vfs.FS
	// Allocator is used for every Arrow buffer the table makes; nil means
	// the Go allocator.
	Allocator memory.Allocator
	// PageAllocator backs the buffers scans overwrite entirely: decoded
	// pages and the columns gathered from them, which are most of what a
	// scan allocates. Nil means bufpool.Default, which recycles them
	// without zeroing, unless Allocator is set to other than a Go
	// allocator: then Allocator.
	PageAllocator memory.Allocator
	// PageRows is the number of rows of a segment page.
	PageRows int
	// SegmentRows is the number of rows after which a write starts a new
	// segment file.
	SegmentRows int64
	// ZstdLevel is passed to the segment writer (<0 disables compression).
	ZstdLevel int
	// Clock gives the time used when a request names none; nil means the
	// wall clock.
	Clock func() time.Time
	// ManifestRotateBytes is the manifest size beyond which the next open
	// rewrites it as one snapshot record.
	ManifestRotateBytes int64
	// DisableAutoCompaction turns background compaction off whatever the
	// table property says; Compact and CompactAuto still work.
	DisableAutoCompaction bool
	// CompactionInterval is how often background compaction looks for work
	// besides after each write; 0 means one second.
	CompactionInterval time.Duration
	// PublishInterval is how often a table that appended manifest records
	// since records the last of them in CURRENT, so that a cut of them is
	// told from a torn tail even after a crash (see the manifest format); 0
	// means CompactionInterval, negative only at open and close.
	PublishInterval time.Duration
	// ReadOnly opens a table for inspection (`rowttl check`): Open changes
	// no file — it neither cuts a torn manifest tail nor deletes orphans nor
	// moves strays to lost+found/ nor rewrites the manifest — takes no writer lock (it reads alongside the
	// process that owns the table, see lock.go), runs no background
	// compaction, and every write, ALTER and compaction fails with
	// ErrNotSupported. Create refuses it; OpenDB creates nothing with it.
	ReadOnly bool
	// Holder names the process in the writer lock's file, after its pid;
	// empty means the program and its subcommand (`rowttl sql`). Another
	// process finding the directory held prints it, and may decide from it
	// whether waiting is worth it: `rowttl serve` holds its directory until
	// it stops.
	Holder string
	// Logf receives the table's log lines (files moved to lost+found/,
	// recoveries); nil means log.Printf.
	Logf func(format string, args ...any)
	// SmallWriteRows is the largest write (in rows) that goes through the
	// write-ahead log into a memtable; larger ones make a rowset directly.
	// 0 means 4096; negative sends every write to a rowset.
	SmallWriteRows int
	// MemtableBytes is the size past which a memtable is frozen and
	// flushed to a rowset in the background, counting its writes and the
	// in-memory rowsets reads built of them; 0 means 64 MiB.
	MemtableBytes int64
	// MemtableAge is how long a memtable takes writes before it is frozen
	// and flushed whatever its size; 0 means 10 seconds.
	MemtableAge time.Duration
	// CompactionParallelism is the number of goroutines a compaction's
	// rewrite keeps busy, decoding and encoding pages; 0 means GOMAXPROCS,
	// or one fewer (at least one) when a logged write came in during the
	// 2 s before the rewrite starts, so that the writes that go on during a
	// compaction find a processor free rather than queue behind the
	// rewrite's goroutines for tens of milliseconds.
	CompactionParallelism int
	// CompactionWriteRate is the rate, in bytes a second, at which a
	// compaction writes its output while logged writes are recent (one
	// came in during the last 2 s); 0 means 32 MB/s, < 0 never paces.
	// A log sync waits for the compaction's writes handed to the disk just
	// before it, so writes in bursts slow the writes going on beside;
	// with none about, a compaction writes at its full speed.
	CompactionWriteRate int64
	// memChunkRows sizes the chunks of a memtable (tests make them tiny).
	memChunkRows int64
}

func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.PageAllocator == nil {
		switch o.Allocator.(type) {
		case nil, *memory.GoAllocator:
			o.PageAllocator = bufpool.Default
		default:
			// An allocator of the caller's (checked, accounting) sees
			// every buffer.
			o.PageAllocator = o.Allocator
		}
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.ManifestRotateBytes == 0 {
		o.ManifestRotateBytes = 8 << 20
	}
	if o.SmallWriteRows == 0 {
		o.SmallWriteRows = defaultSmallRows
	}
	if o.MemtableBytes <= 0 {
		o.MemtableBytes = defaultMemtableBytes
	}
	if o.MemtableAge <= 0 {
		o.MemtableAge = defaultMemtableAge
	}
	if o.memChunkRows <= 0 {
		o.memChunkRows = defaultChunkRows
	}
	return o
}

// Table is one table in its own directory. All methods are safe for
// concurrent use: writes are serialised, scans run alongside them and see
// the version they pinned.
type Table struct {
	dir  string
	name string // "db.table" when a DB opened it
	// phys caches the physical schema of the newest definition a write
	// prepared rows for (see physOf).
	phys atomic.Pointer[physEntry]
	// lastSmallWrite is when a write last went through the log (Unix
	// nanoseconds): a compaction that starts soon after leaves a processor
	// to the writes (see compactionParallelism).
	lastSmallWrite atomic.Int64
	// pacer spreads compaction output over time while small writes are
	// recent.
	pacer *pacer
	opts  Options
	fs    vfs.FS
	lock  *fileLock
	// deferring is fs when it defers deletions for readers of other
	// processes (see lock.go); readers is the shared lock a read-only open
	// holds.
	deferring *deferringFS
	readers   *readerLock

	// writeMu serialises writers: writes, ALTERs, the planning and install
	// of a compaction (which rewrites its inputs without it) and the publish
	// of a load (which reads and encodes its rows without it).
	writeMu writeLock
	// compactMu runs compactions one at a time, so that two never rewrite
	// the same rowsets (see compact_run.go).
	compactMu writeLock
	// testHooks let tests act between the stages of a compaction.
	testHooks struct {
		// rewritten runs after a compaction's rewrite, before its install,
		// without the writer lock.
		rewritten func()
	}

	// vs owns the manifest and the published state; its fields are
	// guarded by mu.
	vs versionSet

	mu struct {
		sync.Mutex
		closed bool
		// lostFound lists the files no record accounts for (LostFound).
		lostFound []string
		// latestNow is the latest now (µs) any request of this process has
		// used; background compaction never reclaims rows that expire after
		// it (see reclaimNow).
		latestNow int64
	}

	// wal is the write-ahead log of small writes (nil when read-only), mem
	// their memtables (guarded by mu), memFS where their in-memory rowsets
	// live.
	wal   *walWriter
	mem   memState
	memFS memCommon
	// The flusher of frozen memtables.
	flushKick, flushStop, flushDone chan struct{}
	flushOnce                       sync.Once

	// Background compaction.
	kick     chan struct{}
	stop     chan struct{}
	bgDone   chan struct{}
	stopOnce sync.Once
}

// newTable is a table with no state yet: the caller loads its version set.
func newTable(dir string, o Options, fsys vfs.FS, lock *fileLock) *Table {
	t := &Table{dir: dir, opts: o, fs: fsys, lock: lock}
	t.pacer = newPacerFor(&t.opts, t.lastSmallWrite.Load)
	t.deferring, _ = fsys.(*deferringFS)
	t.vs = versionSet{fs: fsys, dir: dir, name: t.Name, logf: t.logf, onRelease: t.onRelease, mu: &t.mu.Mutex, flushedThrough: t.flushedThrough}
	t.memFS.fs = vfs.NewVolatileMemFS()
	t.memFS.fs.MkdirAll(memDir)
	t.mem.pending = map[string]bool{}
	return t
}

// Create makes a new table in dir, which must not hold one already.
func Create(dir string, def *Definition, opts *Options) (*Table, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	if o.ReadOnly {
		return nil, rowttl.Errorf(rowttl.ErrNotSupported, "create table in %s: read-only options", dir)
	}
	d, pol, err := Validate(def)
	if err != nil {
		return nil, err
	}
	if _, err := o.FS.Stat(filepath.Join(dir, currentFile)); err == nil {
		return nil, rowttl.Errorf(rowttl.ErrExists, "a table already exists in %s", dir)
	} else if !errors.Is(err, fs.ErrNotExist) {
		// Not knowing is not absence: going on would replace a table.
		return nil, fmt.Errorf("create table in %s: %w", dir, err)
	}
	if err := o.FS.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	lock, err := lockDirFS(o.FS, dir, o.Holder)
	if err != nil {
		return nil, err
	}
	snap := &versionEdit{Format: manifestFormat, Seq: 1, Definition: d, Policy: &pol, NextFileNum: 1, NextRowsetID: 1, Counters: &LifetimeCounters{}}
	m, err := createManifest(o.FS, dir, 1, snap)
	if err != nil {
		lock.release()
		return nil, fmt.Errorf("create table in %s: %w", dir, err)
	}
	if err := o.FS.SyncDir(filepath.Dir(filepath.Clean(dir))); err != nil {
		m.close()
		lock.release()
		return nil, err
	}
	fsys, err := newDeferringFS(o.FS, dir)
	if err != nil {
		m.close()
		lock.release()
		return nil, err
	}
	t := newTable(dir, o, fsys, lock)
	t.vs.setManifest(m)
	t.vs.current = newVersion(d, pol, nil, 0, nil)
	t.vs.nextFileNum = 2 // 1 is the manifest
	t.vs.nextRowsetID = 1
	t.vs.labels = map[string]bool{}
	t.vs.counters = LifetimeCounters{Compactions: map[string]int64{}}
	t.vs.published = snap.Seq
	w, err := openWALWriter(t.fs, dir, t.vs.newFileNum, 1, nil)
	if err != nil {
		t.vs.manifest.close()
		if d, ok := fsys.(*deferringFS); ok {
			d.close()
		}
		lock.release()
		return nil, err
	}
	t.wal = w
	w.afterGroup = t.installLogged
	t.startFlusher()
	t.startCompactionScheduler()
	return t, nil
}

// Open opens the table in dir: it replays the manifest, checks against
// CURRENT and the segment files that no record is missing, cuts a torn
// final record (never acknowledged), opens every live rowset, deletes the
// files that records made obsolete and moves the segment files that no
// record accounts for to lost+found/.
func Open(dir string, opts *Options) (*Table, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	if o.ReadOnly {
		return openReadOnly(dir, o)
	}
	num, published, err := readCurrent(o.FS, dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, rowttl.Errorf(rowttl.ErrNotFound, "no table in %s", dir)
		}
		return nil, err
	}
	lock, err := lockDirFS(o.FS, dir, o.Holder)
	if err != nil {
		return nil, err
	}
	fsys, err := newDeferringFS(o.FS, dir)
	if err != nil {
		lock.release()
		return nil, err
	}
	t, err := openLocked(dir, o, fsys, num, published, lock)
	if err != nil {
		if d, ok := fsys.(*deferringFS); ok {
			d.close()
		}
		lock.release()
		return nil, err
	}
	t.startFlusher()
	t.startCompactionScheduler()
	return t, nil
}

// readOnlyAttempts bounds how often a read-only open starts over when files
// vanish under it because the owner moved on (a compaction, a manifest
// rewrite) while it read.
const readOnlyAttempts = 5

// openReadOnly opens a table for reading alongside its owner, if any: no
// writer lock, a shared lock on READERS so that the owner keeps the files
// it reads, and a fresh start when the manifest changed under a read that
// found a file missing, rather than a report of corruption.
func openReadOnly(dir string, o Options) (*Table, error) {
	rl, err := lockReaders(o.FS, dir)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		num, published, err := readCurrent(o.FS, dir)
		if err != nil {
			rl.release()
			if errors.Is(err, fs.ErrNotExist) {
				return nil, rowttl.Errorf(rowttl.ErrNotFound, "no table in %s", dir)
			}
			return nil, err
		}
		before := manifestStamp(o.FS, dir, num)
		t, err := openLocked(dir, o, o.FS, num, published, &fileLock{})
		if err == nil {
			t.readers = rl
			return t, nil
		}
		if !errors.Is(err, rowttl.ErrCorruption) || manifestStamp(o.FS, dir, num) == before && currentIs(o.FS, dir, num) {
			rl.release()
			return nil, err
		}
		if attempt == readOnlyAttempts {
			rl.release()
			return nil, rowttl.Errorf(rowttl.ErrNotSupported, "table %s changed %d times while being read (it is open in %s); try again: %w",
				dir, attempt, Holder(dir), err)
		}
	}
}

// manifestStamp is what changes when the owner of a table publishes
// anything: the size of its live manifest.
func manifestStamp(fsys vfs.FS, dir string, num uint64) int64 {
	st, err := fsys.Stat(filepath.Join(dir, manifestName(num)))
	if err != nil {
		return -1
	}
	return st.Size()
}

// currentIs reports whether CURRENT still names manifest num.
func currentIs(fsys vfs.FS, dir string, num uint64) bool {
	n, _, err := readCurrent(fsys, dir)
	return err == nil && n == num
}

func openLocked(dir string, o Options, fsys vfs.FS, num, published uint64, lock *fileLock) (*Table, error) {
	// The files are listed before the replay (see takeInventory).
	names, err := fsys.List(dir)
	if err != nil {
		return nil, err
	}
	r, err := replayManifest(fsys, dir, num)
	if err != nil {
		return nil, err
	}
	st, err := replayEdits(r)
	if err != nil {
		return nil, err
	}
	live := map[uint64]bool{}
	for _, m := range st.rowsets {
		for _, s := range m.Segments {
			live[s.FileNum] = true
		}
	}
	// Before anything is cut or moved: do the files show that the manifest
	// lost records? Then change nothing.
	inv, err := takeInventory(fsys, dir, names, num, live, st.obsolete)
	if err != nil {
		return nil, err
	}
	if err := inv.checkPublished(r, filepath.Join(dir, currentFile), published); err != nil {
		return nil, err
	}
	t := newTable(dir, o, fsys, lock)
	handles, err := t.vs.openRowsets(st, nil)
	if err != nil {
		return nil, inv.missingWithLoss(r, st.nextFileNum, err)
	}
	// No number in use, even in lost+found/, is handed out again.
	t.vs.load(st, handles, max(st.nextFileNum, num+1, inv.maxNum+1), published)

	if o.ReadOnly {
		t.mu.lostFound = append(inv.lostFound, strayNames(inv.strays)...)
		if err := t.replayLog(); err != nil {
			t.vs.current.unref()
			return nil, err
		}
		return t, nil
	}
	if r.size > o.ManifestRotateBytes {
		if err := t.vs.rotate(r.lastSeq); err != nil {
			t.vs.current.unref()
			return nil, err
		}
		inv.manifests = append(inv.manifests, manifestName(num))
	} else {
		if err := r.cutTail(fsys); err != nil {
			t.vs.current.unref()
			return nil, err
		}
		f, err := fsys.OpenAppend(r.name)
		if err != nil {
			t.vs.current.unref()
			return nil, err
		}
		t.vs.setManifest(&manifest{fs: fsys, dir: dir, num: num, f: f, size: r.size, seq: r.lastSeq})
		// What was just replayed may never have been made durable (a
		// record whose sync failed before a restart): sync it, and CURRENT's
		// entry, before anything relies on it — before the orphans it makes
		// are deleted, and before new records follow it.
		err = f.Sync()
		if err == nil {
			err = o.FS.SyncDir(dir)
		}
		if err != nil {
			t.vs.manifest.close()
			t.vs.current.unref()
			return nil, fmt.Errorf("sync manifest %s: %w", manifestName(num), err)
		}
		if r.lastSeq > published {
			// Now durable, the records are published: a table that crashes
			// later still tells a cut of them from a torn tail.
			if err := writeCurrent(o.FS, dir, num, r.lastSeq); err != nil {
				t.vs.manifest.close()
				t.vs.current.unref()
				return nil, fmt.Errorf("record the last published record in %s: %w", currentFile, err)
			}
			t.vs.published = r.lastSeq
		}
	}
	if err := t.settleFiles(inv); err != nil {
		t.vs.manifest.close()
		t.vs.current.unref()
		return nil, err
	}
	if err := t.replayLog(); err != nil {
		if t.wal != nil {
			t.wal.close()
		}
		t.vs.manifest.close()
		t.vs.current.unref()
		return nil, err
	}
	t.mu.lostFound = inv.lostFound
	return t, nil
}

// onRelease is called when a rowset's last reader lets go.
func (t *Table) onRelease(h *rowset.Handle, removed bool) {}

// Dir returns the table's directory.
func (t *Table) Dir() string { return t.dir }

// Name is what messages call the table: "db.table" when a DB opened it,
// else its directory.
func (t *Table) Name() string {
	if t.name != "" {
		return t.name
	}
	return t.dir
}

// Definition returns a copy of the table's current definition.
func (t *Table) Definition() *Definition {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.vs.current.def.Clone()
}

// SharedDefinition returns the table's current definition itself, which
// the caller must never modify (Definition returns a copy to modify). A
// version's definition is immutable (a change installs a new one), so a
// statement that only reads the table's shape takes no copy: a short
// query's planning cloned the schema and properties every time.
func (t *Table) SharedDefinition() *Definition {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.vs.current.def
}

// Policy returns the table's row TTL policy.
func (t *Table) Policy() ttlcol.Policy {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.vs.current.policy
}

// LastVersion returns the number of the newest published version.
func (t *Table) LastVersion() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.vs.current.lastVersion
}

// Close waits for nothing: scans that are still open keep their files until
// they are released. Further calls fail with ErrClosed.
func (t *Table) Close() error {
	t.stopCompactionScheduler()
	t.stopFlusher()
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	t.mu.Lock()
	if t.mu.closed {
		t.mu.Unlock()
		return nil
	}
	t.mu.Unlock()
	// Flushed now, the memtables need no replay at the next open; when the
	// flush fails, the log keeps their rows for it.
	err := t.closeLog()
	t.mu.Lock()
	t.mu.closed = true
	v := t.vs.current
	t.mu.Unlock()
	v.unref()
	t.mu.Lock()
	mems := append(t.mem.frozen, t.mem.active)
	t.mem.frozen, t.mem.active = nil, nil
	t.mu.Unlock()
	for _, mt := range mems {
		if mt != nil {
			mt.unref()
		}
	}
	if cerr := t.vs.close(); err == nil {
		err = cerr
	}
	if t.deferring != nil {
		t.deferring.close()
	}
	t.lock.release()
	t.readers.release()
	return err
}

// flushDeferred deletes the files whose deletion waited for readers, if
// they have gone.
func (t *Table) flushDeferred() {
	if t.deferring != nil {
		t.deferring.flush()
	}
}

// pin returns the current version with a reference.
func (t *Table) pin() (*version, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed {
		return nil, rowttl.Errorf(rowttl.ErrClosed, "table %s", t.Name())
	}
	v := t.vs.current
	v.ref()
	return v, nil
}

// Scan reads the rows alive at req.Now (the table's clock when zero). The
// reader pins the version current at the call: it sees neither later
// writes nor the effects of later compactions, and keeps its files until
// released.
func (t *Table) Scan(ctx context.Context, req query.Request) (array.RecordReader, error) {
	v, err := t.pin()
	if err != nil {
		return nil, err
	}
	if req.Now.IsZero() {
		req.Now = t.opts.Clock()
	}
	t.noteNow(req.Now)
	snap, err := v.snapshot(ctx, t.opts.Allocator)
	v.unref()
	if err != nil {
		return nil, err
	}
	snap.PageMem = t.opts.PageAllocator
	return query.NewScan(ctx, t.opts.Allocator, snap, req)
}

// noteNow records the now of a request.
func (t *Table) noteNow(now time.Time) {
	us := now.UnixMicro()
	t.mu.Lock()
	if us > t.mu.latestNow {
		t.mu.latestNow = us
	}
	t.mu.Unlock()
}

// reclaimNow is the instant at which background compaction judges expiry:
// the table's clock, but never later than the latest now a request has used.
// A process that reads and writes with a clock of its own (a test clock, a
// session_now in the shell) is thus never surprised by rows reclaimed at the
// wall clock, and a process that has served no request reclaims nothing.
func (t *Table) reclaimNow() time.Time {
	c := t.opts.Clock()
	t.mu.Lock()
	latest := t.mu.latestNow
	t.mu.Unlock()
	if latest < c.UnixMicro() {
		return time.UnixMicro(latest)
	}
	return c
}

// Count returns the number of rows alive at now that match filter.
func (t *Table) Count(ctx context.Context, now time.Time, filter query.Expr) (int64, error) {
	tot, err := t.Aggregate(ctx, query.Request{Now: now, Columns: []string{}, Filter: filter})
	return tot.Rows, err
}

// Aggregate returns the number of rows a scan of req would return and the
// sum of each of its columns (numeric ones only), without materialising
// the rows where pages allow (see query.Scan.Aggregate).
func (t *Table) Aggregate(ctx context.Context, req query.Request) (query.Aggregates, error) {
	r, err := t.Scan(ctx, req)
	if err != nil {
		return query.Aggregates{}, err
	}
	defer r.Release()
	return r.(*query.Scan).Aggregate()
}

// physEntry is a physical schema and what it was made of.
type physEntry struct {
	def *Definition
	pol ttlcol.Policy
	sc  *arrow.Schema
}

// physOf is physicalSchema of v's definition, built once per definition
// rather than once per write: a published definition never changes (ALTER
// publishes a new one), so its pointer and the policy identify the schema.
func (t *Table) physOf(v *version) *arrow.Schema {
	if e := t.phys.Load(); e != nil && e.def == v.def && e.pol == v.policy {
		return e.sc
	}
	sc := physicalSchema(v.def, v.policy)
	t.phys.Store(&physEntry{def: v.def, pol: v.policy, sc: sc})
	return sc
}

// physicalSchema is the schema segments are written with: the user columns
// in table order, then __TTL__ for a row TTL table.
func physicalSchema(def *Definition, pol ttlcol.Policy) *arrow.Schema {
	fields := make([]arrow.Field, 0, len(def.Schema.Columns)+1)
	for i := range def.Schema.Columns {
		f := def.Schema.Columns[i].Field()
		f.Nullable = true
		fields = append(fields, f)
	}
	if pol.Mode != ttlcol.NoTTL {
		fields = append(fields, arrow.Field{Name: schema.TTLColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	}
	if def.Model == schema.UniqueMOR {
		fields = append(fields, arrow.Field{Name: schema.DeleteSignColumn, Type: arrow.FixedWidthTypes.Boolean, Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}
