package table

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/btree"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/vfs"
)

// A memtable holds the rows of small writes between their write-ahead log
// record and the flush that makes them a rowset. It keeps each write's
// physical batch (prepared as a rowset's rows are: defaults filled in,
// __TTL__ derived, a UNIQUE write sorted and deduplicated) with the version
// it got. A UNIQUE table's memtable also indexes its rows in a B-tree keyed
// by (table key, version, newest first), so that the rows a snapshot sees
// come out in key order with the newest version of each key first; a
// DUPLICATE memtable is its batches in version order.
//
// Scans see a memtable through an in-memory rowset built from it
// (materialize): the same segment pages, zone maps, TTL kernels, merge and
// delete bitmaps as a flushed rowset, so every rule and pushdown of the
// scan applies unchanged. The rowset covers the memtable's versions
// [lo, hi]; versions of memtables are always newer than every rowset's
// (a write that makes a rowset directly flushes the memtables first).
type memtable struct {
	id       uint64
	unique   bool
	keyCount int
	phys     *arrow.Schema
	mem      memory.Allocator
	// The in-memory rowsets live in fs, numbered by nums.
	fs       vfs.FS
	nums     *atomic.Uint64
	pageRows int
	created  time.Time

	refs atomic.Int32

	mu      sync.Mutex // guards what follows
	batches []memBatch
	tree    *btree.BTreeG[memEntry]
	rows    int64
	bytes   int64
	lo, hi  int64
	// lastSeq is the number of the newest write-ahead log record applied.
	lastSeq uint64
	// cache is the newest materialization, reused by the snapshots that
	// see the same writes.
	cache struct {
		n int
		h *rowset.Handle
	}
	released bool
}

type memBatch struct {
	rec     arrow.RecordBatch
	version int64
	off     int64 // rows of the batches before it
}

// memEntry is one row of a UNIQUE memtable.
type memEntry struct {
	key     []byte
	version int64
	batch   int32
	row     int32
}

func memEntryLess(a, b memEntry) bool {
	if c := bytes.Compare(a.key, b.key); c != 0 {
		return c < 0
	}
	return a.version > b.version // newest first
}

// memEntryBytes estimates what a row costs the B-tree beside its key.
const memEntryBytes = 48

// memRowsetIDBase numbers the in-memory rowsets, far from the manifest's.
const memRowsetIDBase = 1 << 62

func newMemtable(id uint64, def *Definition, phys *arrow.Schema, mem memory.Allocator, fsys vfs.FS, nums *atomic.Uint64, pageRows int, now time.Time) *memtable {
	mt := &memtable{
		id: id, unique: def.Model.IsUnique(), keyCount: def.Schema.KeyCount, phys: phys, mem: mem,
		fs: fsys, nums: nums, pageRows: pageRows, created: now,
	}
	if mt.unique {
		mt.tree = btree.NewG(32, memEntryLess)
	}
	mt.refs.Store(1)
	return mt
}

func (mt *memtable) ref() { mt.refs.Add(1) }

func (mt *memtable) unref() {
	if mt.refs.Add(-1) != 0 {
		return
	}
	mt.mu.Lock()
	defer mt.mu.Unlock()
	for _, b := range mt.batches {
		b.rec.Release()
	}
	mt.batches = nil
	if mt.cache.h != nil {
		mt.cache.h.Unref()
		mt.cache.h = nil
	}
	mt.released = true
}

// add appends one write's rows (taken over) at version ver, from the
// write-ahead log record seq.
func (mt *memtable) add(rec arrow.RecordBatch, ver int64, seq uint64, size int64) {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	if len(mt.batches) == 0 {
		mt.lo = ver
	}
	b := int32(len(mt.batches))
	mt.batches = append(mt.batches, memBatch{rec: rec, version: ver, off: mt.rows})
	n := int(rec.NumRows())
	if mt.unique && n > 0 {
		keyCols := make([]arrow.Array, mt.keyCount)
		for k := range keyCols {
			keyCols[k] = rec.Column(k)
		}
		enc := rowset.NewKeyEncoder(keyCols)
		for i := 0; i < n; i++ {
			k := enc.Append(nil, i)
			mt.tree.ReplaceOrInsert(memEntry{key: k, version: ver, batch: b, row: int32(i)})
			size += int64(len(k)) + memEntryBytes
		}
	}
	mt.rows += int64(n)
	mt.bytes += size
	mt.hi = ver
	mt.lastSeq = max(mt.lastSeq, seq)
}

