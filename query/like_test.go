package query

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/ttlcol"
)

// TestLikeMatchesNaive checks boundLike against strings.HasPrefix,
// HasSuffix, Contains and ==, over random strings of a small alphabet (so
// that needles hit, repeat and straddle two values), NULLs, empty values,
// and arrays sliced at an offset.
func TestLikeMatchesNaive(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(5, 6))
	word := func(max int) string {
		b := make([]byte, rng.IntN(max+1))
		for i := range b {
			b[i] = "abc"[rng.IntN(3)]
		}
		return string(b)
	}
	for iter := range 500 {
		n := rng.IntN(30)
		pad := rng.IntN(3)
		vals := make([]string, n+pad)
		null := make([]bool, n+pad)
		bld := array.NewStringBuilder(mem)
		for i := range vals {
			// Mostly short values, some long: the row of a hit is guessed
			// from the mean length (rowOf).
			vals[i] = word([]int{5, 5, 5, 40}[rng.IntN(4)])
			null[i] = rng.IntN(6) == 0
			if null[i] {
				bld.AppendNull()
			} else {
				bld.Append(vals[i])
			}
		}
		full := bld.NewArray()
		bld.Release()
		a := array.NewSlice(full, int64(pad), int64(pad+n))
		full.Release()
		vals, null = vals[pad:], null[pad:]

		needle := word(3)
		pattern := map[int]string{0: needle, 1: needle + "%", 2: "%" + needle, 3: "%" + needle + "%", 4: "%%" + needle + "%%%"}[rng.IntN(5)]
		want := func(v string) bool {
			lead, trail := strings.HasPrefix(pattern, "%"), strings.HasSuffix(pattern, "%")
			switch {
			case lead && trail:
				return strings.Contains(v, needle)
			case lead:
				return strings.HasSuffix(v, needle)
			case trail:
				return strings.HasPrefix(v, needle)
			}
			return v == needle
		}
		b, err := bindLike(0, pattern)
		if err != nil {
			t.Fatal(err)
		}
		bl := (n + 7) / 8
		tt, ff := make([]byte, bl), make([]byte, bl)
		b.eval(func(int) arrow.Array { return a }, n, tt, ff)
		for i := range bl * 8 {
			tb, fb := tt[i/8]>>(i%8)&1 == 1, ff[i/8]>>(i%8)&1 == 1
			switch {
			case i >= n:
				if tb || fb {
					t.Fatalf("iter %d: bit %d past %d rows set", iter, i, n)
				}
			case null[i]:
				if tb || fb {
					t.Fatalf("iter %d: NULL row %d LIKE %q is not NULL", iter, i, pattern)
				}
			case tb != want(vals[i]) || fb == want(vals[i]):
				t.Fatalf("iter %d: %q LIKE %q: true %v false %v (rows %q)", iter, vals[i], pattern, tb, fb, vals)
			}
		}
		a.Release()
	}
}

func TestLikeRefusesOtherPatterns(t *testing.T) {
	for _, p := range []string{"a_c", "a%c", `a\%`, "_", "%a%b%"} {
		if _, err := bindLike(0, p); !errors.Is(err, rowttl.ErrNotSupported) {
			t.Errorf("LIKE %q: %v, want ErrNotSupported", p, err)
		}
	}
}

// TestRowOf checks rowOf against a walk over the offsets, for values of
// even, skewed (long ones first or last, so that the guess falls short or
// past the row) and empty lengths, for every byte and every starting row
// at or before its own. The seed is printed.
func TestRowOf(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	for iter := range 300 {
		n := 1 + rng.IntN(60)
		offs := make([]int32, n+1)
		offs[0] = int32(rng.IntN(5))
		for i := range n {
			l := rng.IntN(4)
			switch iter % 4 {
			case 1:
				if i < n/4 {
					l = 50 + rng.IntN(50)
				}
			case 2:
				if i > 3*n/4 {
					l = 50 + rng.IntN(50)
				}
			case 3:
				l = 18
			}
			offs[i+1] = offs[i] + int32(l)
		}
		size := int(offs[n] - offs[0])
		if size == 0 {
			continue
		}
		perByte := (n << 20) / size
		for hit := int(offs[0]); hit < int(offs[n]); hit++ {
			want := 0
			for int(offs[want+1]) <= hit {
				want++
			}
			for r := 0; r <= want; r++ {
				if got := rowOf(offs, r, hit, perByte); got != want {
					t.Fatalf("iter %d: rowOf(%v, %d, %d) = %d, want %d", iter, offs, r, hit, got, want)
				}
			}
		}
	}
}

