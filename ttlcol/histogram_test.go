package ttlcol

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rowttl/rowttl"
)

func TestHistogramExpiredAt(t *testing.T) {
	h := NewHistogram(10)
	for _, v := range []int64{0, 1, 9, 10, 15, 19, -1, -10, -11, 100} {
		h.Add(v)
	}
	h.AddNull()
	h.AddNull()
	if h.Rows() != 10 || h.Nulls() != 2 || h.Buckets() != 5 || h.BucketMicros() != 10 {
		t.Fatalf("rows %d nulls %d buckets %d width %d", h.Rows(), h.Nulls(), h.Buckets(), h.BucketMicros())
	}
	// Buckets: [-20,-10): -11 | [-10,0): -10,-1 | [0,10): 0,1,9 | [10,20): 10,15,19 | [100,110): 100
	tests := []struct {
		threshold int64
		want      int64
	}{
		{math.MinInt64, 0},
		{-21, 0},
		{-11, 1},  // bucket -2 counts fully: -11 is its last value
		{-1, 3},   // buckets -2, -1 fully
		{9, 6},    // through bucket 0
		{19, 9},   // through bucket 1
		{99, 9},   // bucket 10 not reached
		{109, 10}, // all
		{math.MaxInt64, 10},
		{4, 3 + 1},  // bucket 0 straddles: floor(3 * 5/10) = 1
		{14, 6 + 1}, // bucket 1: floor(3 * 5/10) = 1
		{17, 6 + 2}, // floor(3 * 8/10) = 2
		{0, 3 + 0},  // floor(3 * 1/10) = 0
		{-15, 0},    // floor(1 * 5/10) = 0
	}
	for _, tt := range tests {
		if got := h.ExpiredAt(tt.threshold); got != tt.want {
			t.Errorf("ExpiredAt(%d) = %d; want %d", tt.threshold, got, tt.want)
		}
	}
	h.Reset()
	if h.Rows() != 0 || h.Nulls() != 0 || h.ExpiredAt(math.MaxInt64) != 0 || h.BucketMicros() != 10 {
		t.Errorf("Reset left %d rows %d nulls", h.Rows(), h.Nulls())
	}
}

func TestHistogramExtremes(t *testing.T) {
	for _, w := range []int64{1, 3, 3600 * microsPerSecond, math.MaxInt64} {
		h := NewHistogram(w)
		h.Add(math.MinInt64)
		h.Add(math.MaxInt64)
		h.Add(0)
		if got := h.ExpiredAt(math.MaxInt64); got != 3 {
			t.Errorf("width %d: ExpiredAt(MaxInt64) = %d", w, got)
		}
		if got := h.ExpiredAt(math.MinInt64); got > 1 {
			t.Errorf("width %d: ExpiredAt(MinInt64) = %d", w, got)
		}
		if got := h.ExpiredAt(-1); got < 1 || got > 2 {
			t.Errorf("width %d: ExpiredAt(-1) = %d", w, got)
		}
	}
	// A huge count in a straddled bucket does not overflow the estimate.
	h := NewHistogram(math.MaxInt64)
	for i := 0; i < 3; i++ {
		h.Add(1)
	}
	h.counts[0] = math.MaxInt64 / 2
	if got := h.ExpiredAt(math.MaxInt64 - 2); got < 0 || got > math.MaxInt64/2 {
		t.Errorf("estimate overflowed: %d", got)
	}
}

// TestHistogramBounds checks the documented guarantees against exact counts
// on random data: the estimate lies within the straddling bucket's rows of
// the exact count, is exact at bucket ends, and never decreases.
func TestHistogramBounds(t *testing.T) {
	const seed = 99
	r := rand.New(rand.NewPCG(seed, 4))
	for trial := 0; trial < 50; trial++ {
		w := 1 + r.Int64N(1000)
		h := NewHistogram(w)
		vals := make([]int64, r.IntN(300))
		for i := range vals {
			vals[i] = r.Int64N(20000) - 10000
			h.Add(vals[i])
		}
		prev := int64(-1)
		for th := int64(-10100); th <= 10100; th += 1 + r.Int64N(50) {
			exact := int64(0)
			for _, v := range vals {
				if v <= th {
					exact++
				}
			}
			straddle := h.counts[floorDiv(th, w)]
			got := h.ExpiredAt(th)
			if got > exact+straddle || got < exact-straddle {
				t.Fatalf("seed %d width %d threshold %d: estimate %d, exact %d, straddling %d", seed, w, th, got, exact, straddle)
			}
			if (th+1)%w == 0 && got != exact {
				t.Fatalf("seed %d width %d: not exact at bucket end %d: %d vs %d", seed, w, th, got, exact)
			}
			if got < prev {
				t.Fatalf("seed %d width %d: estimate decreased at %d", seed, w, th)
			}
			prev = got
		}
	}
}

