package table

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/query"
)

// nanAmount marks a NULL amount for aggBatch.
var nanAmount = math.NaN()

// aggBatch is eventBatch with amounts drawn by amount (NaN: NULL).
func aggBatch(mem memory.Allocator, rows []eventRow, amount func(i int) float64) arrow.RecordBatch {
	rec := eventBatch(mem, rows, true)
	defer rec.Release()
	b := array.NewFloat64Builder(mem)
	defer b.Release()
	for i := range rows {
		if v := amount(i); math.IsNaN(v) {
			b.AppendNull()
		} else {
			b.Append(v)
		}
	}
	a := b.NewArray()
	defer a.Release()
	cols := append([]arrow.Array{}, rec.Columns()...)
	cols[3] = a
	return array.NewRecordBatch(rec.Schema(), cols, rec.NumRows())
}

// TestAggregateMatchesScan compares Aggregate with sums over the rows a
// scan returns, on pages of every kind: all live, all expired, expired but
// for NULL expirations, mixed; doubles stored decimal-scaled and plain;
// NULL values; deleted rows; filters.
func TestAggregateMatchesScan(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl := aggTestTable(t, mem)
	defer checkClose(t, tbl)
	for _, at := range aggTestNows {
		for _, filter := range []query.Expr{nil, query.Compare("user_id", query.Lt, int64(500))} {
			req := query.Request{Now: at, Columns: []string{"amount", "user_id", "id"}, Filter: filter}
			rows := scanAll(t, tbl, req)
			var wantRows, wantAmounts, wantUser, wantID int64
			var wantAmount float64
			for _, r := range rows {
				wantRows++
				if !r[0].IsNull() {
					wantAmounts++
					wantAmount += r[0].Float
				}
				wantUser += r[1].Int
				wantID += r[2].Int
			}
			var first query.Aggregates
			for _, par := range []int{1, 2, 3} {
				req.Parallelism = par
				tot, err := tbl.Aggregate(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if tot.Rows != wantRows || tot.Sums[0].Count != wantAmounts || tot.Sums[1].Int != wantUser || tot.Sums[2].Int != wantID {
					t.Fatalf("at %v filter %v: %+v, want rows %d, %d amounts, sum(user_id) %d, sum(id) %d", at, filter, tot, wantRows, wantAmounts, wantUser, wantID)
				}
				if math.Abs(tot.Sums[0].Float-wantAmount) > 1e-9*math.Max(1, math.Abs(wantAmount)) {
					t.Fatalf("at %v filter %v: sum(amount) %v, want %v", at, filter, tot.Sums[0].Float, wantAmount)
				}
				if par == 1 {
					first = tot
				} else if math.Float64bits(tot.Sums[0].Float) != math.Float64bits(first.Sums[0].Float) {
					t.Fatalf("sum(amount) %v with %d workers, %v with one", tot.Sums[0].Float, par, first.Sums[0].Float)
				}
			}
			if n := mustCount(t, tbl, at, filter); n != wantRows {
				t.Fatalf("Count %d, want %d", n, wantRows)
			}
		}
	}
}

// aggTestNows are the nows TestAggregate* judge aggTestTable at.
var aggTestNows = []time.Time{base.Add(-7 * 24 * time.Hour), base.Add(-time.Hour), base, base.Add(2 * 24 * time.Hour), base.Add(30 * 24 * time.Hour)}

// aggTestTable is a table of pages of every kind: all live, all expired,
// expired but for NULL expirations, mixed; doubles stored decimal-scaled
// and plain; NULL values; deleted rows.
func aggTestTable(t *testing.T, mem memory.Allocator) *Table {
	opts := quiet()
	opts.Allocator, opts.PageRows = mem, 128
	tbl := mustCreate(t, filepath.Join(t.TempDir(), "t"), directDef(), opts)
	rng := rand.New(rand.NewPCG(7, 8))
	b := base.UnixMicro()
	amounts := []func(i int) float64{
		func(i int) float64 { return float64(rng.IntN(100000)-70000) / 100 },              // scaled, mostly negative                    // scaled
		func(i int) float64 { return rng.NormFloat64() * 1e3 },                            // plain
		func(i int) float64 { return []float64{math.NaN(), 2.5}[rng.IntN(2)] },            // NULLs
		func(i int) float64 { return []float64{math.NaN(), float64(i) / 4}[min(i%3, 1)] }, // NULLs, scaled
	}
	id := int64(0)
	for k := 0; k < 12; k++ {
		rows := genEvents(rng, id, 300+rng.IntN(500))
		id += int64(len(rows))
		for i := range rows {
			switch k % 4 {
			case 1: // expirations in time order: whole pages expire together
				v := b - 3*86400e6 + int64(i)*int64(6*86400e6)/int64(len(rows))
				rows[i].ttl = &v
			case 2: // every expiration passed, some never expire
				if rows[i].ttl != nil {
					v := b - 6*86400e6
					rows[i].ttl = &v
				}
			case 3: // no expiration at all
				rows[i].ttl = nil
			}
		}
		rec := aggBatch(mem, rows, amounts[(k+k/4)%len(amounts)])
		mustWrite(t, tbl, rec)
		rec.Release()
	}
	if _, err := tbl.DeleteWhere(context.Background(), Matcher{Filter: query.Compare("user_id", query.Eq, int64(17))}, WriteOptions{Now: base}); err != nil {
		t.Fatal(err)
	}
	return tbl
}

func TestAggregateErrors(t *testing.T) {
	tbl := mustCreate(t, filepath.Join(t.TempDir(), "t"), directDef(), quiet())
	defer checkClose(t, tbl)
	rec := eventBatch(memory.DefaultAllocator, []eventRow{
		{id: math.MaxInt64, userID: math.MaxInt64, amount: 1, message: "a"},
		{id: 2, userID: math.MaxInt64, amount: 2, message: "b"},
	}, true)
	mustWrite(t, tbl, rec)
	rec.Release()
	ctx := context.Background()
	for _, tc := range []struct {
		cols []string
		want error
	}{
		{[]string{"message"}, rowttl.ErrInvalidArgument},
		{[]string{"event_time"}, rowttl.ErrInvalidArgument},
		{[]string{"nope"}, rowttl.ErrNotFound},
		{[]string{"user_id"}, rowttl.ErrInvalidArgument}, // overflows
	} {
		_, err := tbl.Aggregate(ctx, query.Request{Now: base, Columns: tc.cols})
		if !errors.Is(err, tc.want) {
			t.Errorf("sum of %v: %v, want %v", tc.cols, err, tc.want)
		}
	}
	// The overflow of one column is an error, not a wrapped number; a sum
	// that fits is exact.
	tot, err := tbl.Aggregate(ctx, query.Request{Now: base, Columns: []string{"amount", "__TTL__"}})
	if err != nil || tot.Rows != 2 || tot.Sums[0].Float != 3 || tot.Sums[1].Count != 0 {
		t.Fatalf("sum(amount), sum(__TTL__): %+v, %v", tot, err)
	}
}

// TestAggregateFiltersMatchScan is a randomized differential test of the
// filters Aggregate evaluates on decoded values (query/values_filter.go)
// against the rows a scan returns (the filter evaluated on Arrow arrays):
// comparisons of every operator of BIGINT and DOUBLE columns (scaled and
// plain pages, NULLs) with integer, fractional, NaN and out-of-range
// constants, IS [NOT] NULL, IN, and AND, OR, NOT of them, at nows that
// expire none, some and all of the rows.
func TestAggregateFiltersMatchScan(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl := aggTestTable(t, mem)
	defer checkClose(t, tbl)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	ops := []query.Op{query.Eq, query.Ne, query.Lt, query.Le, query.Gt, query.Ge, query.NullSafeEq}
	var stored []float64 // the amounts the table holds, for constants on their bounds
	for _, r := range scanAll(t, tbl, query.Request{Now: aggTestNows[0], Columns: []string{"amount"}}) {
		if !r[0].IsNull() {
			stored = append(stored, r[0].Float)
		}
	}
	amountConst := func() any {
		switch rng.IntN(8) {
		case 6, 7:
			return stored[rng.IntN(len(stored))]
		case 0:
			return int64(rng.IntN(2000) - 1000)
		case 1:
			return math.NaN()
		case 2:
			return []float64{math.Inf(1), math.Inf(-1), 1e300, -0.0}[rng.IntN(4)]
		case 3:
			return rng.NormFloat64() * 1e3
		}
		// A value the scaled pages hold, or one between two of them.
		return float64(rng.IntN(200000)-100000) / []float64{100, 4, 1000}[rng.IntN(3)]
	}
	var leaf func() query.Expr
	leaf = func() query.Expr {
		op := ops[rng.IntN(len(ops))]
		switch rng.IntN(6) {
		case 0:
			return query.Compare("user_id", op, int64(rng.IntN(1100)-50))
		case 1:
			return query.Compare("id", op, []int64{int64(rng.IntN(7000)), math.MinInt64, math.MaxInt64}[rng.IntN(3)])
		case 2:
			return query.IsNull{Column: "amount", Negate: rng.IntN(2) == 0}
		case 3:
			return query.In{Column: "user_id", Values: []any{int64(rng.IntN(1000)), int64(rng.IntN(1000))}}
		}
		return query.Compare("amount", op, amountConst())
	}
	var expr func(depth int) query.Expr
	expr = func(depth int) query.Expr {
		if depth == 0 || rng.IntN(3) == 0 {
			return leaf()
		}
		kids := make([]query.Expr, 1+rng.IntN(3))
		for i := range kids {
			kids[i] = expr(depth - 1)
		}
		switch rng.IntN(3) {
		case 0:
			return query.Or{Exprs: kids}
		case 1:
			return query.Not{Expr: kids[0]}
		}
		return query.And{Exprs: kids}
	}
	for iter := range 150 {
		filter := expr(3)
		at := aggTestNows[rng.IntN(len(aggTestNows))]
		req := query.Request{Now: at, Columns: []string{"amount", "user_id"}, Filter: filter, Parallelism: 1 + rng.IntN(3)}
		var wantRows, wantAmounts, wantUser int64
		var wantAmount float64
		for _, r := range scanAll(t, tbl, req) {
			wantRows++
			if !r[0].IsNull() {
				wantAmounts++
				wantAmount += r[0].Float
			}
			wantUser += r[1].Int
		}
		tot, err := tbl.Aggregate(context.Background(), req)
		if err != nil {
			t.Fatalf("seed %d iter %d: %v: %v", seed, iter, filter, err)
		}
		if tot.Rows != wantRows || tot.Sums[0].Count != wantAmounts || tot.Sums[1].Int != wantUser ||
			math.Abs(tot.Sums[0].Float-wantAmount) > 1e-9*math.Max(1, math.Abs(wantAmount)) {
			t.Fatalf("seed %d iter %d: at %v filter %v: %+v, want rows %d, %d amounts summing to %v, sum(user_id) %d",
				seed, iter, at, filter, tot, wantRows, wantAmounts, wantAmount, wantUser)
		}
	}
}

// TestScanSelectiveFiltersMatchUnfiltered checks the rows of scans whose
// filter keeps a few rows of a page (BIGINT and DOUBLE columns then decode
// for those rows alone, query's sparseColumn) against the rows of the
// unfiltered scan that pass the same test in Go: point lookups and narrow
// ranges of id, over pages of scaled and plain doubles, NULLs, expired and
// deleted rows.
func TestScanSelectiveFiltersMatchUnfiltered(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl := aggTestTable(t, mem)
	defer checkClose(t, tbl)
	cols := []string{"id", "amount", "user_id", "message", "event_time"}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, at := range aggTestNows {
		all := scanAll(t, tbl, query.Request{Now: at, Columns: cols})
		for range 30 {
			lo := rng.Int64N(7000)
			hi := lo + rng.Int64N(12)
			filter := query.AllOf(query.Compare("id", query.Ge, lo), query.Compare("id", query.Le, hi))
			if lo%3 == 0 {
				filter, hi = query.Compare("id", query.Eq, lo), lo
			}
			var want []string
			for _, r := range all {
				if r[0].Int >= lo && r[0].Int <= hi {
					want = append(want, fmt.Sprint(r))
				}
			}
			var got []string
			for _, r := range scanAll(t, tbl, query.Request{Now: at, Columns: cols, Filter: filter, Parallelism: 1 + rng.IntN(2)}) {
				got = append(got, fmt.Sprint(r))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("at %v %v:\ngot  %v\nwant %v", at, filter, got, want)
			}
		}
	}
}
