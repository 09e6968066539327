package exec

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

var windowAggsByName = map[string]AggFunc{"count_star": CountStar, "count": Count, "sum": Sum, "min": Min,
	"max": Max, "avg": Avg, "var_pop": VarPop, "var_samp": VarSamp, "stddev_pop": StddevPop, "stddev_samp": StddevSamp}

var windowFuncsByName = map[string]WindowFunc{"row_number": RowNumber, "rank": Rank, "dense_rank": DenseRank,
	"lag": Lag, "lead": Lead, "ntile": NTile, "percent_rank": PercentRank, "cume_dist": CumeDist,
	"first_value": FirstValue, "last_value": LastValue, "nth_value": NthValue}

// parseBound reads up, uf, cr, Np (N PRECEDING) or Nf (N FOLLOWING).
func parseBound(s string) (FrameBound, error) {
	switch s {
	case "up":
		return FrameBound{Kind: UnboundedPreceding}, nil
	case "uf":
		return FrameBound{Kind: UnboundedFollowing}, nil
	case "cr":
		return FrameBound{Kind: CurrentRow}, nil
	}
	if len(s) < 2 {
		return FrameBound{}, fmt.Errorf("bad bound %q", s)
	}
	n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
	if err != nil {
		return FrameBound{}, err
	}
	switch s[len(s)-1] {
	case 'p':
		return FrameBound{Kind: Preceding, Offset: n}, nil
	case 'f':
		return FrameBound{Kind: Following, Offset: n}, nil
	}
	return FrameBound{}, fmt.Errorf("bad bound %q", s)
}

// parseWindowSpec reads one line: NAME FUNC [arg=i] [off=n] [default=v]
// [part=i,j] [order=i[:desc][:nf|:nl],...] [frame=START:END]
// [range=START:END]. SQL's NULL order is the default: first ascending,
// last descending.
func parseWindowSpec(mem memory.Allocator, in Schema, line string) (WindowSpec, error) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return WindowSpec{}, fmt.Errorf("spec %q: want NAME FUNC ...", line)
	}
	s := WindowSpec{Name: f[0], Offset: 1}
	if fn, ok := windowFuncsByName[f[1]]; ok {
		s.Func = fn
	} else if agg, ok := windowAggsByName[f[1]]; ok {
		s.Func, s.Agg = WindowAgg, agg
	} else {
		s.Func = WindowFunc(99)
	}
	var def string
	for _, kv := range f[2:] {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "arg":
			s.Arg, err = strconv.Atoi(v)
		case "off":
			s.Offset, err = strconv.ParseInt(v, 10, 64)
		case "default":
			def = v
		case "part":
			for _, p := range strings.Split(v, ",") {
				n, err := strconv.Atoi(p)
				if err != nil {
					return s, err
				}
				s.Partition = append(s.Partition, n)
			}
		case "order":
			for _, o := range strings.Split(v, ",") {
				parts := strings.Split(o, ":")
				n, err := strconv.Atoi(parts[0])
				if err != nil {
					return s, err
				}
				key := SortKey{Column: n, NullsFirst: true}
				for _, m := range parts[1:] {
					switch m {
					case "desc":
						key.Desc, key.NullsFirst = true, false
					case "nf":
						key.NullsFirst = true
					case "nl":
						key.NullsFirst = false
					}
				}
				s.Order = append(s.Order, key)
			}
		case "frame", "range":
			a, b, _ := strings.Cut(v, ":")
			fr := &WindowFrame{Range: k == "range"}
			if fr.Start, err = parseBound(a); err == nil {
				fr.End, err = parseBound(b)
			}
			s.Frame = fr
		default:
			err = fmt.Errorf("unknown key %q", k)
		}
		if err != nil {
			return s, err
		}
	}
	if def != "" {
		v, err := relParseValue(in[s.Arg].Type, def)
		if err != nil {
			return s, err
		}
		s.Default = relConstArray(mem, in[s.Arg].Type, v)
	}
	return s, nil
}

func relConstArray(mem memory.Allocator, t schema.Type, v any) arrow.Array {
	b := array.NewBuilder(mem, t.Arrow())
	defer b.Release()
	relAppend(b, v)
	return b.NewArray()
}

func releaseDefaults(specs []WindowSpec) {
	for _, s := range specs {
		if s.Default != nil {
			s.Default.Release()
		}
	}
}

