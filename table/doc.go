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
// rowset lists are deleted. A manifest append whose sync fails leaves the
// outcome unknown: the table keeps the files that record lists and refuses
// writes until reopened, and Open syncs what it replayed before relying on
// it.
//
// # Reclamation
//
// Compaction follows SPEC §3 per model (compact.go, background.go): whole
// expired rowsets of DUPLICATE and merge-on-write tables go by a manifest
// change; rewrites copy the pages that keep every row; merge-on-read drops
// expired rows only in compactions from version 0. Background compaction
// judges expiry at the table's clock, but never later than the latest now a
// request has used, so a process running on a clock of its own (a test, a
// shell's session_now) is not surprised by rows reclaimed at the wall
// clock. Reads do not travel back in time: a read at a now earlier than a
// finished compaction's may miss rows that compaction reclaimed.
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
