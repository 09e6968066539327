package table

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
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
// it got, in chunks of consecutive writes. A UNIQUE table's chunk indexes
// its rows in a B-tree keyed by (table key, version, newest first), so that
// the rows a snapshot sees come out in key order with the newest version of
// each key first; a DUPLICATE chunk is its batches in version order.
//
// Scans see a memtable through in-memory rowsets (materialize): the same
// segment pages, zone maps, TTL kernels, merge and delete bitmaps as
// flushed rowsets, so every rule and pushdown of the scan applies
// unchanged. A chunk full (chunkRows) is built once as one rowset and
// shared by every later snapshot; the newest chunk, still growing, is a few
// rowsets (pieces), each at least twice the next, and a scan after a write
// builds a piece of that write merged with the small pieces before it:
// about the write's rows, not the chunk's. A chunk is cut into pages of
// about PageRows rows with no short page of its last write
// (chunkPageRows), so a scan plans and decodes as many pages as over the
// same rows flushed. The rowsets live in a volatile in-memory file system
// (one copy of their bytes, which scans read in place as they read a
// flushed rowset's mapped files: see vfs.Map) and count in the memtable's
// size, which freezes it. Each rowset covers its writes' versions; the versions of
// memtables are always newer than every rowset's (a write that makes a
// rowset directly flushes the memtables first).
type memtable struct {
	id        uint64
	unique    bool
	keyCount  int
	phys      *arrow.Schema
	mem       memory.Allocator
	chunkRows int64
	// The in-memory rowsets live in fs, numbered by nums.
	fs       vfs.FS
	nums     *atomic.Uint64
	pageRows int
	created  time.Time

	refs atomic.Int32

	mu      sync.Mutex // guards what follows
	batches []memBatch
	chunks  []*memChunk
	rows    int64
	bytes   int64
	// built is the size of the chunks' current in-memory rowsets: memory
	// the memtable holds beside its batches, so it counts in size.
	built  int64
	lo, hi int64
	// lastSeq is the number of the newest write-ahead log record applied.
	lastSeq  uint64
	released bool
	// builds and builtRows count the in-memory rowsets built and the
	// rows of the writes they were built of (tests: a read that finds its
	// chunks built builds none; a read after a write builds about the rows
	// of that write).
	builds, builtRows int64
}

// memChunk is the writes [start, end) of a memtable; the last chunk of a
// memtable takes writes until it holds chunkRows rows.
type memChunk struct {
	start, end int
	rows       int64
	tree       *btree.BTreeG[memEntry] // UNIQUE only
	// pieces are the in-memory rowsets of writes [start, n) built for the
	// newest snapshot that read the chunk, oldest first, each the writes
	// after the one before: a full chunk's is one rowset that never changes
	// again; a growing chunk's grows by a piece of the newest writes, and
	// pieces merge so that each is at least twice the next (see
	// chunkPieces), so a read after a write builds about the rows of that
	// write, not the chunk's.
	pieces []*memPiece
	// gen counts the changes of pieces: a build installs its piece only
	// over the pieces it planned with.
	gen int
}

// memPiece is an in-memory rowset of writes [start, n) of a chunk (h nil
// when they hold no row).
type memPiece struct {
	start, n int
	h        *rowset.Handle
	// marks are the merge-on-write delete marks h puts on the older rowsets
	// whose IDs, in order, make marksKey.
	marksKey string
	marks    map[uint64]*roaring.Bitmap
}

type memBatch struct {
	rec     arrow.RecordBatch
	version int64
	off     int64 // rows of the chunk's batches before it
}

// memEntry is one row of a UNIQUE chunk.
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

// defaultChunkRows is the size of a memtable chunk.
const defaultChunkRows = 64 << 10

