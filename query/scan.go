package query

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/internal/rawscan"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/ttlcol"
)

// Snapshot is what one scan reads: a table's shape and the rowsets of one
// pinned version, in version order.
type Snapshot struct {
	// Schema is never modified once a scan has read it: segments keep
	// their mapping of its columns by its address (see mapSegment).
	Schema  *schema.Schema
	Policy  ttlcol.Policy
	Model   schema.Model
	Rowsets []*rowset.Handle
	// Deleted holds, per rowset ID, the ordinals of rows that later
	// versions deleted or (merge-on-write) superseded.
	Deleted map[uint64]*roaring.Bitmap
	// Merged says that Deleted already holds the rows superseded by newer
	// versions of their keys (see Superseded), so a merge-on-read scan need
	// not merge again.
	Merged bool
	// Release is called once when the scan no longer needs the rowsets.
	Release func()
	// PageMem backs decoded pages and the columns gathered from them,
	// buffers the scan overwrites entirely, so it may hand out memory
	// unzeroed (bufpool); nil means the scan's allocator.
	PageMem memory.Allocator
}

// Request describes a scan.
type Request struct {
	// Now is the single instant at which every row's expiry is judged; the
	// zero time means the wall clock when the scan starts.
	Now time.Time
	// Columns to return, by name. Nil means every user column (and
	// __TTL__ with ShowHidden); an empty non-nil slice means no column,
	// which streams row counts alone (count(*)).
	Columns []string
	// Filter keeps the rows for which it is TRUE; nil keeps all.
	Filter Expr
	// ShowHidden adds __TTL__ to the default projection.
	ShowHidden bool
	// RowIDs appends the columns __ROWSET_ID__ and __ROW_ORDINAL__, which
	// locate each returned row for a later delete.
	RowIDs bool
	// Parallelism is the number of goroutines decoding pages; 0 means
	// the context's (WithParallelism), else GOMAXPROCS. Batches come out
	// in the same order whatever it is.
	Parallelism int
}

// Names of the row-location columns of Request.RowIDs.
const (
	RowsetIDColumn   = "__ROWSET_ID__"
	RowOrdinalColumn = "__ROW_ORDINAL__"
)

// Counters of one scan, for tests and observability.
type Counters struct {
	PagesExpired int64 // skipped: every row expired by its __TTL__ zone map
	PagesLive    int64 // every row live: no per-row TTL check
	PagesPruned  int64 // skipped by the filter's zone maps
	PagesRead    int64 // decoded
	// PagesMemo counts the mixed pages whose live rows came from the
	// memo of an earlier scan instead of their __TTL__ (livememo.go).
	PagesMemo int64
}

// Scan streams the rows of a snapshot alive at one now. It implements
// array.RecordReader.
type Scan struct {
	refs      atomic.Int64
	ctx       context.Context
	mem       memory.Allocator
	pageMem   memory.Allocator // see Snapshot.PageMem
	snap      *Snapshot
	hasTTL    bool
	threshold int64
	out       *arrow.Schema
	outSlots  []int
	need      []int // slots to decode: outputs and filter columns
	filter    bound
	// recompared marks the slots Aggregate's filter compares more than
	// once (values_filter.go).
	recompared []bool

	workers        int
	pl             *pipeline
	rowIDs         bool
	includeExpired bool
	rawTTL         bool
	deleteSign     bool
	// hidden holds, per rowset, the rows no scan may return: deleted, or
	// superseded by a newer version of their key.
	hidden map[uint64]*roaring.Bitmap
	// dense holds hidden as dense bitmaps, made for each rowset the first
	// time a page of it needs one (see hiddenWords).
	dense map[uint64]*denseHidden

	rs, seg, page int
	segBase       int64 // ordinal of the current segment's first row in its rowset
	segSlots      []int // slot -> column index in the current segment, -1 when absent
	deleteSignIdx int   // column of the delete sign in the current segment, -1 when absent
	segMemo       []pageMemo
	// noLiveMemo makes the scan test every page's __TTL__ itself, for
	// tests that compare it with the memo (livememo.go).
	noLiveMemo bool
	cur        arrow.RecordBatch
	err        error
	released   bool
	Counters   Counters
}

