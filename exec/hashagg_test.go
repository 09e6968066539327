package exec

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// TestHashAggregateGolden runs testdata/hashagg. Command:
//
//	hashagg group=(i,...) agg=(f:i,...) [parallel=N] [budget=BYTES]
//	<schema: name:TYPE ...>
//	<rows; a line "batch" starts a new batch>
//
// f is star (count(*)), count, countd (count DISTINCT), sum, sumd, avg,
// avgd, min or max, i an input column. Without parallel, the case runs
// with 1, 2 and 3 workers, which must agree on every row and on their
// order (their goroutines folding from the first group on). The output is
// the header and the rows sorted, or the error.
//
// Regenerate with: go test ./exec -run TestHashAggregateGolden -rewrite
func TestHashAggregateGolden(t *testing.T) {
	datadriven.Walk(t, "testdata/hashagg", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			lines := strings.Split(strings.TrimSpace(d.Input), "\n")
			s, err := parseTestSchema(lines[0])
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			var groups []int
			var aggs []Aggregate
			parallel := []int{1, 2, 3}
			var budget int64
			for _, a := range d.CmdArgs {
				switch a.Key {
				case "group":
					for _, v := range a.Vals {
						groups = append(groups, atoiTest(t, v))
					}
				case "agg":
					for _, v := range a.Vals {
						aggs = append(aggs, parseTestAgg(t, s, v))
					}
				case "parallel":
					parallel = []int{atoiTest(t, a.Vals[0])}
				case "budget":
					budget = int64(atoiTest(t, a.Vals[0]))
				}
			}
			var first []string
			var out string
			for _, p := range parallel {
				batches, err := parseTestBatches(mem, s, lines[1:])
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
				env := &Env{Mem: mem, Parallelism: p, Budget: NewBudget(budget)}
				got, err := runHashAggFrom(t, env, s, batches, groups, aggs, 0)
				if env.Budget.Used() != 0 {
					t.Errorf("budget holds %d bytes after the end", env.Budget.Used())
				}
				if first == nil {
					first = got
					out = formatGolden(got, err)
				} else if !slices.Equal(first, got) {
					t.Errorf("parallel=%d disagrees with parallel=%d:\n%v\n%v", p, parallel[0], got, first)
				}
			}
			return out
		})
	})
}

