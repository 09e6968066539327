package query

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/ttlcol"
)

// Aggregates is what Aggregate computes over the rows a scan would return:
// their count and the sums of the requested columns.
type Aggregates struct {
	Rows int64 // count(*)
	Sums []Sum // one per column of the request, in its order
}

// Sum is the sum of one column over the selected rows.
type Sum struct {
	Count int64 // non-NULL values added
	// Int is the exact sum of an integer column.
	Int int64
	// Float is the sum of a FLOAT or DOUBLE column. The doubles of pages
	// stored decimal-scaled add as exact integers, one total per scale;
	// those totals and the other pages' sums (each in a fixed order) add
	// exactly at the end and round once, so the result depends neither on
	// parallelism nor on how rows fall into pages, and is the exact sum
	// rounded when every page is scaled.
	Float float64
}

// partial is one page's share of the totals.
type partial struct {
	rows int64
	sums []pageSum
}

type pageSum struct {
	count int64
	exact segment.Int128 // integer columns; scaled doubles, in units of 10^-scale
	scale int            // of exact, for doubles; -1 when exact holds integers
	float float64
}

// Aggregate consumes the scan, returning the number of rows it would have
// returned and the sum of each of its columns, which must be numeric. It
// decodes pages into buffers reused from page to page, reads no column
// where zone maps decide, and builds no batch except for pages that need
// the general row path (filters, deletes, merged keys). It must be called
// instead of Next, before it.
func (s *Scan) Aggregate() (Aggregates, error) {
	if s.deleteSign || s.rowIDs || s.pl != nil || s.cur != nil {
		return Aggregates{}, rowttl.Errorf(rowttl.ErrInvalidArgument, "aggregate: a scan that has started or returns row locations or delete signs")
	}
	kinds := make([]schema.Type, len(s.outSlots))
	for i, f := range s.out.Fields() {
		t := s.slotType(s.outSlots[i])
		if !t.IsInteger() && t.Kind != schema.Float && t.Kind != schema.Double {
			return Aggregates{}, rowttl.Errorf(rowttl.ErrInvalidArgument, "sum of %s: %s is not a numeric column", f.Name, t)
		}
		kinds[i] = t
	}
	s.recompared = recompared(s.filter)
	tot := Aggregates{Sums: make([]Sum, len(s.outSlots))}
	exact := make([]segment.Int128, len(s.outSlots))
	floats := make([]floatTotal, len(s.outSlots))
	add := func(p *partial) {
		tot.Rows += p.rows
		for i, ps := range p.sums {
			tot.Sums[i].Count += ps.count
			switch {
			case kinds[i].IsInteger():
				exact[i].AddInt128(ps.exact)
			default:
				floats[i].add(ps)
			}
		}
	}
	err := s.eachPartial(add)
	if err != nil {
		return Aggregates{}, err
	}
	for i := range exact {
		if kinds[i].IsInteger() {
			v, ok := exact[i].Int64()
			if !ok {
				return Aggregates{}, rowttl.Errorf(rowttl.ErrInvalidArgument, "sum of %s overflows BIGINT", s.out.Field(i).Name)
			}
			tot.Sums[i].Int = v
		} else {
			tot.Sums[i].Float = floats[i].value()
		}
	}
	return tot, nil
}

// floatTotal is the sum of a FLOAT or DOUBLE column over the pages:
// scaled[e] holds the exact sum of the scaled pages of exponent e, in
// units of 10^-e (no table can overflow it: a scaled value is at most
// 2^53), and other the pages' sums of plain doubles (and FLOATs), kept
// as they come.
type floatTotal struct {
	scaled    [maxScale + 1]segment.Int128
	hasScaled bool
	other     []float64
}

// maxScale bounds the exponents of decimal-scaled pages (segment's
// maxScaleExp); a page past it adds through other.
const maxScale = 9

func (t *floatTotal) add(ps pageSum) {
	switch {
	case ps.count == 0:
	case ps.scale >= 0 && ps.scale <= maxScale:
		t.scaled[ps.scale].AddInt128(ps.exact)
		t.hasScaled = true
	case ps.scale >= 0:
		t.other = append(t.other, ps.exact.Float64()/math.Pow10(ps.scale))
	default:
		t.other = append(t.other, ps.float)
	}
}