// TestWindowGolden runs testdata/window.txt. Besides rel:
//
//	window in=R [budget=bytes]
//	<one window spec per line, see parseWindowSpec>
//
// Regenerate with: go test ./exec -run TestWindowGolden -rewrite
func TestWindowGolden(t *testing.T) {
	relGolden(t, "testdata/window.txt", func(t *testing.T, d *datadriven.TestData, env *Env, source func(string) Operator) string {
		if d.Cmd != "window" {
			d.Fatalf(t, "unknown command %s", d.Cmd)
		}
		var name string
		d.ScanArgs(t, "in", &name)
		in := source(name)
		var specs []WindowSpec
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			s, err := parseWindowSpec(env.Mem, in.Schema(), line)
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			specs = append(specs, s)
		}
		op, err := NewWindow(env, in, specs)
		releaseDefaults(specs)
		if err != nil {
			in.Close()
		}
		return relResult(op, err)
	})
}

// relCompareNulls orders cells with NULLs where nullsFirst says.
func relCompareNulls(a, b any, desc, nullsFirst bool) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		if nullsFirst {
			return -1
		}
		return 1
	case b == nil:
		if nullsFirst {
			return 1
		}
		return -1
	}
	c := relCompare(a, b)
	if desc {
		return -c
	}
	return c
}

var errModelOverflow = errors.New("overflow")

// windowModel computes the specs the way SQL defines them, one frame at a
// time, and returns the output rows in the operator's documented order.
func windowModel(in rel, specs []WindowSpec, defaults []any) ([][]any, error) {
	n := len(in.rows)
	results := make([][]any, len(specs))
	var first []int
	for si, s := range specs {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		samePart := func(a, b int) bool {
			for _, p := range s.Partition {
				if relCompareNulls(in.rows[a][p], in.rows[b][p], false, true) != 0 {
					return false
				}
			}
			return true
		}
		cmpOrder := func(a, b int) int {
			for _, k := range s.Order {
				if c := relCompareNulls(in.rows[a][k.Column], in.rows[b][k.Column], k.Desc, k.NullsFirst); c != 0 {
					return c
				}
			}
			return 0
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			for _, p := range s.Partition {
				if c := relCompareNulls(in.rows[a][p], in.rows[b][p], false, true); c != 0 {
					return c
				}
			}
			return cmpOrder(a, b)
		})
		if si == 0 {
			first = idx
		}
		results[si] = make([]any, n)
		for start := 0; start < n; {
			end := start + 1
			for end < n && samePart(idx[start], idx[end]) {
				end++
			}
			part := idx[start:end]
			for p, g := range part {
				v, err := windowModelValue(in, s, defaults[si], part, p, cmpOrder)
				if err != nil {
					return nil, err
				}
				results[si][g] = v
			}
			start = end
		}
	}
	var out [][]any
	for _, g := range first {
		row := slices.Clone(in.rows[g])
		for si := range specs {
			row = append(row, results[si][g])
		}
		out = append(out, row)
	}
	return out, nil
}

