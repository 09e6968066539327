package query

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/ttlcol"
)

// Memoized liveness: a visibility map of expirations.
//
// A row is live at threshold T when its stored __TTL__ is NULL or above T
// (ttlcol.Policy.Threshold maps a scan's now, and in source mode the
// retention, onto T). The live rows of a page at T stay exactly the live
// rows at any later threshold below H, the smallest expiration among them:
// no row expired at T comes back, and no live one expires before H. A page
// of random expirations spread over weeks has H a minute or so after T, so
// the memo also keeps the soonest expirations among its live rows
// (soonRows of them, with their rows) and answers up to the next one: for
// a threshold in [T, H), live = the rows live at T less those of the soon
// list whose expiration is at or below the threshold. With 64 of them a
// page of 32K live rows answers for about an hour of nows instead of a
// minute.
//
// The memo is keyed by nothing but the threshold over the stored values, so
// it is right in source mode too, whatever the retention (an ALTER changes
// the threshold a now maps onto, not the stored values). It is only about
// expirations: delete marks and merged-away versions are applied on top of
// it as before. A threshold below T never uses it.
//
// Memory: one bit per row of each mixed page a scan tested (1.25 MB per
// 10M rows) plus 1 KiB of soon rows per page. It lives in the segment's
// segMap (segment.Reader.Memo), so it goes when the reader goes, with its
// rowset, or when a scan of another schema replaces the mapping.
//
// Building it needs a dense test of the page's __TTL__ and a second pass to
// find the soon rows, which a scan that tests only a filter's few rows
// does not otherwise pay. So a page builds its memo the second time a scan
// has to test it without one that answers (pageMemo.tested): a first query
// is never slower, a page no one reads twice never holds one, and scans
// whose nows keep missing (nows going back and forth) build at most every
// other scan.

// soonRows is the number of soonest expirations a memo keeps.
const soonRows = 64

// liveMemo is the liveness of one page's rows at the thresholds [lo, hi).
// It is immutable once published.
type liveMemo struct {
	lo, hi int64
	bits   []byte // live at lo, tail bits clear
	count  int    // bits set in bits
	// soon holds the live rows of the page with the smallest expirations,
	// ascending: every other row live at lo expires at hi or later.
	soon []soonRow
}

type soonRow struct {
	ttl int64
	row int32
}

// pageMemo is one page's slot: the published memo, and whether a scan has
// tested the page's __TTL__ since the last build (the next test builds).
type pageMemo struct {
	live   atomic.Pointer[liveMemo]
	tested atomic.Bool
}

// answers reports whether m gives the live rows at threshold thr.
func (m *liveMemo) answers(thr int64) bool { return m != nil && thr >= m.lo && thr < m.hi }

// gone is the number of soon rows expired at thr, m.answers(thr).
func (m *liveMemo) gone(thr int64) int {
	k, _ := slices.BinarySearchFunc(m.soon, thr, func(r soonRow, t int64) int {
		if r.ttl <= t {
			return -1
		}
		return 1
	})
	return k
}

// count returns the number of rows live at thr.
func (m *liveMemo) liveCount(thr int64) int { return m.count - m.gone(thr) }

// and clears in sel the rows not live at thr.
func (m *liveMemo) and(sel []byte, thr int64) {
	andBits(sel, m.bits)
	for _, r := range m.soon[:m.gone(thr)] {
		sel[r.row>>3] &^= 1 << (r.row & 7)
	}
}

// copyTo writes the live rows at thr into live and returns their number.
func (m *liveMemo) copyTo(live []byte, thr int64) int {
	copy(live, m.bits)
	k := m.gone(thr)
	for _, r := range m.soon[:k] {
		live[r.row>>3] &^= 1 << (r.row & 7)
	}
	return m.count - k
}

// liveMemoReady reports whether liveMemoFor would return the page's memo
// or ask for one to be built, without marking the page as a miss does.
func (s *Scan) liveMemoReady(task pageTask) bool {
	pm := s.pageMemo(task)
	return pm != nil && (pm.live.Load().answers(s.threshold) || pm.tested.Load())
}

// pageMemo returns the memo slot of the page of task, or nil when the scan
// keeps none for it.
func (s *Scan) pageMemo(task pageTask) *pageMemo {
	if s.noLiveMemo || task.memo == nil || task.p >= len(task.memo) {
		return nil
	}
	return &task.memo[task.p]
}

// liveMemoFor returns the memo of the page of task that answers at the
// scan's threshold, or nil; build says whether the caller, which must test
// the page's __TTL__, should test it whole and build one (see buildMemo).
func (s *Scan) liveMemoFor(task pageTask) (m *liveMemo, build bool) {
	pm := s.pageMemo(task)
	if pm == nil {
		return nil, false
	}
	m = pm.live.Load()
	if m.answers(s.threshold) {
		return m, false
	}
	// A miss: the first marks the page, the second builds (replacing a
	// memo outlived, or one of a later now, which could otherwise stay
	// and serve no one) and clears the mark, so that nows that keep
	// missing pay a dense test at most every other scan.
	if pm.tested.CompareAndSwap(false, true) {
		return nil, false
	}
	pm.tested.Store(false)
	return nil, true
}