func TestHistogramMerge(t *testing.T) {
	a, b := NewHistogram(10), NewHistogram(10)
	a.Add(1)
	a.Add(25)
	a.AddNull()
	b.Add(5)
	b.Add(-3)
	b.AddNull()
	b.AddNull()
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if a.Rows() != 4 || a.Nulls() != 3 || a.ExpiredAt(9) != 3 || a.ExpiredAt(-1) != 1 {
		t.Errorf("merged: rows %d nulls %d", a.Rows(), a.Nulls())
	}
	if err := a.Merge(nil); err != nil {
		t.Error(err)
	}
	if err := a.Merge(NewHistogram(7)); err != nil {
		t.Errorf("merging an empty histogram of another width: %v", err)
	}
	c := NewHistogram(7)
	c.Add(1)
	before, _ := json.Marshal(a)
	err := a.Merge(c)
	if !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Errorf("width mismatch: %v", err)
	}
	if after, _ := json.Marshal(a); string(after) != string(before) {
		t.Errorf("failed merge changed the histogram: %s -> %s", before, after)
	}
	var z Histogram
	if err := z.Merge(b); err != nil || z.BucketMicros() != 10 || z.Rows() != 2 || z.Nulls() != 2 {
		t.Errorf("zero value merge: %v, width %d rows %d", err, z.BucketMicros(), z.Rows())
	}
	z.Add(100) // usable after the merge
	if z.Rows() != 3 {
		t.Errorf("zero value after merge: %d rows", z.Rows())
	}
}

func TestHistogramJSON(t *testing.T) {
	h := NewHistogram(3600 * microsPerSecond)
	h.Add(1_767_225_600_000_000) // 2026-01-01 00:00:00 UTC
	h.Add(1_767_225_600_000_001)
	h.Add(-1)
	h.AddNull()
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"bucket_micros":3600000000,"nulls":1,"buckets":[[-1,1],[490896,2]]}`
	if string(b) != want {
		t.Errorf("JSON = %s; want %s", b, want)
	}
	var g Histogram
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if g.Rows() != 3 || g.Nulls() != 1 || g.BucketMicros() != h.BucketMicros() {
		t.Errorf("decoded %+v", g)
	}
	for _, th := range []int64{-2, -1, 0, 1_767_225_600_000_000, math.MaxInt64} {
		if g.ExpiredAt(th) != h.ExpiredAt(th) {
			t.Errorf("decoded histogram disagrees at %d", th)
		}
	}
	empty, _ := json.Marshal(NewHistogram(5))
	if string(empty) != `{"bucket_micros":5,"nulls":0,"buckets":[]}` {
		t.Errorf("empty JSON = %s", empty)
	}

	for _, bad := range []string{
		`{"bucket_micros":0,"nulls":0,"buckets":[]}`,
		`{"bucket_micros":-5,"nulls":0,"buckets":[]}`,
		`{"bucket_micros":5,"nulls":-1,"buckets":[]}`,
		`{"bucket_micros":5,"nulls":0,"buckets":[[1,0]]}`,
		`{"bucket_micros":5,"nulls":0,"buckets":[[1,-2]]}`,
		`{"bucket_micros":5,"nulls":0,"buckets":[[1,2],[1,3]]}`,
		`{"bucket_micros":5,"nulls":0,"buckets":[[1,9223372036854775807],[2,1]]}`,
		`{"bucket_micros":"x"}`,
		`[1,2]`,
	} {
		var g Histogram
		if err := json.Unmarshal([]byte(bad), &g); !errors.Is(err, rowttl.ErrCorruption) {
			t.Errorf("Unmarshal(%s) = %v; want ErrCorruption", bad, err)
		}
	}
}

func TestNewHistogramPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewHistogram(0) did not panic")
		}
	}()
	NewHistogram(0)
}
