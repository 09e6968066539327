// Package table owns a table: its definition (schema, key model,
// properties and the row TTL policy derived from them), its version set
// (the manifest and the rowsets of each version), the write-ahead log and
// memtables of small writes, the write path, the
// snapshots that readers pin, and the clean-up of files after a crash.
//
// # The version set
//
// One versionSet (version_set.go) owns the manifest, the current version,
// the numbering of files and rowsets, the labels, the counters and the
// failed state. Every change of what is published — a write of a rowset, a
// DELETE, an ALTER, a flush, a compaction install — is one edit through its
// logAndApply, which
// appends the edit to the manifest and only then installs the version it
// describes; replay at open, rotation and recovery from a failed append
// rebuild the same state there.
//
// # Durability
//
// A small write (at most Options.SmallWriteRows rows, 4096 by default)
// appends one CRC-framed, numbered record — its version, its label and its
// rows — to the write-ahead log (wal.go) and is acknowledged after the sync
// that covers it: concurrent writers queue, and one leader writes every
// queued record and syncs once (group commit: an fdatasync of a segment
// preallocated with zeros, which the records overwrite, so that the sync
// flushes their data and no metadata); a failed write or sync
// fails every writer of that group and applies none of them. Only after
// that sync do the rows join the active memtable (memtable.go), in the
// log's order, and the group's versions become visible, with one version
// install for the whole group; the next group's write and sync run
// meanwhile (a pipeline), its records applied only after the group's.
// With WriteOptions.NoSync a
// write is acknowledged once appended: a crash of the process loses
// nothing, a power cut may lose the newest such writes, whole. A memtable
// past Options.MemtableBytes (64 MiB) or Options.MemtableAge (10 s) is
// frozen and flushed in the background (flush.go) to a rowset covering its
// versions [lo, hi], installed through logAndApply with the log position it
// covers; the log segments before it are then deleted. More than two
// frozen memtables make writers wait (bounded by their context). Every
// other publish — a larger write, DELETE, UPDATE, ALTER, a load — first
// flushes the memtables under the exclusive writer lock and then proceeds
// as below, so versions stay in publish order and rowsets hold the versions
// before every memtable's. Close flushes; Open replays the log records
// after the manifest's position into a memtable (a torn tail is ignored, a
// damaged record before it is ErrCorruption naming the file; records are
// masked with a keystream, so a written one never shows the sector of
// zeros that marks a write a crash left half-done) and syncs
// them before new writes follow. Labels are in the log records too, so they
// stay idempotent across crashes.
//
// Scans read a memtable as an in-memory rowset built from it, under the
// rules of rowsets: snapshot by version, TTL at the request's now, the
// merge-on-read key merge across rowsets and memtables. Merge-on-write: a
// memtable's rows hide the older rows of their keys, in rowsets and older
// memtables alike, by delete marks computed once per version from the keys
// (not in the manifest: the log replays the writes that make them); the
// flush records them in the manifest, as a write of a rowset does.
//
// Merge-on-read: a version merges the keys of its rowsets once, on its first
// read, and keeps the result. With dense BIGINT keys an install that adds
// rowsets newer than every other (a write, a load, a flush) carries the
// previous version's merge forward instead, looking up only the new keys in
// an index of where each key's newest row is (keymerge.go); a compaction or
// an ALTER drops the index and the next write builds it again.
//
// A write of a rowset encodes its rows into segment files under temporary
// names, syncs and renames them, syncs the directory, then appends one
// CRC-framed, numbered record to the manifest and syncs it. Only then is
// the write acknowledged and its version visible. On open the manifest is replayed
// and checked against what lies outside it: every segment file's tag names
// the last record durable when it was written, and CURRENT the last record
// published when it was last written (at open and close, and every
// PublishInterval while the table runs).
// When they show that the manifest lost records it had made durable, Open
// (and Check's read-only open) fails with ErrCorruption naming the manifest
// and changes nothing. Otherwise a torn final record (a write that was never
// acknowledged) is cut off, files of rowsets that records removed are
// deleted, the files of a compaction's output that no record lists are
// deleted (their tag says so: they hold copies of rows their inputs still
// hold), and the other segment files that no record lists — the files of
// a write or a load that may have been in flight — are moved to
// lost+found/ with a log line, never deleted. A manifest append that fails (a write or a sync)
// leaves the outcome unknown: the table keeps the files that record lists,
// and the next writer (a write, or a round of background compaction)
// recovers in place — it reads the manifest back, writes what it holds (the
// failed record whole or not at all) into a fresh manifest, switches
// CURRENT to it and goes on; until that succeeds (the disk has room again)
// writes fail, naming what failed. Open syncs what it replayed before
// relying on it.
//
// # Reclamation
//
// Compaction follows SPEC §3 per model. The compaction package chooses
// (compaction.PickAuto, PickManual over the version's metadata); this
// package runs the plan and installs it (compact.go, compact_run.go), and
// its scheduler loop (background.go) runs auto-compaction rounds. Whole
// expired rowsets of DUPLICATE and merge-on-write tables go by a manifest
// change; rewrites copy the pages that keep every row (compaction.CopyPages); merge-on-read
// compactions keep only the newest version of each key (any version a newer
// one hides, inside the inputs or above them, goes), and drop expired
// newest versions and deletions only in compactions from version 0. Background compaction
// judges expiry at the table's clock, but never later than the latest now a
// request has used, so a process running on a clock of its own (a test, a
// shell's session_now) is not surprised by rows reclaimed at the wall
// clock. Reads do not travel back in time: a read at a now earlier than a
// finished compaction's may miss rows that compaction reclaimed. A process
// about to exit calls CompactDue (debt.go) to run the rounds of that policy
// its writes made due, within a time cap: short-lived processes would
// otherwise leave them to a background loop that never gets to run.
//
// A compaction holds the writer lock only to plan on a pinned version and
// to install its output (compact_run.go): writers go on while it rewrites.
// The install checks that its inputs are still current and the definition
// unchanged — else the output is deleted and the compaction planned again —
// and carries the delete marks that landed on the inputs meanwhile to the
// output's rows in the same record, so that no superseded or deleted row
// comes back. Compactions run one at a time, and plan and install under
// the lock's shared side, beside small writes through the log (which
// change no rowset): those never wait for an install's manifest sync.
//
// What the writes that go on wait for is then the machine: a rewrite that
// starts within 2 s of a logged write keeps one goroutine fewer than
// GOMAXPROCS busy (Options.CompactionParallelism), so that a write
// returning from its log sync finds a processor free rather than queue
// behind the rewrite's page encoders (with no small writes about, it uses
// them all); it decodes pages into the
// page allocator's recycled buffers, not fresh garbage whose collection
// takes a processor too; and its segment files go to disk in steps as they
// are written (vfs.WritebackWriter), so that its final sync does not fill
// the device queue that the log's sync waits in. While logged writes keep
// coming (one within the last 2 s) it also paces that output, a token
// bucket of one writeback step at Options.CompactionWriteRate (32 MB/s by
// default; compact_pace.go): written as fast as it is encoded, the output
// reaches the disk in bursts of several steps, and the log syncs right
// after a burst wait for it. Without writes about it is not paced.
//
// # Data directories
//
// A DB (db.go) is a data directory, recognised by its ROWTTL marker
// file. OpenDB makes a data directory only of a missing or empty directory
// and refuses every other directory without the marker, so that pointing
// rowttl at the wrong place never turns someone's files into tables. A
// directory made before the marker existed is adopted (the marker is
// written) when it has the LOCK file every data directory had and at least
// one of its database directories holds a table whose manifest replays. A table is a
// directory holding CURRENT and a manifest; a database is the default one,
// an empty directory or a directory holding at least one table. Nothing
// else is listed or opened, and DROP deletes only the files rowttl makes
// (segments, manifests, CURRENT, LOCK, READERS, their temporary files),
// then the directory if it is empty: whatever else is there stays where it
// was.
//
// # Readers alongside the owner
//
// The process that opens a table for writing holds LOCK exclusively (and
// writes its pid and program into it, for messages). A read-only
// open (Options.ReadOnly: `rowttl check`, `rowttl inspect`, a script that
// only reads) takes no writer lock and changes nothing; it holds a shared
// lock on READERS while it is open. The owner deletes a file (an obsolete
// rowset's segments, an old manifest, an orphan, a dropped table) only
// while it holds READERS exclusively, taken with a try-lock: while readers
// hold it the deletions wait for the next attempt, so the owner never
// waits for a reader nor fails because of one. A reader that finds a file
// gone anyway (a table made before READERS existed) starts over on the
// new manifest, and reports corruption only when the manifest did not move.
// See lock.go.
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
// visible, never delete a file that a pinned version lists or that a
// reader of another process may be reading, never delete a segment file
// that no manifest record accounts for, and never list, open or delete
// what is not rowttl's own.
package table