func atoiTest(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// formatGolden prints a header and rows (the header first, the rows
// sorted), or an error.
func formatGolden(lines []string, err error) string {
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	body := slices.Clone(lines[1:])
	slices.Sort(body)
	return strings.Join(append(lines[:1:1], body...), "\n") + "\n"
}

func parseTestAgg(t *testing.T, s Schema, spec string) Aggregate {
	if spec == "star" {
		return Aggregate{Func: CountStar, Name: "count(*)"}
	}
	f, col, _ := strings.Cut(spec, ":")
	i := atoiTest(t, col)
	name := "?"
	if i < len(s) {
		name = s[i].Name
	}
	a := Aggregate{Arg: i}
	if strings.HasSuffix(f, "d") {
		a.Distinct = true
		f = strings.TrimSuffix(f, "d")
		name = "DISTINCT " + name
	}
	switch f {
	case "count":
		a.Func = Count
	case "sum":
		a.Func = Sum
	case "avg":
		a.Func = Avg
	case "min":
		a.Func = Min
	case "max":
		a.Func = Max
	default:
		t.Fatalf("unknown aggregate %q", spec)
	}
	a.Name = fmt.Sprintf("%s(%s)", a.Func, name)
	return a
}

// runHashAgg returns the header and the rows of the aggregation, in the
// operator's order.
func runHashAgg(t *testing.T, env *Env, s Schema, batches []arrow.RecordBatch, groups []int, aggs []Aggregate) ([]string, error) {
	return runHashAggFrom(t, env, s, batches, groups, aggs, parallelGroups)
}

// runHashAggFrom is runHashAgg with the workers on their own goroutines
// from parallelFrom groups on.
func runHashAggFrom(t *testing.T, env *Env, s Schema, batches []arrow.RecordBatch, groups []int, aggs []Aggregate, parallelFrom int) ([]string, error) {
	op, err := NewHashAggregate(env, NewSliceSource(s, batches), groups, aggs)
	if err != nil {
		return nil, err
	}
	switch op := op.(type) {
	case *hashAgg:
		op.parallelFrom = parallelFrom
	case *countDistinct:
		op.parallelFrom = parallelFrom
	}
	rows, err := drainTest(t, op)
	if err != nil {
		return nil, err
	}
	return append([]string{testHeader(op.Schema())}, formatTestRows(op.Schema(), rows)...), nil
}

// TestHashAggregateAgainstModel checks random aggregations of random
// schemas of every type, split into random batches and run with random
// parallelism, against a plain Go model.
func TestHashAggregateAgainstModel(t *testing.T) {
	seed := relSeed(t)
	for iter := range relIters(60) {
		rng := rand.New(rand.NewPCG(seed, uint64(iter)))
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		s, rows, batches := randomInput(rng, mem, 1+rng.IntN(4), rng.IntN(3000))
		var groups []int
		for i := range s {
			if rng.IntN(2) == 0 {
				groups = append(groups, i)
			}
		}
		var aggs []Aggregate
		for range 1 + rng.IntN(6) {
			aggs = append(aggs, randomAgg(rng, s))
		}
		env := &Env{Mem: mem, Parallelism: 1 + rng.IntN(4), Budget: NewBudget(0)}
		got, err := runHashAggFrom(t, env, s, batches, groups, aggs, rng.IntN(100))
		if err != nil {
			t.Fatalf("seed %d iter %d: %v", seed, iter, err)
		}
		want := modelHashAgg(t, s, rows, groups, aggs)
		slices.Sort(got[1:])
		slices.Sort(want[1:])
		if d := diffLines(got, want); d != "" {
			t.Fatalf("seed %d iter %d: groups %v aggs %v over %v (parallel %d): %s",
				seed, iter, groups, aggs, s, env.Parallelism, d)
		}
		mem.AssertSize(t, 0)
	}
}

// randomInput draws a schema of ncols columns, n rows over small domains,
// and batches of random sizes holding them, a third of them slices of
// larger batches.
func randomInput(rng *rand.Rand, mem memory.Allocator, ncols, n int) (Schema, [][]any, []arrow.RecordBatch) {
	var s Schema
	for i := range ncols {
		s = append(s, Column{Name: fmt.Sprintf("c%d", i), Type: randomType(rng), Nullable: true})
	}
	domain := 1 + rng.IntN(40)
	nullP := []float64{0, 0.1, 0.5}[rng.IntN(3)]
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = make([]any, ncols)
		for c := range rows[i] {
			rows[i][c] = randomValue(rng, s[c].Type, domain, nullP)
		}
	}
	var batches []arrow.RecordBatch
	for lo := 0; lo < n; {
		hi := min(n, lo+rng.IntN(700))
		if rng.IntN(3) > 0 {
			batches = append(batches, buildTestBatch(mem, s, rows[lo:hi]))
		} else {
			// A slice of a larger batch: arrays with an offset.
			pad := 1 + rng.IntN(9)
			var padded [][]any
			for range pad {
				r := make([]any, ncols)
				for c := range r {
					r[c] = randomValue(rng, s[c].Type, domain, nullP)
				}
				padded = append(padded, r)
			}
			padded = append(padded, rows[lo:hi]...)
			padded = append(padded, padded[:rng.IntN(pad)]...)
			full := buildTestBatch(mem, s, padded)
			batches = append(batches, full.NewSlice(int64(pad), int64(pad+hi-lo)))
			full.Release()
		}
		lo = hi
	}
	return s, rows, batches
}

