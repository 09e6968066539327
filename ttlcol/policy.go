package ttlcol

import (
	"fmt"
	"math"

	"github.com/rowttl/rowttl"
)

// Mode is the row TTL mode of a table, fixed at CREATE (SPEC §2). Its
// numeric values are stored in manifests (Policy's "mode"): append only,
// never renumber (TestPersistedModes pins them).
type Mode uint8

const (
	// NoTTL: the table has no row TTL and no __TTL__ column.
	NoTTL Mode = iota
	// SourceMode: __TTL__ holds the source column's instant; a row expires
	// at __TTL__ + the table's current retention.
	SourceMode
	// DirectMode: __TTL__ holds the expiration itself.
	DirectMode
)

// String names the mode for messages and dumps.
func (m Mode) String() string {
	switch m {
	case NoTTL:
		return "none"
	case SourceMode:
		return "source"
	case DirectMode:
		return "direct"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Policy is what a table stores about its row TTL. It is a plain value,
// JSON-serialisable, kept in the table's manifest.
//
// Retention is the current retention in seconds (source mode only; ALTER may
// lower it). ZoneOffset is the offset, in seconds east of UTC, used to turn a
// DATE or DATETIME source into an instant (source mode only; 0 for a
// TIMESTAMPTZ source). The arithmetic methods read Retention only in source
// mode: in direct mode the stored value is the expiration.
type Policy struct {
	Mode         Mode   `json:"mode"`
	SourceColumn string `json:"source_column,omitempty"`
	Retention    int64  `json:"retention,omitempty"`
	ZoneOffset   int    `json:"zone_offset,omitempty"`
}

// HasRowTTL reports whether the table has row TTL (a __TTL__ column), which
// rules out what Doris refuses on such tables, partial-column updates.
func (p Policy) HasRowTTL() bool { return p.Mode != NoTTL }

// Validate checks the internal consistency of a policy, for instance one
// decoded from a manifest: a known mode, a source column and a retention in
// 0..MaxRetentionSeconds and a zone in range exactly in source mode, nothing
// of them otherwise. Errors wrap rowttl.ErrInvalidProperty.
func (p Policy) Validate() error {
	bad := func(format string, args ...any) error {
		return rowttl.Errorf(rowttl.ErrInvalidProperty, "invalid row ttl policy: "+format, args...)
	}
	switch p.Mode {
	case NoTTL, DirectMode:
		if p.SourceColumn != "" || p.Retention != 0 || p.ZoneOffset != 0 {
			return bad("%s mode has no source column, retention or zone", p.Mode)
		}
	case SourceMode:
		if p.SourceColumn == "" {
			return bad("source mode needs a source column")
		}
		if p.Retention < 0 || p.Retention > MaxRetentionSeconds {
			return bad("retention %d seconds out of range", p.Retention)
		}
		if p.ZoneOffset < MinZoneOffset || p.ZoneOffset > MaxZoneOffset || p.ZoneOffset%60 != 0 {
			return bad("zone offset %d seconds out of range", p.ZoneOffset)
		}
	default:
		return bad("unknown mode %d", uint8(p.Mode))
	}
	return nil
}

// retentionMicros is the retention applied to a stored value: Retention in
// microseconds in source mode (saturated), 0 otherwise.
func (p Policy) retentionMicros() int64 {
	if p.Mode != SourceMode {
		return 0
	}
	return satMul(p.Retention, microsPerSecond)
}

// Threshold returns the cut at time now (µs since the epoch): a row whose
// stored __TTL__ is not NULL and <= Threshold(now) is expired at now.
//
// In source mode it is now - Retention µs, in direct mode now itself. The
// subtraction saturates at math.MinInt64 (and math.MaxInt64 for a corrupt
// negative retention) instead of wrapping; with a saturated threshold only a
// stored value of exactly math.MinInt64 could be misjudged, which no clock
// reading this side of year -290,000 produces. For NoTTL it returns
// math.MinInt64: there is no __TTL__ column, so nothing expires.
func (p Policy) Threshold(nowMicros int64) int64 {
	if p.Mode == NoTTL {
		return math.MinInt64
	}
	return satSub(nowMicros, p.retentionMicros())
}

// Expiration returns the absolute expiration, in µs since the epoch, of a
// stored __TTL__ value: ttl + Retention µs in source mode, ttl itself
// otherwise. ok is false when the sum overflows int64.
func (p Policy) Expiration(ttl int64) (exp int64, ok bool) {
	if p.Mode != SourceMode {
		return ttl, true
	}
	r, ok := mulMicros(p.Retention)
	if !ok {
		return 0, false
	}
	return addChecked(ttl, r)
}

// CheckStored returns an error wrapping rowttl.ErrInvalidArgument when the
// stored value ttl cannot carry an expiration, because ttl + retention
// overflows int64 µs (source mode). Such a write is rejected as a whole
// (SPEC §2); the caller wraps the error with the row and column.
func (p Policy) CheckStored(ttl int64) error {
	if _, ok := p.Expiration(ttl); !ok {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "row ttl expiration overflows int64 microseconds: __TTL__ value %d + retention %d seconds",
			ttl, p.Retention)
	}
	return nil
}
