// Package rowset owns immutable sets of segments: the rows of one write or of
// one compaction, covering a version range [Lo, Hi]. It writes a rowset's
// segment files durably (temporary name, fsync, rename, directory fsync),
// describes them in a Meta that the manifest records, and keeps the open
// files of a rowset alive for as long as any reader holds it. It owns the
// memcomparable key encoding, the key cursors, and Merge, the engine's one
// k-way merge order (of equal keys, the highest rank — the newest version —
// wins), which compaction and the merge-on-read scan share.
//
// In the invariants build (-tags invariants) the writer recomputes every
// rowset's row count and __TTL__ statistics from the rows and from its
// files read back, Open checks a Meta against the segments' footers, and
// Merge checks that each run's keys increase; a mismatch panics.
//
// It must never decide visibility: which rows are live, superseded or
// deleted is the business of the query and table packages. It must never
// delete a file that a reader still holds.
package rowset