func randomAgg(rng *rand.Rand, s Schema) Aggregate {
	if rng.IntN(6) == 0 {
		return Aggregate{Func: CountStar, Name: "count(*)"}
	}
	for {
		i := rng.IntN(len(s))
		t := s[i].Type
		f := []AggFunc{Count, Sum, Min, Max, Avg, VarPop, VarSamp, StddevPop, StddevSamp, GroupConcat, MaxBy, MinBy}[rng.IntN(12)]
		if f == MaxBy || f == MinBy {
			a := Aggregate{Func: f, Arg: i, By: rng.IntN(len(s))}
			a.Name = fmt.Sprintf("%s(%s,%s)", f, s[i].Name, s[a.By].Name)
			return a
		}
		numeric := t.IsInteger() || t.Kind == schema.Float || t.Kind == schema.Double || t.Kind == schema.Decimal
		float := t.Kind == schema.Float || t.Kind == schema.Double
		if (f == Sum || f == Avg) && !numeric || f >= VarPop && f <= StddevSamp && !float || f == GroupConcat && !t.IsString() {
			continue
		}
		a := Aggregate{Func: f, Arg: i, Distinct: rng.IntN(3) == 0, Sep: []string{", ", "", "|"}[rng.IntN(3)]}
		a.Name = fmt.Sprintf("%s(%v%s)", f, a.Distinct, s[i].Name)
		return a
	}
}

// modelKey is a value's identity for GROUP BY and DISTINCT: -0 is 0 and
// NaN is NaN.
func modelKey(t schema.Type, v any) string {
	if f, ok := v.(float64); ok && f == 0 {
		v = 0.0
	}
	return formatTestValue(t, v)
}

// modelHashAgg aggregates rows the plain way: a map of groups, each
// aggregate computed over the group's rows in input order.
func modelHashAgg(t *testing.T, s Schema, rows [][]any, groups []int, aggs []Aggregate) []string {
	type group struct {
		key  []any
		rows [][]any
	}
	byKey := map[string]*group{}
	var order []*group
	for _, r := range rows {
		var parts []string
		var key []any
		for _, g := range groups {
			parts = append(parts, modelKey(s[g].Type, r[g]))
			v := r[g]
			if f, ok := v.(float64); ok && f == 0 {
				v = 0.0 // a group of 0 and -0 shows 0
			}
			key = append(key, v)
		}
		k := strings.Join(parts, "\x01")
		g := byKey[k]
		if g == nil {
			g = &group{key: key}
			byKey[k] = g
			order = append(order, g)
		}
		g.rows = append(g.rows, r)
	}
	if len(groups) == 0 && len(order) == 0 {
		order = append(order, &group{})
	}
	var out Schema
	for _, g := range groups {
		out = append(out, s[g])
	}
	for _, a := range aggs {
		p, err := planAggregate(s, a)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Column{Name: a.Name, Type: p.out})
	}
	lines := []string{testHeader(out)}
	for _, g := range order {
		vals := slices.Clone(g.key)
		for _, a := range aggs {
			vals = append(vals, modelAggregate(s, a, g.rows))
		}
		lines = append(lines, formatTestRows(out, [][]any{vals})[0])
	}
	return lines
}

func modelAggregate(s Schema, a Aggregate, rows [][]any) any {
	if a.Func == CountStar {
		return int64(len(rows))
	}
	if a.Func == MaxBy || a.Func == MinBy {
		var best, by any
		for _, r := range rows {
			y := r[a.By]
			if y == nil {
				continue
			}
			c := compareTestValues(y, by)
			if by == nil || (a.Func == MaxBy && c > 0) || (a.Func == MinBy && c < 0) {
				best, by = r[a.Arg], y
			}
		}
		return best
	}
	t := s[a.Arg].Type
	var vals []any
	seen := map[string]bool{}
	for _, r := range rows {
		v := r[a.Arg]
		if v == nil {
			continue
		}
		if a.Distinct && a.Func != Min && a.Func != Max { // DISTINCT changes no min or max
			k := modelKey(t, v)
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		vals = append(vals, v)
	}
	if a.Func == Count {
		return int64(len(vals))
	}
	if len(vals) == 0 {
		return nil
	}
	switch a.Func {
	case GroupConcat:
		var parts []string
		for _, v := range vals {
			parts = append(parts, v.(string))
		}
		return strings.Join(parts, a.Sep)
	case VarPop, VarSamp, StddevPop, StddevSamp:
		fs := make([]float64, len(vals))
		for i, v := range vals {
			fs[i] = v.(float64)
		}
		return modelVariance(a.Func, fs)
	case Min, Max:
		best := vals[0]
		for _, v := range vals[1:] {
			c := compareTestValues(v, best)
			if f, ok := v.(float64); ok && c == 0 && f == 0 {
				// -0 sorts just below 0 for min and max.
				c = b2i(math.Signbit(best.(float64))) - b2i(math.Signbit(f))
			}
			if (a.Func == Min && c < 0) || (a.Func == Max && c > 0) {
				best = v
			}
		}
		return best
	}
	switch v0 := vals[0].(type) {
	case float64:
		sum := 0.0
		for _, v := range vals {
			sum += v.(float64)
		}
		if a.Func == Avg {
			return sum / float64(len(vals))
		}
		return sum
	case int64:
		sum := new(big.Int)
		for _, v := range vals {
			sum.Add(sum, big.NewInt(v.(int64)))
		}
		if a.Func == Avg {
			f, _ := new(big.Float).SetInt(sum).Float64()
			return f / float64(len(vals))
		}
		return sum.Int64()
	case decimal128.Num:
		_ = v0
		sum := new(big.Int)
		for _, v := range vals {
			sum.Add(sum, v.(decimal128.Num).BigInt())
		}
		if a.Func == Avg {
			up := max(t.Scale, 4) - t.Scale
			r := new(big.Rat).SetFrac(new(big.Int).Mul(sum, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(up)), nil)), big.NewInt(int64(len(vals))))
			abs := new(big.Rat).Abs(r)
			abs.Add(abs, big.NewRat(1, 2))
			q := new(big.Int).Quo(abs.Num(), abs.Denom())
			if r.Sign() < 0 {
				q.Neg(q)
			}
			return decimal128.FromBigInt(q)
		}
		return decimal128.FromBigInt(sum)
	}
	panic("unreachable")
}

