package exec

import (
	"iter"
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/schema"
)

// partitions yields the [start, end) positions of each partition.
func partitions(partStart []bool) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		start := 0
		for i := 1; i <= len(partStart); i++ {
			if i == len(partStart) || partStart[i] {
				if !yield(start, i) {
					return
				}
				start = i
			}
		}
	}
}

// frameBounds returns the ROWS frame f of position i in partition
// [ps, pe).
func frameBounds(f *WindowFrame, i, ps, pe int) (int, int) {
	// Offsets past the partition all mean the same: clamp them so that
	// the sums below cannot overflow.
	off := func(b FrameBound) int { return int(min(b.Offset, int64(pe-ps+1))) }
	var fs, fe int
	switch f.Start.Kind {
	case UnboundedPreceding:
		fs = ps
	case Preceding:
		fs = i - off(f.Start)
	case CurrentRow:
		fs = i
	case Following:
		fs = i + off(f.Start)
	}
	switch f.End.Kind {
	case CurrentRow:
		fe = i + 1
	case Preceding:
		fe = i - off(f.End) + 1
	case Following:
		fe = i + off(f.End) + 1
	case UnboundedFollowing:
		fe = pe
	}
	return max(ps, min(fs, pe)), max(ps, min(fe, pe))
}

// frameState is an aggregate over a sliding frame: rows enter at its end
// and leave at its start.
type frameState struct {
	agg   AggFunc
	arg   *flatCol
	perm  []int32
	count int64
	// dec sums an integer or DECIMAL argument in 192 bits: it adds and
	// subtracts in any order (no sum of 2^31 BIGINTs reaches its range)
	// and only the totals are checked.
	dec  decimal.Acc
	fsum float64
	// Non-finite floats are counted rather than summed, since Inf - Inf
	// would turn a frame that lost its infinity into NaN.
	nan, posInf, negInf int64
	// deque holds positions whose values may still be the frame's min or
	// max, in position order and in value order.
	deque []int32
	head  int
}

func (s *frameState) reset() {
	s.count, s.dec, s.fsum, s.nan, s.posInf, s.negInf = 0, decimal.Acc{}, 0, 0, 0, 0
	s.deque, s.head = s.deque[:0], 0
}

func (s *frameState) add(p int) {
	if s.agg == CountStar {
		return
	}
	g := s.perm[p]
	if s.arg.null(g) {
		return
	}
	s.count++
	switch s.agg {
	case Sum, Avg:
		s.addValue(g, 1)
	case Min, Max:
		for len(s.deque) > s.head {
			c := s.arg.cmp(s.perm[s.deque[len(s.deque)-1]], g)
			if s.agg == Max {
				c = -c
			}
			if c < 0 {
				break
			}
			s.deque = s.deque[:len(s.deque)-1]
		}
		s.deque = append(s.deque, int32(p))
	}
}

func (s *frameState) remove(p int) {
	if s.agg == CountStar {
		return
	}
	g := s.perm[p]
	if s.arg.null(g) {
		return
	}
	s.count--
	switch s.agg {
	case Sum, Avg:
		s.addValue(g, -1)
	case Min, Max:
		if s.head < len(s.deque) && int(s.deque[s.head]) == p {
			s.head++
		}
	}
}

func (s *frameState) addValue(g int32, sign int) {
	switch {
	case s.arg.ints != nil:
		if sign > 0 {
			s.dec.AddInt(s.arg.ints[g])
		} else {
			s.dec.SubInt(s.arg.ints[g])
		}
	case s.arg.decs != nil:
		if sign > 0 {
			s.dec.Add(s.arg.decs[g])
		} else {
			s.dec.Sub(s.arg.decs[g])
		}
	default:
		v := s.arg.floats[g]
		d := int64(sign)
		switch {
		case v != v:
			s.nan += d
		case math.IsInf(v, 1):
			s.posInf += d
		case math.IsInf(v, -1):
			s.negInf += d
		default:
			s.fsum += float64(sign) * v
		}
	}
}

func (s *frameState) floatSum() float64 {
	switch {
	case s.nan > 0 || s.posInf > 0 && s.negInf > 0:
		return math.NaN()
	case s.posInf > 0:
		return math.Inf(1)
	case s.negInf > 0:
		return math.Inf(-1)
	}
	return s.fsum
}

