package query

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
)

// The filter of Aggregate evaluated on decoded values.
//
// A page that Aggregate reduces decodes its BIGINT and DOUBLE columns into
// segment.Values, buffers reused from page to page; building Arrow arrays
// for the filter (the row path, readPage) costs more than the reduction
// itself. A filter whose every comparison is of a BIGINT or DOUBLE column
// (stored as such in the page) with a number, joined by AND, OR and NOT,
// is evaluated here instead, with the three-valued semantics of eval.go:
// the comparisons of the top-level AND one after the other (the most
// selective by the page's zone maps first: orderConjuncts), each on the
// rows the previous ones left selected, a column read once and left
// packed where its encoding allows (segment.Reader.ReadPacked): then
// compared on its packed values, the page's whole while unpacking or the
// few selected rows by their bits, never written out as int64s; and not
// read at all once no row is left.

// valuesFilterOK reports whether b can be evaluated on the values of the
// page of task.
func (s *Scan) valuesFilterOK(b bound, task pageTask) bool {
	slotOK := func(slot int) bool {
		idx := task.slots[slot]
		return slot != s.snap.ttlSlot() && idx >= 0 && task.r.ValuesOK(idx)
	}
	switch x := b.(type) {
	case boundConst:
		return true
	case *boundLogic:
		for _, k := range x.kids {
			if !s.valuesFilterOK(k, task) {
				return false
			}
		}
		return true
	case *boundNot:
		return s.valuesFilterOK(x.k, task)
	case *boundIsNull:
		return slotOK(x.slot)
	case *boundCmp:
		return slotOK(x.slot) && (x.c.Kind == schema.IntValue || x.c.Kind == schema.FloatValue)
	}
	return false
}

// pageValues reads the columns of one page on demand, each once; later
// asks are always of a subset of the rows selected at the first, since the
// selection only shrinks.
type pageValues struct {
	task pageTask
	vals []segment.Values
	have []bool
	// recompared marks the columns compared more than once (an IN list,
	// a range): decoded, each further comparison costs a pass over int64s
	// rather than an unpacking.
	recompared []bool
	sel        []byte // the current selection, owned by the caller
	n          int
	// rows, gInts, gFloats, gt and gf hold the selected rows of a sparse
	// selection, their values and their bits.
	rows    []int32
	gInts   []int64
	gFloats []float64
	gt, gf  []byte
}

// sparseRows returns the selected rows when they are fewer than a quarter
// of the page, else nil.
func (pv *pageValues) sparseRows() []int32 {
	k := countBits(pv.sel, pv.n)
	if k*4 >= pv.n {
		return nil
	}
	rows := resizeTo(pv.rows, k)
	pv.rows = rows
	j := 0
	sel := pv.sel[:(pv.n+7)/8]
	i := 0
	for ; i+8 <= len(sel); i += 8 {
		for w := binary.LittleEndian.Uint64(sel[i:]); w != 0; w &= w - 1 {
			rows[j] = int32(i*8 + bits.TrailingZeros64(w))
			j++
		}
	}
	for ; i < len(sel); i++ {
		for w := sel[i]; w != 0; w &= w - 1 {
			rows[j] = int32(i*8 + bits.TrailingZeros8(w))
			j++
		}
	}
	if rows == nil {
		rows = []int32{}
	}
	return rows
}

