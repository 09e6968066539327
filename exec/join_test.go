package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// relGolden runs a golden file of operator tests. Every file may declare
// relations:
//
//	rel name=N [split=(n,...)]   the input (schema line, then rows) is
//	                             relation N, fed in batches of the given
//	                             row counts (cycled)
//
// and run commands that run(d, source) answers, source(name) returning
// an operator over a declared relation. Errors print as "error: ...".
func relGolden(t *testing.T, path string, run func(t *testing.T, d *datadriven.TestData, env *Env, source func(string) Operator) string) {
	rels := map[string]rel{}
	splits := map[string][]int{}
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd == "rel" {
			var name string
			d.ScanArgs(t, "name", &name)
			r, err := relParse(d.Input)
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			rels[name] = r
			splits[name] = relIntsArg(t, d, "split")
			return ""
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		env := newTestEnv(mem)
		if d.HasArg("budget") {
			var n int
			d.ScanArgs(t, "budget", &n)
			env.Budget = NewBudget(int64(n))
		}
		source := func(name string) Operator {
			r, ok := rels[name]
			if !ok {
				d.Fatalf(t, "no relation %s", name)
			}
			return relSource(mem, r, splits[name])
		}
		out := run(t, d, env, source)
		if env.Budget.Used() != 0 {
			t.Errorf("%s: %d bytes still charged after Close", d.Pos, env.Budget.Used())
		}
		return out
	})
}

func relIntsArg(t *testing.T, d *datadriven.TestData, key string) []int {
	var out []int
	for _, a := range d.CmdArgs {
		if a.Key == key {
			for _, v := range a.Vals {
				n, err := strconv.Atoi(v)
				if err != nil {
					d.Fatalf(t, "%s: %v", key, err)
				}
				out = append(out, n)
			}
		}
	}
	return out
}

func relStringArg(d *datadriven.TestData, key string) string {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			return strings.Join(a.Vals, ",")
		}
	}
	return ""
}

// relResult prints an operator's output, or its error.
func relResult(op Operator, err error) string {
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	r, err := relDrain(context.Background(), op)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	return relFormat(r)
}

var joinKindsByName = map[string]JoinKind{"inner": InnerJoin, "left": LeftJoin, "right": RightJoin,
	"full": FullJoin, "cross": CrossJoin, "semi": SemiJoin, "anti": AntiJoin, "naaj": NullAwareAntiJoin}

// TestJoinGolden runs testdata/join/*.txt. Besides rel:
//
//	join kind=K left=L right=R [lkeys=(i,...) rkeys=(i,...)]
//	     [residual=(i,op,j)] [budget=bytes]
//
// prints the join's schema and rows in output order; residual compares
// combined-row columns i and j.
//
// Regenerate with: go test ./exec -run TestJoinGolden -rewrite
func TestJoinGolden(t *testing.T) {
	relGolden(t, "testdata/join.txt", func(t *testing.T, d *datadriven.TestData, env *Env, source func(string) Operator) string {
		if d.Cmd != "join" {
			d.Fatalf(t, "unknown command %s", d.Cmd)
		}
		var kind, l, r string
		d.ScanArgs(t, "kind", &kind)
		d.ScanArgs(t, "left", &l)
		d.ScanArgs(t, "right", &r)
		k, ok := joinKindsByName[kind]
		if !ok {
			k = JoinKind(99)
		}
		var residual Expr
		if res := relStringArg(d, "residual"); res != "" {
			f := strings.Split(res, ",")
			a, _ := strconv.Atoi(f[0])
			b, _ := strconv.Atoi(f[2])
			residual = &cmpExpr{l: a, op: f[1], r: b}
		}
		left, right := source(l), source(r)
		op, err := NewHashJoin(env, left, right, k, relIntsArg(t, d, "lkeys"), relIntsArg(t, d, "rkeys"), residual)
		if err != nil {
			left.Close()
			right.Close()
		}
		return relResult(op, err)
	})
}