// state returns how many writes the memtable holds and its newest version.
func (mt *memtable) state() (n int, hi int64) {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	return len(mt.batches), mt.hi
}

func (mt *memtable) size() (rows, bytes int64) {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	return mt.rows, mt.bytes
}

// rowsUpTo is the number of rows of the first n writes.
func (mt *memtable) rowsUpTo(n int) int64 {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	if n == 0 {
		return 0
	}
	b := mt.batches[n-1]
	return b.off + b.rec.NumRows()
}

// rowsOf returns the rows of the first n writes as a rowset stores them,
// in order: every row in version order (DUPLICATE), or each key once, its
// newest version, in key order (UNIQUE). The caller releases the batch.
func (mt *memtable) rowsOf(ctx context.Context, n int) (arrow.RecordBatch, error) {
	mt.mu.Lock()
	if mt.released {
		mt.mu.Unlock()
		return nil, fmt.Errorf("memtable %d read after release", mt.id)
	}
	parts := make([]arrow.RecordBatch, n)
	for i := range parts {
		parts[i] = mt.batches[i].rec
	}
	var tree *btree.BTreeG[memEntry]
	var hi int64
	if mt.unique {
		// The copy-on-write clone lets writers go on while the rows are
		// gathered.
		tree = mt.tree.Clone()
		if n > 0 {
			hi = mt.batches[n-1].version
		}
	}
	offs := make([]int64, n)
	for i := range offs {
		offs[i] = mt.batches[i].off
	}
	mt.mu.Unlock()
	if n == 0 {
		return nil, nil
	}
	all, err := concatBatches(mt.mem, parts)
	if err != nil {
		return nil, err
	}
	if !mt.unique {
		return all, nil
	}
	defer all.Release()
	take := make([]int32, 0, all.NumRows())
	var last []byte
	tree.Ascend(func(e memEntry) bool {
		if e.version > hi || (last != nil && bytes.Equal(e.key, last)) {
			return true
		}
		last = e.key
		take = append(take, int32(offs[e.batch]+int64(e.row)))
		return true
	})
	return takeRows(ctx, mt.mem, all, take)
}

// materialize returns, with a reference for the caller, the in-memory
// rowset of the first n writes (covering versions lo through hi), or nil
// when they hold no row.
func (mt *memtable) materialize(ctx context.Context, n int, hi int64) (*rowset.Handle, error) {
	if mt.rowsUpTo(n) == 0 {
		return nil, nil
	}
	mt.mu.Lock()
	if mt.cache.h != nil && mt.cache.n == n {
		h := mt.cache.h
		h.Ref()
		mt.mu.Unlock()
		return h, nil
	}
	lo := mt.lo
	mt.mu.Unlock()
	rec, err := mt.rowsOf(ctx, n)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	w := rowset.NewWriter(rowset.WriterOptions{
		FS: mt.fs, Dir: memDir, Schema: mt.phys, TTLIndex: ttlIndex(mt.phys),
		Segment: segment.WriterOptions{PageRows: mt.pageRows, ZstdLevel: -1}, SegmentRows: 1 << 40,
		NewFileNum: func() uint64 { return mt.nums.Add(1) },
	})
	if err := w.Write(rec); err != nil {
		w.Abort()
		return nil, err
	}
	meta, err := w.Finish()
	if err != nil {
		w.Abort()
		return nil, err
	}
	meta.ID = memRowsetIDBase + mt.nums.Add(1)
	meta.Lo, meta.Hi = lo, hi
	h, err := rowset.Open(mt.fs, memDir, meta, nil)
	if err != nil {
		w.Abort()
		return nil, err
	}
	// Its files go from memory when the last snapshot lets go.
	h.MarkObsolete()
	mt.mu.Lock()
	if !mt.released && n >= mt.cache.n {
		if mt.cache.h != nil {
			mt.cache.h.Unref()
		}
		h.Ref()
		mt.cache.n, mt.cache.h = n, h
	}
	mt.mu.Unlock()
	return h, nil
}

// memDir is the directory of the in-memory rowsets in their file system.
const memDir = "/memtable"

func ttlIndex(phys *arrow.Schema) int {
	if idx := phys.FieldIndices(schema.TTLColumn); len(idx) > 0 {
		return idx[0]
	}
	return -1
}

// memView is the part of a memtable one version sees: its first n writes,
// the newest at version hi.
type memView struct {
	mt *memtable
	n  int
	hi int64
}