// aggregate computes the WindowAgg s over the frames of every row.
func (w *window) aggregate(si int, arg *flatCol, res *windowResult, perm []int32, partStart, peerStart []bool) error {
	s := w.specs[si]
	n := len(perm)
	fss, fes, err := w.frames(s, perm, partStart, peerStart)
	if err != nil {
		return err
	}
	var argType, outType schema.Type
	if s.Agg != CountStar {
		argType = w.schema[s.Arg].Type
	}
	outType = w.schema[w.nIn+si].Type
	if s.Agg >= VarPop && s.Agg <= StddevSamp {
		res.flts, res.valid = make([]float64, n), make([]bool, n)
		windowVariance(s.Agg, arg, res, perm, partStart, fss, fes)
		return nil
	}
	switch {
	case s.Agg == CountStar || s.Agg == Count:
		res.ints = make([]int64, n)
	case s.Agg == Min || s.Agg == Max:
		res.refs = make([]rowRef, n)
	case outType.Kind == schema.BigInt:
		res.ints, res.valid = make([]int64, n), make([]bool, n)
	case outType.Kind == schema.Double:
		res.flts, res.valid = make([]float64, n), make([]bool, n)
	default:
		res.decs, res.valid = make([]decimal128.Num, n), make([]bool, n)
	}
	st := &frameState{agg: s.Agg, arg: arg, perm: perm}
	for ps, pe := range partitions(partStart) {
		st.reset()
		curS, curE := ps, ps
		for i := ps; i < pe; i++ {
			fs, fe := int(fss[i]), int(fes[i])
			for ; curE < fe; curE++ {
				st.add(curE)
			}
			for ; curS < fs; curS++ {
				st.remove(curS)
			}
			g := perm[i]
			switch s.Agg {
			case CountStar:
				res.ints[g] = int64(fe - fs)
				continue
			case Count:
				res.ints[g] = st.count
				continue
			case Min, Max:
				if st.head < len(st.deque) {
					res.refs[g] = w.refs[perm[st.deque[st.head]]]
				} else {
					res.refs[g] = nullRef
				}
				continue
			}
			if st.count == 0 {
				continue // NULL: valid stays false
			}
			res.valid[g] = true
			switch {
			case s.Agg == Sum && outType.Kind == schema.BigInt:
				v, ok := st.dec.Int64()
				if !ok {
					return rowttl.Errorf(rowttl.ErrInvalidArgument, "Window: %s(%s) overflows BIGINT: %s",
						s.Agg, w.schema[s.Arg].Name, st.dec.Big())
				}
				res.ints[g] = v
			case s.Agg == Sum && outType.Kind == schema.Double:
				res.flts[g] = st.floatSum()
			case s.Agg == Sum:
				v, ok := st.dec.Total(outType.Decimal())
				if !ok {
					return decimalOutOfRange(s.Name)
				}
				res.decs[g] = v
			case argType.Kind == schema.Float || argType.Kind == schema.Double:
				res.flts[g] = st.floatSum() / float64(st.count)
			case outType.Kind == schema.Double:
				if v, ok := st.dec.Int64(); ok {
					res.flts[g] = float64(v) / float64(st.count)
				} else {
					f, _ := new(big.Float).SetInt(st.dec.Big()).Float64()
					res.flts[g] = f / float64(st.count)
				}
			default:
				// DECIMAL avg, half away from zero, as decimal.Acc rounds it.
				v, ok := st.dec.Avg(st.count, argType.Scale, outType.Decimal())
				if !ok {
					return decimalOutOfRange(s.Name)
				}
				res.decs[g] = v
			}
		}
	}
	return nil
}

// windowVariance computes a variance or standard deviation over each
// row's frame by Welford's update, which cannot take a value back out
// exactly: while the frames' start stays put, each row extends the
// previous frame's state; when it moves, the state is rebuilt from the new
// start. A frame anchored at the partition's start costs O(n), a sliding
// one O(n × width), and either gives the bits a fresh pass over the frame
// would.
func windowVariance(fn AggFunc, arg *flatCol, res *windowResult, perm []int32, partStart []bool, fss, fes []int32) {
	samp := fn == VarSamp || fn == StddevSamp
	for ps, pe := range partitions(partStart) {
		var st welford
		start, end := ps, ps
		add := func(p int) {
			g := perm[p]
			if arg.null(g) {
				return
			}
			x := arg.floats[g]
			st.n++
			d := x - st.mean
			st.mean += d / float64(st.n)
			st.m2 += d * (x - st.mean)
		}
		for i := ps; i < pe; i++ {
			fs, fe := int(fss[i]), int(fes[i])
			if fs != start {
				st, start, end = welford{}, fs, fs
			}
			for ; end < fe; end++ {
				add(end)
			}
			d := float64(st.n)
			if samp {
				d--
			}
			if st.n == 0 || d == 0 {
				continue // NULL: valid stays false
			}
			g := perm[i]
			v := st.m2 / d
			if fn == StddevPop || fn == StddevSamp {
				v = math.Sqrt(v)
			}
			res.flts[g], res.valid[g] = v, true
		}
	}
}

// decimalOutOfRange is the SQL dialect's text for a DECIMAL sum or average
// past 38 digits, the one HashAggregate and the row compiler give.
func decimalOutOfRange(name string) error {
	return rowttl.Errorf(rowttl.ErrInvalidArgument, "DECIMAL value is out of range in '%s'", name)
}