// joinModel is the join of SQL's definition, by nested loops over the
// rows: NULL keys equal nothing, only a TRUE residual keeps a pair.
func joinModel(kind JoinKind, l, r rel, lk, rk []int, residual func(row []any) *bool) [][]any {
	nl, nr := len(l.schema), len(r.schema)
	keysEqual := func(a, b []any) bool {
		for i := range lk {
			x, y := a[lk[i]], b[rk[i]]
			if x == nil || y == nil || relCompare(x, y) != 0 {
				return false
			}
		}
		return true
	}
	pass := func(a, b []any) bool {
		if !keysEqual(a, b) {
			return false
		}
		if residual == nil {
			return true
		}
		v := residual(append(append([]any{}, a...), b...))
		return v != nil && *v
	}
	var out [][]any
	matchedR := make([]bool, len(r.rows))
	for _, a := range l.rows {
		matched := false
		for j, b := range r.rows {
			if pass(a, b) {
				matched = true
				matchedR[j] = true
				if kind != SemiJoin && kind != AntiJoin && kind != NullAwareAntiJoin {
					out = append(out, append(append([]any{}, a...), b...))
				}
			}
		}
		switch kind {
		case LeftJoin, FullJoin:
			if !matched {
				out = append(out, append(append([]any{}, a...), make([]any, nr)...))
			}
		case SemiJoin:
			if matched {
				out = append(out, a)
			}
		case AntiJoin:
			if !matched {
				out = append(out, a)
			}
		case NullAwareAntiJoin:
			// NOT IN: TRUE only when a's key differs from every right key,
			// none of them NULL.
			keep := true
			for _, b := range r.rows {
				x, y := a[lk[0]], b[rk[0]]
				if x == nil || y == nil || relCompare(x, y) == 0 {
					keep = false
					break
				}
			}
			if keep {
				out = append(out, a)
			}
		}
	}
	if kind == RightJoin || kind == FullJoin {
		for j, b := range r.rows {
			if !matchedR[j] {
				out = append(out, append(make([]any, nl), b...))
			}
		}
	}
	return out
}

// relRandom returns a relation of n rows over the given types.
func relRandom(rng *rand.Rand, prefix string, types []schema.Type, n, dom int) rel {
	r := rel{}
	for i, t := range types {
		r.schema = append(r.schema, Column{Name: fmt.Sprintf("%s%d", prefix, i), Type: t, Nullable: true})
	}
	pNull := rng.Float64() * 0.3
	for i := 0; i < n; i++ {
		row := make([]any, len(types))
		for c, t := range types {
			row[c] = relRandomValue(rng, t, dom, pNull)
		}
		r.rows = append(r.rows, row)
	}
	return r
}

func pickTypes(rng *rand.Rand, n int) []schema.Type {
	ts := make([]schema.Type, n)
	for i := range ts {
		ts[i] = relRandomTypes[rng.IntN(len(relRandomTypes))]
	}
	return ts
}

