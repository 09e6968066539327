package exec

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// batchOf builds a batch with one column per type, from rows of values.
func batchOf(mem memory.Allocator, types []schema.Type, rows [][]schema.Value) arrow.RecordBatch {
	fields := make([]arrow.Field, len(types))
	cols := make([]arrow.Array, len(types))
	for j, t := range types {
		fields[j] = arrow.Field{Name: string(rune('a' + j)), Type: t.Arrow(), Nullable: true}
		b := array.NewBuilder(mem, t.Arrow())
		for _, r := range rows {
			schema.AppendValue(b, r[j])
		}
		cols[j] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(len(rows)))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// show formats every value of an array as the result format does.
func show(a arrow.Array, t schema.Type) string {
	f := ColumnFormatter(a, t, time.UTC, true)
	var parts []string
	for i := 0; i < a.Len(); i++ {
		parts = append(parts, string(f(nil, i)))
	}
	return strings.Join(parts, ",")
}

var (
	i64 = schema.BigIntType
	f64 = schema.DoubleType
	str = schema.StringType
	nul = schema.Null
	iv  = schema.IntVal
	fv  = schema.FloatVal
	sv  = func(s string) schema.Value { return schema.BytesVal([]byte(s)) }
)

func col(i int, t schema.Type) *ColumnRef {
	return &ColumnRef{Index: i, Name: string(rune('a' + i)), Typ: t}
}
func lit(t schema.Type, v schema.Value) *Literal {
	return &Literal{Typ: t, Val: v, Text: v.String()}
}

func must[T any](x T, err error) T {
	if err != nil {
		panic(err)
	}
	return x
}

func TestKernels(t *testing.T) {
	types := []schema.Type{i64, i64, f64, f64, str, schema.BooleanType}
	rows := [][]schema.Value{
		{iv(7), iv(2), fv(7), fv(2), sv("apple"), iv(1)},
		{iv(-7), iv(0), fv(1), fv(0), sv("banana"), iv(0)},
		{nul, iv(3), nul, fv(3), nul, nul},
		{iv(math.MaxInt64), nul, fv(-0.5), nul, sv("pineapple"), iv(1)},
	}
	cases := []struct {
		name string
		e    Expr
		want string
	}{
		{"add null row hides overflow", must(NewArith(Add, col(0, i64), col(1, i64), "a + b")), "9,-7,NULL,NULL"},
		{"sub scalar", must(NewArith(Sub, col(0, i64), lit(i64, iv(1)), "a - 1")), "6,-8,NULL,9223372036854775806"},
		{"mod by zero is NULL", must(NewArith(Mod, col(0, i64), col(1, i64), "a % b")), "1,NULL,NULL,NULL"},
		{"div by zero is NULL", must(NewArith(IntDiv, col(0, i64), col(1, i64), "a DIV b")), "3,NULL,NULL,NULL"},
		{"double /", must(NewArith(Div, col(2, f64), col(3, f64), "c / d")), "3.5,NULL,NULL,NULL"},
		{"double DIV", must(NewArith(IntDiv, col(2, f64), col(3, f64), "c DIV d")), "3,NULL,NULL,NULL"},
		{"neg", &Neg{X: col(2, f64), Text: "-c"}, "-7,-1,NULL,0.5"},
		{"eq scalar", must(NewCompare(Eq, col(1, i64), lit(i64, iv(3)))), "false,false,true,NULL"},
		{"lt scalar left", must(NewCompare(Lt, lit(i64, iv(0)), col(0, i64))), "true,false,NULL,true"},
		{"null-safe eq", must(NewCompare(NullSafeEq, col(0, i64), col(1, i64))), "false,false,false,false"},
		{"null-safe eq null", must(NewCompare(NullSafeEq, col(4, str), lit(str, nul))), "false,false,true,false"},
		{"string ge", must(NewCompare(Ge, col(4, str), lit(str, sv("b")))), "false,true,NULL,true"},
		{"and 3VL", &Logic{And: true, L: col(5, schema.BooleanType), R: must(NewCompare(Gt, col(1, i64), lit(i64, iv(1))))}, "true,false,NULL,NULL"},
		{"or 3VL", &Logic{L: col(5, schema.BooleanType), R: must(NewCompare(Gt, col(1, i64), lit(i64, iv(1))))}, "true,false,true,true"},
		{"not", &Not{X: col(5, schema.BooleanType)}, "false,true,NULL,false"},
		{"is null", &Is{X: col(0, i64), Test: TestNull}, "false,false,true,false"},
		{"is not true", &Is{X: col(5, schema.BooleanType), Test: TestTrue, Not: true}, "false,true,true,false"},
		{"in", must(NewIn(col(1, i64), []*Literal{lit(i64, iv(2)), lit(i64, iv(3))}, false)), "true,false,true,NULL"},
		{"in with null", must(NewIn(col(1, i64), []*Literal{lit(i64, iv(2)), lit(i64, nul)}, false)), "true,NULL,NULL,NULL"},
		{"not in with null", must(NewIn(col(1, i64), []*Literal{lit(i64, iv(2)), lit(i64, nul)}, true)), "false,NULL,NULL,NULL"},
		{"in strings", must(NewIn(col(4, str), []*Literal{lit(str, sv("banana"))}, true)), "true,false,NULL,true"},
		{"like contains", must(NewLike(col(4, str), "%apple%", '\\', false)), "true,false,NULL,true"},
		{"like prefix", must(NewLike(col(4, str), "b%", '\\', false)), "false,true,NULL,false"},
		{"not like general", must(NewLike(col(4, str), "_a%a", '\\', true)), "true,false,NULL,true"},
		{"cast to bool", &Cast{X: col(2, f64), To: schema.BooleanType}, "true,true,NULL,true"},
		{"cast to string", &Cast{X: col(2, f64), To: str}, "7,1,NULL,-0.5"},
		{"cast to int", &Cast{X: col(1, i64), To: schema.Type{Kind: schema.TinyInt}}, "2,0,3,NULL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			env := &Env{Mem: mem, Loc: time.UTC}
			b := batchOf(mem, types, rows)
			defer b.Release()
			for _, sl := range []struct{ lo, hi int64 }{{0, 4}, {1, 4}} {
				sub := b.NewSlice(sl.lo, sl.hi)
				got, err := tc.e.Eval(env, sub)
				sub.Release()
				if err != nil {
					t.Fatal(err)
				}
				s := show(got, tc.e.Type())
				got.Release()
				want := strings.Join(strings.Split(tc.want, ",")[sl.lo:], ",")
				if s != want {
					t.Fatalf("%s on rows %d..%d = %s, want %s", tc.e, sl.lo, sl.hi, s, want)
				}
			}
		})
	}
}