var _ array.RecordReader = (*Scan)(nil)

// NewScan starts a scan of the rows alive at req.Now. On error the snapshot
// is released.
func NewScan(ctx context.Context, mem memory.Allocator, snap *Snapshot, req Request) (*Scan, error) {
	return NewStoredScan(ctx, mem, snap, req, rawscan.Options{})
}

// NewStoredScan is NewScan for compaction, which must see rows as stored
// (see rawscan.Options). Its options come from an internal package so that
// nothing outside this module can ask for an expired row.
func NewStoredScan(ctx context.Context, mem memory.Allocator, snap *Snapshot, req Request, raw rawscan.Options) (*Scan, error) {
	s := &Scan{ctx: ctx, mem: mem, pageMem: snap.PageMem, snap: snap}
	if s.pageMem == nil {
		s.pageMem = mem
	}
	s.refs.Store(1)
	if err := s.init(req, raw); err != nil {
		s.releaseSnapshot()
		return nil, err
	}
	return s, nil
}

func (s *Scan) init(req Request, raw rawscan.Options) error {
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	s.hasTTL = s.snap.Policy.Mode != ttlcol.NoTTL
	s.threshold = s.snap.Policy.Threshold(now.UnixMicro())

	cols := req.Columns
	if cols == nil {
		for _, c := range s.snap.Schema.Columns {
			cols = append(cols, c.Name)
		}
		if req.ShowHidden && s.hasTTL {
			cols = append(cols, schema.TTLColumn)
		}
	}
	fields := make([]arrow.Field, 0, len(cols))
	for _, name := range cols {
		slot, typ, err := s.snap.resolve(name)
		if err != nil {
			return err
		}
		s.outSlots = append(s.outSlots, slot)
		f := arrow.Field{Name: name, Type: typ.Arrow(), Nullable: true}
		if slot < s.snap.ttlSlot() {
			c := s.snap.Schema.Columns[slot]
			f.Name, f.Nullable = c.Name, c.Nullable
		} else {
			f.Name = schema.TTLColumn
		}
		fields = append(fields, f)
	}
	s.includeExpired, s.rawTTL = raw.IncludeExpired, raw.RawTTL
	if raw.RawTTL {
		for i, slot := range s.outSlots {
			if slot == s.snap.ttlSlot() {
				fields[i].Type = arrow.PrimitiveTypes.Int64
			}
		}
	}
	if raw.DeleteSign {
		s.deleteSign = true
		fields = append(fields, arrow.Field{Name: schema.DeleteSignColumn, Type: arrow.FixedWidthTypes.Boolean, Nullable: true})
	}
	if req.RowIDs {
		s.rowIDs = true
		fields = append(fields,
			arrow.Field{Name: RowsetIDColumn, Type: arrow.PrimitiveTypes.Int64},
			arrow.Field{Name: RowOrdinalColumn, Type: arrow.PrimitiveTypes.Int64})
	}
	s.out = arrow.NewSchema(fields, nil)
	f, err := s.snap.bind(req.Filter)
	if err != nil {
		return err
	}
	s.filter = f
	seen := map[int]bool{}
	add := func(slot int) {
		if !seen[slot] {
			seen[slot] = true
			s.need = append(s.need, slot)
		}
	}
	for _, slot := range s.outSlots {
		add(slot)
	}
	if f != nil {
		f.slots(add)
	}
	s.hidden = s.snap.Deleted
	if s.snap.Model == schema.UniqueMOR && !s.snap.Merged {
		h, err := supersededByMerge(s.ctx, s.mem, s.snap.Rowsets, s.snap.Schema.KeyCount, s.snap.Deleted)
		if err != nil {
			return err
		}
		s.hidden = h
	}
	s.dense = make(map[uint64]*denseHidden, len(s.hidden))
	for id := range s.hidden {
		s.dense[id] = new(denseHidden)
	}
	s.seg, s.page = 0, -1
	s.workers = defaultWorkers(s.ctx, req.Parallelism)
	return nil
}

