package query

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
)

// TestClearSigned compares the word-wise clearing of deleted rows with a
// row-by-row reference, on random signs with NULLs, at every offset a
// slice can give (seed printed).
func TestClearSigned(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 5))
	for trial := 0; trial < 300; trial++ {
		total := 1 + rng.IntN(300)
		b := array.NewBooleanBuilder(mem)
		nulls := rng.IntN(3) == 0
		for i := 0; i < total; i++ {
			if nulls && rng.IntN(4) == 0 {
				b.AppendNull()
			} else {
				b.Append(rng.IntN(3) == 0)
			}
		}
		full := b.NewBooleanArray()
		b.Release()
		off := rng.IntN(total)
		n := total - off
		sign := array.NewSlice(full, int64(off), int64(total)).(*array.Boolean)
		mask, want := make([]byte, (n+7)/8), make([]byte, (n+7)/8)
		for i := 0; i < n; i++ {
			if rng.IntN(5) != 0 {
				bitutil.SetBit(mask, i)
				if !sign.IsValid(i) || !sign.Value(i) {
					bitutil.SetBit(want, i)
				}
			}
		}
		clearSigned(mask, sign, n)
		for i := 0; i < n; i++ {
			if bitutil.BitIsSet(mask, i) != bitutil.BitIsSet(want, i) {
				t.Fatalf("seed %d trial %d (offset %d, %d rows): row %d kept %v, want %v", seed, trial, off, n, i, bitutil.BitIsSet(mask, i), bitutil.BitIsSet(want, i))
			}
		}
		sign.Release()
		full.Release()
	}
}

// TestNoDeleteSign: only a page whose zone map rules out every set sign
// reads as if it had none.
func TestNoDeleteSign(t *testing.T) {
	i := schema.IntVal
	for _, c := range []struct {
		z    segment.ZoneMap
		want bool
	}{
		{segment.ZoneMap{Rows: 4, Min: i(0), Max: i(0)}, true},
		{segment.ZoneMap{Rows: 4, NullCount: 4}, true},
		{segment.ZoneMap{Rows: 4, NullCount: 2, Min: i(0), Max: i(0)}, true},
		{segment.ZoneMap{Rows: 4, Min: i(0), Max: i(1)}, false},
		{segment.ZoneMap{Rows: 4, Min: i(1), Max: i(1)}, false},
		{segment.ZoneMap{Rows: 4, NullCount: 3, Min: i(1), Max: i(1)}, false},
		// No bounds though some value is there: nothing is ruled out.
		{segment.ZoneMap{Rows: 4, NullCount: 1}, false},
	} {
		if got := noDeleteSign(c.z); got != c.want {
			t.Errorf("noDeleteSign(%+v) = %v, want %v", c.z, got, c.want)
		}
	}
}