func TestKernelErrors(t *testing.T) {
	types := []schema.Type{i64, i64, str}
	rows := [][]schema.Value{{iv(1), iv(0), sv("x")}, {iv(math.MaxInt64), iv(1), sv("y")}, {iv(math.MinInt64), iv(-1), nul}}
	cases := []struct {
		name string
		e    Expr
		want string
	}{
		{"add overflow", must(NewArith(Add, col(0, i64), col(1, i64), "a + b")), "BIGINT value is out of range in 'a + b'"},
		{"mul overflow", must(NewArith(Mul, col(0, i64), lit(i64, iv(2)), "a * 2")), "BIGINT value is out of range in 'a * 2'"},
		{"div overflow", must(NewArith(IntDiv, col(0, i64), col(1, i64), "a DIV b")), "BIGINT value is out of range in 'a DIV b'"},
		{"neg overflow", &Neg{X: col(0, i64), Text: "-a"}, "BIGINT value is out of range in '-a'"},
		{"cast range", &Cast{X: col(0, i64), To: schema.Type{Kind: schema.Int}}, "value 9223372036854775807 is out of range for INT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			b := batchOf(mem, types, rows)
			defer b.Release()
			_, err := tc.e.Eval(&Env{Mem: mem, Loc: time.UTC}, b)
			if err == nil || err.Error() != tc.want || !errors.Is(err, rowttl.ErrInvalidArgument) {
				t.Fatalf("error %v, want %q wrapping ErrInvalidArgument", err, tc.want)
			}
		})
	}
}