// modelVariance is Welford's update in input order, the operator's, held
// to within 1e-12 of the exact answer (big.Rat) when every value is
// finite: the exact one is returned otherwise, which shows as a
// difference.
func modelVariance(f AggFunc, xs []float64) any {
	d := len(xs)
	if f == VarSamp || f == StddevSamp {
		d--
	}
	if d == 0 {
		return nil
	}
	var n, mean, m2 float64
	finite := true
	for _, x := range xs {
		n++
		delta := x - mean
		mean += delta / n
		m2 += delta * (x - mean)
		finite = finite && !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	w := m2 / float64(d)
	if !finite {
		if f == StddevPop || f == StddevSamp {
			w = math.Sqrt(w)
		}
		return w
	}
	sum := new(big.Rat)
	for _, x := range xs {
		sum.Add(sum, new(big.Rat).SetFloat64(x))
	}
	exactMean := new(big.Rat).Quo(sum, big.NewRat(int64(len(xs)), 1))
	ss := new(big.Rat)
	for _, x := range xs {
		dev := new(big.Rat).Sub(new(big.Rat).SetFloat64(x), exactMean)
		ss.Add(ss, dev.Mul(dev, dev))
	}
	exact, _ := ss.Quo(ss, big.NewRat(int64(d), 1)).Float64()
	if f == StddevPop || f == StddevSamp {
		w, exact = math.Sqrt(w), math.Sqrt(exact)
	}
	if math.Abs(w-exact) > 1e-12*math.Max(math.Abs(exact), 1) {
		return exact
	}
	return w
}

// TestHashAggregateNoGroups checks the one row of an aggregation without
// keys over an empty input, and over no batches at all.
func TestHashAggregateNoGroups(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := Schema{{Name: "v", Type: schema.BigIntType, Nullable: true}, {Name: "s", Type: schema.StringType, Nullable: true}}
	aggs := []Aggregate{{Func: CountStar, Name: "n"}, {Func: Count, Arg: 1, Name: "c"}, {Func: Sum, Arg: 0, Name: "s"},
		{Func: Min, Arg: 1, Name: "m"}, {Func: Avg, Arg: 0, Name: "a"}, {Func: Count, Arg: 0, Distinct: true, Name: "d"}}
	for _, batches := range [][]arrow.RecordBatch{nil, {buildTestBatch(mem, s, nil)}} {
		got, err := runHashAgg(t, &Env{Mem: mem}, s, batches, nil, aggs)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"n\tc\ts\tm\ta\td", "0\t0\tNULL\tNULL\tNULL\t0"}; !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	// With keys, an empty input has no groups.
	got, err := runHashAgg(t, &Env{Mem: mem}, s, nil, []int{1}, aggs)
	if err != nil || len(got) != 1 {
		t.Errorf("grouped empty input: %q, %v", got, err)
	}
}

// TestHashAggregateErrors checks the rejected descriptions.
func TestHashAggregateErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := Schema{{Name: "v", Type: schema.BigIntType}, {Name: "s", Type: schema.StringType}, {Name: "d", Type: schema.DateType}}
	for _, c := range []struct {
		groups []int
		aggs   []Aggregate
		want   string
	}{
		{[]int{3}, nil, "group key 3 of an input of 3 columns"},
		{nil, []Aggregate{{Func: Sum, Arg: 5, Name: "sum(x)"}}, "sum(x) names column 5 of an input of 3 columns"},
		{nil, []Aggregate{{Func: Sum, Arg: 1, Name: "sum(s)"}}, "sum() does not take a STRING argument: sum(s)"},
		{nil, []Aggregate{{Func: Avg, Arg: 2, Name: "avg(d)"}}, "avg() does not take a DATE argument: avg(d)"},
		{nil, []Aggregate{{Func: VarSamp, Arg: 0, Name: "var_samp(v)"}}, "var_samp() does not take a BIGINT argument: var_samp(v)"},
		{nil, []Aggregate{{Func: StddevPop, Arg: 1, Name: "stddev_pop(s)"}}, "stddev_pop() does not take a STRING argument: stddev_pop(s)"},
		{nil, []Aggregate{{Func: GroupConcat, Arg: 0, Name: "group_concat(v)"}}, "group_concat() does not take a BIGINT argument: group_concat(v)"},
		{nil, []Aggregate{{Func: MaxBy, Arg: 0, By: 7, Name: "max_by(v, x)"}}, "max_by(v, x) orders by column 7 of an input of 3 columns"},
		{nil, []Aggregate{{Func: MinBy, Arg: 0, By: 1, Distinct: true, Name: "min_by(v, s)"}}, "min_by() does not take DISTINCT: min_by(v, s)"},
		{nil, []Aggregate{{Func: 42, Name: "f(v)"}}, "unknown aggregate function 42"},
	} {
		src := &trackedSource{Operator: NewSliceSource(s, nil)}
		_, err := NewHashAggregate(&Env{Mem: mem}, src, c.groups, c.aggs)
		if !errors.Is(err, rowttl.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: %v, want %q", c.groups, c.aggs, err, c.want)
		}
		if !src.closed {
			t.Errorf("%v %v: the input was not closed", c.groups, c.aggs)
		}
	}
}

