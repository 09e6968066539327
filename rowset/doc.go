// Package rowset owns immutable sets of segments: the rows of one write or of
// one compaction, covering a version range [Lo, Hi]. It writes a rowset's
// segment files durably (temporary name, fsync, rename, directory fsync),
// describes them in a Meta that the manifest records, and keeps the open
// files of a rowset alive for as long as any reader holds it.
//
// It must never decide visibility: which rows are live, superseded or
// deleted is the business of the query and table packages. It must never
// delete a file that a reader still holds.
package rowset