func windowModelValue(in rel, s WindowSpec, def any, part []int, p int, cmpOrder func(a, b int) int) (any, error) {
	switch s.Func {
	case RowNumber:
		return int64(p + 1), nil
	case Rank:
		r := p
		for r > 0 && cmpOrder(part[r-1], part[p]) == 0 {
			r--
		}
		return int64(r + 1), nil
	case DenseRank:
		d := int64(1)
		for q := 1; q <= p; q++ {
			if cmpOrder(part[q-1], part[q]) != 0 {
				d++
			}
		}
		return d, nil
	case Lag, Lead:
		q := p - int(s.Offset)
		if s.Func == Lead {
			q = p + int(s.Offset)
		}
		if q < 0 || q >= len(part) {
			return def, nil
		}
		return in.rows[part[q]][s.Arg], nil
	case NTile:
		// Deal the rows one by one into the smallest-numbered bucket
		// that is not full, the first m%n buckets holding one more.
		m, n := int64(len(part)), s.Offset
		b, left := int64(1), m/n
		if m%n > 0 {
			left++
		}
		for q := 0; q < p; q++ {
			if left--; left == 0 {
				b++
				left = m / n
				if b <= m%n {
					left++
				}
			}
		}
		return b, nil
	case PercentRank:
		if len(part) == 1 {
			return 0.0, nil
		}
		r := p
		for r > 0 && cmpOrder(part[r-1], part[p]) == 0 {
			r--
		}
		return float64(r) / float64(len(part)-1), nil
	case CumeDist:
		q := p
		for q+1 < len(part) && cmpOrder(part[q+1], part[p]) == 0 {
			q++
		}
		return float64(q+1) / float64(len(part)), nil
	}
	lo, hi := windowModelFrame(in, s, part, p, cmpOrder)
	switch s.Func {
	case FirstValue, LastValue, NthValue:
		q := lo
		switch s.Func {
		case LastValue:
			q = hi
		case NthValue:
			q = lo + int(s.Offset) - 1
		}
		if lo > hi || q > hi {
			return nil, nil
		}
		return in.rows[part[q]][s.Arg], nil
	}
	var vals []any
	count := int64(0)
	for q := lo; q <= hi; q++ {
		count++
		if s.Agg != CountStar {
			if v := in.rows[part[q]][s.Arg]; v != nil {
				vals = append(vals, v)
			}
		}
	}
	switch s.Agg {
	case CountStar:
		return count, nil
	case Count:
		return int64(len(vals)), nil
	}
	if len(vals) == 0 {
		return nil, nil
	}
	switch s.Agg {
	case VarPop, VarSamp, StddevPop, StddevSamp:
		fs := make([]float64, len(vals))
		for i, v := range vals {
			fs[i] = v.(float64)
		}
		return modelVariance(s.Agg, fs), nil
	case Min, Max:
		best := vals[0]
		for _, v := range vals[1:] {
			c := relCompare(v, best)
			if s.Agg == Min && c < 0 || s.Agg == Max && c > 0 {
				best = v
			}
		}
		return best, nil
	}
	t := in.schema[s.Arg].Type
	if t.Kind == schema.Float || t.Kind == schema.Double {
		sum := 0.0
		for _, v := range vals {
			sum += v.(float64)
		}
		if s.Agg == Avg {
			return sum / float64(len(vals)), nil
		}
		return sum, nil
	}
	sum := new(big.Int)
	for _, v := range vals {
		switch v := v.(type) {
		case int64:
			sum.Add(sum, big.NewInt(v))
		case decimal128.Num:
			sum.Add(sum, v.BigInt())
		}
	}
	switch {
	case s.Agg == Sum && t.IsInteger():
		if !sum.IsInt64() {
			return nil, errModelOverflow
		}
		return sum.Int64(), nil
	case s.Agg == Sum:
		return decimal128.FromBigInt(sum), nil
	case t.IsInteger():
		f, _ := new(big.Float).SetInt(sum).Float64()
		return f / float64(len(vals)), nil
	}
	// DECIMAL avg at scale max(s,4), half away from zero.
	up := max(t.Scale, 4) - t.Scale
	r := new(big.Rat).SetFrac(new(big.Int).Mul(sum, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(up)), nil)),
		big.NewInt(int64(len(vals))))
	neg := r.Sign() < 0
	r.Abs(r)
	r.Add(r, big.NewRat(1, 2))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if neg {
		q.Neg(q)
	}
	return decimal128.FromBigInt(q), nil
}