// TestHashAggregateOverflow checks that only a total outside BIGINT (or
// 38 digits) fails, not a running sum.
func TestHashAggregateOverflow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := Schema{{Name: "k", Type: schema.IntType}, {Name: "v", Type: schema.BigIntType},
		{Name: "d", Type: schema.Type{Kind: schema.Decimal, Precision: 38, Scale: 0}}}
	big38 := decimal128.GetMaxValue(38) // 10^38-1
	run := func(rows [][]any, agg Aggregate) ([]string, error) {
		return runHashAgg(t, &Env{Mem: mem}, s, []arrow.RecordBatch{buildTestBatch(mem, s, rows)}, []int{0}, []Aggregate{agg})
	}
	sumV := Aggregate{Func: Sum, Arg: 1, Name: "sum(v)"}
	got, err := run([][]any{{int64(1), int64(math.MaxInt64), nil}, {int64(1), int64(math.MaxInt64), nil}, {int64(1), int64(-math.MaxInt64), nil}}, sumV)
	if err != nil || got[1] != "1\t9223372036854775807" {
		t.Errorf("a running sum past BIGINT that comes back: %q, %v", got, err)
	}
	_, err = run([][]any{{int64(1), int64(math.MaxInt64), nil}, {int64(1), int64(1), nil}}, sumV)
	if !errors.Is(err, rowttl.ErrInvalidArgument) || err.Error() != "BIGINT value is out of range in 'sum(v)'" {
		t.Errorf("a total past BIGINT: %v", err)
	}
	sumD := Aggregate{Func: Sum, Arg: 2, Name: "sum(d)"}
	got, err = run([][]any{{int64(1), nil, big38}, {int64(1), nil, big38}, {int64(1), nil, big38.Negate()}}, sumD)
	if err != nil || got[1] != "1\t"+big38.ToString(0) {
		t.Errorf("a running decimal sum past 38 digits that comes back: %q, %v", got, err)
	}
	_, err = run([][]any{{int64(1), nil, big38}, {int64(1), nil, decimal128.FromI64(1)}}, sumD)
	if !errors.Is(err, rowttl.ErrInvalidArgument) || err.Error() != "DECIMAL value is out of range in 'sum(d)'" {
		t.Errorf("a decimal total past 38 digits: %v", err)
	}
	_, err = run([][]any{{int64(1), nil, big38}}, Aggregate{Func: Avg, Arg: 2, Name: "avg(d)"})
	if !errors.Is(err, rowttl.ErrInvalidArgument) || err.Error() != "DECIMAL value is out of range in 'avg(d)'" {
		t.Errorf("an average past 38 digits at scale 4: %v", err)
	}
}

