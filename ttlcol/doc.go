// Package ttlcol owns the rules of row TTL (SPEC §2) and the arithmetic of
// the hidden __TTL__ column, and nothing else.
//
// # What it owns
//
//   - Parsing of the TTL table properties' values: the retention
//     (ParseRetention: "86400", "1 day", "24h" → 86400 seconds) and the
//     fixed zone of DATE/DATETIME sources (ParseZone, FormatZone), with the
//     exact SPEC §5 error texts, wrapping rowttl.ErrInvalidProperty.
//   - Policy, the JSON value a table keeps in its manifest: the mode
//     (source column or direct expiration), the source column, the current
//     retention and the zone offset. It turns a query's now into a
//     threshold (Policy.Threshold) and checks stored values for overflow
//     (Policy.CheckStored).
//   - The conversions between source values (DATE days, DATETIME wall-clock
//     µs) and stored __TTL__ instants, and back for display.
//   - The live-row kernel (LiveMask, CountLive), the classification of a
//     page, segment or rowset from zone-map statistics (Classify), the
//     one live mask of a page from its state and __TTL__ column (PageMask),
//     and the expiration Histogram used to schedule reclamation.
//
// # The hidden column
//
// __TTL__ is a nullable int64: microseconds since the Unix epoch, UTC. In
// source mode it holds the source column's instant and a row expires at
// __TTL__ + retention; in direct mode it holds the expiration. A row is
// expired at now when its __TTL__ is not NULL and __TTL__ + retention <= now
// (retention 0 in direct mode); NULL never expires. Every comparison in this
// package is made against the stored value and a threshold
// (now - retention), never against a recomputed expiration, so shortening
// the retention changes only the threshold: stored data, zone maps and
// histograms stay valid.
//
// # What it must never do
//
// It never touches files, never knows about segments, rowsets, tables,
// versions or sessions, never reads a clock (every function takes now or a
// threshold), and never allocates in the kernel. Callers pass plain values
// and Arrow arrays or buffers; it returns values, bitmaps and errors.
package ttlcol
