package ttlcol

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/rowttl/rowttl"
)

// Histogram counts rows by __TTL__ value in buckets of a fixed width, plus
// the NULLs, so that reclaim scheduling can estimate how many rows of a
// rowset are expired at some future time without reading it.
//
// Feed it stored __TTL__ values and query it with Policy.Threshold(now): the
// stored values never change when the retention shrinks, only the
// threshold, so the histogram never needs rebuilding. (Absolute expirations
// work as well, queried with now.)
//
// Bucket b holds the values v with floor(v / width) == b, that is
// [b*width, (b+1)*width). Only non-empty buckets are kept. A Histogram is
// not safe for concurrent mutation. Its zero value is unusable until
// UnmarshalJSON or Merge gives it a width; use NewHistogram.
//
// JSON form:
//
//	{"bucket_micros":3600000000,"nulls":2,"buckets":[[-1,4],[480000,10]]}
//
// with buckets sorted by index as [index, rows] pairs.
type Histogram struct {
	width  int64           // bucket width in µs, > 0
	nulls  int64           // rows whose value is NULL
	rows   int64           // non-NULL rows, the sum of counts
	counts map[int64]int64 // bucket index -> rows, no zero entries
}

// NewHistogram returns an empty histogram with buckets bucketMicros wide.
// It panics when bucketMicros is not positive.
func NewHistogram(bucketMicros int64) *Histogram {
	if bucketMicros <= 0 {
		panic(fmt.Sprintf("ttlcol: histogram bucket width must be positive, got %d", bucketMicros))
	}
	return &Histogram{width: bucketMicros, counts: make(map[int64]int64)}
}

// BucketMicros returns the bucket width in µs.
func (h *Histogram) BucketMicros() int64 { return h.width }

// Rows returns the number of non-NULL values added.
func (h *Histogram) Rows() int64 { return h.rows }

// Nulls returns the number of NULLs added.
func (h *Histogram) Nulls() int64 { return h.nulls }

// Buckets returns the number of non-empty buckets.
func (h *Histogram) Buckets() int { return len(h.counts) }

// Reset empties the histogram, keeping its width.
func (h *Histogram) Reset() {
	h.nulls, h.rows = 0, 0
	clear(h.counts)
}

// Add counts one row with the (stored or absolute) value exp.
func (h *Histogram) Add(exp int64) {
	if h.counts == nil {
		h.counts = make(map[int64]int64)
	}
	h.counts[floorDiv(exp, h.width)]++
	h.rows++
}

// AddNull counts one row whose value is NULL (it never expires).
func (h *Histogram) AddNull() { h.nulls++ }

// Merge adds the counts of o to h. A histogram without a width (the zero
// value) takes o's width. Histograms of different widths do not merge: the
// error wraps rowttl.ErrInvalidArgument and h is unchanged.
func (h *Histogram) Merge(o *Histogram) error {
	if o == nil || (o.rows == 0 && o.nulls == 0) {
		return nil
	}
	if h.width == 0 {
		h.width = o.width
	}
	if h.width != o.width {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "cannot merge a ttl histogram of %d µs buckets into one of %d µs buckets", o.width, h.width)
	}
	if h.counts == nil {
		h.counts = make(map[int64]int64, len(o.counts))
	}
	for b, n := range o.counts {
		h.counts[b] += n
	}
	h.rows += o.rows
	h.nulls += o.nulls
	return nil
}

// ExpiredAt estimates how many of the non-NULL rows have a value <=
// threshold.
//
// Every bucket that lies entirely at or below threshold counts fully; buckets
// entirely above it count nothing. The one bucket that straddles threshold
// is assumed to hold its values uniformly and contributes
// floor(rows * (threshold - start + 1) / width), where start is the bucket's
// first value and width its width, both clipped to the int64 range for the
// two outermost buckets. So the estimate lies between the rows of the fully
// covered buckets and that plus the straddling bucket's rows, is exact when
// threshold is the last value of a bucket, and never decreases as threshold
// grows. NULLs never count.
func (h *Histogram) ExpiredAt(threshold int64) (rows int64) {
	if h.width == 0 {
		return 0
	}
	tb := floorDiv(threshold, h.width)
	into, span := straddle(threshold, h.width)
	for b, n := range h.counts {
		switch {
		case b < tb:
			rows += n
		case b == tb:
			if into == span {
				rows += n
				continue
			}
			// n*into/span in 128 bits; the quotient is < n, so it fits.
			hi, lo := bits.Mul64(uint64(n), into)
			q, _ := bits.Div64(hi, lo, span)
			rows += int64(q)
		}
	}
	return rows
}

type histogramJSON struct {
	BucketMicros int64      `json:"bucket_micros"`
	Nulls        int64      `json:"nulls"`
	Buckets      [][2]int64 `json:"buckets"`
}