// value returns the exact sum of the parts, rounded once; a part that is
// NaN or infinite makes the result what float addition makes it.
func (t *floatTotal) value() float64 {
	if !t.hasScaled && len(t.other) <= 1 {
		if len(t.other) == 0 {
			return 0
		}
		return t.other[0]
	}
	var special float64
	hasSpecial := false
	var sum big.Rat
	var x big.Rat
	for e, v := range t.scaled {
		if v == (segment.Int128{}) {
			continue
		}
		num := new(big.Int).Lsh(big.NewInt(v.Hi), 64)
		num.Add(num, new(big.Int).SetUint64(v.Lo))
		x.SetFrac(num, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil))
		sum.Add(&sum, &x)
	}
	for _, f := range t.other {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			special += f
			hasSpecial = true
			continue
		}
		x.SetFloat64(f)
		sum.Add(&sum, &x)
	}
	f, _ := sum.Float64()
	if hasSpecial {
		return f + special
	}
	return f
}

// slotType is the type a slot is shown with.
func (s *Scan) slotType(slot int) schema.Type {
	if slot == s.snap.ttlSlot() {
		if s.rawTTL {
			return schema.BigIntType
		}
		return s.snap.TTLType()
	}
	return s.snap.Schema.Columns[slot].Type
}

// eachPartial reduces every page and hands the partials to add in page
// order, on the calling goroutine.
func (s *Scan) eachPartial(add func(*partial)) error {
	defer s.releaseSnapshot()
	if s.workers <= 1 {
		b := getReduceBufs()
		defer putReduceBufs(b)
		for {
			if err := s.ctx.Err(); err != nil {
				return err
			}
			task, ok := s.advance()
			if !ok {
				return nil
			}
			p, err := s.reducePage(task, b)
			if err != nil {
				return err
			}
			add(p)
		}
	}
	var bufs []*reduceBufs
	s.startPipeline(func() pageFunc {
		b := getReduceBufs()
		bufs = append(bufs, b)
		return func(t pageTask) pageResult {
			p, err := s.reducePage(t, b)
			if err != nil {
				return pageResult{err: err}
			}
			// The result outlives the worker's partial, which the next
			// page overwrites: it takes a copy (of a count's, no sums,
			// nothing to allocate).
			res := pageResult{part: *p, hasPart: true}
			res.part.sums = slices.Clone(p.sums)
			return res
		}
	})
	defer func() {
		// The workers are done with their buffers once the pipeline
		// has stopped.
		s.stopPipeline()
		for _, b := range bufs {
			putReduceBufs(b)
		}
	}()
	var part partial // escapes to add once, not once per page
	for fut := range s.pl.futures {
		res := <-fut
		s.pl.recycle(fut)
		if res.err != nil {
			return res.err
		}
		if res.hasPart {
			part = res.part
			add(&part)
		}
	}
	return nil
}

// reduceBufs are one worker's buffers, kept from page to page.
type reduceBufs struct {
	ttl, vals segment.Values
	live, sel []byte
	// vis holds the rows of a mixed page no newer version hides.
	vis []byte
	// filtered and kt, kf hold the rows a filter selects and the bits of
	// one conjunct; pv the page's decoded columns.
	filtered, kt, kf []byte
	pv               pageValues
	// kids and est hold the conjuncts of the filter's AND in the order
	// a page tests them, and their estimated selectivities.
	kids []bound
	est  []float64
	// expired receives the expired rows of a packed __TTL__ page.
	expired []byte
	// memoCand, memoT and memoF are buildMemo's: the live rows with an
	// expiration, and those of them that expire soon.
	memoCand, memoT, memoF []byte
	// part is the partial every page reduces into: its consumer is done
	// with it, or has a copy, before the next page.
	part partial
}

// newPartial returns the worker's partial, emptied, with n sums.
func (b *reduceBufs) newPartial(n int) *partial {
	p := &b.part
	p.rows = 0
	p.sums = slices.Grow(p.sums[:0], n)[:n]
	clear(p.sums)
	for i := range p.sums {
		p.sums[i].scale = -1
	}
	return p
}

// reduceBufsPool keeps the workers' buffers from scan to scan: a count
// over pages that need decoding is short enough that allocating and
// clearing a page's worth of them per worker took a tenth of its time.
var reduceBufsPool = sync.Pool{New: func() any { return new(reduceBufs) }}

func getReduceBufs() *reduceBufs { return reduceBufsPool.Get().(*reduceBufs) }

// putReduceBufs returns b to the pool, without the last page it named (its
// segment may go away).
func putReduceBufs(b *reduceBufs) {
	b.pv.task, b.pv.sel = pageTask{}, nil
	clear(b.kids)
	reduceBufsPool.Put(b)
}

