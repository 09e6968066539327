// Package bench is rowttl's benchmark harness: a deterministic generator of
// the events shape, the workloads `rowttl bench` times through the public Go
// API, and the JSON result lines that bench/compare.sh puts side by side
// with DuckDB's.
//
// # Data
//
// Generator makes rows (id, event_time, user_id, amount, message, __TTL__)
// where every value of row i is a pure function of the seed, the layout and
// i: any range can be regenerated, in any batching, so the DuckDB side
// (bench/duckdb, its own Go module because it needs cgo) loads exactly the
// rows rowttl loaded. 10% of the expirations are NULL and 50% of all rows
// are expired at Now. Layout Random draws each expiration independently of
// the row's position; Correlated sets it to event_time + Retention with the
// rows in time order, so that whole pages expire together.
//
// # Workloads
//
// load, count, sum, groupby, project, reclaim, upsert, export, import,
// smallwrites and memtable (see Workloads and Run). Each runs warm-up runs,
// then measured runs whose median it reports, with the answer it computed
// (a count, a sum, a digest of the groups) so that two engines can be
// checked against each other. Prepare makes the events table and a twin holding only its
// live rows, cached on disk.
//
// smallwrites (smallwrites.go) runs once after a short warm-up: durable
// one-row writes from 1 and 16 goroutines, then the latency of 10-row
// writes during a full compaction of the events table beside their idle
// latency. Its helpers (RunConcurrent, Percentile, SmallWriteRows) time the
// SQLite side (bench/sqlite, a module of its own so that the main module
// never depends on SQLite) and the DuckDB side alike.
//
// memtable (memtable.go) times count, sum and the SQL suite over a table
// whose newest rows sit in memtables, written as small writes, beside the
// same reads over a copy given the same writes and flushed, alternating
// between the two so that the ratio stands on a busy machine.
//
// groupby runs the engine's own hash aggregation (exec.NewHashAggregate)
// over a table scan, through a small adapter from the scan's record reader
// to an exec.Operator.
//
// # What it must never do
//
// It reads and writes tables only through the public API (table, query), so
// that what it times is what a user gets; the one exception is copying a
// closed table's directory, or a closed data directory's (segment files
// hard-linked), so that reclaim can compact the same table in every run and
// memtable can write into copies of the prepared one. It never imports the DuckDB or the
// SQLite module, so the main module stays pure Go and free of them.
package bench