// Schema returns the output schema.
func (s *Scan) Schema() *arrow.Schema { return s.out }

// RecordBatch returns the current batch, valid until the next call to Next.
func (s *Scan) RecordBatch() arrow.RecordBatch { return s.cur }

// Record is RecordBatch under its deprecated name.
func (s *Scan) Record() arrow.RecordBatch { return s.cur }

// Err returns the error that stopped the scan, if any.
func (s *Scan) Err() error { return s.err }

// Retain adds a reference.
func (s *Scan) Retain() { s.refs.Add(1) }

// Release drops a reference; the last one frees the current batch and
// releases the snapshot.
func (s *Scan) Release() {
	if s.refs.Add(-1) == 0 {
		s.stopPipeline()
		if s.cur != nil {
			s.cur.Release()
			s.cur = nil
		}
		s.releaseSnapshot()
	}
}

func (s *Scan) releaseSnapshot() {
	if !s.released {
		s.released = true
		if s.snap.Release != nil {
			s.snap.Release()
		}
	}
}

// pageTask is one page to read, with what the cursor knew of its segment.
type pageTask struct {
	r       *segment.Reader
	p       int
	ord0    int64 // ordinal of the page's first row in its rowset
	rsID    uint64
	slots   []int // slot -> column of the segment, -1 when absent
	signIdx int   // column of the delete sign, -1 when absent
	// memo holds the segment's memoized liveness, by page (livememo.go).
	memo []pageMemo
}

// Next advances to the next non-empty batch.
func (s *Scan) Next() bool {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	if s.err != nil || s.released {
		return false
	}
	if s.workers > 1 {
		return s.nextParallel()
	}
	for {
		if err := s.ctx.Err(); err != nil {
			s.err = err
			return false
		}
		task, ok := s.advance()
		if !ok {
			return false
		}
		rec, err := s.readPage(task)
		if err != nil {
			s.err = err
			return false
		}
		if rec != nil {
			s.cur = rec
			return true
		}
	}
}

// advance moves the cursor to the next page.
func (s *Scan) advance() (pageTask, bool) {
	for s.rs < len(s.snap.Rowsets) {
		h := s.snap.Rowsets[s.rs]
		if s.seg < len(h.Segments) {
			r := h.Segments[s.seg]
			if s.page == -1 {
				m := s.mapSegment(r)
				s.segSlots, s.deleteSignIdx, s.segMemo = m.slots, m.sign, m.live
			}
			s.page++
			if s.page < r.NumPages() {
				first, _ := r.Page(s.page)
				sign := s.deleteSignIdx
				if sign >= 0 && !s.deleteSign && noDeleteSign(r.PageStats(sign, s.page)) {
					// Upserts with no deletion among them: the page reads
					// as if it had no sign column.
					sign = -1
				}
				return pageTask{r: r, p: s.page, ord0: s.segBase + first, rsID: h.Meta.ID, slots: s.segSlots, signIdx: sign, memo: s.segMemo}, true
			}
			s.segBase += r.NumRows()
			s.seg++
			s.page = -1
			continue
		}
		s.rs++
		s.seg, s.page, s.segBase = 0, -1, 0
	}
	return pageTask{}, false
}

// noDeleteSign says whether a delete-sign page's zone map rules out a row
// that deletes its key: no sign set (the maximum is false) or none given.
func noDeleteSign(z segment.ZoneMap) bool {
	return z.NullCount == z.Rows || z.Max.Kind == schema.IntValue && z.Max.Int == 0
}