// TestHashJoinAgainstModel joins random relations (every key type, NULLs,
// duplicates, empty sides, random batch splits, residuals) with every
// kind and compares the rows with joinModel's.
func TestHashJoinAgainstModel(t *testing.T) {
	seed := relSeed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	kinds := []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin, CrossJoin, SemiJoin, AntiJoin, NullAwareAntiJoin}
	for iter := range relIters(300) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		env := newTestEnv(mem)
		kind := kinds[rng.IntN(len(kinds))]
		nkeys := 1 + rng.IntN(3)
		switch {
		case kind == CrossJoin:
			nkeys = 0
		case kind == NullAwareAntiJoin:
			nkeys = 1
		case rng.IntN(10) == 0:
			nkeys = 0
		}
		keyTypes := pickTypes(rng, nkeys)
		lt := append(pickTypes(rng, rng.IntN(3)), keyTypes...)
		rt := append(slices.Clone(keyTypes), pickTypes(rng, rng.IntN(3))...)
		rng.Shuffle(len(lt), func(i, j int) { lt[i], lt[j] = lt[j], lt[i] })
		lk, rk := make([]int, nkeys), make([]int, nkeys)
		for i, kt := range keyTypes {
			lk[i] = slices.IndexFunc(lt, func(t schema.Type) bool { return t == kt })
			for lk[i] >= 0 && slices.Contains(lk[:i], lk[i]) {
				next := slices.IndexFunc(lt[lk[i]+1:], func(t schema.Type) bool { return t == kt })
				if next < 0 {
					t.Fatal("key column lost")
				}
				lk[i] += 1 + next
			}
			rk[i] = i
		}
		dom := 2 + rng.IntN(12)
		nl, nr := rng.IntN(60), rng.IntN(60)
		if rng.IntN(8) == 0 {
			nl = 0
		}
		if rng.IntN(8) == 0 {
			nr = 0
		}
		if len(lt) == 0 {
			lt = pickTypes(rng, 1)
		}
		if len(rt) == 0 {
			rt = pickTypes(rng, 1)
		}
		l, r := relRandom(rng, "l", lt, nl, dom), relRandom(rng, "r", rt, nr, dom)
		var residual Expr
		var model func([]any) *bool
		if kind != NullAwareAntiJoin && rng.IntN(2) == 0 {
			// Compare a left and a right column of one type, if any.
			for tries := 0; tries < 10 && residual == nil; tries++ {
				a, b := rng.IntN(len(lt)), rng.IntN(len(rt))
				if lt[a] == rt[b] {
					op := []string{"<", "<=", "!=", ">", ">=", "="}[rng.IntN(6)]
					e := &cmpExpr{l: a, r: len(lt) + b, op: op}
					residual = e
					model = func(row []any) *bool { return relCmpOp(op, row[a], row[len(lt)+b]) }
				}
			}
		}
		// Half the joins output some of their columns, in any order (none,
		// sometimes); a third key without direct addressing.
		width := len(lt) + len(rt)
		switch kind {
		case SemiJoin, AntiJoin, NullAwareAntiJoin:
			width = len(lt)
		}
		var out []int
		if rng.IntN(2) == 0 {
			out = rng.Perm(width)[:rng.IntN(width+1)]
		}
		directJoins = rng.IntN(3) != 0
		desc := fmt.Sprintf("iter %d: %s lkeys %v rkeys %v residual %v output %v direct %v, left %s right %s", iter, kind,
			lk, rk, residual, out, directJoins, relFormat(rel{schema: l.schema}), relFormat(rel{schema: r.schema}))
		op, err := NewHashJoinOutput(env, relSource(mem, l, relRandomSplit(rng)), relSource(mem, r, relRandomSplit(rng)),
			kind, lk, rk, residual, out)
		if err != nil {
			t.Fatalf("%s: %v", desc, err)
		}
		got, err := relDrain(context.Background(), op)
		directJoins = true
		if err != nil {
			t.Fatalf("%s: %v", desc, err)
		}
		want := joinModel(kind, l, r, lk, rk, model)
		if out != nil {
			for i, row := range want {
				proj := make([]any, len(out))
				for k, c := range out {
					proj[k] = row[c]
				}
				want[i] = proj
			}
		}
		if g, w := relSorted(got.schema, got.rows), relSorted(got.schema, want); !slices.Equal(g, w) {
			t.Fatalf("%s:\ngot\n%s\nwant\n%s\nleft\n%s\nright\n%s", desc, strings.Join(g, "\n"), strings.Join(w, "\n"),
				relFormat(l), relFormat(r))
		}
		if env.Budget.Used() != 0 {
			t.Fatalf("%s: %d bytes charged after Close", desc, env.Budget.Used())
		}
		mem.AssertSize(t, 0)
	}
}