// reducePage returns the share of one page in the totals.
func (s *Scan) reducePage(task pageTask, b *reduceBufs) (*partial, error) {
	r, p := task.r, task.p
	_, n := r.Page(p)
	if !s.plainPage(task, n) {
		return s.reduceRows(task)
	}
	part := b.newPartial(len(s.outSlots))
	ttl := s.pageTTL(task)
	ttlState, ttlZone, ttlIdx, pastAll := ttl.state, ttl.zone, ttl.idx, ttl.pastAll
	if ttlState == ttlcol.AllExpired {
		atomic.AddInt64(&s.Counters.PagesExpired, 1)
		return part, nil
	}
	if s.filter != nil && !s.filter.may(s.stats(r, p, task.slots), true) {
		atomic.AddInt64(&s.Counters.PagesPruned, 1)
		return part, nil
	}
	// hidden holds the page's deleted and superseded rows, if any.
	var hidden *roaring.Bitmap
	if h := s.hidden[task.rsID]; h != nil && h.IntersectsWithInterval(uint64(task.ord0), uint64(task.ord0)+uint64(n)) {
		hidden = h
	}
	if s.filter == nil && len(s.outSlots) == 0 && hidden == nil && (ttlState == ttlcol.AllLive || pastAll) {
		// The zone map has the answer: every row, or the NULL ones.
		atomic.AddInt64(&s.Counters.PagesLive, 1)
		part.rows = int64(n)
		if pastAll {
			part.rows = ttlZone.NullCount
		}
		return part, nil
	}
	// live selects the rows alive at now; nil selects all.
	var live []byte
	deferTTL := false
	switch {
	case ttlState == ttlcol.AllLive:
		atomic.AddInt64(&s.Counters.PagesLive, 1)
		part.rows = int64(n)
	case pastAll:
		// Every expiration has passed: the live rows are the NULL ones.
		atomic.AddInt64(&s.Counters.PagesRead, 1)
		if err := r.ReadValues(ttlIdx, p, &b.ttl, true); err != nil {
			return nil, err
		}
		b.live = grow(b.live, (n+7)/8)
		live = b.live
		for i, v := range b.ttl.Valid {
			live[i] = ^v
		}
		part.rows = ttlZone.NullCount
	case s.filter != nil:
		// Mixed, filtered: __TTL__ is decoded after the filter, for the
		// rows it keeps (deferTTL).
		atomic.AddInt64(&s.Counters.PagesRead, 1)
		deferTTL = true
		part.rows = int64(n)
	case hidden != nil:
		// Mixed, with hidden rows: __TTL__ is decoded for the others
		// alone when they are few, as in the older rowsets of a
		// merge-on-read table after upserts, whose keys newer versions
		// mostly hide.
		atomic.AddInt64(&s.Counters.PagesRead, 1)
		b.vis = grow(b.vis, (n+7)/8)
		live = b.vis
		setAll(live, n)
		clearHidden(live, s.hiddenWords(task.rsID), task.ord0, n)
		if err := s.liveAmong(task, ttlIdx, n, live, b); err != nil {
			return nil, err
		}
		part.rows = int64(countBits(live, n))
		hidden = nil
	default:
		atomic.AddInt64(&s.Counters.PagesRead, 1)
		m, build := s.liveMemoFor(task)
		if m != nil {
			atomic.AddInt64(&s.Counters.PagesMemo, 1)
			if len(s.outSlots) == 0 {
				// A count: the memo's, less its rows expired since.
				part.rows = int64(m.liveCount(s.threshold))
				return part, nil
			}
			b.live = grow(b.live, (n+7)/8)
			live = b.live
			part.rows = int64(m.copyTo(live, s.threshold))
			break
		}
		if err := r.ReadPacked(ttlIdx, p, &b.ttl); err != nil {
			return nil, err
		}
		b.live = grow(b.live, (n+7)/8)
		live = b.live
		switch {
		case build:
			part.rows = int64(s.testAndMemo(task, &b.ttl, live, b))
		case b.ttl.Packed():
			part.rows = int64(s.packedLive(&b.ttl, nil, live, b))
		default:
			part.rows = int64(ttlcol.LiveMask(b.ttl.Ints, b.ttl.Valid, 0, s.threshold, live))
		}
	}
	if s.filter == nil && hidden != nil && live == nil && len(s.outSlots) == 0 {
		// A count of an all-live page: its rows but the hidden ones.
		part.rows -= int64(hidden.CardinalityInRange(uint64(task.ord0), uint64(task.ord0)+uint64(n)))
		return part, nil
	}
	if hidden != nil && part.rows > 0 {
		if live == nil {
			b.live = grow(b.live, (n+7)/8)
			live = b.live
			setAll(live, n)
		}
		clearHidden(live, s.hiddenWords(task.rsID), task.ord0, n)
		part.rows = int64(countBits(live, n))
	}
	if part.rows == 0 {
		return part, nil
	}
	var pv *pageValues
	if s.filter != nil {
		sel, ok, err := s.filterValues(task, n, live, b)
		if err != nil || !ok {
			// A comparison evalValues does not take: the row path.
			if err == nil {
				return s.reduceRows(task)
			}
			return nil, err
		}
		live, pv = sel, &b.pv
		if deferTTL {
			if err := s.liveAmong(task, ttlIdx, n, live, b); err != nil {
				return nil, err
			}
		}
		if part.rows = int64(countBits(live, n)); part.rows == 0 {
			return part, nil
		}
	}
	for i, slot := range s.outSlots {
		if pv != nil && pv.have[slot] {
			// Decoded for the filter, for a superset of the rows.
			s.sumValues(&part.sums[i], &pv.vals[slot], live, n, b)
			continue
		}
		if z := r.PageStats(task.slots[slot], p); live == nil && z.HasSum {
			// Every row counts and the page knows its sum.
			ps := &part.sums[i]
			ps.count, ps.exact = int64(n)-z.NullCount, z.Sum
			if s.slotType(slot).IsInteger() {
				ps.scale = -1
			} else {
				ps.scale = z.SumScale
			}
			continue
		}
		v := &b.vals
		var err error
		if live != nil && part.rows*8 < int64(n) {
			// Few rows count (the NULL-expiration rows of a page whose
			// other rows have expired): decode those alone.
			err = r.ReadSelected(task.slots[slot], p, v, live)
		} else {
			err = r.ReadPacked(task.slots[slot], p, v)
		}
		if err != nil {
			return nil, err
		}
		s.sumValues(&part.sums[i], v, live, n, b)
	}
	return part, nil
}

