package exec

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// TestOrderGolden runs testdata/order, the golden files of Sort and TopN.
// Commands:
//
//	sort keys=(k,...) [budget=BYTES]
//	topn keys=(k,...) limit=N [offset=M] [budget=BYTES]
//	<schema: name:TYPE ...>
//	<rows; a line "batch" starts a new batch>
//
// A key k is a column index, then d for DESC, then f or l to place NULLs
// first or last (SQL's default otherwise: first ascending, last
// descending). The output is the header and the rows in their order, or
// the error. Every topn case is also checked against the sort of the same
// input.
//
// Regenerate with: go test ./exec -run TestOrderGolden -rewrite
func TestOrderGolden(t *testing.T) {
	datadriven.Walk(t, "testdata/order", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			lines := strings.Split(strings.TrimSpace(d.Input), "\n")
			s, err := parseTestSchema(lines[0])
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			var keys []SortKey
			var limit, offset, budget int64
			for _, a := range d.CmdArgs {
				switch a.Key {
				case "keys":
					for _, v := range a.Vals {
						keys = append(keys, parseTestSortKey(t, v))
					}
				case "limit":
					limit = int64(atoiTest(t, a.Vals[0]))
				case "offset":
					offset = int64(atoiTest(t, a.Vals[0]))
				case "budget":
					budget = int64(atoiTest(t, a.Vals[0]))
				}
			}
			run := func(cmd string) ([]string, error) {
				batches, err := parseTestBatches(mem, s, lines[1:])
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
				env := &Env{Mem: mem, Budget: NewBudget(budget)}
				defer func() {
					if env.Budget.Used() != 0 {
						t.Errorf("the budget holds %d bytes after the end", env.Budget.Used())
					}
				}()
				return runOrder(t, env, cmd, s, batches, keys, limit, offset)
			}
			got, err := run(d.Cmd)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			if d.Cmd == "topn" && budget == 0 {
				sorted, err := run("sort")
				if err != nil {
					t.Fatal(err)
				}
				body := sorted[1:]
				want := append(sorted[:1:1], body[min(len(body), int(offset)):min(len(body), int(offset+limit))]...)
				if d := diffLines(got, want); d != "" {
					t.Errorf("topn disagrees with sort: %s", d)
				}
			}
			return strings.Join(got, "\n") + "\n"
		})
	})
}

func parseTestSortKey(t *testing.T, v string) SortKey {
	i := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	if i < 0 {
		i = len(v)
	}
	k := SortKey{Column: atoiTest(t, v[:i])}
	flags := v[i:]
	k.Desc = strings.HasPrefix(flags, "d")
	k.NullsFirst = !k.Desc
	switch {
	case strings.HasSuffix(flags, "f"):
		k.NullsFirst = true
	case strings.HasSuffix(flags, "l"):
		k.NullsFirst = false
	}
	return k
}

func runOrder(t testing.TB, env *Env, cmd string, s Schema, batches []arrow.RecordBatch, keys []SortKey, limit, offset int64) ([]string, error) {
	var op Operator
	var err error
	src := NewSliceSource(s, batches)
	switch cmd {
	case "sort":
		op, err = NewSort(env, src, keys)
	case "topn":
		op, err = NewTopN(env, src, keys, limit, offset)
	default:
		t.Fatalf("unknown command %q", cmd)
	}
	if err != nil {
		return nil, err
	}
	rows, err := drainTest(t, op)
	if err != nil {
		return nil, err
	}
	return append([]string{testHeader(op.Schema())}, formatTestRows(op.Schema(), rows)...), nil
}

