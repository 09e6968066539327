// Package segment owns the segment file format: one immutable file holding
// the rows of one Arrow schema, cut into pages that share their row
// boundaries across all columns, with light encodings that decode at GB/s,
// LZ4 or zstd where it pays, a checksum on every chunk and on the footer,
// and zone maps (rows, nulls, min, max; exact sums of numeric pages) per
// page and per column.
//
// # Writing and reading
//
// A Writer takes Arrow record batches of any size and cuts them into pages of
// exactly WriterOptions.PageRows rows (the last page shorter, and a page
// shorter too when its strings would pass PageBytes in all); Finish writes
// the footer (with WriterOptions.Tag, opaque bytes the file's owner keeps
// there from format 4, Reader.Tag) and returns a Summary. Open reads and
// verifies the trailer, header and footer; ReadPage decodes one column of
// one page into a new Arrow array. A Reader is safe for concurrent use; it
// keeps one value a caller derives from it (Reader.Memo: the query's
// mapping of a table schema onto its columns, and its memoized liveness of
// pages), never one it must interpret.
//
// Writer.CopyPage appends a page of another segment whose columns match
// (Reader.SameLayout) as it is: its chunks' bytes, encodings, checksums and
// zone maps are copied, after their checksums are verified, without
// decoding. Compaction uses it for the pages it keeps whole. Pages of one
// segment may therefore have any size up to MaxPageRows; readers take the
// size of every page from the footer.
//
// # Format
//
// The layout is drawn in format.go and the chunk encodings in
// encoding_int.go (plain, constant, frame of reference, delta),
// encoding_string.go (plain, constant, dictionary) and encoding_fixed.go
// (floats and decimals plain or constant, booleans as a bitmap or constant).
// The writer picks, for every chunk, the smallest encoding, then compresses
// it when the result is below 7/8 of the encoded size: with the codec
// WriterOptions.Codec names, by default LZ4 (format 5) for string and binary
// columns, which every read decodes whole, and zstd for the others; never
// the columns WriterOptions.HotColumns names (a table's __TTL__), which
// every scan reads and which must decode at the speed of their light
// encoding. Null slots of
// integer columns are filled so that they widen neither the frame nor the
// deltas (encoding_int.go). Page zone maps of integer columns, and of
// doubles stored decimal-scaled, keep the exact sum of the page (format 3;
// format 2 files read, without sums). Pages are encoded in the background,
// several at a time, and written in order, so the file does not depend on
// the parallelism. Dump prints a file; the golden files in testdata show
// its bytes, so a change of format cannot go unnoticed: bump formatVersion
// when it is intended.
//
// ReadValues and ReadSelected decode BIGINT and DOUBLE pages into buffers
// the caller keeps, for scans that reduce rows instead of returning them;
// ReadSelected decodes only the selected rows of frame-of-reference pages.
// ReadPacked leaves such pages (plain or decimal-scaled) packed, for
// Values.RangeBits and Values.Sum to compare and add the packed values
// without writing them out (Values.RangeBits2 tests two ranges in one
// unpacking), and Values.At to read a few of them.
// ReadPageSelected decodes the selected rows of a string or binary page
// into an Arrow array; an LZ4 chunk is cut into parts of 64 KiB of its body,
// so that it decompresses only the parts that hold the page's lengths and
// the values selected. ReadPageGathered decodes the selected rows of an
// integer, date-time, floating-point, string or binary page straight into
// an Arrow array, without decoding the page into one first:
// frame-of-reference values are unpacked where the selection has them,
// delta bodies summed over every row and stored for the selected ones, a
// string page's values copied from where its chunk was decompressed.
//
// Zone map bounds are physical scalars (schema.Value). String bounds longer
// than MaxBoundLen bytes and decimal bounds are not kept: such zone maps have
// no Min and Max. Null slots of a decoded array hold unspecified values.
//
// # Corruption
//
// Any damaged byte of a file, anywhere, makes Open or ReadPage fail with an
// error that wraps rowttl.ErrCorruption and names the file; corrupt data is
// never returned. A file opened through a Mapped reader (a table maps its
// segments with vfs.Map) is read where its bytes lie, with no copy, and
// each chunk's checksum is verified on the first read of it: the bytes
// later reads see are the ones verified, since no one writes a finished
// segment. A failed check is never remembered as a pass. VerifyChecksums
// (and Verify, Table.Check, rowttl check) checks every chunk again. Lengths and counts are checked against the bytes that
// hold them before anything is allocated, and decoded pages are bounded, so
// a hostile file cannot exhaust memory.
//
// # What it must never do
//
// The package knows nothing of tables, keys, versions, rowsets or TTL
// policy: __TTL__ is just an int64 column to it, whose zone maps the layers
// above read. It never returns unchecked data, never syncs or closes the
// files it is given, and never changes a byte of a finished file. Only
// little-endian hosts are supported.
package segment
