package query

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/ttlcol"
)

// TestOrderConjuncts checks the order in which a page tests the conjuncts
// of an AND: the most selective by its zone maps first, what they cannot
// judge last, ties in written order.
func TestOrderConjuncts(t *testing.T) {
	zones := map[int]segment.ZoneMap{
		// a: ints 0..1000; b: doubles 0..10000; c: no bounds; d: half NULL.
		0: {Rows: 100, Min: schema.IntVal(0), Max: schema.IntVal(1000)},
		1: {Rows: 100, Min: schema.FloatVal(0), Max: schema.FloatVal(10000)},
		2: {Rows: 100},
		3: {Rows: 100, NullCount: 50, Min: schema.IntVal(0), Max: schema.IntVal(9)},
	}
	st := func(slot int) segment.ZoneMap { return zones[slot] }
	c := func(slot int, op Op, v schema.Value) bound { return &boundCmp{slot: slot, op: op, c: v} }
	for _, tc := range []struct {
		name string
		kids []bound
		want string
	}{
		{"q03 as written", []bound{c(1, Gt, schema.FloatVal(9000)), c(0, Lt, schema.IntVal(500))}, "b>9000 a<500"},
		{"q03 the other way", []bound{c(0, Lt, schema.IntVal(500)), c(1, Gt, schema.FloatVal(9000))}, "b>9000 a<500"},
		{"an equality before a range", []bound{c(0, Ge, schema.IntVal(100)), c(0, Eq, schema.IntVal(7))}, "a=7 a>=100"},
		{"a constant outside the page first", []bound{c(0, Lt, schema.IntVal(900)), c(1, Gt, schema.FloatVal(20000))}, "b>20000 a<900"},
		{"no bounds last", []bound{c(2, Eq, schema.IntVal(1)), c(0, Le, schema.IntVal(900))}, "a<=900 c=1"},
		{"NULL rows are not selected", []bound{c(0, Le, schema.IntVal(600)), c(3, Ge, schema.IntVal(0))}, "d>=0 a<=600"},
		{"IS NULL", []bound{&boundIsNull{slot: 3, negate: true}, &boundIsNull{slot: 0}}, "a IS NULL d IS NOT NULL"},
		{"NOT flips", []bound{&boundNot{k: c(0, Lt, schema.IntVal(900))}, c(0, Lt, schema.IntVal(500))}, "NOT a<900 a<500"},
		{"ties keep their order", []bound{c(2, Eq, schema.IntVal(1)), c(2, Eq, schema.IntVal(2))}, "c=1 c=2"},
	} {
		kids := append([]bound(nil), tc.kids...)
		orderConjuncts(kids, make([]float64, len(kids)), st)
		got := ""
		for i, k := range kids {
			if i > 0 {
				got += " "
			}
			got += boundString(k)
		}
		if got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func boundString(b bound) string {
	names := "abcd"
	switch x := b.(type) {
	case *boundCmp:
		v := x.c.String()
		return fmt.Sprintf("%c%s%s", names[x.slot], x.op, v)
	case *boundIsNull:
		if x.negate {
			return fmt.Sprintf("%c IS NOT NULL", names[x.slot])
		}
		return fmt.Sprintf("%c IS NULL", names[x.slot])
	case *boundNot:
		return "NOT " + boundString(x.k)
	}
	return fmt.Sprintf("%T", b)
}

// TestConjunctOrderAnswers checks Aggregate's count and sum under ANDs of
// comparisons whose most selective conjunct changes from page to page,
// against a plain loop over the rows, in both written orders.
func TestConjunctOrderAnswers(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed^7))
	tbl := &schema.Schema{KeyCount: 1, Columns: []schema.Column{
		{ID: 1, Name: "a", Type: schema.BigIntType, Nullable: true},
		{ID: 2, Name: "b", Type: schema.DoubleType, Nullable: true},
	}}
	phys := arrow.NewSchema([]arrow.Field{
		tbl.Columns[0].Field(), tbl.Columns[1].Field(),
		{Name: schema.TTLColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	const rows, pageRows, now = 4000, 512, int64(1_000_000)
	type row struct {
		a, b        int64 // b is shown as b/10
		aNull, bNul bool
		live        bool
	}
	ref := make([]row, rows)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	bld := array.NewRecordBuilder(mem, phys)
	var aLo, aSpan, bLo, bSpan int64
	for i := range rows {
		if i%pageRows == 0 {
			// Each page its own ranges: which conjunct is the more
			// selective changes from page to page.
			aLo, aSpan = rng.Int64N(1000), 1+rng.Int64N(2000)
			bLo, bSpan = rng.Int64N(1000), 1+rng.Int64N(2000)
		}
		r := row{a: aLo + rng.Int64N(aSpan), b: bLo + rng.Int64N(bSpan), aNull: rng.IntN(10) == 0, bNul: rng.IntN(10) == 0}
		ttlNull := rng.IntN(5) == 0
		ttl := now - 1000 + rng.Int64N(3000)
		r.live = ttlNull || ttl > now
		ref[i] = r
		if r.aNull {
			bld.Field(0).(*array.Int64Builder).AppendNull()
		} else {
			bld.Field(0).(*array.Int64Builder).Append(r.a)
		}
		if r.bNul {
			bld.Field(1).(*array.Float64Builder).AppendNull()
		} else {
			bld.Field(1).(*array.Float64Builder).Append(float64(r.b) / 10)
		}
		if ttlNull {
			bld.Field(2).(*array.Int64Builder).AppendNull()
		} else {
			bld.Field(2).(*array.Int64Builder).Append(ttl)
		}
	}
	rec := bld.NewRecordBatch()
	bld.Release()
	h := writeRowset(t, phys, 2, segment.WriterOptions{PageRows: pageRows}, rec)
	rec.Release()
	defer h.Unref()
	ops := []Op{Eq, Ne, Lt, Le, Gt, Ge}
	holds := func(op Op, v, c int64) bool {
		switch op {
		case Eq:
			return v == c
		case Ne:
			return v != c
		case Lt:
			return v < c
		case Le:
			return v <= c
		case Gt:
			return v > c
		}
		return v >= c
	}
	for iter := range 60 {
		opA, opB := ops[rng.IntN(len(ops))], ops[rng.IntN(len(ops))]
		ca, cb := rng.Int64N(3000), rng.Int64N(3000)
		var wantRows, wantSum int64
		for _, r := range ref {
			if r.live && !r.aNull && !r.bNul && holds(opA, r.a, ca) && holds(opB, r.b, cb) {
				wantRows++
				wantSum += r.a
			}
		}
		fa := Compare("a", opA, ca)
		fb := Compare("b", opB, float64(cb)/10)
		for _, filter := range []Expr{And{Exprs: []Expr{fa, fb}}, And{Exprs: []Expr{fb, fa}}} {
			for _, workers := range []int{1, 2} {
				h.Ref()
				snap := &Snapshot{Schema: tbl, Policy: ttlcol.Policy{Mode: ttlcol.DirectMode}, Model: schema.Duplicate,
					Rowsets: []*rowset.Handle{h}, Release: h.Unref, PageMem: mem}
				s, err := NewScan(context.Background(), mem, snap, Request{Now: time.UnixMicro(now), Parallelism: workers,
					Columns: []string{"a"}, Filter: filter})
				if err != nil {
					t.Fatal(err)
				}
				agg, err := s.Aggregate()
				s.Release()
				if err != nil {
					t.Fatal(err)
				}
				if agg.Rows != wantRows || agg.Sums[0].Int != wantSum {
					t.Fatalf("iter %d, %s, %d workers: %d rows sum %d, want %d rows sum %d", iter, filter, workers, agg.Rows, agg.Sums[0].Int, wantRows, wantSum)
				}
			}
		}
	}
}
