package exec

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// distribute computes NTile, PercentRank and CumeDist, which depend only
// on a row's place among its partition's rows and peers.
func (w *window) distribute(s WindowSpec, res *windowResult, perm []int32, partStart, peerStart []bool) {
	n := len(perm)
	if s.Func == NTile {
		res.ints = make([]int64, n)
	} else {
		res.flts = make([]float64, n)
	}
	for ps, pe := range partitions(partStart) {
		m := int64(pe - ps)
		var q, r int64
		if s.Func == NTile {
			q, r = m/s.Offset, m%s.Offset
		}
		// peerEnd of the current peer group, found as each group starts.
		rank, end := int64(0), ps
		for i := ps; i < pe; i++ {
			g := perm[i]
			k := int64(i - ps)
			if peerStart[i] || i == ps {
				rank = k + 1
				end = i + 1
				for end < pe && !peerStart[end] {
					end++
				}
			}
			switch s.Func {
			case NTile:
				// The first r buckets hold q+1 rows, the others q.
				if k < r*(q+1) {
					res.ints[g] = k/(q+1) + 1
				} else {
					res.ints[g] = r + (k-r*(q+1))/q + 1
				}
			case PercentRank:
				if m > 1 {
					res.flts[g] = float64(rank-1) / float64(m-1)
				}
			case CumeDist:
				res.flts[g] = float64(end-ps) / float64(m)
			}
		}
	}
}

// frames returns the frame [fs[i], fe[i]) of each position i of perm:
// s.Frame's, or SQL's default one.
func (w *window) frames(s WindowSpec, perm []int32, partStart, peerStart []bool) (fs, fe []int32, err error) {
	n := len(perm)
	if err := w.grow(int64(n) * 16); err != nil {
		return nil, nil, err
	}
	fs, fe = make([]int32, n), make([]int32, n)
	// peer groups: first and one past the last position of each row's.
	peerFirst, peerEnd := make([]int32, n), make([]int32, n)
	for i := range n {
		if i == 0 || peerStart[i] || partStart[i] {
			peerFirst[i] = int32(i)
		} else {
			peerFirst[i] = peerFirst[i-1]
		}
	}
	for i := n - 1; i >= 0; i-- {
		if i == n-1 || peerStart[i+1] || partStart[i+1] {
			peerEnd[i] = int32(i + 1)
		} else {
			peerEnd[i] = peerEnd[i+1]
		}
	}
	f := s.Frame
	for ps, pe := range partitions(partStart) {
		switch {
		case f == nil && len(s.Order) > 0:
			for i := ps; i < pe; i++ {
				fs[i], fe[i] = int32(ps), peerEnd[i]
			}
		case f == nil:
			for i := ps; i < pe; i++ {
				fs[i], fe[i] = int32(ps), int32(pe)
			}
		case !f.Range:
			for i := ps; i < pe; i++ {
				a, b := frameBounds(f, i, ps, pe)
				fs[i], fe[i] = int32(a), int32(max(a, b))
			}
		default:
			if err := w.rangeFrames(s, perm, ps, pe, peerFirst, peerEnd, fs, fe); err != nil {
				return nil, nil, err
			}
		}
	}
	return fs, fe, nil
}

// rangeFrames fills the RANGE frames of partition [ps, pe). The frame
// starts at the first peer (CURRENT ROW), the partition's first row, or
// the first row whose key is within n before the row's; it ends after the
// last peer, the partition's last row, or the last row within n after.
// Keys are sorted, so both ends only move forward.
func (w *window) rangeFrames(s WindowSpec, perm []int32, ps, pe int, peerFirst, peerEnd, fs, fe []int32) error {
	f := s.Frame
	var key *flatCol
	desc := false
	scale := 0
	if len(s.Order) == 1 {
		var err error
		if key, err = w.flat(s.Order[0].Column); err != nil {
			return err
		}
		desc = s.Order[0].Desc
		scale = w.schema[s.Order[0].Column].Type.Scale
	}
	// A DECIMAL key measures offsets in its unscaled units; an offset
	// past 38 digits takes in every value.
	decOff := func(off int64) (decimal128.Num, bool) {
		if scale > 0 && off >= decimalPow10(38-scale) {
			return decimal128.Num{}, false
		}
		return decimal128.FromI64(off).Mul(decimal128.FromI64(decimalPow10(min(scale, 18)))).Mul(decimal128.FromI64(decimalPow10(max(scale-18, 0)))), true
	}
	// within reports position j's key within off of position i's, j
	// before i in the sort order when before is set, after it otherwise;
	// a NULL is within nothing.
	within := func(i, j int, off int64, before bool) bool {
		a, b := perm[i], perm[j]
		if key.null(b) {
			return false
		}
		// The distance is key[x] - key[y], never negative in sort order.
		x, y := a, b
		if before == desc {
			x, y = b, a
		}
		if key.decs != nil {
			lim, ok := decOff(off)
			d := key.decs[x].Sub(key.decs[y])
			return !ok || d.Cmp(lim) <= 0
		}
		if key.ints != nil {
			kx, ky := key.ints[x], key.ints[y]
			if kx <= ky {
				return true
			}
			// Two's complement: the difference of int64s fits uint64.
			return uint64(kx)-uint64(ky) <= uint64(off)
		}
		d := key.floats[x] - key.floats[y]
		return !(d > float64(off)) // NaN keys are each other's peers
	}
	lo, hi := ps, ps
	for i := ps; i < pe; i++ {
		nullKey := key != nil && key.null(perm[i])
		switch f.Start.Kind {
		case UnboundedPreceding:
			fs[i] = int32(ps)
		case CurrentRow:
			fs[i] = peerFirst[i]
		case Preceding:
			if nullKey {
				fs[i] = peerFirst[i]
				break
			}
			for lo < i && !within(i, lo, f.Start.Offset, true) {
				lo++
			}
			fs[i] = int32(lo)
		}
		switch f.End.Kind {
		case UnboundedFollowing:
			fe[i] = int32(pe)
		case CurrentRow:
			fe[i] = peerEnd[i]
		case Following:
			if nullKey {
				fe[i] = peerEnd[i]
				break
			}
			hi = max(hi, int(peerEnd[i]))
			for hi < pe && within(i, hi, f.End.Offset, false) {
				hi++
			}
			fe[i] = int32(hi)
		}
		fe[i] = max(fe[i], fs[i])
	}
	return nil
}

// decimalPow10 is 10^n for 0 <= n <= 18, and MaxInt64 past it (so that
// no int64 offset reaches it).
func decimalPow10(n int) int64 {
	if n > 18 {
		return math.MaxInt64
	}
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}