// MarshalJSON encodes the histogram with its buckets sorted by index.
func (h *Histogram) MarshalJSON() ([]byte, error) {
	j := histogramJSON{BucketMicros: h.width, Nulls: h.nulls, Buckets: make([][2]int64, 0, len(h.counts))}
	for b, n := range h.counts {
		j.Buckets = append(j.Buckets, [2]int64{b, n})
	}
	slices.SortFunc(j.Buckets, func(x, y [2]int64) int { return cmp.Compare(x[0], y[0]) })
	return json.Marshal(j)
}

// UnmarshalJSON decodes and checks a histogram: a positive width, no
// negative counts, no repeated bucket. Errors wrap rowttl.ErrCorruption.
func (h *Histogram) UnmarshalJSON(data []byte) error {
	var j histogramJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return rowttl.Errorf(rowttl.ErrCorruption, "ttl histogram: %w", err)
	}
	bad := func(format string, args ...any) error {
		return rowttl.Errorf(rowttl.ErrCorruption, "ttl histogram: "+format, args...)
	}
	if j.BucketMicros <= 0 {
		return bad("bucket width %d is not positive", j.BucketMicros)
	}
	if j.Nulls < 0 {
		return bad("negative null count %d", j.Nulls)
	}
	counts := make(map[int64]int64, len(j.Buckets))
	var rows int64
	for _, p := range j.Buckets {
		if p[1] <= 0 {
			return bad("bucket %d has count %d", p[0], p[1])
		}
		if _, dup := counts[p[0]]; dup {
			return bad("bucket %d appears twice", p[0])
		}
		counts[p[0]] = p[1]
		if rows+p[1] < rows {
			return bad("row count overflows")
		}
		rows += p[1]
	}
	*h = Histogram{width: j.BucketMicros, nulls: j.Nulls, rows: rows, counts: counts}
	return nil
}

// straddle returns, for the bucket of width w that holds threshold, how
// many of its values are <= threshold (into) and how many values it holds
// (span), both clipped to the int64 range; 1 <= into <= span <= w.
func straddle(threshold, w int64) (into, span uint64) {
	// threshold - floor(threshold/w)*w computed with wrapping arithmetic is
	// still the exact remainder, which lies in [0, w).
	mod := threshold - floorDiv(threshold, w)*w
	lo, ok := subChecked(threshold, mod)
	if !ok {
		lo = math.MinInt64
	}
	hi, ok := addChecked(threshold, w-1-mod)
	if !ok {
		hi = math.MaxInt64
	}
	return uint64(threshold-lo) + 1, uint64(hi-lo) + 1
}

// Coarsen multiplies the bucket width by factor (> 1), merging buckets, so
// that a histogram built at a fine width can be kept small.
func (h *Histogram) Coarsen(factor int64) {
	if factor <= 1 || h.width > math.MaxInt64/factor {
		return
	}
	counts := make(map[int64]int64, len(h.counts)/int(min(factor, 1<<20))+1)
	for b, n := range h.counts {
		counts[floorDiv(b, factor)] += n
	}
	h.counts = counts
	h.width *= factor
}

// AddCounts adds n rows to the bucket holding value v.
func (h *Histogram) AddCounts(v, n int64) {
	if n == 0 {
		return
	}
	if h.counts == nil {
		h.counts = make(map[int64]int64)
	}
	h.counts[floorDiv(v, h.width)] += n
	h.rows += n
}

// AddNulls counts n rows whose value is NULL.
func (h *Histogram) AddNulls(n int64) { h.nulls += n }

// Clone returns a copy.
func (h *Histogram) Clone() *Histogram {
	c := &Histogram{width: h.width, nulls: h.nulls, rows: h.rows, counts: make(map[int64]int64, len(h.counts))}
	for b, n := range h.counts {
		c.counts[b] = n
	}
	return c
}

// Bounds returns the first value of the lowest non-empty bucket and the
// last value of the highest, or ok false when there is none.
func (h *Histogram) Bounds() (lo, hi int64, ok bool) {
	first := true
	var bl, bh int64
	for b := range h.counts {
		if first || b < bl {
			bl = b
		}
		if first || b > bh {
			bh = b
		}
		first = false
	}
	if first {
		return 0, 0, false
	}
	hiStart := bh * h.width
	if hiStart > math.MaxInt64-(h.width-1) {
		return bl * h.width, math.MaxInt64, true
	}
	return bl * h.width, hiStart + h.width - 1, true
}

// Each calls fn for every non-empty bucket in order of value, with the
// bucket's first value, width and rows.
func (h *Histogram) Each(fn func(start, width, rows int64)) {
	idx := make([]int64, 0, len(h.counts))
	for b := range h.counts {
		idx = append(idx, b)
	}
	slices.Sort(idx)
	for _, b := range idx {
		fn(b*h.width, h.width, h.counts[b])
	}
}
