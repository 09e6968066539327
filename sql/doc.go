// Package sql owns the execution of the Doris-compatible SQL dialect of
// SPEC §4: the executor (Session) that runs statements against the tables
// of a table.DB and formats their results, the planner that turns queries
// into exec operators, and the Stream Load column lists. The dialect's
// text — lexer, AST, parser, statement splitter, canonical formatter and
// expression-size limits — is package sql/parser, which knows nothing of
// tables; this package reads only its AST.
//
// It must never touch a table's files directly: everything it reads or
// writes of a table goes through the table and query packages, so that
// every durability, atomicity and TTL rule is enforced in one place below
// it. The one kind of file it writes itself is the output of SELECT ...
// INTO OUTFILE, and the one it reads the file of the table function
// local() (plan_tvf.go), both through package fileformat; local() reads
// only where the session's policy lets it (Session.RestrictLocalFiles). It must never show an
// expired row (it reads only through scans that apply the TTL rule), never
// use more than one now in a statement, and never let a SPEC §5 error text
// be reworded: engine errors surface unchanged (only a table's directory is
// replaced by its db.table name), and errors.Is still finds their sentinel.
//
// # Executing
//
// NewSession opens a session on a table.DB. Session.Query runs a statement
// that yields a result set and returns its rows as Arrow record batches
// (array.RecordReader; each field's SQL type in its metadata, see
// FieldType); Session.Exec runs any statement and returns a Result, whose
// rows it formats from the same batches; Session.RunScript runs a script
// as the shell does, streaming each result set to a writer batch by batch;
// Session.ExecScript runs a script statement by statement with a callback.
// For front ends (the MySQL protocol, the database/sql driver):
// ReturnsRows tells Query's statements from Exec's, CountParams and
// BindParams write `?` arguments into a statement as literals of their Go
// type (the dialect has no placeholders), Session.Variable and
// Session.Location give what SHOW VARIABLES and client values need.
// Each statement takes one now when it starts (the wall clock, or the
// frozen clock of SET session_now) and uses it for NOW(),
// CURRENT_TIMESTAMP, defaults and the TTL check of every row it reads or
// matches.
//
// # How SELECT runs
//
// Every SELECT — and the query of INSERT ... SELECT — is planned onto the
// vectorised operators of package exec (plan*.go); there is no other
// engine:
//
//   - A single-table or table-less query block (planSelect) compiles its
//     expressions with vcompiler into kernels (column references,
//     constants, arithmetic, comparisons, AND/OR/NOT, IS, IN lists (a set
//     of constants, else the OR of the comparisons), BETWEEN, LIKE (a
//     pattern per row too), CASE, IF, NULLIF, COALESCE/IFNULL, date parts
//     (year … second, quarter, dayofweek, dayofyear, week (mode 0),
//     weekofyear (ISO), microsecond, EXTRACT of every unit),
//     INTERVAL arithmetic, datediff, date_trunc, upper, lower, trim,
//     length, concat, substr, split_part (constant delimiter and field),
//     CAST between the kinds exec.Cast implements;
//     DECIMAL comparison and arithmetic through exec.DecimalCompare and
//     exec.DecimalArith), with WHERE, GROUP BY (expressions, aliases,
//     positions), HAVING, count/sum/min/max/avg (DISTINCT too, count of
//     several DISTINCT arguments counting their tuples; sum and avg of
//     DECIMAL through decimal.Acc), stddev/std/stddev_pop, stddev_samp,
//     variance/var_pop/variance_pop and var_samp/variance_samp (DOUBLE,
//     Welford), group_concat(x [, sep]) and group_concat(x SEPARATOR sep)
//     (", " by default, in input order; ORDER BY inside is refused),
//     any_value (the group's smallest value), approx_count_distinct and
//     ndv (both exact: count(DISTINCT x)), max_by(x, y) and min_by(x, y)
//     (x at the first row of the largest or smallest non-NULL y), DISTINCT, ORDER BY (positions, aliases,
//     expressions, NULLS FIRST/LAST) and LIMIT/OFFSET. The plan is a scan
//     (its projection the columns the statement names, the simple WHERE
//     conjuncts pushed into query.Request.Filter so that zone maps skip
//     pages), a Filter with the whole WHERE, then either a Limit (below the
//     projection when nothing sorts, de-duplicates or aggregates: no select
//     item is evaluated on a row the limit drops) and a Project, or a
//     Project of the group keys and aggregate arguments, a HashAggregate, a
//     Filter for HAVING and a Project of the select items; then Distinct
//     (an ORDER BY key that is not selected keeps the value of the first
//     row of each distinct output, exec.NewDistinctOn), Sort (TopN when
//     LIMIT is given) and a last Project dropping the ORDER BY keys that
//     are not selected. ORDER BY ... LIMIT without DISTINCT, aggregates or
//     windows runs its TopN on the filtered rows' keys first and evaluates
//     the select items only on the rows it keeps (lateProject). count(*), and count and sum of integer columns,
//     without GROUP BY and under a WHERE that pushes down whole, are read
//     from the scan's totals (ScanAggregate, plan_scanagg.go: zone maps
//     answer whole pages), the operators above standing by for a sum past
//     BIGINT. Rows stream from the scan to the caller a batch at a time,
//     and a closed reader stops the scan. GROUP BY without ORDER BY returns
//     its groups in the hash table's order.
//   - One compiler, eval.go's, holds the dialect's type rules
//     (comparisonType, unify, castFunc, the aggregate result types) and
//     evaluates row at a time: constant subexpressions are folded with it,
//     and an expression no kernel computes (abs(), round(), from_unixtime()
//     and the other functions of funcs.go without one; an expression
//     larger or deeper than kernels are built for) is evaluated by it
//     inside the plan, over the batch's rows (plan_rowexpr.go; EXPLAIN
//     shows it as row(...)), so that values and errors are the same
//     whichever evaluates them. What runs row at a time (VALUES rows,
//     UPDATE SET, load column lists) uses the same compiler. The rules
//     both compilers apply to the same AST shapes (the operands of
//     BETWEEN, LIKE, CASE and INTERVAL arithmetic, how a text constant
//     beside a DECIMAL reads) are written once, in expr_rules.go, and
//     each compiler builds its own node from them.
//   - Joins, derived tables, WITH, subqueries, set operations and window
//     functions go through the relational planner (see "Joins, subqueries,
//     set operations and windows"); what it does not compile is refused
//     with ErrNotSupported.
//
// # Client statements
//
// SHOW VARIABLES [LIKE] lists the session's variables (those SET acts on:
// time_zone, session_now, show_hidden_columns, exec_mem_limit,
// enable_unique_key_partial_update; then those it only keeps). SHOW
// [FULL] PROCESSLIST reads the ProcessList of the session's table.DB
// (ProcessListOf): NewSession registers every session in it (user root on
// localhost until SetClient), a server registers its connections' sessions
// the same way, each statement marks its process as running it (Begin),
// and KillQuery cancels that statement's context. SHOW DATA [FROM db]
// gives per table the visible rows, the bytes on disk and the expired rows
// and bytes awaiting reclaim. version(), database(), current_user() are
// constants of the statement; date_format() takes the MySQL specifiers
// (exec.AppendDateFormat).
//
// EXPLAIN <query> prints "engine: vectorised" (the line front ends have
// always read) and the operator tree with the pushed filter, the
// projection and the limit.
//
// Result values are formatted in one place (exec.ColumnFormatter): strings
// are escaped as `mysql -B` does (SPEC §4). SHOW and DESC results are text
// built by their statements and printed as they are (SHOW CREATE TABLE
// keeps its lines).
//
// The WHERE of UPDATE and DELETE is compiled as SELECT's (vcompiler) and
// evaluated on each batch the table's Matcher reads, its simple conjuncts
// pushed into the Matcher's filter; UPDATE's SET expressions are compiled
// once per statement by the row compiler (eval.go) and evaluated row by
// row, so that an error names the row's key. INSERT ... SELECT runs its query as SELECT does and
// streams the batches into a table.LoadWriter, insertBatchRows rows at a
// time as INSERT ... VALUES does: one version, memory bounded by a few
// batches whatever the number of rows. A batch of at least insertBatchRows
// rows whose every column needs no conversion into its target (passBatch)
// goes to the writer whole, its arrays shared; the table checks it as it
// checks the converted rows. local() decodes a Parquet file a few batches
// ahead of its consumer (fileformat.ReadAhead).
//
// # INTO OUTFILE
//
// `SELECT ... INTO OUTFILE "file:///dir/prefix_" FORMAT AS PARQUET|CSV|
// CSV_WITH_NAMES [PROPERTIES (...)]` (outfile.go) streams the rows of a
// query block (its plan's batches) into files named as Doris names them:
// prefix, an id of the statement, _0, _1 ... and the extension, a new file
// once one reaches max_file_size (5MB to 2GB, default 1GB). Each file is
// written under a temporary name and renamed when complete; a failed
// statement removes the files it had completed. The answer is one row of
// FileNumber, TotalRows, FileSize and URL (the path of the files without
// their number). Only absolute file:// paths into an existing directory
// are accepted; properties: column_separator, line_delimiter (CSV),
// compression (Parquet: snappy, zstd, none; by default snappy with zstd
// for FLOAT and DOUBLE columns), max_file_size,
// success_file_name (an empty file written last). Others (brokers, S3)
// are refused, not ignored. The Parquet columns carry the result's types.
//
// # Dialect choices where SPEC is silent
//
//   - Databases: a data directory always has the database "default", where
//     sessions start; `default` may be written unquoted as a database name.
//     Database and table names are case-sensitive, column names are not.
//   - CREATE TABLE: a column that says neither NULL nor NOT NULL is NOT NULL
//     in the key and nullable otherwise. Without a key clause the table is
//     DUPLICATE KEY on its leading columns (up to three, stopping before a
//     FLOAT, DOUBLE or STRING column). AGGREGATE KEY tables, generated and
//     AUTO_INCREMENT columns and sequence columns are refused with
//     ErrNotSupported (with row TTL, AGGREGATE KEY is SPEC's error).
//     DISTRIBUTED BY and COMMENT are recorded and shown, not acted upon.
//   - Types: integer + - * and DIV compute in BIGINT and fail on overflow;
//     integer / integer is DOUBLE; division or modulo by zero is NULL.
//   - DECIMAL (Doris decimalv3, exact, 128-bit, arithmetic in package
//     decimal): a literal with a fraction (1.50) is DECIMAL with its digits,
//     DECIMAL(3,2); one with an exponent (1e3), or with more than 38 digits,
//     is a DOUBLE. With a DECIMAL, an integer is DECIMAL(its type's digits,
//     0): TINYINT 3, SMALLINT 5, INT 10, BIGINT 19, and a constant the
//     digits of the smallest integer type holding it. a ± b is
//     DECIMAL(max(p1-s1, p2-s2) + max(s1, s2) + 1, max(s1, s2)), a × b
//     DECIMAL(p1+p2, s1+s2), a ÷ b DECIMAL(p1+s2+4, s1+4)
//     (div_precision_increment = 4, the quotient rounded), a % b keeps
//     max(s1, s2) and DIV is the truncated BIGINT quotient; sum is
//     DECIMAL(38, s) and avg DECIMAL(38, max(s, 4)), both exact whatever
//     the row order. A derived precision past 38 is capped at 38 with the
//     scale kept (a scale past 38 is capped too, the product rounded), and
//     a value that then does not fit is the error "DECIMAL value is out of
//     range in 'expr'": never wrapped, never silently rounded. Rounding is
//     half away from zero everywhere, the same for INSERT, UPDATE, CAST and
//     loads; a DOUBLE converts through its shortest text (1.005e0 is 1.01
//     at scale 2). DECIMAL with DOUBLE is DOUBLE, and so is arithmetic
//     with text. round, floor, ceil and truncate of a DECIMAL stay DECIMAL.
//     Comparisons of a DECIMAL with a DECIMAL, an integer or a text
//     constant spelling a number (read exactly) are exact whatever the
//     scales; with other text they are DOUBLE.
//   - Conversions are strict: a text that is not a valid number or date, or
//     a value out of its type's range, is an error (CAST included), not
//     NULL; a stored value names its row and column. CAST to VARCHAR(n)
//     does not truncate; storing checks lengths. Type limits are Doris's:
//     VARCHAR(1..65533), CHAR(1..255), DECIMAL(1..38, 0..p); VARCHAR and
//     STRING without a length are unbounded (Doris caps a STRING value at
//     2147483643 bytes, far past what a row here holds).
//   - Comparisons: numbers compare across types; a text compared with a date
//     or time is read as one; DATE compared with DATETIME is its midnight;
//     DATETIME compared with TIMESTAMPTZ is read in the session time zone.
//   - Results: DOUBLE in the shortest text that reads back exactly, with an
//     exponent only below 1e-6 or from 1e16 up; TIMESTAMPTZ as the session
//     time zone's wall clock followed by its offset (+08:00); a select item
//     is headed by its alias or its text as written.
//   - ORDER BY takes positions, aliases and expressions; NULLs sort first
//     ascending and last descending unless NULLS FIRST/LAST says otherwise;
//     without ORDER BY rows come in scan order. GROUP BY and HAVING take
//     aliases too.
//   - INSERT: DEFAULT and omitted columns take the column's default (the
//     statement's now for CURRENT_TIMESTAMP, in the session time zone).
//     __TTL__ (or __DORIS_TTL_COL__) is written with the value's own type so
//     that the table converts it (SPEC §2); when the rows of one batch of
//     an INSERT give it values of different types they are converted here
//     by the same rules. INSERT ... VALUES streams: Exec parses its rows one
//     at a time (the lexer runs only ahead of the parser) and hands them to
//     a table.LoadWriter in batches, so a statement of millions of rows
//     needs memory for its text and a batch, not for every row; it is still
//     one version, and an error in any row writes nothing.
//   - UPDATE works on UNIQUE tables only; SET expressions see the row's old
//     values; key columns cannot be set; in source mode __TTL__ cannot be set
//     (update the source column). Reading __TTL__ anywhere (SELECT, WHERE,
//     SET expressions) needs show_hidden_columns.
//   - enable_unique_key_partial_update = true makes INSERT and UPDATE on a
//     row TTL table fail with SPEC's text; on other UNIQUE tables an INSERT
//     naming only some columns is refused (partial updates are not
//     supported yet), a full-row INSERT is an ordinary upsert.
//   - ALTER TABLE applies its operations one by one, each durable; a failing
//     one leaves the earlier ones applied. MODIFY COLUMN replaces the whole
//     column definition (keep its DEFAULT by repeating it).
//   - SET: time_zone takes UTC, Z, ±HH:MM and IANA names (CST is
//     Asia/Shanghai, as in Doris); session_now takes a date-time read in the
//     session time zone, or one with an explicit offset; other variables are
//     accepted and ignored, so that Doris scripts run; SET GLOBAL is refused.
//   - ADMIN COMPACT judges expiry at the statement's now, like every read.
//
// # What the planner takes
//
// The plain query block keeps its shape (parser.Select.From naming one
// table; Select.IsSimple) and is what planSelect plans. Every other
// shape is planned by the relational planner (see "Joins, subqueries,
// set operations and windows" below); what it does not plan yet is
// refused by name with ErrNotSupported ("a RANGE frame starting after or
// ending before the current row is not supported yet", ...) before any
// table is read or written (refuse.go). TIMESTAMPDIFF, REGEXP,
// regexp_extract, concat_ws and the functions beyond SPEC's list
// (funcs_more.go: replace, lpad/rpad, left/right, reverse, repeat,
// instr, locate, mod, power, sqrt, exp, ln, log, log10, log2, sign, pi,
// greatest, least, week with a mode, last_day, from_unixtime with a
// format, dayname, monthname, weekday, yearweek, to_days, from_days,
// makedate, years_diff … seconds_diff, substring_index, starts_with,
// ends_with, null_or_empty, ascii, md5, space, strcmp, find_in_set, hex,
// str_to_date, unix_timestamp with a format, regexp_replace,
// regexp_replace_one, trim/ltrim/rtrim(s, chars) and so TRIM([BOTH|
// LEADING|TRAILING] chars FROM s), locate and so POSITION(x IN s)) are
// computed by the row compiler (timestampdiff.go, strfuncs.go), inside
// vectorised plans too. The bit operators & | ^ ~ << >> and bitand, bitor,
// bitxor, bitnot, bit_shift_left and bit_shift_right take integers only, as
// BIGINT, and have kernels (exec.Arith, exec.BitNot). UPDATE and DELETE
// refuse subqueries.
//
// # Joins, subqueries, set operations and windows
//
// The relational planner (plan_join.go, plan_subquery.go, plan_setop.go,
// plan_window.go) plans a query block onto exec operators:
//
//   - FROM: every table reference is a scan at the statement's one now, so
//     TTL applies per table; a derived table or a CTE (WITH, not
//     recursive, each seeing those before it; one used twice is planned
//     twice, a CTE name hiding a table's) is its planned query. Each
//     reference reads only the columns the statement names. Names resolve
//     across references; a name two references share is ambiguous unless
//     qualified, and USING merges its columns (the left one, the right one
//     in a RIGHT JOIN, COALESCE of both in a FULL JOIN, computed above the
//     join), * showing it once.
//   - Joins run on exec.NewHashJoin: the equalities of ON between the two
//     sides (and of WHERE over inner and comma joins) are hash keys, both
//     sides cast to their comparison type (DECIMAL keys must have the same
//     type), the rest is the residual. A WHERE conjunct reading one side
//     goes below the join and into that table's scan filter (zone maps
//     skip pages), never into the NULL-extended side of an outer join; a
//     conjunct of ON reading only the inner side of a LEFT or RIGHT join
//     filters that side first; any other conjunct of ON reading one side
//     (or none) is folded into that side's keys, CASE WHEN it THEN key END
//     (a join without equalities keyed 1 = 1), so that no nested loop tests
//     it on every pair (sideKeys). The build side is the one with fewer
//     estimated rows: a table's live rows from its rowsets' metadata
//     (rows less expired and deleted), a filter keeping half (a tenth for
//     an equality), LEFT and RIGHT swapped as needed.
//   - Subqueries: a WHERE conjunct x IN (query) is a semi join on x, x NOT
//     IN (query) a null-aware anti join, EXISTS and NOT EXISTS semi and
//     anti joins, correlated through equalities of the subquery's WHERE
//     between its columns and the outer query's (the hash keys) and any
//     other condition naming both (the join's residual, a name resolving
//     in the subquery first); a correlated x [NOT] IN (SELECT y ...) is
//     planned as the [NOT] EXISTS it equals (y = x a key; for NOT IN the
//     residual y = x OR y IS NULL OR x IS NULL); a scalar subquery is a
//     cross join with its single row: NULL without rows, "Subquery
//     returns more than 1 row" with more (in a query with GROUP BY or
//     aggregates, an uncorrelated one runs once, before the first row,
//     into an exec.ScalarCell); a correlated scalar subquery of one
//     aggregate or one value, correlated through equalities only, in a
//     query without aggregates, is a LEFT join with that aggregate (or
//     the value's min and the row count, more than one row an error)
//     grouped by the equalities' inner sides (an unmatched row takes the
//     aggregate of no row: NULL, 0 for count), and any other correlated
//     scalar subquery is refused. An uncorrelated IN (subquery)
//     or EXISTS anywhere else (under OR or NOT, in the select list, in
//     HAVING) runs once, before the first row, into an exec.ValueSet the
//     rows probe; a correlated one there is refused. x op ANY|SOME|ALL
//     (subquery), uncorrelated, wherever it stands: = ANY is IN and
//     <> ALL is NOT IN; any other op runs the subquery once into its
//     count of values, of non-NULL ones and their extremes in the
//     comparison's type (quantFill), which decide the three-valued
//     answer (exec.Quantified); a correlated one is refused.
//     (a, b) IN (SELECT x, y ...) as a WHERE conjunct is a semi join on
//     every column; its NOT IN, a correlated one and one elsewhere are
//     refused. (a, b) [NOT] IN ((1, 2), ...) is the OR of one AND of
//     column equalities per row (rowIn), SQL's row comparison.
//   - The topmost join (or subquery join) outputs only the columns the
//     operators above it read (exec.NewHashJoinOutput), so that a key
//     read by the join alone is never gathered.
//   - GROUP BY one column of the root join's build side that nothing else
//     reads groups on the build rows' group ids (exec.GroupDict,
//     exec.NewHashJoinGrouped): the join outputs a pair's id instead of
//     gathering the value, the aggregation hashes ints, and GroupValues
//     maps its groups back to the values (a NULL-extended row joins the
//     NULL key's group).
//   - A join of one integer key that keeps no unmatched probe row (INNER,
//     a semi join, the probe side of an outer join's inner side) whose
//     probe side is a table scan narrows that scan, once the build side is
//     held, to the build keys' range (exec.OnBuildKeyRange, a conjunct
//     pushed like a WHERE one), so zone maps skip the pages no build key
//     can match.
//   - GROUP BY, HAVING, aggregates, DISTINCT, ORDER BY and LIMIT are
//     planned over the FROM relation as for a single table.
//   - Window functions (row_number, rank, dense_rank, ntile(n),
//     percent_rank, cume_dist, lag and lead with a constant offset and
//     default, first_value, last_value, nth_value(x, n), count/sum/min/
//     max/avg and the variances and standard deviations) run in one
//     exec.NewWindow after WHERE and GROUP BY/HAVING,
//     before ORDER BY and LIMIT; without ORDER BY the rows come in the
//     first window's partition and order. Frames: ROWS with any bounds;
//     RANGE with UNBOUNDED and CURRENT ROW bounds (the row's peers), and
//     n PRECEDING / n FOLLOWING over one ORDER BY key of an integer,
//     DECIMAL, FLOAT/DOUBLE or DATE (n days) type — over DATETIME keys,
//     and RANGE frames starting after or ending before the current row,
//     they are refused.
//   - UNION [ALL], INTERSECT and EXCEPT unify each column's type (unify,
//     casting with exec.Cast) and run on exec.NewSetOp; ORDER BY after the
//     last operand names output columns by position or name, and with
//     LIMIT is a TopN.
//
// EXPLAIN shows every join with its keys, residual, build side and
// estimated rows, each scan's pushed filter and estimate, the subquery
// joins above the FROM and the subqueries evaluated once.
package sql