// modelSort sorts rows stably by keys, the plain way.
func modelSort(rows [][]any, keys []SortKey) [][]any {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b []any) int {
		for _, k := range keys {
			va, vb := a[k.Column], b[k.Column]
			switch {
			case va == nil && vb == nil:
				continue
			case va == nil || vb == nil:
				if (va == nil) == k.NullsFirst {
					return -1
				}
				return 1
			}
			c := compareTestValues(va, vb)
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	return out
}

func randomSortKeys(rng *rand.Rand, s Schema) []SortKey {
	var keys []SortKey
	for _, c := range rng.Perm(len(s))[:1+rng.IntN(len(s))] {
		keys = append(keys, SortKey{Column: c, Desc: rng.IntN(2) == 0, NullsFirst: rng.IntN(2) == 0})
	}
	return keys
}

// TestTopNAgainstModel checks random top-N queries over random inputs of
// every type against a stable sort of the rows.
func TestTopNAgainstModel(t *testing.T) {
	seed := relSeed(t)
	for iter := range relIters(100) {
		rng := rand.New(rand.NewPCG(seed, uint64(iter)))
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		s, rows, batches := randomInput(rng, mem, 1+rng.IntN(4), rng.IntN(3000))
		keys := randomSortKeys(rng, s)
		limit, offset := int64(rng.IntN(50)), int64(rng.IntN(20))
		if rng.IntN(4) == 0 {
			limit = int64(rng.IntN(4000))
		}
		env := &Env{Mem: mem, Budget: NewBudget(0)}
		got, err := runOrder(t, env, "topn", s, batches, keys, limit, offset)
		if err != nil {
			t.Fatalf("seed %d iter %d: %v", seed, iter, err)
		}
		sorted := modelSort(rows, keys)
		sorted = sorted[min(len(sorted), int(offset)):min(len(sorted), int(offset+limit))]
		want := append([]string{testHeader(s)}, formatTestRows(s, sorted)...)
		if d := diffLines(got, want); d != "" {
			t.Fatalf("seed %d iter %d: keys %v limit %d offset %d over %v: %s", seed, iter, keys, limit, offset, s, d)
		}
		if env.Budget.Used() != 0 {
			t.Fatalf("seed %d iter %d: the budget holds %d bytes", seed, iter, env.Budget.Used())
		}
		mem.AssertSize(t, 0)
	}
}

// TestTopNBounded checks that top-N holds limit+offset rows and one batch,
// however long its input, and that a batch none of whose rows enter is not
// copied.
func TestTopNBounded(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// Keys ascend, so that after the first batch no row enters a top-10
	// ascending: the operator copies nothing more.
	env := &Env{Mem: mem, Budget: NewBudget(0)}
	op, err := NewTopN(env, &endlessSource{mem: mem, limit: 200}, []SortKey{{Column: 0}}, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := drainTest(t, op)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 10 || rows[0][0] != int64(0) || rows[9][0] != int64(9) {
		t.Errorf("rows %v", rows)
	}
	if env.Budget.Peak() > 4096 {
		t.Errorf("a top-10 of 800K rows held %d bytes", env.Budget.Peak())
	}
	// Descending, every row enters: still only ten are held.
	env = &Env{Mem: mem, Budget: NewBudget(0)}
	op, err = NewTopN(env, &endlessSource{mem: mem, limit: 200}, []SortKey{{Column: 0, Desc: true}}, 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	rows, err = drainTest(t, op)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 10 || rows[0][0] != int64(200*4096-6) {
		t.Errorf("rows %v", rows)
	}
	if env.Budget.Peak() > 4096 {
		t.Errorf("a top-15 of 800K rows held %d bytes", env.Budget.Peak())
	}
}

// TestTopNErrors checks the rejected descriptions and the memory limit.
func TestTopNErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := Schema{{Name: "v", Type: schema.BigIntType}}
	for _, c := range []struct {
		keys          []SortKey
		limit, offset int64
		want          string
	}{
		{[]SortKey{{Column: 1}}, 1, 0, "TopN: sort key 1 of an input of 1 columns"},
		{nil, 1, 0, "TopN: no sort keys"},
		{[]SortKey{{Column: 0}}, -1, 0, "TopN: LIMIT -1 OFFSET 0 out of range"},
		{[]SortKey{{Column: 0}}, 1, -2, "TopN: LIMIT 1 OFFSET -2 out of range"},
	} {
		src := &trackedSource{Operator: NewSliceSource(s, nil)}
		_, err := NewTopN(&Env{Mem: mem}, src, c.keys, c.limit, c.offset)
		if !errors.Is(err, rowttl.ErrInvalidArgument) || err.Error() != c.want {
			t.Errorf("%v: %v, want %q", c, err, c.want)
		}
		if !src.closed {
			t.Errorf("%v: the input was not closed", c)
		}
	}
	// A LIMIT past any heap keeps every row.
	op, err := NewTopN(&Env{Mem: mem}, &endlessSource{mem: mem, limit: 2}, []SortKey{{Column: 0, Desc: true}}, math.MaxInt64, 8000)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := drainTest(t, op)
	if err != nil || len(rows) != 2*4096-8000 || rows[0][0] != int64(2*4096-8001) {
		t.Errorf("LIMIT MaxInt64 OFFSET 8000 of 8192 rows: %d rows, %v", len(rows), err)
	}
	env := &Env{Mem: mem, Budget: NewBudget(64 << 10)}
	op, err = NewTopN(env, &endlessSource{mem: mem, limit: 10}, []SortKey{{Column: 0}}, 100_000, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Drain(context.Background(), op)
	if !errors.Is(err, rowttl.ErrMemLimit) || !strings.Contains(err.Error(), "TopN") {
		t.Errorf("%v, want a memory limit naming TopN", err)
	}
	if env.Budget.Used() != 0 {
		t.Errorf("the budget holds %d bytes", env.Budget.Used())
	}
}

// TestTopNCancel cancels the context while top-N reads its input.
func TestTopNCancel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	src := &endlessSource{mem: mem, onBatch: func(n int) {
		if n == 3 {
			cancel()
		}
	}}
	op, err := NewTopN(&Env{Mem: mem}, src, []SortKey{{Column: 0, Desc: true}}, 10, 0)
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

// BenchmarkTopN takes the top 10 of 1M random doubles.
func BenchmarkTopN(b *testing.B) {
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
		op, err := NewTopN(&Env{Mem: mem}, NewSliceSource(s, slices.Clone(bs)), []SortKey{{Column: 1, Desc: true}}, 10, 0)
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