// testAndMemo sets in live the rows of the page of task live at the scan's
// threshold, testing every row of ttl, its __TTL__ values (packed or not),
// returns their number, and publishes the page's memo. A packed page tests
// the soon rows in the same pass (Values.RangeBits2), over a span its zone
// map expects to hold a few soonRows of them.
func (s *Scan) testAndMemo(task pageTask, ttl *segment.Values, live []byte, b *reduceBufs) int {
	n, thr := ttl.N, s.threshold
	bl := (n + 7) / 8
	if !ttl.Packed() || thr == math.MaxInt64 {
		count := 0
		if ttl.Packed() {
			count = s.packedLive(ttl, nil, live, b)
		} else {
			count = ttlcol.LiveMask(ttl.Ints, ttl.Valid, 0, thr, live)
		}
		s.buildMemo(task, ttl, live, nil, 0, b)
		return count
	}
	z := task.r.PageStats(task.slots[len(task.slots)-1], task.p)
	total := soonTotal(z, thr)
	span := total
	if z.Min.Kind == schema.IntValue && z.Max.Kind == schema.IntValue && z.Max.Int > z.Min.Int && z.Rows > z.NullCount {
		// Expirations spread evenly over [min, max] put 4·soonRows of
		// them in a span of this width.
		w := uint64(z.Max.Int) - uint64(z.Min.Int)
		if k := uint64(z.Rows - z.NullCount); w/k < math.MaxUint64/(4*soonRows) {
			span = min(total, max(1, w/k*4*soonRows))
		}
	}
	clear(live[:bl])
	b.memoT = grow(b.memoT, bl)
	clear(b.memoT)
	ttl.RangeBits2(thr+1, uint64(math.MaxInt64)-uint64(thr+1), span, live, b.memoT)
	if ttl.Valid != nil {
		for i := range bl {
			live[i] |= ^ttl.Valid[i]
		}
	}
	clearTail(live, n)
	s.buildMemo(task, ttl, live, b.memoT, span, b)
	return countBits(live, n)
}

// soonTotal is the width of [thr+1, the page's largest expiration].
func soonTotal(z segment.ZoneMap, thr int64) uint64 {
	if z.Max.Kind == schema.IntValue && z.Max.Int > thr {
		return uint64(z.Max.Int) - uint64(thr+1)
	}
	return uint64(math.MaxInt64) - uint64(thr+1)
}

// buildMemo publishes the memo of the page of task at the scan's threshold
// from ttl, its __TTL__ values (packed or not), and live, the rows live at
// that threshold (every row tested). tested, when not nil, holds the rows
// already tested in [thr+1, thr+1+span] (any value in NULL slots).
func (s *Scan) buildMemo(task pageTask, ttl *segment.Values, live, tested []byte, span uint64, b *reduceBufs) {
	n, thr := ttl.N, s.threshold
	bl := (n + 7) / 8
	m := &liveMemo{lo: thr, hi: math.MaxInt64, bits: slices.Clone(live[:bl])}
	clearTail(m.bits, n)
	m.count = countBits(m.bits, n)
	// cand: the live rows with an expiration (not NULL).
	b.memoCand = grow(b.memoCand, bl)
	cand := b.memoCand
	copy(cand, m.bits)
	if ttl.Valid != nil {
		andBits(cand, ttl.Valid)
	}
	c := countBits(cand, n)
	var soon []soonRow
	if c > soonRows {
		// The rows expiring in [thr+1, thr+1+span] for a span expected to
		// hold a few soonRows of them, widened until it holds more than
		// soonRows or every expiration.
		total := soonTotal(task.r.PageStats(task.slots[len(task.slots)-1], task.p), thr)
		if tested == nil {
			span = total / uint64(c) * 4 * soonRows
			if span > total || span/(4*soonRows) != total/uint64(c) {
				span = total
			}
		}
		b.memoT, b.memoF = grow(b.memoT, bl), grow(b.memoF, bl)
		for {
			if tested == nil {
				clear(b.memoT)
				clear(b.memoF)
				if ttl.Packed() {
					ttl.RangeBits(thr+1, span, false, cand, b.memoT, b.memoF)
				} else {
					rangeBits(ttl.Ints[:n], thr+1, span, false, b.memoT, b.memoF)
				}
			}
			tested = nil
			andBits(b.memoT, cand)
			if countBits(b.memoT, n) > soonRows || span >= total {
				break
			}
			if span > total/8 {
				span = total
			} else {
				span = span*8 + 7
			}
		}
		soon = gatherSoon(ttl, b.memoT, n)
	} else {
		soon = gatherSoon(ttl, cand, n)
	}
	slices.SortFunc(soon, func(x, y soonRow) int { return cmp.Compare(x.ttl, y.ttl) })
	if len(soon) > soonRows {
		m.hi = soon[soonRows].ttl
		soon = soon[:soonRows:soonRows]
	}
	m.soon = soon
	task.memo[task.p].live.Store(m)
}

// gatherSoon returns the rows set in sel with their values in v.
func gatherSoon(v *segment.Values, sel []byte, n int) []soonRow {
	out := make([]soonRow, 0, countBits(sel, n))
	bl := (n + 7) / 8
	i := 0
	for ; i+8 <= bl; i += 8 {
		for w := binary.LittleEndian.Uint64(sel[i:]); w != 0; w &= w - 1 {
			r := i*8 + bits.TrailingZeros64(w)
			out = append(out, soonRow{ttl: v.At(r), row: int32(r)})
		}
	}
	for ; i < bl; i++ {
		for w := sel[i]; w != 0; w &= w - 1 {
			r := i*8 + bits.TrailingZeros8(w)
			if r < n {
				out = append(out, soonRow{ttl: v.At(r), row: int32(r)})
			}
		}
	}
	return out
}