// sumValues adds to ps the values of v in the rows of live (nil: all).
func (s *Scan) sumValues(ps *pageSum, v *segment.Values, live []byte, n int, b *reduceBufs) {
	sel := live
	if v.Valid != nil {
		b.sel = grow(b.sel, (n+7)/8)
		sel = b.sel
		copy(sel, v.Valid)
		if live != nil {
			for j := range sel {
				sel[j] &= live[j]
			}
		}
		ps.count = int64(countBits(sel, n))
	} else if live != nil {
		ps.count = int64(countBits(live, n))
	} else {
		ps.count = int64(n)
	}
	switch {
	case v.Packed():
		ps.exact, ps.scale = v.Sum(sel), v.Scale
	case v.Floats != nil:
		ps.float = sumFloats(v.Floats, sel)
	case v.Scale >= 0:
		ps.exact, ps.scale = sumSmallInts(v.Ints, sel), v.Scale
	default:
		ps.exact = sumInts(v.Ints, sel)
	}
}

// packedLive is ttlcol.LiveMask of a packed __TTL__ page: it sets in live
// the rows whose expiration is NULL or after the scan's threshold, testing
// the packed values of the rows of sel alone (nil: all; the bits of the
// others are then unspecified), and returns the number of bits set.
func (s *Scan) packedLive(ttl *segment.Values, sel, live []byte, b *reduceBufs) int {
	n := ttl.N
	bl := (n + 7) / 8
	clear(live[:bl])
	if s.threshold < math.MaxInt64 {
		b.expired = grow(b.expired, bl)
		clear(b.expired)
		a := s.threshold + 1
		ttl.RangeBits(a, uint64(math.MaxInt64-a), false, sel, live, b.expired)
	}
	if ttl.Valid != nil {
		for i := range bl {
			live[i] |= ^ttl.Valid[i]
		}
		clearTail(live, n)
	}
	return countBits(live, n)
}

// liveAmong clears in sel the rows of a mixed page that have expired,
// testing the packed expirations of the selected rows alone when they are
// few: a selective filter then saves most of the page's expiration checks.
func (s *Scan) liveAmong(task pageTask, ttlIdx, n int, sel []byte, b *reduceBufs) error {
	if countBits(sel, n) == 0 {
		return nil
	}
	m, build := s.liveMemoFor(task)
	if m != nil {
		atomic.AddInt64(&s.Counters.PagesMemo, 1)
		m.and(sel, s.threshold)
		return nil
	}
	if err := task.r.ReadPacked(ttlIdx, task.p, &b.ttl); err != nil {
		return err
	}
	// Rows outside sel get any bit; sel clears them below. A page that
	// builds its memo tests every row.
	b.live = grow(b.live, (n+7)/8)
	switch {
	case build:
		s.testAndMemo(task, &b.ttl, b.live, b)
	case b.ttl.Packed():
		s.packedLive(&b.ttl, sel, b.live, b)
	default:
		ttlcol.LiveMask(b.ttl.Ints, b.ttl.Valid, 0, s.threshold, b.live)
	}
	andBits(sel, b.live)
	return nil
}