// TestLikeLateExpiry checks scans filtered by LIKE, whose mixed pages judge
// expiry after the filter for the rows it keeps, against a reference: rows
// of pages all live, all expired and mixed, expirations at now-1, now and
// now+1, NULL and far in the future (wide packed values), NULL and empty
// strings, read as rows and as a count, with one worker and three. The
// seed is printed.
func TestLikeLateExpiry(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	tbl := &schema.Schema{KeyCount: 1, Columns: []schema.Column{
		{ID: 1, Name: "id", Type: schema.BigIntType},
		{ID: 2, Name: "msg", Type: schema.StringType, Nullable: true},
	}}
	phys := arrow.NewSchema([]arrow.Field{
		tbl.Columns[0].Field(), tbl.Columns[1].Field(),
		{Name: schema.TTLColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	const rows, pageRows, now = 3000, 256, int64(1_000_000)
	type row struct {
		msg       string
		null      bool
		live      bool
		ttl       int64
		ttlIsNull bool
	}
	ref := make([]row, rows)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewRecordBuilder(mem, phys)
	mode := 0
	for i := range rows {
		if i%pageRows == 0 {
			mode = rng.IntN(4) // 0 all live, 1 all expired, 2-3 mixed
		}
		w := make([]byte, rng.IntN(7))
		for j := range w {
			w[j] = "abc"[rng.IntN(3)]
		}
		r := row{msg: string(w), null: rng.IntN(8) == 0}
		switch {
		case mode == 0:
			r.ttl = now + 1 + rng.Int64N(1<<20)
		case mode == 1:
			r.ttl = now - rng.Int64N(1<<20)
		default:
			switch rng.IntN(6) {
			case 0:
				r.ttlIsNull = true
			case 1:
				r.ttl = now - 1 + rng.Int64N(3)
			case 2:
				r.ttl = now + rng.Int64N(1<<42)
			default:
				r.ttl = now - 1<<19 + rng.Int64N(1<<20)
			}
		}
		r.live = r.ttlIsNull || r.ttl > now
		ref[i] = r
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if r.null {
			b.Field(1).(*array.StringBuilder).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(r.msg)
		}
		if r.ttlIsNull {
			b.Field(2).(*array.Int64Builder).AppendNull()
		} else {
			b.Field(2).(*array.Int64Builder).Append(r.ttl)
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	h := writeRowset(t, phys, 2, segment.WriterOptions{PageRows: pageRows}, rec)
	rec.Release()
	defer h.Unref()
	newScan := func(pattern string, workers int) *Scan {
		h.Ref()
		snap := &Snapshot{Schema: tbl, Policy: ttlcol.Policy{Mode: ttlcol.DirectMode}, Model: schema.Duplicate,
			Rowsets: []*rowset.Handle{h}, Release: h.Unref, PageMem: mem}
		s, err := NewScan(context.Background(), mem, snap, Request{Now: time.UnixMicro(now), Parallelism: workers,
			Columns: []string{"id"}, Filter: Like{Column: "msg", Pattern: pattern}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, pattern := range []string{"%ab%", "%a%", "ab%", "%ca", "abc", "%cc%"} {
		core := strings.Trim(pattern, "%")
		match := func(v string) bool {
			switch {
			case strings.HasPrefix(pattern, "%") && strings.HasSuffix(pattern, "%"):
				return strings.Contains(v, core)
			case strings.HasPrefix(pattern, "%"):
				return strings.HasSuffix(v, core)
			case strings.HasSuffix(pattern, "%"):
				return strings.HasPrefix(v, core)
			}
			return v == core
		}
		var want []int64
		for i, r := range ref {
			if r.live && !r.null && match(r.msg) {
				want = append(want, int64(i))
			}
		}
		for _, workers := range []int{1, 3} {
			s := newScan(pattern, workers)
			var got []int64
			for s.Next() {
				ids := s.RecordBatch().Column(0).(*array.Int64)
				got = append(got, ids.Int64Values()...)
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			s.Release()
			if !slices.Equal(got, want) {
				t.Fatalf("msg LIKE %q, %d workers: %d rows %v, want %d %v", pattern, workers, len(got), got, len(want), want)
			}
			s = newScan(pattern, workers)
			agg, err := s.Aggregate()
			s.Release()
			if err != nil {
				t.Fatal(err)
			}
			if agg.Rows != int64(len(want)) {
				t.Fatalf("count of msg LIKE %q, %d workers: %d, want %d", pattern, workers, agg.Rows, len(want))
			}
		}
	}
}

// BenchmarkLikeContains is boundLike.eval of '%refund%' over a page of the
// benchmark's messages, one in eight of which holds the needle.
func BenchmarkLikeContains(b *testing.B) {
	verbs := []string{"view", "click", "login", "logout", "search", "cart_add", "checkout", "refund"}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 65536
	bld := array.NewStringBuilder(memory.DefaultAllocator)
	for range n {
		bld.Append(fmt.Sprintf("%s #%d", verbs[rng.IntN(8)], 1_000_000_000+rng.Int64N(9_000_000_000)))
	}
	a := bld.NewArray()
	defer a.Release()
	bld.Release()
	bl, err := bindLike(0, "%refund%")
	if err != nil {
		b.Fatal(err)
	}
	t, f := make([]byte, n/8), make([]byte, n/8)
	b.SetBytes(int64(len(a.(*array.String).ValueBytes())))
	for b.Loop() {
		clear(t)
		bl.eval(func(int) arrow.Array { return a }, n, t, f)
	}
}