// clearSigned clears in mask, a bitmap of a page's n rows, the rows whose
// delete sign is set.
func clearSigned(mask []byte, b *array.Boolean, n int) {
	d := b.Data()
	off := d.Offset()
	vals := d.Buffers()[1].Bytes()
	var valid []byte
	if b.NullN() > 0 {
		valid = d.Buffers()[0].Bytes()
	}
	if off%8 != 0 {
		for i := 0; i < n; i++ {
			if b.IsValid(i) && b.Value(i) {
				bitutil.ClearBit(mask, i)
			}
		}
		return
	}
	vals = vals[off/8:]
	if valid != nil {
		valid = valid[off/8:]
	}
	for j := range mask {
		set := vals[j]
		if valid != nil {
			set &= valid[j]
		}
		mask[j] &^= set
	}
}

// segMap is where a segment holds each logical slot of a table schema,
// and the liveness of its pages that scans memoize (livememo.go): it is
// the one value the segment keeps for scans.
type segMap struct {
	slots []int // slot -> column of the segment, -1 when absent
	sign  int   // column of the delete sign, -1 when absent
	live  []pageMemo
}

// mapSegment finds each logical slot's column in a segment by column ID;
// columns added after the segment was written are absent. The segment and
// the snapshot's schema never change, so the segment keeps the mapping
// (segment.Reader.Memo): a count over many rowsets must not rebuild one
// per segment per statement.
func (s *Scan) mapSegment(r *segment.Reader) *segMap {
	sc := s.snap.Schema
	return r.Memo(sc, func() any { return buildSegMap(r, sc) }).(*segMap)
}

func buildSegMap(r *segment.Reader, sc *schema.Schema) *segMap {
	byID := map[string]int{}
	ttlIdx, signIdx := -1, -1
	for i, f := range r.Schema().Fields() {
		if f.Name == schema.TTLColumn {
			ttlIdx = i
			continue
		}
		if f.Name == schema.DeleteSignColumn {
			signIdx = i
			continue
		}
		if k := f.Metadata.FindKey(schema.FieldIDKey); k >= 0 {
			byID[f.Metadata.Values()[k]] = i
		}
	}
	slots := make([]int, len(sc.Columns)+1)
	for i, c := range sc.Columns {
		if idx, ok := byID[strconv.FormatUint(uint64(c.ID), 10)]; ok {
			slots[i] = idx
		} else {
			slots[i] = -1
		}
	}
	slots[len(slots)-1] = ttlIdx
	return &segMap{slots: slots, sign: signIdx, live: make([]pageMemo, r.NumPages())}
}

// defaultValue is what a row written before a column existed reads.
func (s *Scan) defaultValue(slot int) schema.Value {
	if slot >= len(s.snap.Schema.Columns) {
		return schema.Null
	}
	c := s.snap.Schema.Columns[slot]
	if c.DefaultKind == schema.DefaultLiteral {
		if v, err := schema.ParseLiteral(c.Type, c.Default); err == nil {
			return v
		}
	}
	return schema.Null
}

func (s *Scan) stats(r *segment.Reader, p int, slots []int) func(int) segment.ZoneMap {
	_, n := r.Page(p)
	return func(slot int) segment.ZoneMap {
		if idx := slots[slot]; idx >= 0 {
			return r.PageStats(idx, p)
		}
		v := s.defaultValue(slot)
		if v.IsNull() {
			return segment.ZoneMap{Rows: int64(n), NullCount: int64(n)}
		}
		return segment.ZoneMap{Rows: int64(n), Min: v, Max: v}
	}
}

// denseHidden is the hidden rows of one rowset as a dense bitmap of its
// ordinals (roaring.Bitmap.ToDense), made once by whichever worker first
// needs it: pages clear them from their masks a word at a time, where a
// roaring iteration cost a call per hidden row.
type denseHidden struct {
	once  sync.Once
	words []uint64
}

// hiddenWords returns the hidden rows of rowset id as a dense bitmap.
func (s *Scan) hiddenWords(id uint64) []uint64 {
	d := s.dense[id]
	if d == nil {
		return nil
	}
	d.once.Do(func() { d.words = s.hidden[id].ToDense() })
	return d.words
}