// trackedSource records that it was closed.
type trackedSource struct {
	Operator
	closed bool
}

func (s *trackedSource) Close() { s.closed = true; s.Operator.Close() }

// endlessSource makes batches of BatchRows rows of (k BIGINT, v DOUBLE)
// with many keys until it has made limit (forever if 0), calling onBatch
// after each.
type endlessSource struct {
	mem     memory.Allocator
	made    int
	limit   int
	onBatch func(n int)
	closed  bool
}

func (s *endlessSource) Schema() Schema {
	return Schema{{Name: "k", Type: schema.BigIntType}, {Name: "v", Type: schema.DoubleType}}
}

func (s *endlessSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.limit > 0 && s.made == s.limit {
		return nil, nil
	}
	rows := make([][]any, 4096)
	for i := range rows {
		rows[i] = []any{int64(s.made*len(rows) + i), float64(i)}
	}
	s.made++
	b := buildTestBatch(s.mem, s.Schema(), rows)
	if s.onBatch != nil {
		s.onBatch(s.made)
	}
	return b, nil
}

func (s *endlessSource) Close() { s.closed = true }

// TestHashAggregateCancel cancels the context while the table is built,
// with one worker and with several on their goroutines: Next returns the
// context's error, the input is closed and nothing leaks, goroutines
// included.
func TestHashAggregateCancel(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	for _, p := range []int{1, 3} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		ctx, cancel := context.WithCancel(context.Background())
		src := &endlessSource{mem: mem, onBatch: func(n int) {
			if n == 5 {
				cancel()
			}
		}}
		env := &Env{Mem: mem, Parallelism: p, Budget: NewBudget(0)}
		op, err := NewHashAggregate(env, src, []int{0}, []Aggregate{{Func: Sum, Arg: 1, Name: "s"}})
		if err != nil {
			t.Fatal(err)
		}
		op.(*hashAgg).parallelFrom = 0
		_, err = op.Next(ctx)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("parallel %d: %v, want context.Canceled", p, err)
		}
		if src.made > 6 || !src.closed {
			t.Errorf("parallel %d: %d batches made after the cancel, closed %v", p, src.made, src.closed)
		}
		op.Close()
		if env.Budget.Used() != 0 {
			t.Errorf("parallel %d: the budget holds %d bytes", p, env.Budget.Used())
		}
		mem.AssertSize(t, 0)
	}
	// A worker that has signalled its end may not have returned yet: give
	// the exits a moment before counting what is left.
	for range 100 {
		if runtime.NumGoroutine() <= goroutines {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("%d goroutines after the cancels, %d before", n, goroutines)
	}
}

