// Package sql owns the Doris-compatible SQL dialect of SPEC §4: the lexer,
// the AST, the parser, the statement splitter and the canonical expression
// formatter, and (added later) the executor that runs parsed statements
// against tables.
//
// It must never touch files directly: everything it reads or writes goes
// through the table and query packages, so that every durability, atomicity
// and TTL rule is enforced in one place below it.
//
// # Parsing
//
// SplitStatements cuts a script into statements; Parse parses one statement
// into a Stmt (one of the *Xxx statement types of ast.go); ParseExpr parses
// one expression. Errors are *ParseError, whose message names the line, the
// column and the offending token, and which wraps rowttl.ErrInvalidArgument
// (rowttl.ErrInvalidSchema for an unknown column type).
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
//
// # Expressions
//
// Precedence follows MySQL: OR (||) < AND (&&) < NOT < comparisons, IS,
// [NOT] IN, [NOT] BETWEEN, [NOT] LIKE < + - < * / % DIV < unary minus and !.
// The parser normalises a few spellings so that the executor has fewer node
// types to handle: a minus sign in front of a numeric literal is folded into
// it; unary plus is dropped; !x is NOT x; != is <>; IS UNKNOWN is IS NULL;
// expr ± INTERVAL n unit, DATE_ADD/DATE_SUB/ADDDATE/SUBDATE and the Doris
// days_add style functions are all DateArith; DATE 'x', DATETIME 'x' and
// TIMESTAMP 'x' are casts. Format writes an expression back as canonical SQL
// that ParseExpr reads to the same tree.
//
// DEFAULT is accepted only as a whole value in INSERT VALUES, UPDATE SET and
// SET var = DEFAULT (a *DefaultExpr). Subqueries, joins and UNION are
// rejected with a clear error.
package sql