// clearHidden clears in mask, a bitmap of the n rows of a page whose first
// row has ordinal ord0, the bits of the rows set in hidden, a dense bitmap
// of the rowset's ordinals.
func clearHidden(mask []byte, hidden []uint64, ord0 int64, n int) {
	q, r := int(ord0/64), uint(ord0%64)
	word := func(k int) uint64 {
		if k < len(hidden) {
			return hidden[k]
		}
		return 0
	}
	for j := 0; j*64 < n; j++ {
		h := word(q+j) >> r
		if r > 0 {
			h |= word(q+j+1) << (64 - r)
		}
		for b := 0; b < 8 && j*8+b < len(mask); b++ {
			mask[j*8+b] &^= byte(h >> (8 * b))
		}
	}
}

// pageTTL is what a page's __TTL__ zone map tells of it at the scan's now.
type pageTTL struct {
	state ttlcol.PageState
	zone  segment.ZoneMap
	idx   int // column of __TTL__ in the segment, -1 when absent
	// pastAll: a mixed page whose every expiration has passed, so that its
	// live rows are exactly those with a NULL __TTL__.
	pastAll bool
}

func (s *Scan) pageTTL(task pageTask) pageTTL {
	t := pageTTL{state: ttlcol.AllLive, idx: task.slots[len(task.slots)-1]}
	if s.hasTTL && t.idx >= 0 && !s.includeExpired {
		t.zone = task.r.PageStats(t.idx, task.p)
		t.state = ClassifyPage(t.zone, s.threshold)
		t.pastAll = t.state == ttlcol.Mixed && t.zone.Max.Kind == schema.IntValue && t.zone.Max.Int <= s.threshold
	}
	return t
}

