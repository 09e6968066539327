// Package table owns a table: its definition (schema, key model,
// properties and the row TTL policy derived from them), its version set
// (the manifest and the rowsets of each version), the write path, the
// snapshots that readers pin, and the clean-up of files after a crash.
//
// # Durability
//
// A write encodes its rows into segment files under temporary names, syncs
// and renames them, syncs the directory, then appends one CRC-framed record
// to the manifest and syncs it. Only then is the write acknowledged and its
// version visible. On open the manifest is replayed, a torn final record (a
// write that was never acknowledged) is cut off, and files that no live
// rowset lists are deleted.
//
// # Choices where the contract is silent
//
// Columns of a written batch are matched by name, case-insensitively; a
// batch column of another type is cast safely or the write fails. A write of
// zero rows still makes a version. Property enable_row_ttl = "false" is the
// default and is not recorded. DATETIME values written into __TTL__ from Go
// are read in WriteOptions.TimeZone (UTC by default).
//
// It must never return an expired row, never let a write become partly
// visible, and never delete a file that a pinned version lists.
package table
