// Package compaction owns the merges that rewrite rowsets: it streams the
// rows that a compaction keeps from its inputs into one new rowset, in key
// order for UNIQUE tables (MergeByKey, in rowset.Merge's order: of equal
// keys the newest input wins) or input after input (Concat), holding at most
// a few pages per input in memory whatever the size of the table. Its golden
// merges are testdata/merge.
//
// Which rows a compaction may drop is decided by the caller per SPEC §3
// (see the table package), and expressed as the scans it hands in: this
// package never judges expiry or visibility itself, and must never change
// what a query returns.
package compaction