// TestLogicShortCircuit: the right side of AND is not evaluated on the rows
// the left side makes FALSE, so an error it would raise there is not
// raised, as in a row-at-a-time evaluator.
func TestLogicShortCircuit(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := batchOf(mem, []schema.Type{i64}, [][]schema.Value{{iv(1)}, {iv(math.MaxInt64)}, {nul}, {iv(5)}})
	defer b.Release()
	env := &Env{Mem: mem, Loc: time.UTC}
	small := must(NewCompare(Lt, col(0, i64), lit(i64, iv(100))))
	plus := must(NewArith(Add, col(0, i64), lit(i64, iv(1)), "a + 1"))
	right := must(NewCompare(Gt, plus, lit(i64, iv(2))))
	e := &Logic{And: true, L: small, R: right}
	got, err := e.Eval(env, b)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if s := show(got, e.Type()); s != "false,false,NULL,true" {
		t.Fatalf("got %s", s)
	}
	// Without the guard, the same right side fails.
	if _, err := right.Eval(env, b); err == nil {
		t.Fatal("a + 1 did not overflow")
	}
}

// TestLikeFastPaths compares the fast paths with the general matcher on
// random strings and patterns.
func TestLikeFastPaths(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	alpha := []rune("ab%é")
	word := func(n int) string {
		var b strings.Builder
		for range r.IntN(n) {
			b.WriteRune(alpha[r.IntN(len(alpha))])
		}
		return b.String()
	}
	for range 2000 {
		p, s := word(5), strings.ReplaceAll(word(8), "%", "")
		g := must(NewLike(col(0, str), p, '\\', false))
		if got, want := g.match(s), LikeMatch([]rune(s), []rune(p), '\\'); got != want {
			t.Fatalf("seed %d: %q LIKE %q = %v (kind %d), want %v", seed, s, p, got, g.kind, want)
		}
	}
}

// countingSource counts the batches pulled and whether it was closed.
type countingSource struct {
	mem    memory.Allocator
	n      int
	pulled int
	closed bool
}

func (c *countingSource) Schema() Schema { return Schema{{Name: "a", Type: i64}} }
func (c *countingSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.closed {
		panic("Next after Close")
	}
	if c.pulled == c.n {
		return nil, nil
	}
	c.pulled++
	rows := make([][]schema.Value, 10)
	for i := range rows {
		rows[i] = []schema.Value{iv(int64(c.pulled*10 + i))}
	}
	return batchOf(c.mem, []schema.Type{i64}, rows), nil
}
func (c *countingSource) Close() { c.closed = true }

func TestLimitStopsEarly(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := &countingSource{mem: mem, n: 100}
	env := &Env{Mem: mem, Loc: time.UTC}
	f := must(NewFilter(env, src, must(NewCompare(Ne, col(0, i64), lit(i64, iv(13))))))
	out, err := Drain(context.Background(), NewLimit(f, 5, 12))
	if err != nil {
		t.Fatal(err)
	}
	var vals []string
	for _, b := range out {
		vals = append(vals, show(b.Column(0), i64))
		b.Release()
	}
	if got := strings.Join(vals, "|"); got != "16,17,18,19|20,21,22,23,24,25,26,27" {
		t.Fatalf("got %s", got)
	}
	if src.pulled != 2 || !src.closed {
		t.Fatalf("pulled %d batches, closed %v; want 2 and closed", src.pulled, src.closed)
	}
}

func TestCancelStopsOperators(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := &countingSource{mem: mem, n: 1000}
	env := &Env{Mem: mem, Loc: time.UTC}
	f := must(NewFilter(env, src, lit(schema.BooleanType, iv(1))))
	p := must(NewProject(env, f, []Expr{col(0, i64)}, []string{"a"}))
	ctx, cancel := context.WithCancel(context.Background())
	b, err := p.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b.Release()
	cancel()
	if _, err := p.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v", err)
	}
	p.Close()
	if src.pulled != 1 || !src.closed {
		t.Fatalf("pulled %d, closed %v", src.pulled, src.closed)
	}
}