// TestHashJoinManyMatches: one probe row matching more than BatchRows build
// rows comes out in batches of at most BatchRows (relDrain checks), all of
// them there.
func TestHashJoinManyMatches(t *testing.T) {
	mem := relMem(t)
	env := newTestEnv(mem)
	s := Schema{{Name: "k", Type: schema.BigIntType}}
	var build rel
	build.schema = s
	n := BatchRows + BatchRows/2
	for i := 0; i < n; i++ {
		build.rows = append(build.rows, []any{int64(7)})
	}
	for _, kind := range []JoinKind{InnerJoin, LeftJoin, FullJoin, CrossJoin} {
		probe := rel{schema: s, rows: [][]any{{int64(7)}, {int64(8)}}}
		keys := []int{0}
		if kind == CrossJoin {
			keys = nil
		}
		op, err := NewHashJoin(env, relSource(mem, probe, nil), relSource(mem, build, nil), kind, keys, keys, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := relDrain(context.Background(), op)
		if err != nil {
			t.Fatal(kind, err)
		}
		want := n
		switch kind {
		case LeftJoin, FullJoin:
			want = n + 1
		case CrossJoin:
			want = 2 * n
		}
		if len(got.rows) != want {
			t.Errorf("%s: %d rows, want %d", kind, len(got.rows), want)
		}
	}
}

// TestHashJoinErrors: bad descriptions are refused with the documented
// sentinel, and a failing residual's error comes through.
func TestHashJoinErrors(t *testing.T) {
	mem := relMem(t)
	env := newTestEnv(mem)
	l := rel{schema: Schema{{Name: "a", Type: schema.BigIntType}, {Name: "s", Type: schema.StringType}}}
	r := rel{schema: Schema{{Name: "b", Type: schema.IntType}, {Name: "f", Type: schema.DoubleType}}}
	cases := []struct {
		name     string
		kind     JoinKind
		lk, rk   []int
		residual Expr
		want     error
		text     string
	}{
		{"types differ", InnerJoin, []int{0}, []int{0}, nil, rowttl.ErrInvalidArgument, "different types"},
		{"key counts", InnerJoin, []int{0}, nil, nil, rowttl.ErrInvalidArgument, "1 left keys and 0 right keys"},
		{"key range", InnerJoin, []int{2}, []int{0}, nil, rowttl.ErrInvalidArgument, "names column 2"},
		{"cross keys", CrossJoin, []int{1}, []int{1}, nil, rowttl.ErrInvalidArgument, "CROSS join has no keys"},
		{"naaj two keys", NullAwareAntiJoin, nil, nil, nil, rowttl.ErrNotSupported, "one key"},
		{"residual type", InnerJoin, nil, nil, &ColumnRef{Index: 0, Typ: schema.BigIntType}, rowttl.ErrInvalidArgument, "not BOOLEAN"},
		{"kind", JoinKind(0), nil, nil, nil, rowttl.ErrInvalidArgument, "unknown join kind"},
	}
	for _, c := range cases {
		ls, rs := relSource(mem, l, nil), relSource(mem, r, nil)
		_, err := NewHashJoin(env, ls, rs, c.kind, c.lk, c.rk, c.residual)
		ls.Close()
		rs.Close()
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v, want %v with %q", c.name, err, c.want, c.text)
		}
	}
	for _, out := range [][]int{{4}, {-1}, {0, 2, 5}} {
		ls, rs := relSource(mem, l, nil), relSource(mem, r, nil)
		_, err := NewHashJoinOutput(env, ls, rs, InnerJoin, nil, nil, nil, out)
		ls.Close()
		rs.Close()
		if !errors.Is(err, rowttl.ErrInvalidArgument) || !strings.Contains(err.Error(), "output column") {
			t.Errorf("output %v: %v", out, err)
		}
	}
	// A residual failing on its second chunk fails the join.
	one := rel{schema: Schema{{Name: "k", Type: schema.BigIntType}}}
	for i := 0; i < BatchRows/2+5; i++ {
		one.rows = append(one.rows, []any{int64(1)})
	}
	two := rel{schema: one.schema, rows: [][]any{{int64(1)}, {int64(1)}, {int64(1)}}}
	op, err := NewHashJoin(env, relSource(mem, one, nil), relSource(mem, two, []int{2}), InnerJoin, []int{0}, []int{0}, &failExpr{n: 2})
	if err != nil {
		t.Fatal(err)
	}
	_, err = relDrain(context.Background(), op)
	if !errors.Is(err, rowttl.ErrInvalidArgument) || !strings.Contains(err.Error(), "HashJoin residual fail") {
		t.Errorf("failing residual: %v", err)
	}
}

