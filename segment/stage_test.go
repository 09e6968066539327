package segment

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestFillNullInts(t *testing.T) {
	for _, tc := range []struct {
		vals  []int64
		valid []bool
		want  []int64
	}{
		{[]int64{0, 10, 0, 0, 40, 0}, []bool{false, true, false, false, true, false}, []int64{10, 10, 20, 30, 40, 40}},
		{[]int64{5, 0, 6}, []bool{true, false, true}, []int64{5, 5, 6}},
		{[]int64{9, 0, 0, 0, 1}, []bool{true, false, false, false, true}, []int64{9, 7, 5, 3, 1}},
		{[]int64{0, 0}, []bool{false, false}, []int64{0, 0}},
		// The ends are too far apart to subtract: the nulls repeat.
		{[]int64{math.MinInt64, 0, math.MaxInt64}, []bool{true, false, true}, []int64{math.MinInt64, math.MinInt64, math.MaxInt64}},
		{[]int64{math.MaxInt64 - 2, 0, math.MaxInt64}, []bool{true, false, true}, []int64{math.MaxInt64 - 2, math.MaxInt64 - 1, math.MaxInt64}},
	} {
		nulls := 0
		for _, v := range tc.valid {
			if !v {
				nulls++
			}
		}
		got := append([]int64(nil), tc.vals...)
		fillNullInts(got, tc.valid, nulls)
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("fill %v %v: %v, want %v", tc.vals, tc.valid, got, tc.want)
				break
			}
		}
	}
	// Random: filled slots never leave the range of their neighbours, and
	// valid slots are untouched.
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 1000; trial++ {
		n := 1 + rng.IntN(200)
		vals, valid := make([]int64, n), make([]bool, n)
		nulls := 0
		for i := range vals {
			vals[i] = int64(rng.Uint64()) >> rng.IntN(64)
			valid[i] = rng.IntN(3) > 0
			if !valid[i] {
				nulls++
			}
		}
		got := append([]int64(nil), vals...)
		fillNullInts(got, valid, nulls)
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for i := range vals {
			if valid[i] {
				lo, hi = min(lo, vals[i]), max(hi, vals[i])
				if got[i] != vals[i] {
					t.Fatalf("valid slot %d changed", i)
				}
			}
		}
		for i := range got {
			if nulls < n && (got[i] < lo || got[i] > hi) {
				t.Fatalf("slot %d filled with %d outside [%d, %d]", i, got[i], lo, hi)
			}
		}
	}
}

// TestNullsKeepDeltaNarrow writes a steadily growing column with one value
// in ten NULL, as expirations derived from event time are: the nulls must
// not widen the delta encoding.
func TestNullsKeepDeltaNarrow(t *testing.T) {
	mem := memory.NewGoAllocator()
	b := array.NewInt64Builder(mem)
	defer b.Release()
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 8192
	for i := range n {
		if rng.IntN(10) == 0 {
			b.AppendNull()
		} else {
			b.Append(1_700_000_000_000_000 + int64(i)*86_400)
		}
	}
	a := b.NewArray()
	defer a.Release()
	rec := newRecord(a)
	defer rec.Release()
	data, _ := writeBatches(t, rec, WriterOptions{PageRows: n, ZstdLevel: -1}, 0)
	r := openBytes(t, data, "steady.seg")
	if enc, _ := r.PageEncoding(0, 0); enc != "delta" {
		t.Fatalf("encoding %s, want delta", enc)
	}
	// The bitmap takes n/8 bytes; the deltas, all equal, next to nothing.
	if len(data) > n/8+200 {
		t.Fatalf("file of %d bytes for %d steady values", len(data), n)
	}
	got := readColumn(t, r, mem, 0)
	defer got.Release()
	if !arraysIdentical(got, a) {
		t.Fatal("read back differs")
	}
}