// TestCaseAndCoalesceLaziness: a branch is evaluated only on the rows that
// take it, so its error on other rows is never raised.
func TestCaseAndCoalesceLaziness(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := batchOf(mem, []schema.Type{i64, i64}, [][]schema.Value{{iv(1), nul}, {iv(math.MaxInt64), iv(4)}, {nul, nul}, {iv(5), iv(6)}})
	defer b.Release()
	env := &Env{Mem: mem, Loc: time.UTC}
	plus := must(NewArith(Add, col(0, i64), lit(i64, iv(1)), "a + 1"))
	small := must(NewCompare(Lt, col(0, i64), lit(i64, iv(100))))
	cases := []struct {
		e    Expr
		want string
	}{
		{&Case{Whens: []When{{Cond: small, Result: plus}}, Else: col(1, i64), Typ: i64}, "2,4,NULL,6"},
		{&Case{Whens: []When{{Cond: small, Result: plus}}, Typ: i64}, "2,NULL,NULL,6"},
		{&Coalesce{Args: []Expr{col(1, i64), plus, lit(i64, iv(0))}, Typ: i64}, "2,4,0,6"},
	}
	for _, tc := range cases {
		got, err := tc.e.Eval(env, b)
		if err != nil {
			t.Fatalf("%s: %v", tc.e, err)
		}
		if s := show(got, i64); s != tc.want {
			t.Errorf("%s = %s, want %s", tc.e, s, tc.want)
		}
		got.Release()
	}
}

func TestDatePart(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	var rows [][]schema.Value
	var want []time.Time
	for range 500 {
		us := r.Int64N(400*365*86400*1_000_000) - 200*365*86400*1_000_000
		rows = append(rows, []schema.Value{iv(us)})
		want = append(want, time.UnixMicro(us).UTC())
	}
	b := batchOf(mem, []schema.Type{schema.DatetimeType(6)}, rows)
	defer b.Release()
	env := &Env{Mem: mem, Loc: time.UTC}
	for _, part := range []string{"year", "quarter", "month", "day", "dayofweek", "hour", "minute", "second"} {
		a, err := (&DatePart{Part: part, X: col(0, schema.DatetimeType(6))}).Eval(env, b)
		if err != nil {
			t.Fatal(err)
		}
		vals := a.(*array.Int32).Int32Values()
		for i, tm := range want {
			w := map[string]int{"year": tm.Year(), "quarter": (int(tm.Month()) + 2) / 3, "month": int(tm.Month()), "day": tm.Day(),
				"dayofweek": int(tm.Weekday()) + 1, "hour": tm.Hour(), "minute": tm.Minute(), "second": tm.Second()}[part]
			if int(vals[i]) != w {
				t.Fatalf("seed %d: %s(%s) = %d, want %d", seed, part, tm, vals[i], w)
			}
		}
		a.Release()
	}
}

// TestWideningCasts: the typed widening loops keep values and NULLs, on
// sliced inputs too.
func TestWideningCasts(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ti := schema.Type{Kind: schema.TinyInt}
	in := schema.IntType
	fl := schema.Type{Kind: schema.Float}
	b := batchOf(mem, []schema.Type{ti, in, fl}, [][]schema.Value{{iv(-128), iv(math.MinInt32), fv(0.5)}, {nul, nul, nul}, {iv(127), iv(math.MaxInt32), fv(-2)}})
	defer b.Release()
	env := &Env{Mem: mem, Loc: time.UTC}
	cases := []struct {
		e    Expr
		want string
	}{
		{&Cast{X: col(0, ti), To: i64}, "-128,NULL,127"},
		{&Cast{X: col(1, in), To: i64}, "-2147483648,NULL,2147483647"},
		{&Cast{X: col(1, in), To: f64}, "-2147483648,NULL,2147483647"},
		{&Cast{X: col(2, fl), To: f64}, "0.5,NULL,-2"},
	}
	for _, tc := range cases {
		for lo := int64(0); lo < 2; lo++ {
			sub := b.NewSlice(lo, 3)
			got, err := tc.e.Eval(env, sub)
			sub.Release()
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Join(strings.Split(tc.want, ",")[lo:], ",")
			if s := show(got, tc.e.Type()); s != want {
				t.Errorf("%s from row %d = %s, want %s", tc.e, lo, s, want)
			}
			got.Release()
		}
	}
}