// TestHashJoinBudget: a build side larger than the budget fails with
// ErrMemLimit naming HashJoin, holding nothing afterwards; a big enough
// budget runs the same join and records its peak.
func TestHashJoinBudget(t *testing.T) {
	mem := relMem(t)
	rng := rand.New(rand.NewPCG(1, 2))
	types := []schema.Type{schema.BigIntType, schema.StringType}
	build := relRandom(rng, "b", types, 5000, 1000)
	probe := relRandom(rng, "p", types, 100, 1000)
	for _, fast := range []bool{true, false} {
		keys := []int{0}
		if !fast {
			keys = []int{1}
		}
		env := newTestEnv(mem)
		env.Budget = NewBudget(20 << 10)
		op, err := NewHashJoin(env, relSource(mem, probe, nil), relSource(mem, build, []int{500}), InnerJoin, keys, keys, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = relDrain(context.Background(), op)
		if !errors.Is(err, rowttl.ErrMemLimit) || !strings.Contains(err.Error(), "HashJoin") {
			t.Errorf("fast %v: %v, want ErrMemLimit naming HashJoin", fast, err)
		}
		if env.Budget.Used() != 0 {
			t.Errorf("fast %v: %d bytes charged after Close", fast, env.Budget.Used())
		}
		env.Budget = NewBudget(10 << 20)
		op, err = NewHashJoin(env, relSource(mem, probe, nil), relSource(mem, build, []int{500}), InnerJoin, keys, keys, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := relDrain(context.Background(), op); err != nil {
			t.Fatal(err)
		}
		if p := env.Budget.Peak(); p < 5000*8 {
			t.Errorf("fast %v: peak %d bytes for a 5000-row build side", fast, p)
		}
		if env.Budget.Used() != 0 {
			t.Errorf("fast %v: %d bytes charged after Close", fast, env.Budget.Used())
		}
	}
}

// cancelAfter is a source that cancels a context when it has returned n
// batches.
type cancelAfter struct {
	Operator
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if c.n == 0 {
		c.cancel()
	}
	c.n--
	return c.Operator.Next(ctx)
}

// TestHashJoinCancel: a cancelled context stops the join in its build and
// in its probe phase with the context's error, and Close releases all.
func TestHashJoinCancel(t *testing.T) {
	mem := relMem(t)
	env := newTestEnv(mem)
	rng := rand.New(rand.NewPCG(3, 4))
	types := []schema.Type{schema.BigIntType}
	r := relRandom(rng, "x", types, 200, 50)
	for _, side := range []string{"build", "probe"} {
		ctx, cancel := context.WithCancel(context.Background())
		var left, right Operator = relSource(mem, r, []int{10}), relSource(mem, r, []int{10})
		if side == "build" {
			right = &cancelAfter{Operator: right, n: 3, cancel: cancel}
		} else {
			left = &cancelAfter{Operator: left, n: 3, cancel: cancel}
		}
		op, err := NewHashJoin(env, left, right, FullJoin, []int{0}, []int{0}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = relDrain(ctx, op)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", side, err)
		}
		cancel()
		if env.Budget.Used() != 0 {
			t.Errorf("%s: %d bytes charged after Close", side, env.Budget.Used())
		}
	}
}

// TestErrorsStick: once Next has failed (here on the memory limit), every
// later call fails the same way instead of going on with half the input.
func TestErrorsStick(t *testing.T) {
	mem := relMem(t)
	rng := rand.New(rand.NewPCG(9, 10))
	r := relRandom(rng, "x", []schema.Type{schema.BigIntType, schema.StringType}, 2000, 50)
	build := map[string]func(env *Env) (Operator, error){
		"HashJoin": func(env *Env) (Operator, error) {
			return NewHashJoin(env, relSource(mem, r, []int{100}), relSource(mem, r, []int{100}), InnerJoin, []int{0}, []int{0}, nil)
		},
		"SetOp": func(env *Env) (Operator, error) {
			return NewSetOp(env, Except, relSource(mem, r, []int{100}), relSource(mem, r, []int{100}))
		},
		"Window": func(env *Env) (Operator, error) {
			return NewWindow(env, relSource(mem, r, []int{100}), []WindowSpec{{Func: RowNumber, Name: "rn"}})
		},
	}
	for name, mk := range build {
		env := newTestEnv(mem)
		env.Budget = NewBudget(8 << 10)
		op, err := mk(env)
		if err != nil {
			t.Fatal(err)
		}
		var first error
		for first == nil {
			b, err := op.Next(context.Background())
			if b == nil && err == nil {
				t.Fatalf("%s: ended without reaching the limit", name)
			}
			if b != nil {
				b.Release()
			}
			first = err
		}
		for i := 0; i < 3; i++ {
			b, err := op.Next(context.Background())
			if b != nil {
				b.Release()
			}
			if err != first {
				t.Errorf("%s: call %d after %v returned %v", name, i+1, first, err)
			}
		}
		op.Close()
		if !errors.Is(first, rowttl.ErrMemLimit) || env.Budget.Used() != 0 {
			t.Errorf("%s: %v, %d bytes charged after Close", name, first, env.Budget.Used())
		}
	}
}

// failAfter fails its n-th Next.
type failAfter struct {
	Operator
	n int
}

func (f *failAfter) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if f.n--; f.n == 0 {
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "probe side broken")
	}
	return f.Operator.Next(ctx)
}