// readPage returns the live, matching rows of the current page, or nil
// when there are none.
func (s *Scan) readPage(task pageTask) (arrow.RecordBatch, error) {
	r, p, ord0, rsID, slots := task.r, task.p, task.ord0, task.rsID, task.slots
	_, n := r.Page(p)
	ttl := s.pageTTL(task)
	ttlState, ttlZone := ttl.state, ttl.zone
	if ttlState == ttlcol.AllExpired {
		atomic.AddInt64(&s.Counters.PagesExpired, 1)
		return nil, nil
	}
	hidden := s.hidden[rsID]
	if hidden != nil && !hidden.IntersectsWithInterval(uint64(ord0), uint64(ord0)+uint64(n)) {
		hidden = nil
	}
	if hidden != nil && hidden.CardinalityInRange(uint64(ord0), uint64(ord0)+uint64(n)) == uint64(n) {
		return nil, nil
	}
	if ttl.pastAll && s.filter == nil && len(s.out.Fields()) == 0 && hidden == nil && task.signIdx < 0 {
		// Every expiration of the page has passed: the live rows are the
		// NULL ones, whose number the zone map has.
		atomic.AddInt64(&s.Counters.PagesLive, 1)
		return array.NewRecordBatch(s.out, nil, ttlZone.NullCount), nil
	}
	if s.filter != nil && !s.filter.may(s.stats(r, p, slots), true) {
		atomic.AddInt64(&s.Counters.PagesPruned, 1)
		return nil, nil
	}
	if ttlState == ttlcol.AllLive {
		atomic.AddInt64(&s.Counters.PagesLive, 1)
		if s.filter == nil && len(s.out.Fields()) == 0 && hidden == nil && task.signIdx < 0 {
			return array.NewRecordBatch(s.out, nil, int64(n)), nil
		}
	}
	atomic.AddInt64(&s.Counters.PagesRead, 1)

	// Decode what the page needs.
	decoded := map[int]arrow.Array{}
	defer func() {
		for _, a := range decoded {
			a.Release()
		}
	}()
	get := func(slot int) (arrow.Array, error) {
		if a, ok := decoded[slot]; ok {
			return a, nil
		}
		var a arrow.Array
		if idx := slots[slot]; idx >= 0 {
			var err error
			if a, err = r.ReadPage(s.pageMem, idx, p); err != nil {
				return nil, err
			}
		} else {
			a = schema.ConstArray(s.mem, s.rawType(slot), s.defaultValue(slot), n)
		}
		decoded[slot] = a
		return a, nil
	}
	// The filter's columns first: the others are decoded only when some
	// row is left, and few rows need little of them (sparseColumn).
	if s.filter != nil {
		var err error
		s.filter.slots(func(slot int) {
			if err == nil {
				_, err = get(slot)
			}
		})
		if err != nil {
			return nil, err
		}
	}

	mask := make([]byte, (n+7)/8)
	var ttlCol arrow.Array
	// lateTTL: a mixed page judges expiry after the filter, if any, for
	// the rows it keeps (liveAfter: on the packed values, or from the
	// page's liveness memo), unless the filter decoded __TTL__ anyway.
	// A __TTL__ that is output too is then read for the live rows alone,
	// as the other columns are (ReadPageGathered), when the memo answers
	// or is to be built: the test on the packed values and that read
	// cost about what decoding it whole for the mask and filtering it
	// does, a memo's mask almost nothing. Otherwise the page is marked
	// for the next scan to build its memo.
	_, ttlDecoded := decoded[s.snap.ttlSlot()]
	lateTTL := ttlState == ttlcol.Mixed && !ttlDecoded && ttl.idx >= 0 && r.ValuesOK(ttl.idx)
	if lateTTL && slices.Contains(s.outSlots, s.snap.ttlSlot()) && !s.liveMemoReady(task) {
		lateTTL = false
		s.liveMemoFor(task)
	}
	switch {
	case lateTTL:
		setAll(mask, n)
	case ttlState == ttlcol.Mixed:
		var err error
		if ttlCol, err = get(s.snap.ttlSlot()); err != nil {
			return nil, err
		}
		fallthrough
	default:
		ttlcol.PageMask(ttlState, ttlCol, n, s.threshold, mask)
	}
	if hidden != nil {
		clearHidden(mask, s.hiddenWords(rsID), ord0, n)
	}
	var sign arrow.Array
	if task.signIdx >= 0 {
		var err error
		if sign, err = r.ReadPage(s.mem, task.signIdx, p); err != nil {
			return nil, err
		}
		defer sign.Release()
		if !s.deleteSign {
			clearSigned(mask, sign.(*array.Boolean), n)
		}
	}
	if s.filter != nil && countBits(mask, n) > 0 {
		t, f := make([]byte, (n+7)/8), make([]byte, (n+7)/8)
		s.filter.eval(func(slot int) arrow.Array { return decoded[slot] }, n, t, f)
		for i := range mask {
			mask[i] &= t[i]
		}
	}
	if lateTTL {
		if err := s.liveAfter(task, ttl.idx, mask, n); err != nil {
			return nil, err
		}
	}
	selected := countBits(mask, n)
	if selected == 0 {
		return nil, nil
	}
	if len(s.out.Fields()) == 0 {
		return array.NewRecordBatch(s.out, nil, int64(selected)), nil
	}
	// gathered holds output columns built from the selected rows alone.
	gathered := map[int]arrow.Array{}
	defer func() {
		for _, a := range gathered {
			a.Release()
		}
	}()
	for _, slot := range s.outSlots {
		if _, ok := decoded[slot]; ok || selected == n {
			continue
		}
		a, err := s.sparseColumn(task, slot, mask, n, selected)
		if err != nil {
			return nil, err
		}
		if a != nil {
			gathered[slot] = a
		}
	}
	ctx := compute.WithAllocator(s.ctx, s.mem)
	if selected < n {
		// Each output column no filter read is gathered as soon as it is
		// decoded, and its page released: the page is still in the
		// core's cache, and the buffer it goes back to is the one the
		// next column decodes into. Decoding every column first, then
		// gathering, read each page back from memory.
		for _, slot := range s.outSlots {
			if _, ok := decoded[slot]; ok || slots[slot] < 0 {
				continue
			}
			if _, ok := gathered[slot]; ok {
				continue
			}
			// Numeric, string and binary columns decode the selected
			// rows alone, straight into the output; booleans and
			// decimals are decoded whole and filtered.
			f, err := task.r.ReadPageGathered(s.pageMem, slots[slot], p, mask, selected)
			if err != nil {
				return nil, err
			}
			if f == nil {
				a, err := task.r.ReadPage(s.pageMem, slots[slot], p)
				if err != nil {
					return nil, err
				}
				f, err = filterArray(ctx, s.pageMem, a, mask, n, selected)
				a.Release()
				if err != nil {
					return nil, fmt.Errorf("filter page: %w", err)
				}
			}
			gathered[slot] = f
		}
	}
	for _, slot := range s.need {
		if _, ok := gathered[slot]; ok {
			continue
		}
		if _, err := get(slot); err != nil {
			return nil, err
		}
	}
	cols := make([]arrow.Array, 0, len(s.out.Fields()))
	for _, slot := range s.outSlots {
		a := decoded[slot]
		if g, ok := gathered[slot]; ok {
			a = g // already filtered
		}
		if slot == s.snap.ttlSlot() && !s.rawTTL {
			a = s.showTTL(a)
		} else {
			a.Retain()
		}
		cols = append(cols, a)
	}
	if s.deleteSign {
		if sign != nil {
			sign.Retain()
			cols = append(cols, sign)
		} else {
			cols = append(cols, schema.ConstArray(s.mem, arrow.FixedWidthTypes.Boolean, schema.IntVal(0), n))
		}
	}
	if s.rowIDs {
		ids := array.NewInt64Builder(s.mem)
		ords := array.NewInt64Builder(s.mem)
		ids.Reserve(n)
		ords.Reserve(n)
		for i := 0; i < n; i++ {
			ids.UnsafeAppend(int64(rsID))
			ords.UnsafeAppend(ord0 + int64(i))
		}
		cols = append(cols, ids.NewArray(), ords.NewArray())
		ids.Release()
		ords.Release()
	}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	if selected == n {
		return array.NewRecordBatch(s.out, cols, int64(n)), nil
	}
	filtered := make([]arrow.Array, len(cols))
	for i, c := range cols {
		if c.Len() == selected && i < len(s.outSlots) && gathered[s.outSlots[i]] != nil {
			c.Retain()
			filtered[i] = c
			continue
		}
		f, err := filterArray(ctx, s.pageMem, c, mask, n, selected)
		if err != nil {
			for _, x := range filtered[:i] {
				x.Release()
			}
			return nil, fmt.Errorf("filter page: %w", err)
		}
		filtered[i] = f
	}
	out := array.NewRecordBatch(s.out, filtered, int64(selected))
	for _, f := range filtered {
		f.Release()
	}
	return out, nil
}

