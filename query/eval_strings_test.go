package query

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
)

// TestStringCmpMatchesNaive checks boundCmp on string columns, whose
// equality kernel compares strings whole, against bytes.Compare per row:
// every operator, NULLs (NULL-safe equality is false on them, the others
// neither true nor false), empty strings, prefixes of the constant and
// arrays sliced at an offset.
func TestStringCmpMatchesNaive(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 5))
	words := []string{"", "p", "pr", "pro", "prp", "pro\x00", "free", "Pro", "team", "prox"}
	ops := []Op{Eq, Ne, Lt, Le, Gt, Ge, NullSafeEq}
	for iter := range 300 {
		n := rng.IntN(70)
		off := rng.IntN(5)
		bld := array.NewStringBuilder(mem)
		vals := make([]*string, off+n)
		for i := range vals {
			if rng.IntN(6) == 0 {
				bld.AppendNull()
				continue
			}
			w := words[rng.IntN(len(words))]
			vals[i] = &w
			bld.Append(w)
		}
		whole := bld.NewStringArray()
		bld.Release()
		a := array.NewSlice(whole, int64(off), int64(off+n)).(*array.String)
		c := words[rng.IntN(len(words))]
		op := ops[rng.IntN(len(ops))]
		bl := (n + 7) / 8
		tt, ff := make([]byte, bl), make([]byte, bl)
		b := &boundCmp{slot: 0, op: op, c: schema.Value{Kind: schema.BytesValue, Bytes: []byte(c)}}
		b.eval(func(int) arrow.Array { return a }, n, tt, ff)
		for i := range n {
			tb, fb := tt[i/8]>>(i%8)&1 == 1, ff[i/8]>>(i%8)&1 == 1
			v := vals[off+i]
			var wantT, wantF bool
			switch {
			case v == nil:
				wantF = op == NullSafeEq
			default:
				wantT = test(op, bytes.Compare([]byte(*v), []byte(c)))
				wantF = !wantT
			}
			if tb != wantT || fb != wantF {
				t.Fatalf("iter %d: %v %q on row %d (%v): true %v false %v, want %v %v", iter, op, c, i, v, tb, fb, wantT, wantF)
			}
		}
		a.Release()
		whole.Release()
	}
}
