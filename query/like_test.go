package query

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
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
			vals[i] = word(5)
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
