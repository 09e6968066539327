package exec

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// TestSortAgainstModel checks random sorts of random inputs of every type, on
// both paths (one fixed-width key, and keys as bytes), against a stable
// sort of the rows.
func TestSortAgainstModel(t *testing.T) {
	seed := relSeed(t)
	for iter := range relIters(100) {
		rng := rand.New(rand.NewPCG(seed, uint64(iter)))
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		s, rows, batches := randomInput(rng, mem, 1+rng.IntN(4), rng.IntN(3000))
		keys := randomSortKeys(rng, s)
		if rng.IntN(2) == 0 {
			keys = keys[:1]
		}
		env := &Env{Mem: mem, Budget: NewBudget(0)}
		got, err := runOrder(t, env, "sort", s, batches, keys, 0, 0)
		if err != nil {
			t.Fatalf("seed %d iter %d: %v", seed, iter, err)
		}
		want := append([]string{testHeader(s)}, formatTestRows(s, modelSort(rows, keys))...)
		if d := diffLines(got, want); d != "" {
			t.Fatalf("seed %d iter %d: keys %v over %v: %s", seed, iter, keys, s, d)
		}
		if env.Budget.Used() != 0 {
			t.Fatalf("seed %d iter %d: the budget holds %d bytes", seed, iter, env.Budget.Used())
		}
		mem.AssertSize(t, 0)
	}
}

// TestRadixSortU64 checks the radix sort against a stable sort, on keys
// that share bytes and keys that do not.
func TestRadixSortU64(t *testing.T) {
	seed := relSeed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	for _, mask := range []uint64{0xff, 0xff00ff0000, ^uint64(0), 0} {
		rs := make([]u64Row, 1000+rng.IntN(5000))
		for i := range rs {
			rs[i] = u64Row{rng.Uint64() & mask, int32(i)}
		}
		want := slices.Clone(rs)
		slices.SortStableFunc(want, func(a, b u64Row) int {
			switch {
			case a.key < b.key:
				return -1
			case a.key > b.key:
				return 1
			}
			return 0
		})
		if got := radixSortU64(rs); !slices.Equal(got, want) {
			t.Errorf("seed %d mask %x: the radix sort disagrees", seed, mask)
		}
	}
}

// TestSortLarge sorts more rows than a batch holds, so that the output
// spans several batches, on both paths.
func TestSortLarge(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, keys := range [][]SortKey{{{Column: 0, Desc: true}}, {{Column: 1}, {Column: 0, Desc: true}}} {
		env := &Env{Mem: mem, Budget: NewBudget(0)}
		op, err := NewSort(env, &endlessSource{mem: mem, limit: 40}, keys)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := drainTest(t, op)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 40*4096 {
			t.Fatalf("%d rows", len(rows))
		}
		// The keys are unique: the rows are in order when sorting them again
		// changes nothing.
		if want := modelSort(rows, keys); !slices.EqualFunc(rows, want, func(a, b []any) bool { return a[0] == b[0] }) {
			t.Fatalf("%v: rows out of order", keys)
		}
		if env.Budget.Peak() < 40*4096*16 || env.Budget.Used() != 0 {
			t.Errorf("peak %d, used %d", env.Budget.Peak(), env.Budget.Used())
		}
	}
}

// TestSortErrors checks the rejected descriptions, the memory limit and
// cancellation.
func TestSortErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := Schema{{Name: "v", Type: schema.BigIntType}}
	for _, c := range []struct {
		keys []SortKey
		want string
	}{
		{[]SortKey{{Column: -1}}, "Sort: sort key -1 of an input of 1 columns"},
		{nil, "Sort: no sort keys"},
	} {
		src := &trackedSource{Operator: NewSliceSource(s, nil)}
		_, err := NewSort(&Env{Mem: mem}, src, c.keys)
		if !errors.Is(err, rowttl.ErrInvalidArgument) || err.Error() != c.want {
			t.Errorf("%v: %v, want %q", c.keys, err, c.want)
		}
		if !src.closed {
			t.Errorf("%v: the input was not closed", c.keys)
		}
	}
	env := &Env{Mem: mem, Budget: NewBudget(1 << 20)}
	src := &endlessSource{mem: mem}
	op, err := NewSort(env, src, []SortKey{{Column: 0}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Drain(context.Background(), op)
	if !errors.Is(err, rowttl.ErrMemLimit) || !strings.Contains(err.Error(), "Sort") {
		t.Errorf("%v, want a memory limit naming Sort", err)
	}
	if env.Budget.Used() != 0 || !src.closed {
		t.Errorf("the budget holds %d bytes; input closed %v", env.Budget.Used(), src.closed)
	}

	ctx, cancel := context.WithCancel(context.Background())
	src = &endlessSource{mem: mem, onBatch: func(n int) {
		if n == 3 {
			cancel()
		}
	}}
	op, err = NewSort(&Env{Mem: mem}, src, []SortKey{{Column: 0}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("%v, want context.Canceled", err)
	}
	if src.made > 4 || !src.closed {
		t.Errorf("%d batches made, closed %v", src.made, src.closed)
	}
	op.Close()
}

// BenchmarkSort sorts 1M rows by a random BIGINT (the radix path), and by
// a random DOUBLE then BIGINT (the key path).
func BenchmarkSort(b *testing.B) {
	for _, c := range []struct {
		name string
		keys []SortKey
	}{{"key=bigint", []SortKey{{Column: 0}}}, {"keys=double,bigint", []SortKey{{Column: 1, Desc: true}, {Column: 0}}}} {
		b.Run(c.name, func(b *testing.B) {
			mem := memory.NewGoAllocator()
			s, bs := benchKeyValues(mem, 1<<62, false)
			defer releaseAll(bs)
			b.SetBytes(16 * benchRows)
			b.ReportAllocs()
			cpu := cpuNanos()
			for b.Loop() {
				for _, x := range bs {
					x.Retain()
				}
				op, err := NewSort(&Env{Mem: mem}, NewSliceSource(s, slices.Clone(bs)), c.keys)
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
