// Package rawscan holds the options of a scan that sees rows as stored:
// expired rows, the stored __TTL__ and merge-on-read deletion rows. Only
// the table's compaction needs such a scan; the options live in an internal
// package so that no code outside this module can name them, and the
// public scans (table.Table.Scan, Aggregate, Count) cannot return an
// expired row whatever request they are given.
//
// It must never hold anything but these options: the scan itself belongs
// to package query.
package rawscan

// Options of a compaction scan (query.NewStoredScan). The zero value is a
// scan like any other.
type Options struct {
	// IncludeExpired returns expired rows too.
	IncludeExpired bool
	// RawTTL returns __TTL__ as stored (int64 µs of the source instant in
	// source mode) instead of in the source column's type.
	RawTTL bool
	// DeleteSign appends the merge-on-read delete sign column and returns
	// deletion rows instead of hiding them.
	DeleteSign bool
}