// TestHashAggregateBudget runs an aggregation of more groups than its
// budget holds.
func TestHashAggregateBudget(t *testing.T) {
	for _, p := range []int{1, 2} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		src := &endlessSource{mem: mem, limit: 64}
		env := &Env{Mem: mem, Parallelism: p, Budget: NewBudget(1 << 20)}
		op, err := NewHashAggregate(env, src, []int{0}, []Aggregate{{Func: Sum, Arg: 1, Name: "s"}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Drain(context.Background(), op)
		if !errors.Is(err, rowttl.ErrMemLimit) || !strings.Contains(err.Error(), "HashAggregate") {
			t.Errorf("parallel %d: %v, want a memory limit naming HashAggregate", p, err)
		}
		if env.Budget.Used() != 0 || env.Budget.Peak() > 1<<20 {
			t.Errorf("parallel %d: the budget holds %d bytes, peak %d", p, env.Budget.Used(), env.Budget.Peak())
		}
		mem.AssertSize(t, 0)
	}
	// The same input within a budget that holds it.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	env := &Env{Mem: mem, Budget: NewBudget(64 << 20)}
	op, err := NewHashAggregate(env, &endlessSource{mem: mem, limit: 64}, []int{0}, []Aggregate{{Func: Sum, Arg: 1, Name: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	n, batches := 0, 0
	held := env.Budget.Used()
	for {
		b, err := op.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b == nil {
			break
		}
		n += int(b.NumRows())
		batches++
		b.Release()
		if used := env.Budget.Used(); batches == 2 && (used >= held || held == 0) {
			t.Errorf("the budget holds %d bytes after two batches, %d after the first", used, held)
		} else if batches == 1 {
			held = used
		}
	}
	op.Close()
	if n != 64*4096 || batches < 4 {
		t.Errorf("%d groups in %d batches", n, batches)
	}
	if env.Budget.Peak() < 64*4096*16 {
		t.Errorf("peak %d: the table was not charged", env.Budget.Peak())
	}
}

// benchRows is the size of the inputs of the operator benchmarks.
const benchRows = 1_000_000

// benchKeyValues returns benchRows (key, value) rows in batches of
// BatchRows: keys drawn from card values, values DOUBLE (or BIGINT).
func benchKeyValues(mem memory.Allocator, card int64, intValues bool) (Schema, []arrow.RecordBatch) {
	rng := rand.New(rand.NewPCG(1, 1))
	s := Schema{{Name: "k", Type: schema.BigIntType}, {Name: "v", Type: schema.DoubleType}}
	if intValues {
		s[1].Type = schema.BigIntType
	}
	var bs []arrow.RecordBatch
	for lo := 0; lo < benchRows; lo += BatchRows {
		n := min(BatchRows, benchRows-lo)
		rb := array.NewRecordBuilder(mem, s.Arrow())
		kb := rb.Field(0).(*array.Int64Builder)
		for range n {
			kb.Append(rng.Int64N(card))
		}
		for range n {
			v := rng.Int64N(1_000_000)
			if intValues {
				rb.Field(1).(*array.Int64Builder).Append(v)
			} else {
				rb.Field(1).(*array.Float64Builder).Append(float64(v) / 100)
			}
		}
		bs = append(bs, rb.NewRecordBatch())
		rb.Release()
	}
	return s, bs
}

// BenchmarkHashAggregate groups 1M rows by an int64 key: of about a
// million values (630K groups) with sum(BIGINT) and sum(DOUBLE), and of 24
// values (hours of a day) with sum(BIGINT), with 1 and 2 workers.
func BenchmarkHashAggregate(b *testing.B) {
	for _, c := range []struct {
		name string
		card int64
		ints bool
	}{{"groups=1M/sum=bigint", 1_000_000, true}, {"groups=1M/sum=double", 1_000_000, false}, {"groups=24/sum=bigint", 24, true}} {
		for _, p := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/parallel=%d", c.name, p), func(b *testing.B) {
				mem := memory.NewGoAllocator()
				s, bs := benchKeyValues(mem, c.card, c.ints)
				defer releaseAll(bs)
				b.SetBytes(16 * benchRows)
				b.ReportAllocs()
				cpu := cpuNanos()
				for b.Loop() {
					for _, x := range bs {
						x.Retain()
					}
					op, err := NewHashAggregate(&Env{Mem: mem, Parallelism: p}, NewSliceSource(s, slices.Clone(bs)),
						[]int{0}, []Aggregate{{Func: Sum, Arg: 1, Name: "s"}})
					if err != nil {
						b.Fatal(err)
					}
					out, err := Drain(context.Background(), op)
					if err != nil {
						b.Fatal(err)
					}
					releaseAll(out)
				}
				b.ReportMetric(float64(cpuNanos()-cpu)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