// windowModelFrame returns the frame [lo, hi] (inclusive; empty when lo >
// hi) of position p of partition part, by the definitions: ROWS counts
// positions; RANGE takes the rows whose key is within the offsets of the
// row's (a NULL key: its NULL peers), CURRENT ROW meaning the peers.
func windowModelFrame(in rel, s WindowSpec, part []int, p int, cmpOrder func(a, b int) int) (int, int) {
	lo, hi := 0, len(part)-1
	f := s.Frame
	switch {
	case f == nil && len(s.Order) > 0:
		hi = p
		for hi+1 < len(part) && cmpOrder(part[hi+1], part[p]) == 0 {
			hi++
		}
	case f == nil:
	case !f.Range:
		bound := func(b FrameBound) int {
			switch b.Kind {
			case UnboundedPreceding:
				return -1 << 40
			case Preceding:
				return p - int(b.Offset)
			case CurrentRow:
				return p
			case Following:
				return p + int(b.Offset)
			}
			return 1 << 40
		}
		lo, hi = max(lo, bound(f.Start)), min(hi, bound(f.End))
	default:
		// in range: whether position q belongs to the frame of p.
		var key func(q int) any
		desc := false
		if len(s.Order) == 1 {
			c := s.Order[0].Column
			key = func(q int) any { return in.rows[part[q]][c] }
			desc = s.Order[0].Desc
		}
		// dist is how far q's key lies after p's in the sort order.
		dist := func(q int) float64 {
			var d float64
			switch a := key(q).(type) {
			case int64:
				d = float64(a) - float64(key(p).(int64))
			case float64:
				d = a - key(p).(float64)
			case decimal128.Num:
				// Exact, in units of the scale: the offsets compare with
				// whole units, so the sign and the integer part decide.
				sc := in.schema[s.Order[0].Column].Type.Scale
				r := new(big.Rat).SetFrac(new(big.Int).Sub(a.BigInt(), key(p).(decimal128.Num).BigInt()), refPow10Int(sc))
				if desc {
					r.Neg(r)
				}
				// A float on the right side of the exact value, so that
				// comparisons with integer offsets stay exact.
				f, _ := r.Float64()
				switch new(big.Rat).SetFloat64(f).Cmp(r) {
				case 1:
					f = math.Nextafter(f, math.Inf(-1))
				case -1:
					f = math.Nextafter(f, math.Inf(1))
				}
				return f
			}
			if desc {
				d = -d
			}
			return d
		}
		// For a NULL key, an offset bound is its peers' edge.
		startKind, endKind := f.Start.Kind, f.End.Kind
		if key != nil && key(p) == nil {
			if startKind == Preceding {
				startKind = CurrentRow
			}
			if endKind == Following {
				endKind = CurrentRow
			}
		}
		inFrame := func(q int) bool {
			switch startKind {
			case CurrentRow:
				if cmpOrder(part[q], part[p]) < 0 {
					return false
				}
			case Preceding:
				// A NULL key before the row is no distance from it; one
				// after it is past the start.
				if key(q) == nil {
					if cmpOrder(part[q], part[p]) < 0 {
						return false
					}
				} else if dist(q) < -float64(f.Start.Offset) && !math.IsNaN(dist(q)) {
					return false
				}
			}
			switch endKind {
			case CurrentRow:
				if cmpOrder(part[q], part[p]) > 0 {
					return false
				}
			case Following:
				if key(q) == nil {
					if cmpOrder(part[q], part[p]) > 0 {
						return false
					}
				} else if dist(q) > float64(f.End.Offset) {
					return false
				}
			}
			return true
		}
		lo, hi = len(part), -1
		for q := range part {
			if inFrame(q) {
				lo, hi = min(lo, q), max(hi, q)
			}
		}
	}
	return lo, hi
}

func randomBound(rng *rand.Rand, start bool) FrameBound {
	kinds := []FrameBoundKind{UnboundedPreceding, Preceding, CurrentRow, Following, UnboundedFollowing}
	if start {
		kinds = kinds[:4]
	} else {
		kinds = kinds[1:]
	}
	return FrameBound{Kind: kinds[rng.IntN(len(kinds))], Offset: int64(rng.IntN(4))}
}

// randomWindowSpec draws a spec over in's columns whose argument fits
// its function.
func randomWindowSpec(rng *rand.Rand, mem memory.Allocator, in rel, i int) (WindowSpec, any) {
	s := WindowSpec{Name: fmt.Sprintf("w%d", i)}
	for _, c := range rng.Perm(len(in.schema))[:rng.IntN(min(3, len(in.schema))+1)] {
		s.Partition = append(s.Partition, c)
	}
	for _, c := range rng.Perm(len(in.schema))[:rng.IntN(min(3, len(in.schema))+1)] {
		s.Order = append(s.Order, SortKey{Column: c, Desc: rng.IntN(2) == 0, NullsFirst: rng.IntN(2) == 0})
	}
	s.Arg = rng.IntN(len(in.schema))
	t := in.schema[s.Arg].Type
	numeric := t.IsInteger() || t.Kind == schema.Decimal || t.Kind == schema.Double
	var def any
	switch k := rng.IntN(10); {
	case k < 1:
		s.Func = RowNumber
	case k < 2:
		s.Func = Rank
	case k < 3:
		s.Func = DenseRank
	case k < 5:
		s.Func = []WindowFunc{Lag, Lead}[rng.IntN(2)]
		s.Offset = int64(rng.IntN(4))
		if rng.IntN(2) == 0 {
			def = relRandomValue(rng, t, 10, 0.2)
			s.Default = relConstArray(mem, t, def)
		}
	case k < 6:
		s.Func = []WindowFunc{NTile, PercentRank, CumeDist}[rng.IntN(3)]
		if s.Func == NTile {
			s.Offset = 1 + int64(rng.IntN(5))
		}
	case k < 7:
		s.Func = []WindowFunc{FirstValue, LastValue, NthValue}[rng.IntN(3)]
		s.Offset = 1 + int64(rng.IntN(4))
		s.Frame = randomFrame(rng, in, s.Order)
	default:
		s.Func = WindowAgg
		aggs := []AggFunc{CountStar, Count, Min, Max}
		if numeric {
			aggs = append(aggs, Sum, Avg, Sum, Avg)
		}
		if t.Kind == schema.Double {
			aggs = append(aggs, VarPop, VarSamp, StddevPop, StddevSamp)
		}
		s.Agg = aggs[rng.IntN(len(aggs))]
		s.Frame = randomFrame(rng, in, s.Order)
	}
	return s, def
}

