// Package load owns loading: Stream-Load-compatible CSV and Parquet loads
// into a table, from a file or standard input (`rowttl load`) or over HTTP
// (`rowttl serve`, PUT /api/{db}/{table}/_stream_load), with labels,
// column mappings, time zones and filtered-row accounting, and the
// Prometheus metrics the server exposes.
//
// It must never write a table except through table.LoadWriter (so every
// load is one atomic, durable version, and a failed, refused or killed
// load leaves nothing visible), never hold a whole input in memory, and
// never turn a bad row into a silently wrong one: a row is loaded as
// written, or filtered and counted.
//
// # Pipeline
//
// Reader splits the stream into records and fields (Format: separator and
// delimiter of any length, optional enclose and escape bytes, \N for
// NULL). The column list, compiled by sql.CompileLoadColumns, binds fields
// to columns, __TTL__ or variables and derives columns by expressions;
// each field is converted to its type by a strict converter, each row is
// checked (NOT NULL, VARCHAR lengths) and appended to Arrow builders.
// Every DefaultBatchRows rows (or DefaultBatchBytes) the batch goes to a
// goroutine that writes it through the table's LoadWriter, so converting
// the next batch overlaps encoding the last; memory holds about three
// batches whatever the input's size. At the end, the load commits, or
// aborts when the filtered rows exceed MaxFilterRatio. Reading and encoding
// hold no lock of the table: other loads and writes run meanwhile, and only
// the commit's publish waits for the writer lock (giving up when the
// request's context ends). The server fails a load whose body sends
// nothing for ServerOptions.BodyTimeout.
//
// The server's loads compute only while they hold a slot of a Workers
// pool (SharedWorkers: GOMAXPROCS-1 slots, process-wide), so that loads
// queue for processors rather than crowd out the short statements of
// other clients: each goroutine lets its slot go while it waits (for its
// client's bytes, for the other goroutine of its load), hands it to a
// waiting load every few thousand rows, and with none waiting still yields
// the processor to the goroutines ready to run. A load run without a pool
// (`rowttl load`, Options.Workers nil) is not bounded.
//
// # Choices where Doris leaves room
//
//   - Conversions are strict (Doris's strict_mode=true): a field that does
//     not convert to its column's type filters its row; StrictMode false
//     makes it NULL instead. An empty field is an empty string for string
//     columns and a conversion error for the others. Leading and trailing
//     spaces around numbers and dates are ignored.
//   - Empty records are skipped and not counted; with the default line
//     delimiter a '\r' ending a record is dropped, so CRLF files load.
//   - Row numbers in messages count records from 1 (equal to line numbers
//     unless enclosed fields hold line delimiters).
//   - A failed load reports the rows it read and filtered, and 0 loaded
//     rows; nothing of it is written. With MaxFilterRatio 0 the first bad
//     row dooms the load: its writer is aborted at once (its files go) and
//     the rest of the input is only counted.
//   - A plain name of the column list that is a table column is read as
//     that column's type, also when it only feeds an expression; a name
//     that is no column is a STRING variable. Expressions use the SQL
//     dialect of package sql (CAST, NOW(), date arithmetic, IF, CONCAT…).
//   - __TTL__ (or __DORIS_TTL_COL__) as a plain field takes integer epoch
//     microseconds; dates go through a derived column such as
//     __DORIS_TTL_COL__=cast(exp as datetime(6)), read in the load's
//     timezone (SPEC §2).
//   - Headers rowttl does not know are ignored; `where` and formats other
//     than CSV and Parquet are refused rather than ignored.
//
// # Parquet
//
// With Format "parquet" (header `format: parquet`) the input is a Parquet
// file, read by package fileformat. A stream (standard input, an HTTP
// body) is first copied to a temporary file, since Parquet is read from
// its footer. The column list names the file's columns (case-insensitive);
// without one, the file's columns that name a table column (and __TTL__ /
// __DORIS_TTL_COL__ in a direct-mode table) are loaded and the others
// ignored, and table columns the file lacks take their defaults. A
// variable has its file column's type, so expressions see typed values.
// Each value is converted from its file type by fileformat.Conversion,
// text columns into typed fields by the CSV converters; __TTL__ takes
// integers (epoch microseconds), DATE and DATETIME (read in timezone) and
// TIMESTAMPTZ. A file that is not Parquet or is cut short, a column the
// list names that the file lacks, or a pair of types that does not
// convert fails the load before any row is read; a value that does not
// fit (out of range, too long) filters its row ("row N: ..."), as a bad
// CSV field does. A batch of the file whose every value fits, with every
// field written as it is, goes to the table whole: boolean, integer and
// float columns as the file's arrays hold them, the others converted
// column by column; any other batch goes row by row.
//   - The JSON answer has Stream Load's fields; TxnId is the version the
//     load published; FirstErrorMsg and ErrorRows (up to 10 "line N:
//     reason" texts) stand in for Doris's ErrorURL.
package load