func resizeTo[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func (pv *pageValues) reset(task pageTask, slots, n int, sel []byte, recompared []bool) {
	pv.task, pv.n, pv.sel = task, n, sel
	pv.recompared = recompared
	if len(pv.vals) < slots {
		pv.vals = make([]segment.Values, slots)
		pv.have = make([]bool, slots)
	}
	clear(pv.have)
}

func (pv *pageValues) get(slot int) (*segment.Values, error) {
	v := &pv.vals[slot]
	if pv.have[slot] {
		return v, nil
	}
	idx, p := pv.task.slots[slot], pv.task.p
	var err error
	switch {
	case slot >= len(pv.recompared) || !pv.recompared[slot]:
		// Left packed where it can be, for comparisons and sums on the
		// packed values, of the few selected rows or of all; other
		// encodings decode whole, as ReadSelected would decode them.
		err = pv.task.r.ReadPacked(idx, p, v)
	case countBits(pv.sel, pv.n)*8 < pv.n:
		err = pv.task.r.ReadSelected(idx, p, v, pv.sel)
	default:
		err = pv.task.r.ReadValues(idx, p, v, false)
	}
	if err != nil {
		return nil, err
	}
	pv.have[slot] = true
	return v, nil
}

// evalValues is bound.eval over pv: it sets bit i of t where row i is
// TRUE and of f where it is FALSE (both start cleared), for the selected
// rows at least. ok is false when b holds a comparison this file does not
// evaluate (the caller then takes the row path).
func evalValues(b bound, pv *pageValues, t, f []byte) (ok bool, err error) {
	n := pv.n
	switch x := b.(type) {
	case boundConst:
		return true, nil
	case *boundNot:
		return evalValues(x.k, pv, f, t)
	case *boundIsNull:
		v, err := pv.get(x.slot)
		if err != nil {
			return false, err
		}
		isNull, notNull := t, f
		if x.negate {
			isNull, notNull = f, t
		}
		if v.Valid == nil {
			setAll(notNull, n)
			return true, nil
		}
		for i := range (n + 7) / 8 {
			notNull[i] = v.Valid[i]
			isNull[i] = ^v.Valid[i]
		}
		clearTail(isNull, n)
		return true, nil
	case *boundLogic:
		if len(x.kids) == 0 {
			if x.and {
				setAll(t, n)
			} else {
				setAll(f, n)
			}
			return true, nil
		}
		if ok, err := evalValues(x.kids[0], pv, t, f); !ok || err != nil {
			return ok, err
		}
		kt, kf := make([]byte, len(t)), make([]byte, len(f))
		for _, k := range x.kids[1:] {
			clear(kt)
			clear(kf)
			if ok, err := evalValues(k, pv, kt, kf); !ok || err != nil {
				return ok, err
			}
			for i := range t {
				if x.and {
					t[i] &= kt[i]
					f[i] |= kf[i]
				} else {
					t[i] |= kt[i]
					f[i] &= kf[i]
				}
			}
		}
		return true, nil
	case *boundCmp:
		v, err := pv.get(x.slot)
		if err != nil {
			return false, err
		}
		if v.Packed() {
			// Compared on the packed values: the whole page while
			// unpacking, or the few selected rows by their bits.
			var r intRange
			ok := true
			switch {
			case v.Scale >= 0:
				r, ok = scaledRange(pow10(v.Scale), x.c.Kind, x.c.Float, x.c.Int, x.op)
			case x.c.Kind == schema.IntValue:
				r = opRange(x.c.Int, x.op)
			default:
				ok = false
			}
			if !ok {
				return false, nil
			}
			r.set(n, t, f, func(a int64, span uint64, negate bool) { v.RangeBits(a, span, negate, pv.sel, t, f) })
			maskNulls(v, x.op, n, t, f)
			return true, nil
		}
		ints, floats := v.Ints, v.Floats
		ct, cf := t, f
		m := n
		rows := pv.sparseRows()
		if rows != nil {
			// Few rows are selected: compare those alone, gathered, and
			// scatter their bits back.
			m = len(rows)
			if floats != nil {
				pv.gFloats = resizeTo(pv.gFloats, m)
				for j, i := range rows {
					pv.gFloats[j] = floats[i]
				}
				floats = pv.gFloats
			} else {
				pv.gInts = resizeTo(pv.gInts, m)
				for j, i := range rows {
					pv.gInts[j] = ints[i]
				}
				ints = pv.gInts
			}
			pv.gt, pv.gf = resizeTo(pv.gt, (m+7)/8), resizeTo(pv.gf, (m+7)/8)
			ct, cf = pv.gt, pv.gf
			clear(ct)
			clear(cf)
		}
		ok := true
		switch {
		case floats != nil:
			ok = cmpFloats(floats[:m], x.c.Kind, x.c.Float, x.c.Int, x.op, ct, cf)
		case v.Scale >= 0:
			ok = cmpScaled(ints[:m], pow10(v.Scale), x.c.Kind, x.c.Float, x.c.Int, x.op, ct, cf)
		case x.c.Kind == schema.IntValue:
			cmpInts(ints[:m], x.c.Int, x.op, ct, cf)
		default:
			ok = false
		}
		if !ok {
			return false, nil
		}
		for j, i := range rows {
			t[i>>3] |= (ct[j>>3] >> (j & 7) & 1) << (i & 7)
			f[i>>3] |= (cf[j>>3] >> (j & 7) & 1) << (i & 7)
		}
		maskNulls(v, x.op, n, t, f)
		return true, nil
	}
	return false, nil
}

// maskNulls makes the NULL rows of a comparison of v neither TRUE nor
// FALSE, but FALSE for <=>.
func maskNulls(v *segment.Values, op Op, n int, t, f []byte) {
	if v.Valid == nil {
		return
	}
	for i := range (n + 7) / 8 {
		t[i] &= v.Valid[i]
		if op == NullSafeEq {
			f[i] |= ^v.Valid[i]
		} else {
			f[i] &= v.Valid[i]
		}
	}
	clearTail(f, n)
}

// recompared returns, by slot, whether b compares the slot more than once.
func recompared(b bound) []bool {
	var n []int
	var walk func(bound)
	walk = func(b bound) {
		switch x := b.(type) {
		case *boundLogic:
			for _, k := range x.kids {
				walk(k)
			}
		case *boundNot:
			walk(x.k)
		case *boundCmp:
			for len(n) <= x.slot {
				n = append(n, 0)
			}
			n[x.slot]++
		}
	}
	if b != nil {
		walk(b)
	}
	out := make([]bool, len(n))
	for i, c := range n {
		out[i] = c > 1
	}
	return out
}

// clearTail clears the bits of bm past row n.
func clearTail(bm []byte, n int) {
	if n%8 != 0 {
		bm[n/8] &= byte(1)<<(n%8) - 1
	}
}

func pow10(e int) float64 { return math.Pow10(e) }

// opBits is the set of outcomes of cmp.Compare (bit 0 less, 1 equal, 2
// greater) for which op is TRUE.
func opBits(op Op) uint8 {
	switch op {
	case Eq, NullSafeEq:
		return 0b010
	case Ne:
		return 0b101
	case Lt:
		return 0b001
	case Le:
		return 0b011
	case Gt:
		return 0b100
	case Ge:
		return 0b110
	}
	return 0
}

func b2u(b bool) uint8 {
	var x uint8
	if b {
		x = 1
	}
	return x
}

// intRange is a comparison of values as a range of int64s: TRUE for v in
// [a, a+span], or outside it when negate; none says the range is empty.
type intRange struct {
	a      int64
	span   uint64
	negate bool
	none   bool
}

// set sets the TRUE rows of n in t and the others in f, eight rows to a
// byte, testing each value through test unless the range decides alone.
func (r intRange) set(n int, t, f []byte, test func(a int64, span uint64, negate bool)) {
	if r.none {
		if r.negate {
			setAll(t, n)
		} else {
			setAll(f, n)
		}
		return
	}
	test(r.a, r.span, r.negate)
}

// opRange returns op c as a range.
func opRange(c int64, op Op) intRange {
	// Every op is v in [a, b] or its negation, or no row at all.
	a, b, negate := c, c, false
	switch op {
	case Eq, NullSafeEq:
	case Ne:
		negate = true
	case Ge, Lt:
		b, negate = math.MaxInt64, op == Lt
	case Gt, Le:
		if c == math.MaxInt64 {
			return intRange{none: true, negate: op == Le}
		}
		a, b, negate = c+1, math.MaxInt64, op == Le
	}
	return intRange{a: a, span: uint64(b - a), negate: negate}
}

// cmpInts sets the TRUE rows of vals op c in t and the others in f, eight
// rows to a byte.
func cmpInts(vals []int64, c int64, op Op, t, f []byte) {
	opRange(c, op).set(len(vals), t, f, func(a int64, span uint64, negate bool) {
		rangeBits(vals, a, span, negate, t, f)
	})
}

// rangeBits sets in t the rows of vals in [a, a+span] (or, negated,
// outside it) and the others in f, eight rows to a byte, unrolled.
func rangeBits(vals []int64, a int64, span uint64, negate bool, t, f []byte) {
	var flip byte
	if negate {
		flip = 0xff
	}
	n := len(vals)
	i := 0
	for ; i+8 <= n; i += 8 {
		v := vals[i : i+8 : i+8]
		tb := b2u(uint64(v[0]-a) <= span) | b2u(uint64(v[1]-a) <= span)<<1 |
			b2u(uint64(v[2]-a) <= span)<<2 | b2u(uint64(v[3]-a) <= span)<<3 |
			b2u(uint64(v[4]-a) <= span)<<4 | b2u(uint64(v[5]-a) <= span)<<5 |
			b2u(uint64(v[6]-a) <= span)<<6 | b2u(uint64(v[7]-a) <= span)<<7
		tb ^= flip
		t[i>>3] |= tb
		f[i>>3] |= ^tb
	}
	if i < n {
		var tb byte
		for j, v := range vals[i:] {
			tb |= b2u(uint64(v-a) <= span) << j
		}
		mask := byte(1)<<(n-i) - 1
		tb = (tb ^ flip) & mask
		t[i>>3] |= tb
		f[i>>3] |= ^tb & mask
	}
}

// cmpFloats is cmpInts of doubles against a number constant, in the
// order cmp.Compare gives floats (NaN below every number, equal to NaN),
// as eval.go compares them. It declines (false) a constant that is no
// number or is NaN.
func cmpFloats(vals []float64, kind schema.ValueKind, cf float64, ci int64, op Op, t, f []byte) bool {
	c, ok := floatConst(kind, cf, ci)
	if !ok {
		return false
	}
	bits := opBits(op)
	n := len(vals)
	for i := 0; i < n; i += 8 {
		w := vals[i:min(n, i+8)]
		var tb byte
		for j, v := range w {
			r := 1 + b2u(v > c) - b2u(v < c) - b2u(v != v)
			tb |= (bits >> r & 1) << j
		}
		t[i>>3] |= tb
		f[i>>3] |= ^tb & (byte(1)<<len(w) - 1)
	}
	return true
}

// cmpScaled compares the doubles of a decimal-scaled page, vals[i] / p
// as the page decodes them, with a number constant, as cmpInts does. It
// declines (false) a constant that is no number or is NaN.
func cmpScaled(vals []int64, p float64, kind schema.ValueKind, cf float64, ci int64, op Op, t, f []byte) bool {
	r, ok := scaledRange(p, kind, cf, ci, op)
	if !ok {
		return false
	}
	r.set(len(vals), t, f, func(a int64, span uint64, negate bool) {
		rangeBits(vals, a, span, negate, t, f)
	})
	return true
}

// scaledRange is opRange for the doubles of a decimal-scaled page, the
// stored integers v read as v / p. Decoding is monotone in v (the
// conversion to float64 and the division by a positive p both round
// monotonically), so the rows where the double is at least c, and those
// where it is above c, are each the integers from a threshold up; the
// comparison becomes one of integers against the thresholds, found by
// bisection with the decoding itself.
func scaledRange(p float64, kind schema.ValueKind, cf float64, ci int64, op Op) (intRange, bool) {
	c, ok := floatConst(kind, cf, ci)
	if !ok {
		return intRange{}, false
	}
	ge, geOK := firstInt(func(v int64) bool { return float64(v)/p >= c })
	gt, gtOK := firstInt(func(v int64) bool { return float64(v)/p > c })
	// Every op is v in [a, b] or its negation; none is an empty range.
	var a, b int64 = 0, math.MaxInt64
	none, negate := false, false
	switch op {
	case Gt, Le:
		a, none, negate = gt, !gtOK, op == Le
	case Ge, Lt:
		a, none, negate = ge, !geOK, op == Lt
	case Eq, NullSafeEq, Ne:
		// [ge, gt-1]; when no v is above c, [ge, MaxInt64].
		a, none, negate = ge, !geOK || gtOK && gt <= ge, op == Ne
		if gtOK {
			b = gt - 1
		}
	default:
		return intRange{}, false
	}
	if none {
		return intRange{none: true, negate: negate}, true
	}
	return intRange{a: a, span: uint64(b - a), negate: negate}, true
}

// firstInt returns the least int64 for which the monotone pred holds, and
// false when it holds for none.
func firstInt(pred func(int64) bool) (int64, bool) {
	if !pred(math.MaxInt64) {
		return 0, false
	}
	if pred(math.MinInt64) {
		return math.MinInt64, true
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64) // pred(lo) false, pred(hi) true
	for uint64(hi-lo) > 1 {
		mid := lo + int64(uint64(hi-lo)/2)
		if pred(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

func floatConst(kind schema.ValueKind, cf float64, ci int64) (float64, bool) {
	var c float64
	switch kind {
	case schema.FloatValue:
		c = cf
	case schema.IntValue:
		c = float64(ci)
	default:
		return 0, false
	}
	if c != c {
		return 0, false
	}
	return c, true
}

// selectivity estimates, from the zone maps st gives, the share of a
// page's rows for which b is TRUE, assuming values spread evenly between a
// column's minimum and maximum. It only orders the conjuncts of an AND (see
// orderConjuncts), so it may be rough but must be cheap; what it cannot
// judge it puts at 1, last.
func selectivity(b bound, st func(int) segment.ZoneMap) float64 {
	switch x := b.(type) {
	case boundConst:
		return 0
	case *boundNot:
		return 1 - selectivity(x.k, st)
	case *boundLogic:
		if x.and {
			s := 1.0
			for _, k := range x.kids {
				s *= selectivity(k, st)
			}
			return s
		}
		s := 0.0
		for _, k := range x.kids {
			s += selectivity(k, st)
		}
		return min(s, 1)
	case *boundIsNull:
		z := st(x.slot)
		if z.Rows <= 0 {
			return 1
		}
		s := float64(z.NullCount) / float64(z.Rows)
		if x.negate {
			s = 1 - s
		}
		return s
	case *boundCmp:
		return cmpSelectivity(x, st(x.slot))
	}
	return 1
}

// cmpSelectivity is selectivity of a comparison with a number, given the
// zone map of its column.
func cmpSelectivity(b *boundCmp, z segment.ZoneMap) float64 {
	num := func(v schema.Value) (float64, bool) {
		switch v.Kind {
		case schema.IntValue:
			return float64(v.Int), true
		case schema.FloatValue:
			return v.Float, v.Float == v.Float
		}
		return 0, false
	}
	lo, okLo := num(z.Min)
	hi, okHi := num(z.Max)
	c, okC := num(b.c)
	if !okLo || !okHi || !okC || z.Rows <= 0 || hi < lo {
		return 1
	}
	nonNull := float64(z.Rows-z.NullCount) / float64(z.Rows)
	width := hi - lo
	// below is the share of the non-NULL values under c.
	var below float64
	switch {
	case c <= lo:
		below = 0
	case c > hi:
		below = 1
	case width > 0:
		below = (c - lo) / width
	}
	eq := 0.0
	if c >= lo && c <= hi {
		// One value of the range, or of the page's rows when it has
		// fewer.
		eq = 1 / max(1, min(float64(z.Rows), width+1))
	}
	var s float64
	switch b.op {
	case Eq, NullSafeEq:
		s = eq
	case Ne:
		s = 1 - eq
	case Lt, Le:
		s = below
		if b.op == Le {
			s += eq
		}
	case Gt, Ge:
		s = 1 - below
		if b.op == Gt {
			s -= eq
		}
	default:
		return 1
	}
	return min(max(s, 0), 1) * nonNull
}

// orderConjuncts sorts kids, the conjuncts of the scan's top-level AND, by
// their selectivity on the page st describes, the most selective first, so
// that every later one is tested only on the few rows the first left (a
// packed column then visits those rows alone). The order of the AND's
// operands changes which rows each is tested on, never the rows it keeps.
// est receives the estimates; both slices are the caller's.
func orderConjuncts(kids []bound, est []float64, st func(int) segment.ZoneMap) {
	for i, k := range kids {
		est[i] = selectivity(k, st)
	}
	// Insertion sort: a handful of conjuncts, and equal ones keep their
	// written order.
	for i := 1; i < len(kids); i++ {
		for j := i; j > 0 && est[j] < est[j-1]; j-- {
			est[j], est[j-1] = est[j-1], est[j]
			kids[j], kids[j-1] = kids[j-1], kids[j]
		}
	}
}