// filterValues returns the rows of live (nil: every row) the scan's filter
// keeps, evaluated on the page's decoded values (values_filter.go); ok is
// false when the filter holds a comparison that must take the row path.
func (s *Scan) filterValues(task pageTask, n int, live []byte, b *reduceBufs) (sel []byte, ok bool, err error) {
	bl := (n + 7) / 8
	b.filtered = grow(b.filtered, bl)
	sel = b.filtered
	if live != nil {
		copy(sel, live)
	} else {
		setAll(sel, n)
	}
	// A live mask made by negating a validity bitmap has its tail set.
	clearTail(sel, n)
	b.pv.reset(task, len(task.slots), n, sel, s.recompared)
	kids := append(b.kids[:0], s.filter)
	if l, isLogic := s.filter.(*boundLogic); isLogic && l.and && len(l.kids) > 0 {
		kids = append(kids[:0], l.kids...)
		b.est = resizeTo(b.est, len(kids))
		orderConjuncts(kids, b.est, s.stats(task.r, task.p, task.slots))
	}
	b.kids = kids
	b.kt, b.kf = grow(b.kt, bl), grow(b.kf, bl)
	for _, k := range kids {
		clear(b.kt)
		clear(b.kf)
		if ok, err := evalValues(k, &b.pv, b.kt, b.kf); !ok || err != nil {
			return nil, ok, err
		}
		if !andBits(sel, b.kt) {
			break
		}
	}
	return sel, true, nil
}

// andBits clears in dst the bits clear in src (as long as dst) and reports
// whether any bit of dst is left, eight bytes at a time.
func andBits(dst, src []byte) bool {
	var left uint64
	i := 0
	for ; i+8 <= len(dst); i += 8 {
		w := binary.LittleEndian.Uint64(dst[i:]) & binary.LittleEndian.Uint64(src[i:])
		binary.LittleEndian.PutUint64(dst[i:], w)
		left |= w
	}
	for ; i < len(dst); i++ {
		dst[i] &= src[i]
		left |= uint64(dst[i])
	}
	return left != 0
}

// plainPage says whether a page can be reduced from its column values,
// __TTL__ and hidden rows alone: no delete sign, a filter (if any) that
// valuesFilterOK takes, and every summed column stored in it as BIGINT or
// DOUBLE.
func (s *Scan) plainPage(task pageTask, n int) bool {
	if task.signIdx >= 0 || s.filter != nil && !s.valuesFilterOK(s.filter, task) {
		return false
	}
	for _, slot := range s.outSlots {
		if slot == s.snap.ttlSlot() && !s.rawTTL && s.snap.Policy.Mode == ttlcol.SourceMode {
			return false
		}
		if idx := task.slots[slot]; idx < 0 || !task.r.ValuesOK(idx) {
			return false
		}
	}
	return true
}

// reduceRows reduces a page through the row path: the batch Next would
// return.
func (s *Scan) reduceRows(task pageTask) (*partial, error) {
	part := &partial{sums: make([]pageSum, len(s.outSlots))}
	for i := range part.sums {
		part.sums[i].scale = -1
	}
	rec, err := s.readPage(task)
	if err != nil || rec == nil {
		return part, err
	}
	defer rec.Release()
	part.rows = rec.NumRows()
	for i, col := range rec.Columns() {
		ps := &part.sums[i]
		ps.count = int64(col.Len() - col.NullN())
		switch a := col.(type) {
		case *array.Float64:
			ps.float = sumFloats(a.Float64Values(), validity(a))
		case *array.Float32:
			f := make([]float64, a.Len())
			for j, x := range a.Float32Values() {
				f[j] = float64(x)
			}
			ps.float = sumFloats(f, validity(a))
		default:
			for j := 0; j < col.Len(); j++ {
				if col.IsValid(j) {
					ps.exact.Add(intAt(col, j))
				}
			}
		}
	}
	return part, nil
}

// validity returns a's validity bitmap from bit 0, or nil when it has no
// NULL.
func validity(a arrow.Array) []byte {
	if a.NullN() == 0 {
		return nil
	}
	n := a.Len()
	out := make([]byte, (n+7)/8)
	for i := 0; i < n; i++ {
		if a.IsValid(i) {
			out[i/8] |= 1 << (i % 8)
		}
	}
	return out
}

func intAt(a arrow.Array, i int) int64 {
	switch a := a.(type) {
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	}
	panic(fmt.Sprintf("query: sum of %s", a.DataType()))
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}