// sparseColumn returns the selected rows of an output column from values
// decoded for them alone (segment.Reader.ReadSelected, ReadPageSelected),
// when they are fewer than an eighth of the page and the column is BIGINT,
// a date-time, DOUBLE (not __TTL__), a string or a binary; nil otherwise. A
// point lookup then decodes whole only the pages' filter columns, and
// copies of a string page only the values it returns.
func (s *Scan) sparseColumn(task pageTask, slot int, mask []byte, n, selected int) (arrow.Array, error) {
	idx := task.slots[slot]
	if selected*8 >= n || slot == s.snap.ttlSlot() || idx < 0 {
		return nil, nil
	}
	rt := s.rawType(slot)
	id := rt.ID()
	if id == arrow.STRING || id == arrow.BINARY {
		return task.r.ReadPageSelected(s.pageMem, idx, task.p, mask)
	}
	if !task.r.ValuesOK(idx) {
		return nil, nil
	}
	if id != arrow.INT64 && id != arrow.FLOAT64 && id != arrow.TIMESTAMP {
		return nil, nil
	}
	v := valuesPool.Get().(*segment.Values)
	defer valuesPool.Put(v)
	if err := task.r.ReadSelected(idx, task.p, v, mask); err != nil {
		return nil, err
	}
	var p float64
	if v.Scale >= 0 {
		p = math.Pow10(v.Scale) // as the page decodes: float64(x) / 10^scale
	}
	var ib *array.Int64Builder
	var tb *array.TimestampBuilder
	var fb *array.Float64Builder
	var b array.Builder
	switch id {
	case arrow.INT64:
		ib = array.NewInt64Builder(s.mem)
		b = ib
	case arrow.TIMESTAMP:
		tb = array.NewTimestampBuilder(s.mem, rt.(*arrow.TimestampType))
		b = tb
	default:
		fb = array.NewFloat64Builder(s.mem)
		b = fb
	}
	defer b.Release()
	b.Reserve(selected)
	eachSet(mask, n, func(i int) {
		switch {
		case v.Valid != nil && !bitutil.BitIsSet(v.Valid, i):
			b.AppendNull()
		case ib != nil:
			ib.UnsafeAppend(v.Ints[i])
		case tb != nil:
			tb.UnsafeAppend(arrow.Timestamp(v.Ints[i]))
		case v.Floats != nil:
			fb.UnsafeAppend(v.Floats[i])
		default:
			fb.UnsafeAppend(float64(v.Ints[i]) / p)
		}
	})
	return b.NewArray(), nil
}