// randomFrame draws no frame, a ROWS frame or a RANGE frame (with
// offsets only over one ORDER BY key of a type that measures them).
func randomFrame(rng *rand.Rand, in rel, order []SortKey) *WindowFrame {
	if rng.IntN(3) == 0 {
		return nil
	}
	f := &WindowFrame{Start: randomBound(rng, true), End: randomBound(rng, false)}
	if boundRank(f.Start.Kind) > boundRank(f.End.Kind) {
		f.Start, f.End = FrameBound{Kind: CurrentRow}, FrameBound{Kind: CurrentRow}
	}
	if rng.IntN(2) == 0 {
		return f
	}
	f.Range = true
	if f.Start.Kind == Following {
		f.Start = FrameBound{Kind: CurrentRow}
	}
	if f.End.Kind == Preceding {
		f.End = FrameBound{Kind: CurrentRow}
	}
	if len(order) != 1 || !rangeKeyType(in.schema[order[0].Column].Type) || in.schema[order[0].Column].Type.Kind == schema.Boolean {
		if f.Start.Kind == Preceding {
			f.Start = FrameBound{Kind: UnboundedPreceding}
		}
		if f.End.Kind == Following {
			f.End = FrameBound{Kind: UnboundedFollowing}
		}
	}
	return f
}

// TestWindowAgainstModel computes random window functions (every
// function, random partitions, orders and frames, every column type,
// NULLs, random batch splits) and compares the rows, in order, with
// windowModel's.
func TestWindowAgainstModel(t *testing.T) {
	seed := relSeed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	overflows := 0
	for iter := range relIters(300) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		env := newTestEnv(mem)
		in := relRandom(rng, "c", pickTypes(rng, 1+rng.IntN(4)), rng.IntN(70), 2+rng.IntN(8))
		var specs []WindowSpec
		var defaults []any
		for i := 0; i < 1+rng.IntN(3); i++ {
			s, d := randomWindowSpec(rng, mem, in, i)
			specs = append(specs, s)
			defaults = append(defaults, d)
		}
		var desc strings.Builder
		fmt.Fprintf(&desc, "iter %d: %s", iter, relFormat(rel{schema: in.schema}))
		for _, s := range specs {
			fmt.Fprintf(&desc, "  %s %s agg %s arg %d off %d default %v part %v order %v frame %v\n",
				s.Name, s.Func, s.Agg, s.Arg, s.Offset, s.Default, s.Partition, s.Order, s.Frame)
		}
		op, err := NewWindow(env, relSource(mem, in, relRandomSplit(rng)), specs)
		releaseDefaults(specs)
		if err != nil {
			t.Fatalf("%s: %v", desc.String(), err)
		}
		got, err := relDrain(context.Background(), op)
		want, merr := windowModel(in, specs, defaults)
		switch {
		case merr != nil:
			overflows++
			if !errors.Is(err, rowttl.ErrInvalidArgument) || !strings.Contains(err.Error(), "overflows BIGINT") {
				t.Fatalf("%s: %v, want a BIGINT overflow", desc.String(), err)
			}
		case err != nil:
			t.Fatalf("%s: %v", desc.String(), err)
		default:
			g, w := relFormat(rel{schema: got.schema, rows: got.rows}), relFormat(rel{schema: got.schema, rows: want})
			if g != w {
				t.Fatalf("%s:\ngot\n%s\nwant\n%s\ninput\n%s", desc.String(), g, w, relFormat(in))
			}
		}
		if env.Budget.Used() != 0 {
			t.Fatalf("%s: %d bytes charged after Close", desc.String(), env.Budget.Used())
		}
		mem.AssertSize(t, 0)
	}
	t.Logf("%d runs overflowed BIGINT", overflows)
}