// TestCaseAndCoalesceMergeEveryType: the rows of the branches are merged
// into one array of every result type, a branch of type NULL giving NULLs
// (rather than a panic), against a row-at-a-time reference; a branch of
// another type is refused.
func TestCaseAndCoalesceMergeEveryType(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	dec := schema.DecimalType(10, 2)
	types := map[schema.Type][]string{
		schema.BooleanType: {"0", "1"}, schema.TinyIntType: {"-5", "7"}, schema.SmallIntType: {"300", "-2"},
		schema.IntType: {"70000", "0"}, i64: {"-9000000000", "12"}, schema.FloatType: {"1.5", "-3"},
		f64: {"-2.25", "1e300"}, dec: {"12.34", "-0.01"}, str: {"ab", ""}, schema.DateType: {"2024-02-29", "1970-01-01"},
		schema.DatetimeType(6): {"2024-02-29 10:11:12.123456", "1999-12-31 23:59:59"},
	}
	nullLit := lit(schema.Type{Kind: schema.Invalid}, nul)
	for typ, texts := range types {
		vals := make([]schema.Value, len(texts))
		for i, s := range texts {
			vals[i] = must(schema.ParseLiteral(typ, s))
		}
		pick := func() schema.Value {
			if r.IntN(3) == 0 {
				return nul
			}
			return vals[r.IntN(len(vals))]
		}
		var rows, coalesced, cased, casedNull [][]schema.Value
		for range 300 {
			a, b, c := pick(), pick(), iv(int64(r.IntN(2)))
			if r.IntN(4) == 0 {
				c = nul
			}
			rows = append(rows, []schema.Value{a, b, c})
			co := b
			if !a.IsNull() {
				co = a
			}
			ca, cn := b, nul
			if !c.IsNull() && c.Int != 0 {
				ca, cn = a, a
			}
			casedNull = append(casedNull, []schema.Value{cn})
			coalesced = append(coalesced, []schema.Value{co})
			cased = append(cased, []schema.Value{ca})
		}
		b := batchOf(mem, []schema.Type{typ, typ, schema.BooleanType}, rows)
		env := &Env{Mem: mem, Loc: time.UTC}
		cases := []struct {
			e    Expr
			want [][]schema.Value
		}{
			{&Coalesce{Args: []Expr{col(0, typ), lit(typ, nul), col(1, typ)}, Typ: typ}, coalesced},
			{&Case{Whens: []When{{Cond: lit(schema.BooleanType, nul), Result: col(1, typ)}, {Cond: col(2, schema.BooleanType), Result: col(0, typ)}},
				Else: col(1, typ), Typ: typ}, cased},
			{&Case{Whens: []When{{Cond: col(2, schema.BooleanType), Result: col(0, typ)}}, Else: nullLit, Typ: typ}, casedNull},
		}
		for _, tc := range cases {
			want := batchOf(mem, []schema.Type{typ}, tc.want)
			got, err := tc.e.Eval(env, b)
			if err != nil {
				t.Fatalf("%s %s: %v", typ, tc.e, err)
			}
			if g, w := show(got, typ), show(want.Column(0), typ); g != w {
				t.Errorf("%s %s =\n%s\nwant\n%s", typ, tc.e, g, w)
			}
			got.Release()
			want.Release()
		}
		b.Release()
	}
	b := batchOf(mem, []schema.Type{i64}, [][]schema.Value{{iv(1)}})
	defer b.Release()
	_, err := (&Coalesce{Args: []Expr{col(0, i64)}, Typ: str}).Eval(&Env{Mem: mem, Loc: time.UTC}, b)
	if !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Fatalf("a BIGINT branch of a VARCHAR COALESCE: %v", err)
	}
}
