// Package compaction owns compaction policy and the merges that rewrite
// rowsets.
//
// The pickers (picker.go) are pure functions over a View of one version: the
// rowsets' metadata (versions, bytes, rows, TTL bounds and histograms),
// their delete counts, the model, the TTL policy and the reclaim deadline.
// PickAuto is the auto-compaction policy, PickManual a compaction asked for
// by kind; each returns a Plan naming its inputs and, for each, why it was
// chosen. DropsExpired and WhollyExpired say, per SPEC §3, where expired rows
// may go, judging a rowset by ttlcol.Classify. The pickers read no file and
// no clock: the table runs the plan they return and installs its output.
// Their goldens are testdata/picker.
//
// The merges stream the rows that a compaction keeps from its inputs into
// one new rowset, in key order for UNIQUE tables (MergeByKey, in
// rowset.Merge's order: of equal keys the newest input wins) or input after
// input (Concat), holding at most a few pages per input in memory whatever
// the size of the table. Their goldens are testdata/merge. Which rows a
// merge drops is expressed by the scans the caller hands in: the merges
// never judge expiry or visibility themselves.
//
// CopyPages (copy.go) is the rewrite that needs no key order (DUPLICATE
// tables, one merge-on-write rowset): it copies without decoding every page
// its TTL zone map proves live and no delete mark touches, and filters the
// others through ttlcol's page mask, dropping pages and rowsets the zone
// maps prove expired where the plan may drop expired rows.
//
// Nothing here may change what a query returns: a plan only names rowsets
// whose rewrite under SPEC §3 keeps every visible row.
package compaction