// TestWindowErrors: bad specs are refused with the documented sentinel; a
// small budget fails with ErrMemLimit naming Window; a cancelled context
// stops it.
func TestWindowErrors(t *testing.T) {
	mem := relMem(t)
	env := newTestEnv(mem)
	in := rel{schema: Schema{{Name: "a", Type: schema.BigIntType}, {Name: "s", Type: schema.StringType},
		{Name: "d", Type: schema.DateType}}}
	def := relConstArray(mem, schema.StringType, "x")
	defer def.Release()
	cases := []struct {
		spec WindowSpec
		want error
		text string
	}{
		{WindowSpec{Func: WindowAgg, Agg: Sum, Arg: 1}, rowttl.ErrInvalidArgument, "sum of s (STRING)"},
		{WindowSpec{Func: WindowAgg, Agg: Avg, Arg: 2}, rowttl.ErrInvalidArgument, "avg of d (DATE)"},
		{WindowSpec{Func: WindowAgg, Agg: Sum, Arg: 3}, rowttl.ErrInvalidArgument, "names column 3"},
		{WindowSpec{Func: RowNumber, Partition: []int{-1}}, rowttl.ErrInvalidArgument, "PARTITION BY names column -1"},
		{WindowSpec{Func: Rank, Order: []SortKey{{Column: 9}}}, rowttl.ErrInvalidArgument, "ORDER BY names column 9"},
		{WindowSpec{Func: Lag, Arg: 0, Offset: -1}, rowttl.ErrInvalidArgument, "offset -1 is negative"},
		{WindowSpec{Func: Lead, Arg: 0, Offset: 1, Default: def}, rowttl.ErrInvalidArgument, "default must be one value"},
		{WindowSpec{Func: WindowFunc(0)}, rowttl.ErrInvalidArgument, "unknown window function"},
		{WindowSpec{Func: WindowAgg, Agg: AggFunc(0), Arg: 0}, rowttl.ErrInvalidArgument, "unknown aggregate"},
		{WindowSpec{Func: WindowAgg, Agg: Count, Frame: &WindowFrame{Start: FrameBound{Kind: UnboundedFollowing}, End: FrameBound{Kind: UnboundedFollowing}}},
			rowttl.ErrInvalidArgument, "start cannot be UNBOUNDED FOLLOWING"},
		{WindowSpec{Func: WindowAgg, Agg: Count, Frame: &WindowFrame{Start: FrameBound{Kind: CurrentRow}, End: FrameBound{Kind: UnboundedPreceding}}},
			rowttl.ErrInvalidArgument, "end cannot be UNBOUNDED PRECEDING"},
		{WindowSpec{Func: WindowAgg, Agg: Count, Frame: &WindowFrame{Start: FrameBound{Kind: CurrentRow}, End: FrameBound{Kind: Preceding, Offset: 1}}},
			rowttl.ErrInvalidArgument, "starts after it ends"},
		{WindowSpec{Func: WindowAgg, Agg: Count, Frame: &WindowFrame{Start: FrameBound{Kind: Preceding, Offset: -2}, End: FrameBound{Kind: CurrentRow}}},
			rowttl.ErrInvalidArgument, "negative offset"},
	}
	for _, c := range cases {
		src := relSource(mem, in, nil)
		_, err := NewWindow(env, src, []WindowSpec{c.spec})
		src.Close()
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%+v: %v, want %v with %q", c.spec, err, c.want, c.text)
		}
	}

	rng := rand.New(rand.NewPCG(7, 8))
	big := relRandom(rng, "x", []schema.Type{schema.StringType, schema.BigIntType}, 3000, 100)
	specs := []WindowSpec{{Func: RowNumber, Partition: []int{0}, Order: []SortKey{{Column: 1}}, Name: "rn"}}
	env.Budget = NewBudget(32 << 10)
	op, err := NewWindow(env, relSource(mem, big, []int{100}), specs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = relDrain(context.Background(), op); !errors.Is(err, rowttl.ErrMemLimit) || !strings.Contains(err.Error(), "Window") {
		t.Errorf("%v, want ErrMemLimit naming Window", err)
	}
	if env.Budget.Used() != 0 {
		t.Errorf("%d bytes charged after Close", env.Budget.Used())
	}
	env.Budget = NewBudget(0)
	ctx, cancel := context.WithCancel(context.Background())
	op, err = NewWindow(env, &cancelAfter{Operator: relSource(mem, big, []int{100}), n: 4, cancel: cancel}, specs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = relDrain(ctx, op); !errors.Is(err, context.Canceled) {
		t.Errorf("%v, want context.Canceled", err)
	}
	cancel()

	// A frame's sum leaving BIGINT fails; a running sum passing through
	// values out of BIGINT's range does not.
	ints := rel{schema: Schema{{Name: "n", Type: schema.BigIntType}}, rows: [][]any{
		{int64(math.MaxInt64)}, {int64(math.MaxInt64)}, {int64(-math.MaxInt64)}, {int64(-math.MaxInt64)}}}
	op, err = NewWindow(env, relSource(mem, ints, nil), []WindowSpec{{Func: WindowAgg, Agg: Sum, Arg: 0, Name: "s",
		Frame: &WindowFrame{Start: FrameBound{Kind: Preceding, Offset: 1}, End: FrameBound{Kind: CurrentRow}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = relDrain(context.Background(), op); !errors.Is(err, rowttl.ErrInvalidArgument) || !strings.Contains(err.Error(), "overflows BIGINT") {
		t.Errorf("bigint sum: %v, want overflow", err)
	}
	op, err = NewWindow(env, relSource(mem, ints, nil), []WindowSpec{{Func: WindowAgg, Agg: Sum, Arg: 0, Name: "s",
		Frame: &WindowFrame{Start: FrameBound{Kind: CurrentRow}, End: FrameBound{Kind: CurrentRow}}},
		{Func: WindowAgg, Agg: Avg, Arg: 0, Name: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := relDrain(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	if g := fmt.Sprint(got.rows); g != "[[9223372036854775807 9223372036854775807 0] [9223372036854775807 9223372036854775807 0] [-9223372036854775807 -9223372036854775807 0] [-9223372036854775807 -9223372036854775807 0]]" {
		t.Errorf("sliding sums through out-of-range totals: %s", g)
	}

	// A sum leaving DECIMAL(38) fails.
	dt := schema.Type{Kind: schema.Decimal, Precision: 38, Scale: 0}
	nines, _ := decimal128.FromString(strings.Repeat("9", 38), 38, 0)
	dec := rel{schema: Schema{{Name: "m", Type: dt}}, rows: [][]any{{nines}, {nines}}}
	op, err = NewWindow(env, relSource(mem, dec, nil), []WindowSpec{{Func: WindowAgg, Agg: Sum, Arg: 0, Name: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = relDrain(context.Background(), op); !errors.Is(err, rowttl.ErrInvalidArgument) || err.Error() != "DECIMAL value is out of range in 's'" {
		t.Errorf("decimal sum: %v, want overflow", err)
	}
}

// TestWindowBatches: more than BatchRows rows come out in batches of at
// most BatchRows, numbered without a gap.
func TestWindowBatches(t *testing.T) {
	mem := relMem(t)
	env := newTestEnv(mem)
	in := rel{schema: Schema{{Name: "k", Type: schema.BigIntType, Nullable: false}}}
	n := BatchRows + 100
	for i := 0; i < n; i++ {
		in.rows = append(in.rows, []any{int64(n - i)})
	}
	op, err := NewWindow(env, relSource(mem, in, []int{BatchRows / 3}), []WindowSpec{
		{Func: RowNumber, Order: []SortKey{{Column: 0}}, Name: "rn"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := relDrain(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range got.rows {
		if row[0].(int64) != int64(i+1) || row[1].(int64) != int64(i+1) {
			t.Fatalf("row %d: %v", i, row)
		}
	}
}

// refPow10Int is 10^n.
func refPow10Int(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }
