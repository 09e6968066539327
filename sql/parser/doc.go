// Package parser owns the text of the Doris-compatible SQL dialect of SPEC
// §4: the lexer, the AST, the parser, the statement splitter, the canonical
// formatter (FormatExpr, FormatQuery: the inverse of ParseExpr and Parse) and
// the limits on the size of one expression.
//
// It must never know a table, a session or a value's storage: it imports
// only the root package (for its error sentinels) and schema (for column
// types), so that every statement parses the same way whatever database it
// runs against, and so that what executes statements (package sql) and
// what compiles Stream Load column lists can depend on it without the
// layering turning back. It must never reword its error texts once a
// front end shows them.
//
// # Parsing
//
// SplitStatements cuts a script into statements (CompleteStatements does
// it for a shell's input that may end mid-statement); Parse parses one
// statement into a Stmt (one of the *Xxx statement types of ast.go);
// ParseExpr parses one expression. ParseStream is Parse for statements
// that may be huge: the rows of an INSERT ... VALUES are left to a
// ValuesStream that reads them one at a time, so that a statement of
// millions of rows never holds all of them nor their tokens (the lexer
// runs only ahead of the parser). ParseLoadColumns reads a Stream Load
// column list (`k1, tmp, v = tmp * 2`). Errors are *ParseError, whose
// message names the line, the column and the offending token, and which
// wraps rowttl.ErrInvalidArgument (rowttl.ErrInvalidSchema for an unknown
// column type). An expression may nest at most about 300 levels
// (parentheses, calls, unary operators), be at most MaxExprHeight
// operators tall (32,768: a chain of 20,000 terms is fine) and have at
// most MaxExprSize nodes (4M; exprlimit.go), so that no statement or load
// column list can exhaust the stack of those who compile it; ExprSizes
// gives node counts in linear time.
//
// The dialect follows Doris (itself close to MySQL) so that the row TTL
// scripts of the Doris documentation parse verbatim:
//
//   - Keywords, function names and type names are case-insensitive;
//     identifiers keep their case and may be `backquoted` (a doubled
//     backquote stands for itself). Reserved words (SELECT, FROM, WHERE,
//     ORDER, GROUP, LIMIT, NULL, ...; the list is reserved in lex.go) need
//     backquotes to be used as names; KEY, TYPE, DATE, COMMENT and most
//     other keywords do not.
//   - Strings are quoted with ' or " (a double-quoted text is a string, not
//     a name), with MySQL backslash escapes and doubled quotes.
//   - Comments: `-- ...` and `# ...` to the end of the line (any `--`
//     starts a comment, as in Doris; write `a - -1`, not `a--1`), and
//     `/* ... */`. A hint `/*+ ... */` is a comment: parsed and ignored.
//   - Clauses that only matter to a distributed Doris cluster are parsed
//     and kept or ignored: ENGINE, DISTRIBUTED BY (kept), PARTITION BY,
//     ROLLUP and INDEX definitions (their text kept in CreateTable.Ignored).
//   - `query INTO OUTFILE "file:///dir/prefix" FORMAT AS ... [PROPERTIES]`
//     is a *SelectInto; what the path and properties may be is the
//     executor's to check.
//
// # Expressions
//
// Precedence follows MySQL: OR (||) < AND (&&) < NOT < comparisons, IS,
// [NOT] IN, [NOT] BETWEEN, [NOT] LIKE, [NOT] REGEXP < + - < * / % DIV <
// unary minus and !. The parser normalises a few spellings so that the
// executor has fewer node types to handle: a minus sign in front of a
// numeric literal is folded into it; unary plus is dropped; !x is NOT x; !=
// is <>; IS UNKNOWN is IS NULL; RLIKE is REGEXP; expr ± INTERVAL n unit,
// DATE_ADD/DATE_SUB/ADDDATE/SUBDATE, TIMESTAMPADD and the Doris days_add
// style functions are all DateArith; DATE 'x', DATETIME 'x' and TIMESTAMP
// 'x' are casts. FormatExpr writes an expression back as canonical SQL that
// ParseExpr reads to the same tree.
//
// DEFAULT is accepted only as a whole value in INSERT VALUES, UPDATE SET and
// SET var = DEFAULT (a *DefaultExpr).
//
// # Analytic queries
//
// A query is a QueryExpr: a *Select (one query block) or a *SetOp (UNION
// [ALL], INTERSECT, EXCEPT; INTERSECT binds tighter, all associate to the
// left; ORDER BY and LIMIT after the last operand apply to the whole
// operation, an operand with its own is parenthesised). WITH (several
// non-recursive CTEs, with optional column lists) stands in front of a
// query, a subquery or the SELECT of INSERT. FROM takes [INNER] JOIN,
// LEFT|RIGHT|FULL [OUTER] JOIN, CROSS JOIN and commas with ON or USING
// (TableRef.Join: left associative, each ON belonging to the nearest JOIN,
// commas binding more loosely), and derived tables (TableRef.Subquery, with
// a required alias). Expressions add scalar subqueries, [NOT] IN
// (subquery), EXISTS, [NOT] REGEXP|RLIKE, TIMESTAMPDIFF, EXTRACT, the
// QUARTER unit, the bit operators & | ^ ~ << >> (MySQL's precedence),
// TRIM([BOTH|LEADING|TRAILING] [chars] FROM s) and POSITION(x IN s) (read
// as the calls trim/ltrim/rtrim(s, chars) and locate(x, s)),
// group_concat(x SEPARATOR 's') (group_concat(x, 's')), x op ANY|SOME|ALL
// (query) (*QuantifiedCmp), row constructors (a, b, ...) (*RowExpr) and
// window functions (*WindowFunc: row_number, rank,
// dense_rank, ntile, percent_rank, cume_dist, lag, lead, first_value,
// last_value, nth_value and the aggregates, OVER a window with PARTITION
// BY, ORDER BY and a ROWS or RANGE frame (n PRECEDING and FOLLOWING are
// offsets in rows for ROWS, in the ORDER BY key's values for RANGE), or a
// named window of the block's WINDOW clause). FormatQuery writes a query
// back as canonical SQL that Parse reads to the same tree.
package parser