func newMemtable(id uint64, def *Definition, phys *arrow.Schema, mem memory.Allocator, fsys vfs.FS, nums *atomic.Uint64, pageRows int, chunkRows int64, now time.Time) *memtable {
	mt := &memtable{
		id: id, unique: def.Model.IsUnique(), keyCount: def.Schema.KeyCount, phys: phys, mem: mem,
		chunkRows: chunkRows, fs: fsys, nums: nums, pageRows: pageRows, created: now,
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
	for _, c := range mt.chunks {
		for _, p := range c.pieces {
			if p.h != nil {
				p.h.Unref()
			}
		}
		c.pieces = nil
	}
	mt.built = 0
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
	var c *memChunk
	if k := len(mt.chunks); k > 0 && mt.chunks[k-1].rows < mt.chunkRows {
		c = mt.chunks[k-1]
	} else {
		c = &memChunk{start: len(mt.batches), end: len(mt.batches)}
		if mt.unique {
			c.tree = btree.NewG(32, memEntryLess)
		}
		mt.chunks = append(mt.chunks, c)
	}
	b := int32(len(mt.batches))
	if len(mt.batches) == cap(mt.batches) {
		// append grows a long slice by about a quarter: a memtable of
		// one-row writes would allocate (and copy, and leave the collector
		// to scan) its list of batches five times over; doubling does it
		// twice.
		mt.batches = slices.Grow(mt.batches, max(len(mt.batches), 64))
	}
	mt.batches = append(mt.batches, memBatch{rec: rec, version: ver, off: c.rows})
	n := int(rec.NumRows())
	if mt.unique && n > 0 {
		keyCols := make([]arrow.Array, mt.keyCount)
		for k := range keyCols {
			keyCols[k] = rec.Column(k)
		}
		enc := rowset.NewKeyEncoder(keyCols)
		for i := 0; i < n; i++ {
			k := enc.Append(nil, i)
			c.tree.ReplaceOrInsert(memEntry{key: k, version: ver, batch: b, row: int32(i)})
			size += int64(len(k)) + memEntryBytes
		}
	}
	c.end++
	c.rows += int64(n)
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

// size returns the rows of the memtable and the bytes it holds: its
// writes and the in-memory rowsets built of them.
func (mt *memtable) size() (rows, bytes int64) {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	return mt.rows, mt.bytes + mt.built
}

// rowsOf returns the rows of the first n writes as a rowset stores them,
// in order: every row in version order (DUPLICATE), or each key once, its
// newest version, in key order (UNIQUE). The caller releases the batch;
// nil means no write.
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
	mt.mu.Unlock()
	if n == 0 {
		return nil, nil
	}
	all, err := concatBatches(mt.mem, parts)
	if err != nil || !mt.unique {
		return all, err
	}
	// The batches are in version order, each key once in each: a stable
	// sort by key with the last row of a key winning keeps the newest.
	sorted, err := sortByKey(ctx, mt.mem, all, mt.keyCount)
	all.Release()
	if err != nil {
		return nil, err
	}
	deduped, err := dedupLastWins(ctx, mt.mem, sorted, mt.keyCount)
	sorted.Release()
	return deduped, err
}

// chunkRowsOf returns the rows of writes [from, n) of chunk c as a rowset
// stores them (see rowsOf), or nil when they hold none.
func (mt *memtable) chunkRowsOf(ctx context.Context, c *memChunk, from, n int) (arrow.RecordBatch, error) {
	mt.mu.Lock()
	parts := make([]arrow.RecordBatch, 0, n-from)
	for i := from; i < n; i++ {
		parts = append(parts, mt.batches[i].rec)
	}
	var offs []int64
	var tree *btree.BTreeG[memEntry]
	if mt.unique {
		// The copy-on-write clone lets writers go on while the rows are
		// gathered.
		tree = c.tree.Clone()
		offs = make([]int64, n-from)
		for i := range offs {
			offs[i] = mt.batches[from+i].off - mt.batches[from].off
		}
	}
	mt.mu.Unlock()
	all, err := concatBatches(mt.mem, parts)
	if err != nil || !mt.unique || all.NumRows() == 0 {
		return all, err
	}
	defer all.Release()
	take := make([]int32, 0, all.NumRows())
	var last []byte
	tree.Ascend(func(e memEntry) bool {
		if b := int(e.batch); b < from || b >= n || (last != nil && bytes.Equal(e.key, last)) {
			return true
		}
		last = e.key
		take = append(take, int32(offs[int(e.batch)-from]+int64(e.row)))
		return true
	})
	return takeRows(ctx, mt.mem, all, take)
}

// materialize returns the in-memory rowsets of the first n writes, oldest
// first, each in the piece it comes from, with a reference for the caller.
func (mt *memtable) materialize(ctx context.Context, n int) ([]*rowset.Handle, []*memPiece, error) {
	mt.mu.Lock()
	if mt.released {
		mt.mu.Unlock()
		return nil, nil, fmt.Errorf("memtable %d read after release", mt.id)
	}
	// A chunk's end grows with writes (add, under mt.mu): each chunk's
	// share of the first n writes is taken here, under the same lock.
	var chunks []*memChunk
	var ends []int
	for _, c := range mt.chunks {
		if c.start < n {
			chunks = append(chunks, c)
			ends = append(ends, min(n, c.end))
		}
	}
	mt.mu.Unlock()
	var hs []*rowset.Handle
	var ps []*memPiece
	for i, c := range chunks {
		pieces, err := mt.chunkPieces(ctx, c, ends[i])
		for _, p := range pieces {
			if p.h != nil {
				hs, ps = append(hs, p.h), append(ps, p)
			}
		}
		if err != nil {
			for _, h := range hs {
				h.Unref()
			}
			return nil, nil, err
		}
	}
	return hs, ps, nil
}

// chunkPieces returns the pieces of writes [c.start, n) of chunk c, each
// holding a reference for the caller when it has a rowset. It reuses the
// chunk's pieces of writes before n and builds one piece of the rest: the
// newest writes merged with the pieces before them that are not at least
// twice their rows, so that pieces shrink geometrically (a few per chunk)
// and every row is built a few times over the chunk's growth. A full chunk
// read whole is built once more as one rowset, as the same rows would be
// flushed, and then kept. A snapshot older than the chunk's pieces builds
// what it needs for itself.
func (mt *memtable) chunkPieces(ctx context.Context, c *memChunk, n int) ([]*memPiece, error) {
	mt.mu.Lock()
	gen := c.gen
	var keep []*memPiece
	covered := c.start
	for _, p := range c.pieces {
		if p.n > n {
			break
		}
		keep, covered = append(keep, p), p.n
	}
	stale := len(keep) < len(c.pieces)
	whole := c.rows >= mt.chunkRows && n == c.end
	rowsIn := func(from, to int) int64 {
		end := c.rows
		if to < c.end {
			end = mt.batches[to].off
		}
		return end - mt.batches[from].off
	}
	from := covered
	switch {
	case covered == n && !(whole && len(keep) > 1):
		for _, p := range keep {
			if p.h != nil {
				p.h.Ref()
			}
		}
		mt.mu.Unlock()
		return keep, nil
	case whole && !stale:
		from, keep = c.start, nil
	default:
		for len(keep) > 0 && !stale {
			last := keep[len(keep)-1]
			if rowsIn(last.start, last.n) >= 2*rowsIn(from, n) {
				break
			}
			from, keep = last.start, keep[:len(keep)-1]
		}
	}
	keep = append([]*memPiece(nil), keep...)
	for _, p := range keep {
		if p.h != nil {
			p.h.Ref()
		}
	}
	lo, hi := mt.batches[from].version, mt.batches[n-1].version
	mt.builds++
	mt.builtRows += rowsIn(from, n)
	mt.mu.Unlock()
	h, err := mt.buildRowset(ctx, c, from, n, lo, hi)
	if err != nil {
		for _, p := range keep {
			if p.h != nil {
				p.h.Unref()
			}
		}
		return nil, err
	}
	np := &memPiece{start: from, n: n, h: h}
	mt.mu.Lock()
	if !mt.released && !stale && c.gen == gen {
		for _, p := range c.pieces[len(keep):] {
			if p.h != nil {
				mt.built -= p.h.Meta.Bytes
				p.h.Unref()
			}
		}
		c.pieces = append(c.pieces[:len(keep):len(keep)], np)
		c.gen++
		if h != nil {
			h.Ref()
			mt.built += h.Meta.Bytes
		}
	}
	mt.mu.Unlock()
	return append(keep, np), nil
}

// buildRowset returns, with a reference, the in-memory rowset of writes
// [from, n) of chunk c, versions [lo, hi] (nil when they hold no row).
func (mt *memtable) buildRowset(ctx context.Context, c *memChunk, from, n int, lo, hi int64) (*rowset.Handle, error) {
	rec, err := mt.chunkRowsOf(ctx, c, from, n)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	if rec.NumRows() == 0 {
		return nil, nil
	}
	w := rowset.NewWriter(rowset.WriterOptions{
		FS: mt.fs, Dir: memDir, Schema: mt.phys, TTLIndex: ttlIndex(mt.phys),
		Segment:     segment.WriterOptions{PageRows: chunkPageRows(rec.NumRows(), mt.pageRows), ZstdLevel: -1},
		SegmentRows: 1 << 40, WritebackBytes: -1,
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
	return h, nil
}

// chunkPageRows is the page size of the in-memory rowset of a chunk of
// rows rows: pageRows (0: the segment default) stretched or shrunk by at
// most half, so that the chunk makes whole pages. A chunk fills past
// chunkRows by its last write, and cut at pageRows it would end in a page
// of that write's few rows: a page more per chunk for every scan to plan,
// read and decode than the same rows flushed make.
func chunkPageRows(rows int64, pageRows int) int {
	p := int64(pageRows)
	if p <= 0 {
		p = segment.DefaultPageRows
	}
	pages := max(1, (rows+p/2)/p)
	return int(min(segment.MaxPageRows, (rows+pages-1)/pages))
}

// cachedMarks returns the merge-on-write marks that h, piece p's rowset,
// puts on the rowsets named by key, if they were computed before.
func (mt *memtable) cachedMarks(p *memPiece, h *rowset.Handle, key string) (map[uint64]*roaring.Bitmap, bool) {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	if p.h == h && p.marksKey == key && key != "" {
		return p.marks, true
	}
	return nil, false
}

func (mt *memtable) cacheMarks(p *memPiece, h *rowset.Handle, key string, marks map[uint64]*roaring.Bitmap) {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	if p.h == h {
		p.marksKey, p.marks = key, marks
	}
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
