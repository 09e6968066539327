package ttlcol

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// PageState says what zone-map statistics of the __TTL__ column prove about
// a unit of rows (a page, a segment, a rowset) at one threshold.
type PageState uint8

const (
	// Mixed: the statistics prove nothing; the rows must be checked one by
	// one (LiveMask).
	Mixed PageState = iota
	// AllExpired: every row is expired; the unit can be skipped by reads and
	// dropped by a compaction that is allowed to drop expired rows.
	AllExpired
	// AllLive: no row is expired; reads take the unit without a mask.
	AllLive
)

// String names the state for dumps and test output.
func (s PageState) String() string {
	switch s {
	case Mixed:
		return "mixed"
	case AllExpired:
		return "all-expired"
	case AllLive:
		return "all-live"
	}
	return "PageState(?)"
}

// Classify decides a unit's state from zone-map statistics of its stored
// __TTL__ values: rows in the unit, nullCount of them NULL, and, when
// hasMinMax, the minimum and maximum of the non-NULL values. threshold comes
// from Policy.Threshold.
//
//   - AllExpired when the unit has rows, none of them NULL, and min/max are
//     known with max <= threshold;
//   - AllLive when every row is NULL (an empty unit included: it has nothing
//     to drop), or min/max are known with min > threshold (NULL rows are
//     alive too);
//   - Mixed otherwise, in particular whenever min/max are unknown and not
//     every row is NULL.
//
// Statistics on stored values stay valid when the retention shrinks: only
// the threshold moves.
func Classify(rows, nullCount int64, hasMinMax bool, min, max int64, threshold int64) PageState {
	switch {
	case nullCount == 0 && rows > 0 && hasMinMax && max <= threshold:
		return AllExpired
	case nullCount == rows, hasMinMax && min > threshold:
		return AllLive
	}
	return Mixed
}

// PageMask writes into mask (at least (n+7)/8 bytes) the LSB-first bitmap of
// the n rows of a unit alive at threshold, given its state from Classify and
// its decoded __TTL__ column. ttl is read only when the state is Mixed, and
// may be nil otherwise: the statistics already decided every row. It
// returns the number of live rows.
//
// This is the one preamble of every reader that drops expired rows row by
// row (the scan, the page-copy compaction), so that both judge a row alike.
func PageMask(state PageState, ttl arrow.Array, n int, threshold int64, mask []byte) int {
	mask = mask[:(n+7)/8]
	switch state {
	case AllLive:
		clear(mask)
		bitutil.SetBitsTo(mask, 0, int64(n), true)
		return n
	case AllExpired:
		clear(mask)
		return 0
	}
	d := ttl.Data()
	vals := arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())[d.Offset() : d.Offset()+n]
	var validity []byte
	if ttl.NullN() > 0 {
		validity = d.Buffers()[0].Bytes()
	}
	return LiveMask(vals, validity, d.Offset(), threshold, mask)
}
