// Package query owns one scan: a single now for every row it reads, the
// projection, the filter (used first on zone maps to skip pages, then on
// rows), the TTL rule that hides expired rows, and the Arrow record batches
// it streams out. A filter on a DECIMAL column compares each stored 128-bit
// value with its constant exactly, at the constant's own scale.
//
// A page the filter's zone maps cannot rule out decodes the filter's columns
// first; its other columns are decoded only when some row passes, and
// BIGINT, DOUBLE, string and binary columns for the passing rows alone when
// they are few (a point lookup), straight into the output arrays; when more
// pass (but not all), integer, date-time, floating-point, string and
// binary columns decode the passing rows straight into the output too
// (segment's ReadPageGathered), and boolean and decimal columns are
// filtered right after they are decoded, while the page is still in cache,
// and the page released before the next.
//
// Page skipping by TTL: a page whose __TTL__ zone map has no NULL and a
// maximum at or below the scan's threshold is expired as a whole and never
// decoded; a page whose minimum is above the threshold is live as a whole and
// skips the per-row TTL check. A count over such pages needs no decoding.
//
// Memoized liveness (livememo.go): the live rows of a mixed page at a
// threshold T stay the same up to the next expiration among them, so the
// second scan that tests a page's __TTL__ tests it whole and keeps, with
// its segment, a bitmap of the rows live at T and its soonest expirations;
// a later scan whose threshold lies in the range that answers for uses the
// bitmap (a count, its popcount less the soon rows expired since) instead
// of reading __TTL__. A threshold below T never uses it. The memo holds one
// bit per row of the pages that built it, and goes with the segment reader.
// The batches Next returns use it too: a mixed page whose __TTL__ is not
// filtered on judges expiry after the filter, from the memo or on the
// packed values, rather than decoding __TTL__; a projected __TTL__ does
// so from the scan that builds the page's memo on, and is then read for
// the live rows alone, as other columns are.
//
// Merge-on-read: before the TTL rule, the keys of every rowset are merged in
// rowset.Merge's order (the newest version of a key wins; int64 keys take
// its int64 fast path, dense ones a bitmap) and older versions are
// hidden, so an expired newest version still hides a live older one.
// KeyOwners does the same merge one rowset at a time, for a table that
// carries it from version to version. Rows
// are judged live with ttlcol.PageMask, the same preamble compaction uses.
//
// Aggregate reduces a scan to its row count and column sums without
// building batches: all-live pages answer from their zone maps (counts, and
// the exact sums of integer and decimal-scaled pages), pages whose
// expirations have all passed read only the validity of __TTL__, and other
// pages are read into buffers each worker keeps, frame-of-reference pages
// left packed: the live mask, the comparisons and the sums work on the
// packed values. A filter of comparisons of BIGINT and DOUBLE columns with
// numbers (AND, OR, NOT, IS NULL, IN) is evaluated on those buffers too,
// one conjunct at a time on the rows the previous ones left, the most
// selective by the page's zone maps first, without
// building a batch (values_filter.go); other filters take the row path page
// by page. The sums of decimal-scaled pages stay exact integers, one per
// scale, and a double's total rounds once at the end, so a sum depends
// neither on the number of workers nor on how rows fall into pages.
//
// A scan never returns an expired row; only compaction, through
// NewStoredScan and the options of the internal package rawscan, reads rows
// as stored (expired rows, raw __TTL__, delete signs).
//
// It must never write: it reads the rowsets of a snapshot that the caller
// pinned, and releases the snapshot when the reader is released.
package query