// TestHashJoinParallel: probing on several goroutines gives the batches
// of the sequential join in the same order; a cancelled, failed or
// abandoned parallel join stops its goroutines and holds nothing.
func TestHashJoinParallel(t *testing.T) {
	mem := relMem(t)
	rng := rand.New(rand.NewPCG(5, 6))
	types := []schema.Type{schema.BigIntType, schema.StringType}
	probe := relRandom(rng, "p", types, 3000, 400)
	build := relRandom(rng, "b", types, 300, 400)
	split := []int{100, 7, 1000, 1, 500}
	run := func(par int, kind JoinKind) rel {
		env := &Env{Mem: mem, Budget: NewBudget(0), Parallelism: par}
		op, err := NewHashJoin(env, relSource(mem, probe, split), relSource(mem, build, nil), kind, []int{0}, []int{0}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := relDrain(context.Background(), op)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, kind := range []JoinKind{InnerJoin, LeftJoin, SemiJoin, AntiJoin, NullAwareAntiJoin} {
		seq, par := run(1, kind), run(3, kind)
		if a, b := relFormat(seq), relFormat(par); a != b {
			t.Fatalf("%s: parallel output differs from sequential\n%s\nvs\n%s", kind, b, a)
		}
	}
	goroutines := runtime.NumGoroutine()
	env := &Env{Mem: mem, Budget: NewBudget(0), Parallelism: 2}
	op, err := NewHashJoin(env, &failAfter{Operator: relSource(mem, probe, split), n: 4}, relSource(mem, build, nil),
		InnerJoin, []int{0}, []int{0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := relDrain(context.Background(), op); !errors.Is(err, rowttl.ErrCorruption) {
		t.Errorf("failing probe side: %v", err)
	}
	op, err = NewHashJoin(env, relSource(mem, probe, split), relSource(mem, build, nil), InnerJoin, []int{0}, []int{0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := op.Next(context.Background())
	if err != nil || b == nil {
		t.Fatal(b, err)
	}
	b.Release()
	op.Close()
	for range 100 {
		if runtime.NumGoroutine() <= goroutines {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("%d goroutines after Close, %d before", n, goroutines)
	}
	if env.Budget.Used() != 0 {
		t.Errorf("%d bytes charged after Close", env.Budget.Used())
	}
}

// TestHashJoinGroups: a join numbering its build rows by a build column
// outputs, beside that column, an id that GroupValue maps back to the very
// value (NULL for a NULL-extended row), equal values sharing one id; the
// ids are dense. Descriptions it cannot take are refused.
func TestHashJoinGroups(t *testing.T) {
	mem := relMem(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for iter := range 40 {
		env := &Env{Mem: mem, Budget: NewBudget(0), Parallelism: 1 + rng.IntN(2)}
		kind := []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin}[rng.IntN(4)]
		gt := pickTypes(rng, 1)[0]
		l := relRandom(rng, "l", []schema.Type{schema.BigIntType}, rng.IntN(50), 8)
		r := relRandom(rng, "r", []schema.Type{schema.BigIntType, gt}, rng.IntN(50), 8)
		dict := NewGroupDict([]int{1})
		op, err := NewHashJoinGrouped(env, relSource(mem, l, relRandomSplit(rng)), relSource(mem, r, relRandomSplit(rng)),
			kind, []int{0}, []int{0}, nil, []int{2, 3}, dict)
		if err != nil {
			t.Fatal(err)
		}
		var out []arrow.RecordBatch
		for {
			b, err := op.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if b == nil {
				break
			}
			out = append(out, b)
		}
		// The join is closed before its groups are read, as an aggregate
		// closes its input.
		op.Close()
		gv := &GroupValue{Dict: dict, Col: 0, X: &ColumnRef{Index: 1, Typ: schema.IntType}, Typ: gt, Name: "r1"}
		byID := map[int32]string{}
		nullIDs, nullGroups := 0, 0
		for _, b := range out {
			vals, err := gv.Eval(env, b)
			if err != nil {
				t.Fatal(err)
			}
			s := Schema{{Name: "v", Type: gt, Nullable: true}}
			got := relFromArrays(t, s, vals)
			want := relFromArrays(t, s, b.Column(0))
			ids := b.Column(1).(*array.Int32)
			for i := range got {
				if relRowString(s, got[i]) != relRowString(s, want[i]) {
					t.Fatalf("iter %d %s: row %d: group value %s, build value %s", iter, kind, i,
						relRowString(s, got[i]), relRowString(s, want[i]))
				}
				if ids.IsNull(i) {
					nullIDs++
					continue
				}
				v := relRowString(s, want[i])
				if got[i][0] == nil {
					nullGroups++
				}
				if prev, ok := byID[ids.Value(i)]; ok && prev != v {
					t.Fatalf("iter %d: id %d for %s and %s", iter, ids.Value(i), prev, v)
				}
				byID[ids.Value(i)] = v
			}
			vals.Release()
			b.Release()
		}
		// NULL is one group: rows no build row extends join a NULL key's.
		if nullIDs > 0 && nullGroups > 0 {
			t.Fatalf("iter %d %s: %d rows of NULL id beside %d of a NULL group", iter, kind, nullIDs, nullGroups)
		}
		dict.Release()
		if env.Budget.Used() != 0 {
			t.Fatalf("iter %d: %d bytes charged after Release", iter, env.Budget.Used())
		}
	}
	env := newTestEnv(mem)
	s := rel{schema: Schema{{Name: "k", Type: schema.BigIntType}}}
	for _, c := range []struct {
		kind JoinKind
		cols []int
		text string
	}{
		{SemiJoin, []int{0}, "no build groups"},
		{InnerJoin, []int{3}, "group column 3"},
	} {
		ls, rs := relSource(mem, s, nil), relSource(mem, s, nil)
		_, err := NewHashJoinGrouped(env, ls, rs, c.kind, []int{0}, []int{0}, nil, nil, NewGroupDict(c.cols))
		ls.Close()
		rs.Close()
		if !errors.Is(err, rowttl.ErrInvalidArgument) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s groups %v: %v", c.kind, c.cols, err)
		}
	}
}

// relFromArrays reads the rows of a one-column array as test values.
func relFromArrays(t *testing.T, s Schema, a arrow.Array) [][]any {
	t.Helper()
	rows := make([][]any, a.Len())
	for i := range rows {
		rows[i] = []any{relValueAt(a, i)}
	}
	return rows
}

// TestOnBuildKeyRange: a join of one integer key that drops unmatched
// probe rows reports its build keys' range before reading the probe side;
// other joins take no hook.
func TestOnBuildKeyRange(t *testing.T) {
	mem := relMem(t)
	env := newTestEnv(mem)
	ints := rel{schema: Schema{{Name: "k", Type: schema.IntType, Nullable: true}},
		rows: [][]any{{int64(7)}, {nil}, {int64(-3)}, {int64(12)}}}
	strs := rel{schema: Schema{{Name: "s", Type: schema.StringType}}, rows: [][]any{{"a"}}}
	for _, c := range []struct {
		kind JoinKind
		r    rel
		ok   bool
	}{
		{InnerJoin, ints, true}, {SemiJoin, ints, true}, {RightJoin, ints, true},
		{LeftJoin, ints, false}, {AntiJoin, ints, false}, {FullJoin, ints, false}, {InnerJoin, strs, false},
	} {
		probeRead := false
		var got []int64
		left := &onNext{Operator: relSource(mem, c.r, nil), f: func() { probeRead = true }}
		op, err := NewHashJoin(env, left, relSource(mem, c.r, nil), c.kind, []int{0}, []int{0}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ok := OnBuildKeyRange(op, func(lo, hi int64) {
			if probeRead {
				t.Errorf("%s: range after the probe side was read", c.kind)
			}
			got = []int64{lo, hi}
		})
		if ok != c.ok {
			t.Errorf("%s over %s: hook taken %v", c.kind, c.r.schema[0].Type, ok)
		}
		if _, err := relDrain(context.Background(), op); err != nil {
			t.Fatal(err)
		}
		if c.ok && !slices.Equal(got, []int64{-3, 12}) {
			t.Errorf("%s: range %v, want [-3 12]", c.kind, got)
		}
		if OnBuildKeyRange(op, func(int64, int64) {}) {
			t.Errorf("%s: hook taken after the join ran", c.kind)
		}
	}
}

// onNext calls f before each Next.
type onNext struct {
	Operator
	f func()
}

func (o *onNext) Next(ctx context.Context) (arrow.RecordBatch, error) {
	o.f()
	return o.Operator.Next(ctx)
}
