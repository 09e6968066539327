package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

var setOpsByName = map[string]SetOp{"union_all": UnionAll, "union": UnionDistinct, "intersect": Intersect, "except": Except}

// TestSetOpGolden runs testdata/setop.txt. Besides rel:
//
//	setop op=union_all|union|intersect|except left=L right=R [budget=bytes]
//
// Regenerate with: go test ./exec -run TestSetOpGolden -rewrite
func TestSetOpGolden(t *testing.T) {
	relGolden(t, "testdata/setop.txt", func(t *testing.T, d *datadriven.TestData, env *Env, source func(string) Operator) string {
		if d.Cmd != "setop" {
			d.Fatalf(t, "unknown command %s", d.Cmd)
		}
		var name, l, r string
		d.ScanArgs(t, "op", &name)
		d.ScanArgs(t, "left", &l)
		d.ScanArgs(t, "right", &r)
		so, ok := setOpsByName[name]
		if !ok {
			so = SetOp(99)
		}
		left, right := source(l), source(r)
		op, err := NewSetOp(env, so, left, right)
		if err != nil {
			left.Close()
			right.Close()
		}
		return relResult(op, err)
	})
}

// setOpModel is SQL's definition over rows compared as strings (NULL
// printing as NULL, so equal to NULL), keeping first occurrences.
func setOpModel(op SetOp, s Schema, l, r [][]any) [][]any {
	key := func(row []any) string { return relRowString(s, row) }
	inRight := map[string]bool{}
	for _, row := range r {
		inRight[key(row)] = true
	}
	seen := map[string]bool{}
	var out [][]any
	switch op {
	case UnionAll:
		return append(slices.Clone(l), r...)
	case UnionDistinct:
		for _, row := range append(slices.Clone(l), r...) {
			if k := key(row); !seen[k] {
				seen[k] = true
				out = append(out, row)
			}
		}
	case Intersect, Except:
		for _, row := range l {
			k := key(row)
			if !seen[k] && inRight[k] == (op == Intersect) {
				seen[k] = true
				out = append(out, row)
			}
		}
	}
	return out
}

// TestSetOpAgainstModel runs every set operation on random relations
// (every column type, NULLs, duplicates, empty sides, random batch splits)
// and compares the rows, in order, with setOpModel's.
func TestSetOpAgainstModel(t *testing.T) {
	seed := relSeed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	ops := []SetOp{UnionAll, UnionDistinct, Intersect, Except}
	for iter := range relIters(300) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		env := newTestEnv(mem)
		op := ops[rng.IntN(len(ops))]
		types := pickTypes(rng, 1+rng.IntN(3))
		dom := 2 + rng.IntN(6)
		l := relRandom(rng, "l", types, rng.IntN(80), dom)
		r := relRandom(rng, "r", types, rng.IntN(80), dom)
		if rng.IntN(8) == 0 {
			l.rows = nil
		}
		if rng.IntN(8) == 0 {
			r.rows = nil
		}
		desc := fmt.Sprintf("iter %d: %s over %s", iter, op, relFormat(rel{schema: l.schema}))
		so, err := NewSetOp(env, op, relSource(mem, l, relRandomSplit(rng)), relSource(mem, r, relRandomSplit(rng)))
		if err != nil {
			t.Fatalf("%s: %v", desc, err)
		}
		got, err := relDrain(context.Background(), so)
		if err != nil {
			t.Fatalf("%s: %v", desc, err)
		}
		want := setOpModel(op, l.schema, l.rows, r.rows)
		g, w := relFormat(rel{schema: l.schema, rows: got.rows}), relFormat(rel{schema: l.schema, rows: want})
		if g != w {
			t.Fatalf("%s:\ngot\n%s\nwant\n%s\nleft\n%s\nright\n%s", desc, g, w, relFormat(l), relFormat(r))
		}
		if env.Budget.Used() != 0 {
			t.Fatalf("%s: %d bytes charged after Close", desc, env.Budget.Used())
		}
		mem.AssertSize(t, 0)
	}
}

// TestSetOpErrors: mismatched inputs are refused with ErrInvalidArgument;
// a budget too small fails with ErrMemLimit naming SetOp; a cancelled
// context stops it.
func TestSetOpErrors(t *testing.T) {
	mem := relMem(t)
	env := newTestEnv(mem)
	a := rel{schema: Schema{{Name: "a", Type: schema.BigIntType}, {Name: "s", Type: schema.StringType}}}
	b := rel{schema: Schema{{Name: "b", Type: schema.IntType}, {Name: "s", Type: schema.StringType}}}
	c := rel{schema: Schema{{Name: "c", Type: schema.BigIntType}}}
	for _, tc := range []struct {
		op   SetOp
		l, r rel
		text string
	}{
		{UnionAll, a, b, "cast one to the other"},
		{Intersect, a, b, "cast one to the other"},
		{Except, a, c, "of 2 columns and 1 columns"},
		{SetOp(0), a, a, "unknown set operation"},
	} {
		l, r := relSource(mem, tc.l, nil), relSource(mem, tc.r, nil)
		_, err := NewSetOp(env, tc.op, l, r)
		l.Close()
		r.Close()
		if !errors.Is(err, rowttl.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: %v, want ErrInvalidArgument with %q", tc.op, err, tc.text)
		}
	}

	rng := rand.New(rand.NewPCG(5, 6))
	big := relRandom(rng, "x", []schema.Type{schema.StringType, schema.BigIntType}, 3000, 100000)
	for _, op := range []SetOp{UnionDistinct, Intersect, Except} {
		env := newTestEnv(mem)
		env.Budget = NewBudget(16 << 10)
		so, err := NewSetOp(env, op, relSource(mem, big, []int{100}), relSource(mem, big, []int{100}))
		if err != nil {
			t.Fatal(err)
		}
		_, err = relDrain(context.Background(), so)
		if !errors.Is(err, rowttl.ErrMemLimit) || !strings.Contains(err.Error(), "SetOp") {
			t.Errorf("%s: %v, want ErrMemLimit naming SetOp", op, err)
		}
		if env.Budget.Used() != 0 {
			t.Errorf("%s: %d bytes charged after Close", op, env.Budget.Used())
		}

		ctx, cancel := context.WithCancel(context.Background())
		env = newTestEnv(mem)
		so, err = NewSetOp(env, op, &cancelAfter{Operator: relSource(mem, big, []int{100}), n: 4, cancel: cancel},
			&cancelAfter{Operator: relSource(mem, big, []int{100}), n: 4, cancel: cancel})
		if err != nil {
			t.Fatal(err)
		}
		if _, err = relDrain(ctx, so); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", op, err)
		}
		cancel()
	}
}
