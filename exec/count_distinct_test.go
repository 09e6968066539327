package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// TestCountDistinctAgainstModel checks count(DISTINCT x) of random
// fixed-width columns, alone (the partitioned sets) and beside count(*) or
// under a GROUP BY (the pair sets), over domains from a few values to more
// than the inputs' rows, with NULLs, random batches, parallelism and
// switch-over points, against the plain Go model of the hash aggregate
// tests.
func TestCountDistinctAgainstModel(t *testing.T) {
	seed := relSeed(t)
	fixed := []schema.Type{schema.BooleanType, schema.TinyIntType, schema.IntType, schema.BigIntType,
		schema.FloatType, schema.DoubleType, schema.DateType, schema.DatetimeType(6)}
	for iter := range relIters(40) {
		rng := rand.New(rand.NewPCG(seed, uint64(iter)))
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		s := Schema{{Name: "k", Type: schema.IntType, Nullable: true},
			{Name: "v", Type: fixed[rng.IntN(len(fixed))], Nullable: true}}
		n := rng.IntN(20000)
		domain := 1 + rng.IntN([]int{10, 1000, 100000}[rng.IntN(3)])
		nullP := []float64{0, 0.1, 0.9}[rng.IntN(3)]
		rows := make([][]any, n)
		for i := range rows {
			rows[i] = []any{randomValue(rng, s[0].Type, 5, 0.1), randomValue(rng, s[1].Type, domain, nullP)}
		}
		var batches []arrow.RecordBatch
		for lo := 0; lo < n; {
			hi := min(n, lo+1+rng.IntN(3000))
			batches = append(batches, buildTestBatch(mem, s, rows[lo:hi]))
			lo = hi
		}
		countd := Aggregate{Func: Count, Arg: 1, Distinct: true, Name: "count(DISTINCT v)"}
		var groups []int
		aggs := []Aggregate{countd}
		switch rng.IntN(3) {
		case 1:
			aggs = append(aggs, Aggregate{Func: CountStar, Name: "count(*)"})
		case 2:
			groups = []int{0}
		}
		env := &Env{Mem: mem, Parallelism: 1 + rng.IntN(4), Budget: NewBudget(0)}
		from := []int{0, 100, parallelGroups}[rng.IntN(3)]
		got, err := runHashAggFrom(t, env, s, batches, groups, aggs, from)
		if err != nil {
			t.Fatalf("seed %d iter %d: %v", seed, iter, err)
		}
		want := modelHashAgg(t, s, rows, groups, aggs)
		slices.Sort(got[1:])
		slices.Sort(want[1:])
		if d := diffLines(got, want); d != "" {
			t.Fatalf("seed %d iter %d: %v of %s over %d rows, domain %d (parallel %d from %d): %s",
				seed, iter, groups, s[1].Type, n, domain, env.Parallelism, from, d)
		}
		if env.Budget.Used() != 0 {
			t.Fatalf("seed %d iter %d: the budget holds %d bytes after the end", seed, iter, env.Budget.Used())
		}
		mem.AssertSize(t, 0)
	}
}

// TestCountDistinctFailures: a budget passed mid-way on the workers'
// goroutines, a cancelled context and a Close before the end release
// everything and return the documented errors.
func TestCountDistinctFailures(t *testing.T) {
	s := Schema{{Name: "v", Type: schema.BigIntType}}
	input := func(mem memory.Allocator) Operator {
		var bs []arrow.RecordBatch
		for b := range 20 {
			rows := make([][]any, 1000)
			for i := range rows {
				rows[i] = []any{int64(b*1000 + i)}
			}
			bs = append(bs, buildTestBatch(mem, s, rows))
		}
		return NewSliceSource(s, bs)
	}
	countd := []Aggregate{{Func: Count, Arg: 0, Distinct: true, Name: "count(DISTINCT v)"}}
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprintf("parallel=%d", p), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			env := &Env{Mem: mem, Parallelism: p, Budget: NewBudget(64 << 10)}
			op, err := NewHashAggregate(env, input(mem), nil, countd)
			if err != nil {
				t.Fatal(err)
			}
			op.(*countDistinct).parallelFrom = 1000
			_, err = Drain(context.Background(), op)
			if !errors.Is(err, rowttl.ErrMemLimit) {
				t.Fatalf("got %v, want ErrMemLimit", err)
			}
			op.Close()
			if env.Budget.Used() != 0 {
				t.Fatalf("the budget holds %d bytes", env.Budget.Used())
			}

			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			env.Budget = NewBudget(0)
			op, err = NewHashAggregate(env, input(mem), nil, countd)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := op.Next(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", err)
			}
			op.Close()

			op, err = NewHashAggregate(env, input(mem), nil, countd)
			if err != nil {
				t.Fatal(err)
			}
			op.Close()
			op.Close()
		})
	}
}

func TestCountDistinctApplies(t *testing.T) {
	s := Schema{{Name: "i", Type: schema.BigIntType}, {Name: "d", Type: schema.DoubleType},
		{Name: "s", Type: schema.StringType}, {Name: "m", Type: schema.DecimalType(10, 2)}}
	for _, c := range []struct {
		groups []int
		aggs   []Aggregate
		want   bool
	}{
		{nil, []Aggregate{{Func: Count, Arg: 0, Distinct: true}}, true},
		{nil, []Aggregate{{Func: Count, Arg: 1, Distinct: true}}, true},
		{nil, []Aggregate{{Func: Count, Arg: 2, Distinct: true}}, false},
		{nil, []Aggregate{{Func: Count, Arg: 3, Distinct: true}}, false},
		{nil, []Aggregate{{Func: Count, Arg: 0}}, false},
		{nil, []Aggregate{{Func: Sum, Arg: 0, Distinct: true}}, false},
		{[]int{1}, []Aggregate{{Func: Count, Arg: 0, Distinct: true}}, false},
		{nil, []Aggregate{{Func: Count, Arg: 0, Distinct: true}, {Func: CountStar}}, false},
		{nil, []Aggregate{{Func: Count, Arg: 7, Distinct: true}}, false},
	} {
		if got := CountDistinctApplies(s, c.groups, c.aggs); got != c.want {
			t.Errorf("CountDistinctApplies(%v, %v) = %v, want %v", c.groups, c.aggs, got, c.want)
		}
	}
}

// BenchmarkCountDistinct is count(DISTINCT k) over benchRows rows of card
// distinct BIGINT values, on the partitioned sets.
func BenchmarkCountDistinct(b *testing.B) {
	for _, card := range []int64{1_000_000, 10_000} {
		for _, p := range []int{1, 2} {
			b.Run(fmt.Sprintf("card=%d/parallel=%d", card, p), func(b *testing.B) {
				mem := memory.NewGoAllocator()
				s, bs := benchKeyValues(mem, card, true)
				defer releaseAll(bs)
				b.ReportAllocs()
				cpu := cpuNanos()
				for b.Loop() {
					for _, x := range bs {
						x.Retain()
					}
					op, err := NewHashAggregate(&Env{Mem: mem, Parallelism: p}, NewSliceSource(s, slices.Clone(bs)),
						nil, []Aggregate{{Func: Count, Arg: 0, Distinct: true, Name: "n"}})
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
			})
		}
	}
}