// liveAfter clears in mask the rows that have expired. It is liveAmong:
// the expirations stay packed and the rows of mask alone are tested, as
// the values path does, rather than decoding the page's __TTL__ and
// judging every row, which a string filter such as LIKE (the row path)
// left with a few rows of the page.
func (s *Scan) liveAfter(task pageTask, idx int, mask []byte, n int) error {
	b := getReduceBufs()
	defer putReduceBufs(b)
	return s.liveAmong(task, idx, n, mask, b)
}

// valuesPool keeps the buffers of sparseColumn, a page's worth each.
var valuesPool = sync.Pool{New: func() any { return new(segment.Values) }}

// rawType is the Arrow type a slot is stored with.
func (s *Scan) rawType(slot int) arrow.DataType {
	if slot == s.snap.ttlSlot() {
		return arrow.PrimitiveTypes.Int64
	}
	return s.snap.Schema.Columns[slot].Type.Arrow()
}

// showTTL converts stored __TTL__ values to the type they are shown with.
func (s *Scan) showTTL(a arrow.Array) arrow.Array {
	typ := s.snap.TTLType()
	if s.snap.Policy.Mode != ttlcol.SourceMode || typ.Kind == schema.BigInt {
		a.Retain()
		return a
	}
	ttl := a.(*array.Int64)
	b := array.NewBuilder(s.mem, typ.Arrow())
	defer b.Release()
	b.Reserve(ttl.Len())
	off := s.snap.Policy.ZoneOffset
	for i := 0; i < ttl.Len(); i++ {
		if ttl.IsNull(i) {
			b.AppendNull()
			continue
		}
		v := ttl.Value(i)
		switch typ.Kind {
		case schema.Date:
			b.(*array.Date32Builder).Append(arrow.Date32(ttlcol.MicrosToDate(v, off)))
		case schema.Datetime:
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(ttlcol.MicrosToDatetime(v, off)))
		default:
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(v))
		}
	}
	return b.NewArray()
}

func countBits(bm []byte, n int) int { return bitutil.CountSetBits(bm, 0, n) }

// ClassifyPage tells from the zone map of a page's stored __TTL__ values
// whether all, none or some of its rows are live at threshold (see
// ttlcol.Policy.Threshold).
func ClassifyPage(z segment.ZoneMap, threshold int64) ttlcol.PageState {
	hasMinMax := z.Min.Kind == schema.IntValue && z.Max.Kind == schema.IntValue
	return ttlcol.Classify(z.Rows, z.NullCount, hasMinMax, z.Min.Int, z.Max.Int, threshold)
}
