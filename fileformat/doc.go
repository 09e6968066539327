// Package fileformat owns the mapping between rowttl's column types and
// the files the rest of the ecosystem reads and writes: Parquet (through
// arrow-go's parquet/pqarrow) and the Stream Load CSV dialect. It streams
// Arrow record batches into and out of such files with bounded memory,
// and writes every file under a temporary name that is synced and renamed
// into place, so that a reader never sees half a file.
//
// It must never touch tables: it knows schema types and Arrow batches,
// not versions, TTL policies or labels. Exports (cmd/rowttl export) feed
// it the batches of a table scan; loads (package load) read its batches
// and apply Stream Load's rules to them, and SQL's local() reads them as
// a relation.
//
// # Types
//
// Parquet columns carry rowttl types as Arrow types (the ones
// schema.Type.Arrow gives), so any Parquet reader sees them faithfully:
//
//	BOOLEAN                  boolean
//	TINYINT .. BIGINT        int8 .. int64
//	FLOAT, DOUBLE            float32, float64
//	DECIMAL(p,s)             decimal128(p,s)
//	STRING, VARCHAR, CHAR    utf8
//	DATE                     date32
//	DATETIME(p)              timestamp[us] (no zone: a wall clock)
//	TIMESTAMPTZ(p)           timestamp[us, UTC] (an instant)
//	TIMESTAMP_NS             timestamp[ns]
//	__TTL__ (export)         int64, epoch microseconds of the expiration
//
// Each field also carries its rowttl type in the field metadata key
// "rowttl.type" (for instance VARCHAR(100) or DATETIME(3)), which reading
// prefers to the Arrow type when both agree on the Arrow type.
//
// Reading a file written elsewhere maps each Arrow type to its natural
// rowttl type (FileType): unsigned integers to the next wider signed type
// (UINT64 to BIGINT, values above its range being conversion errors),
// timestamps of any unit and zone to DATETIME(6) or TIMESTAMPTZ(6), large
// and view strings and binary to STRING, date64 to DATETIME(3).
// Conversions into a column of another type (Converter) widen integers,
// turn integers and decimals into floats or decimals, and move dates and
// times between DATE, DATETIME and TIMESTAMPTZ in a given zone; anything
// else is a schema mismatch, an error naming the column and both types.
//
// # Files
//
// Parquet files are written with zstd for number, date and time columns
// and snappy (s2's fast mode, in 64 KiB fragments of one block, as the
// reference encoder writes it) for the others, or one codec (snappy, zstd,
// none), row groups cut at RowGroupRows rows or RowGroupBytes buffered
// bytes (default 1M rows, 128 MiB), integers, dates and times
// delta-encoded, statistics, and the Arrow schema stored in the footer.
// A file whose columns are all integers, dates, times, FLOAT, DOUBLE or
// strings (an export's usual shape) is written by this package's own
// flat column writer (pqfast.go): FLOAT and DOUBLE byte-stream-split
// before zstd, strings DELTA_LENGTH_BYTE_ARRAY, one page per column for
// each group of about 32K rows, encoded on a pool of goroutines while the
// caller reads on, and a column that its codec does not shrink by a
// tenth on its first page stored uncompressed. Other files, and a first
// batch with a FLOAT, DOUBLE or string column of few distinct values
// (where a dictionary pays), go through arrow-go's writer, with
// dictionary encoding for those columns, whose column chunks are encoded
// on several goroutines and reach the file in order, the same bytes as
// on one. Reading checks the magic at both
// ends and the footer before anything else, so a truncated file or one
// that is not Parquet fails at once with rowttl.ErrCorruption; a damaged
// page fails the read with the same sentinel, and a malformed file never
// panics (FuzzParquetReader). ReadAhead decodes a stream's batches on a
// goroutine of their own, a bounded number ahead of their reader, so that
// an import decodes the file while it writes the batch before.
//
// CSV files are the Stream Load dialect that package load reads: fields
// separated by TAB (or any separator), records ended by "\n", \N for NULL,
// values in the text rowttl's SQL prints. A value that the dialect cannot
// carry unquoted (one holding the separator, the delimiter, the enclose
// byte, or equal to \N) is quoted when an enclose byte is given and an
// error otherwise, never written ambiguously.
package fileformat
