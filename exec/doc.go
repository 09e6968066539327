// Package exec owns the physical operators of a query: pull-based streams of
// Arrow record batches (scan adapters, filter, project, hash aggregate,
// sort and top-N, distinct, limit, hash join, set operations, windows), the
// vectorised expression kernels they evaluate, and the memory accounting of
// the operators that must hold data; and the one formatter of result
// values (ColumnFormatter), the SPEC §4 text every front end prints.
//
// # Expressions
//
// An Expr evaluates a whole batch into one array, in loops over the
// arrays' buffers: a Literal operand is used as a scalar, never expanded
// per row unless a consumer needs its array. The planner types every
// expression first (operands of a Compare or an Arith share one type;
// Cast converts), so kernels only check what they were given. DECIMAL is
// the exception that proves it: DecimalCompare and DecimalArith take a
// DECIMAL with a DECIMAL of any scale or a BIGINT and call package decimal
// per value, since rescaling to one type could overflow and a double could
// round; DECIMAL sums and averages accumulate in decimal.Acc. Where a
// row-at-a-time evaluator would skip work, a kernel does too: the right
// side of AND/OR runs only on the rows the left side leaves undecided, a
// CASE branch or a COALESCE argument only on the rows that reach it
// (sub-batches gathered with query.FilterBatch), so an error those rows
// would raise is never raised. Errors wrap rowttl.ErrInvalidArgument with
// the texts of the SQL dialect (BIGINT overflow, strict conversions,
// date/time range).
//
// It knows Arrow and schema types, not tables: rows enter through an
// Operator that someone else built (the SQL planner wraps a query.Scan),
// so every TTL and visibility rule stays in query and table. It must never
// write, never read a file, and never hold more than a few batches in a
// streaming operator; a blocking operator (hash table, sort buffer) charges
// what it holds to the query's Budget and fails with ErrMemLimit, naming
// itself, rather than grow past it.
//
// # Contract of an Operator
//
//   - Schema is fixed when the operator is built; every batch Next returns
//     has exactly those columns, in that order, with the Arrow types of
//     their schema.Type (schema.Type.Arrow), nullable or not.
//   - Next returns batches with at least one row, and (nil, nil) at the
//     end. The caller owns each returned batch and releases it.
//   - Next honours its context: a cancelled context makes it return the
//     context's error promptly (within one batch of work).
//   - Close releases everything the operator holds, its inputs included;
//     it may be called before the end and more than once.
//
// # Equality of rows
//
// Every operator that matches rows by equality (hash aggregation,
// distinct, hash joins, set operations) keys them one way, keys.go's
// rowKeys and groupMap: columns compared must have identical Arrow types,
// which the planner casts to; FLOAT and DOUBLE compare with -0 equal to 0
// and NaN equal to NaN. A join key that is NULL equals nothing; set
// operations, GROUP BY and DISTINCT treat NULLs as equal. A hash join's
// single integer key whose values are dense is addressed directly
// (join_table.go), as DuckDB's perfect hash join does. Windows compare
// PARTITION BY and peers with the same rules by their own flattened
// columns (window_sort.go).
//
// Operators that need computed keys (group keys, sort keys, join keys)
// take column indices of their input: the planner puts a Project below
// them to evaluate expressions, so that each operator does one thing.
//
// # Blocking operators
//
// NewHashAggregate, NewSort, NewTopN and NewDistinct hold rows and charge
// them to the Budget. Two row encodings are shared by every operator that
// compares rows:
//
//   - equality keys (keys.go): rowKeys hashes the key columns of a batch,
//     one int64 for a single fixed-width column, the bytes in place for a
//     single string, an encoding of the columns otherwise, in which NULLs
//     are equal to each other, -0 to 0 and every NaN to every NaN; and
//     groupMap maps keys to dense group ids in first-seen order.
//   - order keys (keys_order.go): bytes whose bytewise order is the ORDER
//     BY order of the row, NULLs first or last per key, DOUBLE with -0
//     equal to 0 and NaN after every number, strings by bytes.
//
// HashAggregate splits groups by hash into 64 partitions whose tables
// stay in cache; Env.Parallelism workers divide the partitions, not the
// batches, so that every group sees its rows in input order and a result
// (float sums included) never depends on the number of workers. The order
// of its output groups is unspecified; group_concat joins each group's
// values in that input order, and the variances fold each value into a
// running mean and sum of squared deviations (Welford). DISTINCT aggregates of a fixed-width
// argument keep their seen (group, value) pairs in a typed set (intset.go);
// a lone count(DISTINCT x) without GROUP BY, where one group would put
// every value on one goroutine, runs instead on intSets partitioned by the
// value's hash and divided among the workers (count_distinct.go,
// CountDistinctApplies). NewHashJoin holds its build side and, without
// residual, probes on Env.Parallelism goroutines, its output in probe
// order all the same; its GroupDict (the build rows numbered by a group
// key) and a ValueSet (an IN subquery's values) outlive the operator that
// fills them and are released by their owner. Sort and TopN are stable:
// rows of equal keys keep their input order. TopN holds limit+offset rows
// and one batch; Distinct streams, emitting each row the first time it is
// seen.
package exec
