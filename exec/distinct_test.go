package exec

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
	"github.com/rowttl/rowttl"
)

// TestDistinctGolden runs testdata/distinct. Command:
//
//	distinct [budget=BYTES] [keys=N]
//	<schema: name:TYPE ...>
//	<rows; a line "batch" starts a new batch>
//
// The output is the header and the rows in their order, or the error; with
// keys=N, only the first N columns are the key (NewDistinctOn).
//
// Regenerate with: go test ./exec -run TestDistinctGolden -rewrite
func TestDistinctGolden(t *testing.T) {
	datadriven.Walk(t, "testdata/distinct", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			lines := strings.Split(strings.TrimSpace(d.Input), "\n")
			s, err := parseTestSchema(lines[0])
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			var budget int64
			if d.HasArg("budget") {
				d.ScanArgs(t, "budget", &budget)
			}
			batches, err := parseTestBatches(mem, s, lines[1:])
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			keys := len(s)
			if d.HasArg("keys") {
				d.ScanArgs(t, "keys", &keys)
			}
			env := &Env{Mem: mem, Budget: NewBudget(budget)}
			got, err := runDistinctOn(t, env, s, batches, keys)
			if env.Budget.Used() != 0 {
				t.Errorf("the budget holds %d bytes after the end", env.Budget.Used())
			}
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return strings.Join(got, "\n") + "\n"
		})
	})
}

func runDistinct(t testing.TB, env *Env, s Schema, batches []arrow.RecordBatch) ([]string, error) {
	return runDistinctOn(t, env, s, batches, len(s))
}

func runDistinctOn(t testing.TB, env *Env, s Schema, batches []arrow.RecordBatch, keys int) ([]string, error) {
	op, err := NewDistinctOn(env, NewSliceSource(s, batches), keys)
	if err != nil {
		return nil, err
	}
	rows, err := drainTest(t, op)
	if err != nil {
		return nil, err
	}
	return append([]string{testHeader(op.Schema())}, formatTestRows(op.Schema(), rows)...), nil
}

// TestDistinctAgainstModel checks random inputs of every type against the
// first occurrence of every distinct row, in input order.
func TestDistinctAgainstModel(t *testing.T) {
	seed := relSeed(t)
	for iter := range relIters(100) {
		rng := rand.New(rand.NewPCG(seed, uint64(iter)))
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		s, rows, batches := randomInput(rng, mem, 1+rng.IntN(3), rng.IntN(3000))
		env := &Env{Mem: mem, Budget: NewBudget(0)}
		got, err := runDistinct(t, env, s, batches)
		if err != nil {
			t.Fatalf("seed %d iter %d: %v", seed, iter, err)
		}
		want := []string{testHeader(s)}
		seen := map[string]bool{}
		for _, r := range rows {
			var parts []string
			for c, v := range r {
				parts = append(parts, modelKey(s[c].Type, v))
			}
			if k := strings.Join(parts, "\x01"); !seen[k] {
				seen[k] = true
				want = append(want, formatTestRows(s, [][]any{r})...)
			}
		}
		if d := diffLines(got, want); d != "" {
			t.Fatalf("seed %d iter %d: over %v: %s", seed, iter, s, d)
		}
		if env.Budget.Used() != 0 {
			t.Fatalf("seed %d iter %d: the budget holds %d bytes", seed, iter, env.Budget.Used())
		}
		mem.AssertSize(t, 0)
	}
}

// TestDistinctStreams checks that Distinct returns the first batch before
// it reads the second, the memory limit, cancellation and the rejected
// input.
func TestDistinctStreams(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := &endlessSource{mem: mem}
	op, err := NewDistinct(&Env{Mem: mem}, src)
	if err != nil {
		t.Fatal(err)
	}
	b, err := op.Next(context.Background())
	if err != nil || b.NumRows() != 4096 || src.made != 1 {
		t.Fatalf("%v rows after %d batches read: %v", b, src.made, err)
	}
	b.Release()
	op.Close()
	if !src.closed {
		t.Error("the input was not closed")
	}

	env := &Env{Mem: mem, Budget: NewBudget(1 << 20)}
	op, err = NewDistinct(env, &endlessSource{mem: mem, limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Drain(context.Background(), op)
	if !errors.Is(err, rowttl.ErrMemLimit) || !strings.Contains(err.Error(), "Distinct") {
		t.Errorf("%v, want a memory limit naming Distinct", err)
	}
	if env.Budget.Used() != 0 {
		t.Errorf("the budget holds %d bytes", env.Budget.Used())
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	op, err = NewDistinct(&Env{Mem: mem}, &endlessSource{mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("%v, want context.Canceled", err)
	}
	op.Close()

	if _, err := NewDistinct(&Env{Mem: mem}, NewSliceSource(nil, nil)); !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Errorf("no columns: %v", err)
	}
}

// BenchmarkDistinct deduplicates 1M rows of (BIGINT of a thousand values,
// random DOUBLE), nearly all distinct: the encoded path of two columns.
func BenchmarkDistinct(b *testing.B) {
	mem := memory.NewGoAllocator()
	s, bs := benchKeyValues(mem, 1000, false)
	defer releaseAll(bs)
	b.SetBytes(16 * benchRows)
	b.ReportAllocs()
	cpu := cpuNanos()
	for b.Loop() {
		for _, x := range bs {
			x.Retain()
		}
		op, err := NewDistinct(&Env{Mem: mem}, NewSliceSource(s, slices.Clone(bs)))
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
}
