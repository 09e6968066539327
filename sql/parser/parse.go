package parser

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// Parse parses exactly one statement; a trailing ';' is allowed. Scripts are
// cut into statements with SplitStatements first. Errors are *ParseError.
func Parse(src string) (stmt Stmt, err error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	defer p.recover(&err)
	if p.atEnd() {
		p.fail("empty statement")
	}
	s := p.parseStatement()
	p.finish()
	return s, nil
}

// ParseExpr parses one expression, as FormatExpr writes it.
func ParseExpr(src string) (e Expr, err error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	defer p.recover(&err)
	x := p.parseExpr()
	if !p.at(tokEOF) {
		p.fail("expected end of expression")
	}
	return x, nil
}

// parser is a recursive-descent parser over the tokens of one statement.
// Errors unwind with a bailout panic that Parse recovers.
type parser struct {
	src string
	// toks is a window of the statement's tokens, lexed as the parser
	// asks for them (see fill): toks[i] is the next token, toks[i-1] the
	// last consumed one. A statement of millions of tokens thus never
	// holds them all.
	toks  []token
	i     int
	lx    *lexer // nil once the EOF token is in toks
	depth int    // expression nesting, bounded by maxDepth
	// pending is a primary expression already read (after '(' ahead of
	// knowing whether a query or an expression follows) that parsePrimary
	// returns next.
	pending Expr
	// winRefs collects the OVER w of the query block being read, checked
	// once its WINDOW clause is known.
	winRefs []windowRef
	// exprLevel counts the expressions being read around the current one
	// within its query; a subquery starts again from 0 (checkExprSize).
	exprLevel int
	// stream makes INSERT ... VALUES stop before its rows, which
	// ValuesStream then reads one at a time; streamRows says it did.
	stream, streamRows bool
}

// maxDepth bounds expression nesting so that hostile input cannot exhaust
// the stack.
const maxDepth = 1000

// enter counts one level of expression nesting; leave undoes it.
func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.fail("expression nested too deeply")
	}
}

func (p *parser) leave() { p.depth-- }

type bailout struct{ err *ParseError }

func newParser(src string) (*parser, error) {
	return &parser{src: src, lx: &lexer{src: src}}, nil
}

// fill lexes until toks holds the token n places ahead (or the EOF token),
// first dropping the consumed tokens but the last when there are many. A
// lexical error unwinds like a syntax error.
func (p *parser) fill(n int) {
	for p.lx != nil && p.i+n >= len(p.toks) {
		if p.i > 1024 {
			k := copy(p.toks, p.toks[p.i-1:])
			p.toks, p.i = p.toks[:k], 1
		}
		l := p.lx
		l.toks = p.toks
		err := l.skipSpace()
		if err == nil {
			if l.pos >= len(l.src) {
				l.toks = append(l.toks, token{kind: tokEOF, pos: len(l.src), end: len(l.src)})
				p.lx = nil
			} else {
				err = l.next()
			}
		}
		p.toks, l.toks = l.toks, nil
		if err != nil {
			pe, ok := err.(*ParseError)
			if !ok {
				pe = newParseError(p.src, l.pos, l.pos, err.Error())
			}
			panic(bailout{pe})
		}
	}
}

// recover turns a bailout into the returned error; other panics propagate.
func (p *parser) recover(err *error) {
	if r := recover(); r != nil {
		b, ok := r.(bailout)
		if !ok {
			panic(r)
		}
		*err = b.err
	}
}

// fail reports msg at the current token.
func (p *parser) fail(msg string) {
	p.failAt(p.peek(), msg)
}

func (p *parser) failf(format string, args ...any) {
	p.fail(fmt.Sprintf(format, args...))
}

func (p *parser) failAt(t token, msg string) {
	panic(bailout{newParseError(p.src, t.pos, t.end, msg)})
}

// finish accepts trailing semicolons and requires the end of input.
func (p *parser) finish() {
	for p.acceptOp(";") {
	}
	if !p.at(tokEOF) {
		p.fail("expected end of statement")
	}
}

func (p *parser) peek() token {
	p.fill(0)
	return p.toks[p.i]
}

// peekAt returns the token n places ahead (the EOF token past the end).
func (p *parser) peekAt(n int) token {
	p.fill(n)
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	p.fill(0)
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// prevEnd is the end offset of the last consumed token.
func (p *parser) prevEnd() int {
	if p.i == 0 {
		return 0
	}
	return p.toks[p.i-1].end
}

func (p *parser) at(k tokenKind) bool { return p.peek().kind == k }

// atEnd reports the end of the statement: end of input or ';'.
func (p *parser) atEnd() bool { return p.at(tokEOF) || p.isOp(";") }

// isKwTok reports whether t is the unquoted keyword kw (upper case).
func isKwTok(t token, kw string) bool {
	return t.kind == tokIdent && strings.EqualFold(t.val, kw)
}

func (p *parser) isKw(kw string) bool { return isKwTok(p.peek(), kw) }

// isKwSeq reports whether the next tokens are the keywords kws.
func (p *parser) isKwSeq(kws ...string) bool {
	for n, kw := range kws {
		if !isKwTok(p.peekAt(n), kw) {
			return false
		}
	}
	return true
}

// acceptKw consumes the keyword sequence kws if it is next.
func (p *parser) acceptKw(kws ...string) bool {
	if !p.isKwSeq(kws...) {
		return false
	}
	p.i += len(kws)
	return true
}

func (p *parser) expectKw(kws ...string) {
	for _, kw := range kws {
		if !p.acceptKw(kw) {
			p.failf("expected %s", kw)
		}
	}
}

func (p *parser) isOp(op string) bool {
	t := p.peek()
	return t.kind == tokOp && t.val == op
}

func (p *parser) acceptOp(op string) bool {
	if p.isOp(op) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expectOp(op string) {
	if !p.acceptOp(op) {
		p.failf("expected '%s'", op)
	}
}

// isName reports whether the current token can be a name.
func (p *parser) isName() bool {
	t := p.peek()
	return t.kind == tokQuotedIdent || t.kind == tokIdent && !isReserved(t.val)
}

// name consumes an identifier; what names it in the error.
func (p *parser) name(what string) string {
	t := p.peek()
	switch t.kind {
	case tokQuotedIdent:
		p.i++
		return t.val
	case tokIdent:
		if isReserved(t.val) {
			p.failf("expected %s (%s is a reserved word: `backquote` it)", what, strings.ToUpper(t.val))
		}
		p.i++
		return t.val
	}
	p.failf("expected %s", what)
	return ""
}

// dbName consumes a database name. The bare word DEFAULT is accepted (as
// "default"): it names the database every data directory has.
func (p *parser) dbName() string {
	if t := p.peek(); t.kind == tokIdent && strings.EqualFold(t.val, "DEFAULT") {
		p.i++
		return "default"
	}
	return p.name("database name")
}

// tableName parses [db.]t.
func (p *parser) tableName() TableName {
	if t := p.peek(); t.kind == tokIdent && strings.EqualFold(t.val, "DEFAULT") {
		if n := p.peekAt(1); n.kind == tokOp && n.val == "." {
			p.i += 2
			return TableName{DB: "default", Name: p.name("table name")}
		}
	}
	n := p.name("table name")
	if p.acceptOp(".") {
		return TableName{DB: n, Name: p.name("table name")}
	}
	return TableName{Name: n}
}

// nameList parses ( name, ... ).
func (p *parser) nameList(what string) []string {
	p.expectOp("(")
	var names []string
	for {
		names = append(names, p.name(what))
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	return names
}

// stringLit consumes a string literal.
func (p *parser) stringLit(what string) string {
	t := p.peek()
	if t.kind != tokString {
		p.failf("expected %s", what)
	}
	p.i++
	return t.val
}

// smallInt consumes a non-negative integer literal that fits an int.
func (p *parser) smallInt(what string) int {
	t := p.peek()
	if t.kind != tokInt {
		p.failf("expected %s", what)
	}
	n, err := strconv.Atoi(t.val)
	if err != nil || n > math.MaxInt32 {
		p.failf("%s out of range", what)
	}
	p.i++
	return n
}

// ---------------------------------------------------------------------------
// Statements

func (p *parser) parseStatement() Stmt {
	t := p.peek()
	if isOpTok(t, "(") {
		return p.parseInto(p.parseQuery())
	}
	if t.kind != tokIdent {
		p.fail("expected a statement")
	}
	switch strings.ToUpper(t.val) {
	case "CREATE":
		p.i++
		switch {
		case p.acceptKw("DATABASE"), p.acceptKw("SCHEMA"):
			return p.parseCreateDatabase()
		case p.acceptKw("TABLE"):
			return p.parseCreateTable()
		}
		p.fail("expected DATABASE or TABLE")
	case "DROP":
		p.i++
		switch {
		case p.acceptKw("DATABASE"), p.acceptKw("SCHEMA"):
			s := &DropDatabase{}
			s.IfExists = p.acceptKw("IF", "EXISTS")
			s.Name = p.dbName()
			s.Force = p.acceptKw("FORCE")
			return s
		case p.acceptKw("TABLE"):
			s := &DropTable{}
			s.IfExists = p.acceptKw("IF", "EXISTS")
			s.Table = p.tableName()
			s.Force = p.acceptKw("FORCE")
			return s
		}
		p.fail("expected DATABASE or TABLE")
	case "USE":
		p.i++
		return &Use{DB: p.dbName()}
	case "SHOW":
		p.i++
		return p.parseShow()
	case "DESC", "DESCRIBE":
		p.i++
		s := &Describe{Table: p.tableName()}
		s.All = p.acceptKw("ALL")
		return s
	case "TRUNCATE":
		p.i++
		p.acceptKw("TABLE")
		return &TruncateTable{Table: p.tableName()}
	case "INSERT":
		p.i++
		return p.parseInsert()
	case "SELECT":
		return p.parseInto(p.parseQuery())
	case "WITH":
		return p.parseInto(p.parseWithStatement())
	case "EXPLAIN":
		p.i++
		if !p.startsQuery() {
			p.fail("EXPLAIN takes a SELECT")
		}
		return &Explain{Stmt: p.parseQuery()}
	case "UPDATE":
		p.i++
		return p.parseUpdate()
	case "DELETE":
		p.i++
		return p.parseDelete()
	case "ALTER":
		p.i++
		p.expectKw("TABLE")
		return p.parseAlterTable()
	case "SET":
		p.i++
		return p.parseSet()
	case "ADMIN":
		p.i++
		return p.parseAdmin()
	}
	p.fail("expected a statement")
	return nil
}

func (p *parser) parseCreateDatabase() Stmt {
	s := &CreateDatabase{}
	s.IfNotExists = p.acceptKw("IF", "NOT", "EXISTS")
	s.Name = p.dbName()
	if p.acceptKw("PROPERTIES") {
		s.Properties = p.propertyList()
	}
	return s
}

func (p *parser) parseShow() Stmt {
	switch {
	case p.acceptKw("DATABASES"), p.acceptKw("SCHEMAS"):
		return &ShowDatabases{}
	case p.acceptKw("CREATE", "TABLE"):
		return &ShowCreateTable{Table: p.tableName()}
	case p.acceptKw("TABLE", "STATS"):
		return &ShowTableStats{Table: p.tableName()}
	case p.acceptKw("ROWSETS"):
		p.fromOrIn()
		return &ShowRowsets{Table: p.tableName()}
	case p.acceptKw("VARIABLES"), p.acceptKw("SESSION", "VARIABLES"), p.acceptKw("LOCAL", "VARIABLES"), p.acceptKw("GLOBAL", "VARIABLES"):
		s := &ShowVariables{}
		switch {
		case p.acceptKw("LIKE"):
			s.Like = p.stringLit("a LIKE pattern string")
		case p.acceptKw("WHERE"):
			s.Where = p.parseExpr()
		}
		return s
	case p.acceptKw("DATA"):
		s := &ShowData{}
		if p.acceptKw("FROM") || p.acceptKw("IN") {
			s.DB = p.dbName()
		}
		return s
	}
	full := p.acceptKw("FULL")
	switch {
	case p.acceptKw("PROCESSLIST"):
		return &ShowProcesslist{Full: full}
	case p.acceptKw("TABLES"):
		s := &ShowTables{Full: full}
		if p.acceptKw("FROM") || p.acceptKw("IN") {
			s.DB = p.dbName()
		}
		if p.acceptKw("LIKE") {
			s.Like = p.stringLit("a LIKE pattern string")
		}
		return s
	case p.acceptKw("COLUMNS"), p.acceptKw("FIELDS"):
		p.fromOrIn()
		s := &ShowColumns{Table: p.tableName(), Full: full}
		if p.acceptKw("FROM") || p.acceptKw("IN") {
			s.Table.DB = p.dbName()
		}
		return s
	}
	p.fail("expected DATABASES, TABLES, CREATE TABLE, COLUMNS, TABLE STATS, ROWSETS, VARIABLES, PROCESSLIST or DATA")
	return nil
}

func (p *parser) fromOrIn() {
	if !p.acceptKw("FROM") && !p.acceptKw("IN") {
		p.fail("expected FROM")
	}
}

// propertyList parses ( "k" = "v", ... ); an empty list is allowed.
func (p *parser) propertyList() Properties {
	p.expectOp("(")
	var ps Properties
	if p.acceptOp(")") {
		return ps
	}
	for {
		kt := p.peek()
		var key string
		switch kt.kind {
		case tokString, tokQuotedIdent:
			key = kt.val
		case tokIdent:
			key = kt.val
		default:
			p.fail("expected a property name")
		}
		p.i++
		if _, dup := ps.Get(key); dup {
			p.failAt(kt, fmt.Sprintf("duplicate property %q", key))
		}
		p.expectOp("=")
		ps = append(ps, Property{Key: key, Value: p.propertyValue()})
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	return ps
}

// propertyValue parses a string, a signed number or a bare word.
func (p *parser) propertyValue() string {
	neg := p.acceptOp("-")
	t := p.peek()
	switch t.kind {
	case tokString, tokQuotedIdent, tokIdent:
		if !neg {
			p.i++
			return t.val
		}
	case tokInt, tokNumber:
		p.i++
		if neg {
			return "-" + t.val
		}
		return t.val
	}
	p.fail("expected a property value")
	return ""
}

func (p *parser) parseCreateTable() Stmt {
	ifNotExists := p.acceptKw("IF", "NOT", "EXISTS")
	table := p.tableName()
	if p.acceptKw("LIKE") {
		s := &CreateTableLike{Table: table, IfNotExists: ifNotExists, Like: p.tableName()}
		if p.acceptKw("WITH", "ROLLUP") {
			if p.isOp("(") {
				p.skipBalanced()
			}
		}
		return s
	}
	s := &CreateTable{Table: table, IfNotExists: ifNotExists}
	if !p.isOp("(") {
		if p.isKw("AS") {
			p.fail("CREATE TABLE ... AS SELECT is not supported")
		}
		p.fail("expected '(' and column definitions, or LIKE")
	}
	p.i++
	for {
		if p.isIndexDef() {
			s.Ignored = append(s.Ignored, p.skipIndexDef())
		} else {
			s.Columns = append(s.Columns, p.parseColumnDef())
		}
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	seen := map[string]bool{}
	once := func(clause string) {
		if seen[clause] {
			p.failf("duplicate %s clause", clause)
		}
		seen[clause] = true
	}
	for !p.atEnd() {
		t := p.peek()
		switch {
		case p.acceptKw("ENGINE"):
			once("ENGINE")
			p.acceptOp("=")
			s.Engine = strings.ToUpper(p.name("engine name"))
		case p.isKwSeq("DUPLICATE", "KEY"), p.isKwSeq("UNIQUE", "KEY"), p.isKwSeq("AGGREGATE", "KEY"):
			once("KEY")
			switch strings.ToUpper(t.val) {
			case "DUPLICATE":
				s.Keys = DupKeys
			case "UNIQUE":
				s.Keys = UniqueKeys
			default:
				s.Keys = AggKeys
			}
			p.i += 2
			s.KeyColumns = p.nameList("key column name")
		case p.acceptKw("COMMENT"):
			once("COMMENT")
			p.acceptOp("=")
			s.Comment = p.stringLit("a comment string")
		case p.isKwSeq("PARTITION", "BY"):
			once("PARTITION BY")
			s.Ignored = append(s.Ignored, p.skipClause(2))
		case p.isKwSeq("AUTO", "PARTITION", "BY"):
			once("PARTITION BY")
			s.Ignored = append(s.Ignored, p.skipClause(3))
		case p.isKw("ROLLUP"):
			once("ROLLUP")
			s.Ignored = append(s.Ignored, p.skipClause(1))
		case p.acceptKw("DISTRIBUTED", "BY"):
			once("DISTRIBUTED BY")
			s.Distribution = p.parseDistribution()
		case p.acceptKw("PROPERTIES"):
			once("PROPERTIES")
			s.Properties = p.propertyList()
		default:
			p.fail("expected a table clause (ENGINE, KEY, COMMENT, PARTITION BY, DISTRIBUTED BY, PROPERTIES) or end of statement")
		}
	}
	return s
}

// skipBalanced consumes a parenthesised group, nested groups included. A
// '[' opens a group that ')' may close, for Doris's half-open partition
// ranges: VALUES [("2026-01-01"), ("2027-01-01")).
func (p *parser) skipBalanced() {
	open := p.peek()
	p.expectOp("(")
	depth := 1
	for depth > 0 {
		t := p.next()
		switch {
		case t.kind == tokEOF:
			p.failAt(open, "unbalanced parentheses")
		case t.kind == tokOp && (t.val == "(" || t.val == "["):
			depth++
		case t.kind == tokOp && (t.val == ")" || t.val == "]"):
			depth--
		}
	}
}

// skipClause consumes an ignored table clause (PARTITION BY ..., ROLLUP
// (...)) up to the next clause keyword at parenthesis depth 0, and returns
// its source text. The clause starts with n keywords.
func (p *parser) skipClause(n int) string {
	start := p.peek().pos
	p.i += n
	for !p.atEnd() {
		if p.isOp("(") {
			p.skipBalanced()
			continue
		}
		if p.isOp(")") {
			p.fail("unbalanced parentheses")
		}
		if p.isKwSeq("DISTRIBUTED", "BY") || p.isKw("PROPERTIES") || p.isKw("ROLLUP") || p.isKwSeq("PARTITION", "BY") {
			break
		}
		p.i++
	}
	return p.src[start:p.prevEnd()]
}

// isIndexDef reports whether an INDEX definition starts here, rather than
// a column named index.
func (p *parser) isIndexDef() bool {
	if !p.isKw("INDEX") {
		return false
	}
	next := p.peekAt(1)
	if next.kind != tokIdent && next.kind != tokQuotedIdent {
		return false
	}
	_, isType := schema.ParseKind(next.val)
	return !isType || next.kind == tokQuotedIdent
}

// skipIndexDef consumes INDEX name (cols) [USING type] [PROPERTIES(...)]
// [COMMENT 'x'] inside a column list and returns its source text.
func (p *parser) skipIndexDef() string {
	start := p.peek().pos
	p.i++
	for !p.isOp(",") && !p.isOp(")") && !p.atEnd() {
		if p.isOp("(") {
			p.skipBalanced()
			continue
		}
		p.i++
	}
	return p.src[start:p.prevEnd()]
}

func (p *parser) parseDistribution() *Distribution {
	d := &Distribution{}
	switch {
	case p.acceptKw("HASH"):
		d.Columns = p.nameList("distribution column name")
	case p.acceptKw("RANDOM"):
		d.Random = true
	default:
		p.fail("expected HASH or RANDOM")
	}
	if p.acceptKw("BUCKETS") {
		if p.acceptKw("AUTO") {
			d.AutoBuckets = true
		} else {
			d.Buckets = p.smallInt("a bucket count or AUTO")
			if d.Buckets == 0 {
				p.failAt(p.toks[p.i-1], "bucket count must be positive")
			}
		}
	}
	return d
}

// aggNames lists the aggregations accepted after a column type.
var aggNames = map[string]bool{"SUM": true, "MIN": true, "MAX": true, "REPLACE": true, "REPLACE_IF_NOT_NULL": true}

func (p *parser) parseColumnDef() *ColumnDef {
	c := &ColumnDef{Name: p.name("column name")}
	c.Type = p.parseType()
	seen := map[string]bool{}
	once := func(t token, attr string) {
		if seen[attr] {
			p.failAt(t, fmt.Sprintf("duplicate %s in the definition of column %s", attr, c.Name))
		}
		seen[attr] = true
	}
	for {
		t := p.peek()
		if t.kind != tokIdent {
			return c
		}
		w := strings.ToUpper(t.val)
		switch {
		case w == "KEY":
			once(t, "KEY")
			p.i++
			c.Key = true
		case aggNames[w]:
			once(t, "aggregation")
			p.i++
			c.Agg = w
		case w == "NULL":
			once(t, "NULL/NOT NULL")
			p.i++
			c.Null = Nullable
		case w == "NOT":
			once(t, "NULL/NOT NULL")
			p.i++
			p.expectKw("NULL")
			c.Null = NotNullable
		case w == "AUTO_INCREMENT":
			once(t, "AUTO_INCREMENT")
			p.i++
			c.AutoIncrement, c.AutoIncrementStart = true, 1
			if p.acceptOp("(") {
				c.AutoIncrementStart = int64(p.smallInt("an AUTO_INCREMENT start value"))
				p.expectOp(")")
			}
		case w == "DEFAULT":
			once(t, "DEFAULT")
			p.i++
			p.parseColumnDefault(c)
		case w == "ON":
			once(t, "ON UPDATE")
			p.i++
			p.expectKw("UPDATE")
			if !p.acceptKw("CURRENT_TIMESTAMP") {
				p.fail("expected CURRENT_TIMESTAMP")
			}
			if p.acceptOp("(") {
				p.smallInt("a precision")
				p.expectOp(")")
			}
			c.OnUpdateCurrentTimestamp = true
		case w == "COMMENT":
			once(t, "COMMENT")
			p.i++
			c.Comment = p.stringLit("a comment string")
		case w == "GENERATED" || w == "AS":
			once(t, "AS (expression)")
			if len(seen) > 1 {
				p.fail("GENERATED ALWAYS AS must follow the column type")
			}
			if p.acceptKw("GENERATED") {
				p.expectKw("ALWAYS")
			}
			p.expectKw("AS")
			p.expectOp("(")
			c.Generated = true
			c.GeneratedExpr = p.parseExpr()
			p.expectOp(")")
		default:
			return c
		}
	}
}

// parseColumnDefault parses what follows DEFAULT in a column definition.
func (p *parser) parseColumnDefault(c *ColumnDef) {
	t := p.peek()
	switch {
	case p.acceptKw("NULL"):
		c.DefaultKind = schema.DefaultNull
		return
	case p.acceptKw("CURRENT_TIMESTAMP"), p.acceptKw("NOW"), p.acceptKw("LOCALTIMESTAMP"), p.acceptKw("LOCALTIME"):
		c.DefaultKind = schema.DefaultCurrentTimestamp
		if p.acceptOp("(") {
			if !p.isOp(")") {
				c.DefaultPrecision = p.smallInt("a precision")
			}
			p.expectOp(")")
		} else if strings.EqualFold(t.val, "NOW") {
			p.fail("expected '('")
		}
		return
	case p.acceptKw("TRUE"):
		c.DefaultKind, c.Default = schema.DefaultLiteral, "true"
		return
	case p.acceptKw("FALSE"):
		c.DefaultKind, c.Default = schema.DefaultLiteral, "false"
		return
	}
	sign := ""
	if p.acceptOp("-") {
		sign = "-"
	} else {
		p.acceptOp("+")
	}
	t = p.peek()
	switch t.kind {
	case tokString:
		if sign != "" {
			break
		}
		p.i++
		c.DefaultKind, c.Default = schema.DefaultLiteral, t.val
		return
	case tokInt, tokNumber:
		p.i++
		c.DefaultKind, c.Default = schema.DefaultLiteral, sign+t.val
		return
	}
	p.fail("expected a DEFAULT value: a literal, NULL or CURRENT_TIMESTAMP")
}

// parseType parses a column type: a name known to schema.ParseKind with its
// parameters. DATETIME(p) and TIMESTAMPTZ(p) default to p = 0, DECIMAL to
// DECIMAL(9,0), CHAR to CHAR(1), VARCHAR and STRING are unbounded; integer
// display widths (INT(11)) are accepted and ignored. Lengths follow Doris:
// VARCHAR(1..65533), CHAR(1..255).
func (p *parser) parseType() schema.Type {
	t := p.peek()
	if t.kind != tokIdent && t.kind != tokQuotedIdent {
		p.fail("expected a column type")
	}
	kind, ok := schema.ParseKind(t.val)
	if !ok {
		panic(bailout{p.unknownType(t)})
	}
	p.i++
	typ := schema.Type{Kind: kind}
	switch kind {
	case schema.Datetime, schema.TimestampTZ:
		if p.acceptOp("(") {
			typ.Precision = p.smallInt("a precision")
			p.expectOp(")")
		}
	case schema.Decimal:
		typ.Precision = 9
		if p.acceptOp("(") {
			typ.Precision = p.smallInt("a precision")
			if p.acceptOp(",") {
				typ.Scale = p.smallInt("a scale")
			}
			p.expectOp(")")
		}
	case schema.Varchar, schema.Char:
		if kind == schema.Char {
			typ.Length = 1
		}
		if p.acceptOp("(") {
			typ.Length = p.smallInt("a length")
			p.expectOp(")")
			if typ.Length == 0 {
				// Length 0 stands for "unbounded" inside; written, it is
				// out of range as in Doris.
				typ.Length = -1
			}
		}
	case schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt:
		if p.acceptOp("(") {
			p.smallInt("a display width")
			p.expectOp(")")
		}
	default:
		if p.isOp("(") {
			p.failf("type %s takes no parameters", kind)
		}
	}
	if err := typ.Validate(); err != nil {
		p.failAt(t, err.Error())
	}
	return typ
}

func (p *parser) unknownType(t token) *ParseError {
	e := newParseError(p.src, t.pos, t.end, "unknown column type "+strings.ToUpper(t.val))
	e.sentinel = rowttl.ErrInvalidSchema
	return e
}

func (p *parser) parseInsert() Stmt {
	p.expectKw("INTO")
	s := &Insert{Table: p.tableName()}
	if p.isKw("PARTITION") {
		p.fail("INSERT INTO ... PARTITION is not supported")
	}
	if p.acceptKw("WITH", "LABEL") {
		if p.at(tokString) {
			s.Label = p.stringLit("a label")
		} else {
			s.Label = p.name("a label")
		}
	}
	if p.isOp("(") && !p.startsQuery() {
		s.Columns = p.nameList("column name")
	}
	switch {
	case p.acceptKw("VALUES"), p.acceptKw("VALUE"):
		if p.stream {
			p.streamRows = true
			return s
		}
		for {
			s.Rows = append(s.Rows, p.valuesRow())
			if !p.acceptOp(",") {
				break
			}
		}
	case p.startsQuery():
		switch q := p.parseQuery().(type) {
		case *Select:
			s.Select = q
		case *SetOp:
			s.SetOp = q
		}
	default:
		p.fail("expected VALUES or SELECT")
	}
	return s
}

// valuesRow parses one parenthesised row of VALUES.
func (p *parser) valuesRow() []Expr {
	p.expectOp("(")
	row := []Expr{}
	if !p.isOp(")") {
		for {
			row = append(row, p.parseValue())
			if !p.acceptOp(",") {
				break
			}
		}
	}
	p.expectOp(")")
	return row
}

// parseValue parses a VALUES item or a SET value: DEFAULT or an expression.
func (p *parser) parseValue() Expr {
	if p.isKw("DEFAULT") && !isOpTok(p.peekAt(1), "(") {
		p.i++
		return &DefaultExpr{}
	}
	return p.parseExpr()
}

func isOpTok(t token, op string) bool { return t.kind == tokOp && t.val == op }

func (p *parser) limitNumber() int64 {
	t := p.peek()
	if t.kind != tokInt {
		p.fail("expected a non-negative integer")
	}
	n, err := strconv.ParseInt(t.val, 10, 64)
	if err != nil {
		p.fail("number out of range")
	}
	p.i++
	return n
}

func (p *parser) exprList() []Expr {
	var list []Expr
	for {
		list = append(list, p.parseExpr())
		if !p.acceptOp(",") {
			return list
		}
	}
}

func (p *parser) parseUpdate() Stmt {
	s := &Update{Table: p.tableName()}
	s.Alias = p.optAlias()
	p.expectKw("SET")
	for {
		col := p.columnRef()
		p.expectOp("=")
		s.Set = append(s.Set, &Assignment{Column: col, Value: p.parseValue()})
		if !p.acceptOp(",") {
			break
		}
	}
	if p.acceptKw("WHERE") {
		s.Where = p.parseExpr()
	}
	return s
}

func (p *parser) parseDelete() Stmt {
	p.expectKw("FROM")
	s := &Delete{Table: p.tableName()}
	s.Alias = p.optAlias()
	if p.acceptKw("WHERE") {
		s.Where = p.parseExpr()
	}
	return s
}

func (p *parser) parseAlterTable() Stmt {
	s := &AlterTable{Table: p.tableName()}
	for {
		s.Ops = append(s.Ops, p.parseAlterOp())
		if !p.acceptOp(",") {
			return s
		}
	}
}

func (p *parser) parseAlterOp() AlterOp {
	switch {
	case p.acceptKw("SET"):
		return &AlterSetProperties{Properties: p.propertyList()}
	case p.acceptKw("ADD", "COLUMN"):
		op := &AlterAddColumns{}
		if p.acceptOp("(") {
			for {
				op.Columns = append(op.Columns, p.parseColumnDef())
				if !p.acceptOp(",") {
					break
				}
			}
			p.expectOp(")")
			return op
		}
		op.Columns = []*ColumnDef{p.parseColumnDef()}
		op.After, op.First = p.columnPosition()
		return op
	case p.acceptKw("DROP", "COLUMN"):
		return &AlterDropColumn{Name: p.name("column name")}
	case p.acceptKw("RENAME", "COLUMN"):
		op := &AlterRenameColumn{Old: p.name("column name")}
		p.acceptTo()
		op.New = p.name("new column name")
		return op
	case p.acceptKw("MODIFY", "COLUMN"):
		op := &AlterModifyColumn{Column: p.parseColumnDef()}
		op.After, op.First = p.columnPosition()
		return op
	case p.acceptKw("RENAME"):
		p.acceptTo()
		return &AlterRenameTable{NewName: p.name("new table name")}
	case p.acceptKw("ENABLE", "FEATURE"):
		op := &AlterEnableFeature{Feature: p.stringLit("a feature name string")}
		if p.acceptKw("WITH", "PROPERTIES") {
			op.Properties = p.propertyList()
		}
		return op
	}
	p.fail("expected SET, ADD COLUMN, DROP COLUMN, RENAME COLUMN, MODIFY COLUMN, RENAME or ENABLE FEATURE")
	return nil
}

// acceptTo consumes an optional TO before a new name (a name "to" stays a
// name).
func (p *parser) acceptTo() {
	if p.isKw("TO") {
		if n := p.peekAt(1); n.kind == tokIdent || n.kind == tokQuotedIdent {
			p.i++
		}
	}
}

// columnPosition parses [AFTER c | FIRST].
func (p *parser) columnPosition() (after string, first bool) {
	if p.acceptKw("AFTER") {
		return p.name("column name"), false
	}
	return "", p.acceptKw("FIRST")
}

func (p *parser) parseSet() Stmt {
	s := &Set{}
	for {
		v := &SetVar{}
		switch {
		case p.acceptKw("SESSION"), p.acceptKw("LOCAL"):
			v.Scope = "SESSION"
		case p.acceptKw("GLOBAL"):
			v.Scope = "GLOBAL"
		}
		if v.Scope == "" && p.acceptOp("@") {
			p.expectOp("@")
			if isOpTok(p.peekAt(1), ".") {
				switch {
				case p.acceptKw("SESSION"), p.acceptKw("LOCAL"):
					v.Scope = "SESSION"
				case p.acceptKw("GLOBAL"):
					v.Scope = "GLOBAL"
				default:
					p.fail("expected SESSION or GLOBAL")
				}
				p.i++
			}
		}
		t := p.peek()
		if t.kind != tokIdent && t.kind != tokQuotedIdent {
			p.fail("expected a variable name")
		}
		p.i++
		v.Name = strings.ToLower(t.val)
		if !p.acceptOp("=") && !p.acceptOp(":=") {
			p.fail("expected '='")
		}
		v.Value = p.parseSetValue()
		s.Vars = append(s.Vars, v)
		if !p.acceptOp(",") {
			return s
		}
	}
}

// sysVar parses @@[SESSION.|LOCAL.|GLOBAL.]name. There are no global
// values apart from the session's: @@global.x reads the session's too.
func (p *parser) sysVar() Expr {
	p.i += 2
	if isOpTok(p.peekAt(1), ".") && (p.isKw("SESSION") || p.isKw("LOCAL") || p.isKw("GLOBAL")) {
		p.i += 2
	}
	t := p.peek()
	if t.kind != tokIdent && t.kind != tokQuotedIdent {
		p.fail("expected a variable name")
	}
	p.i++
	return &SysVar{Name: strings.ToLower(t.val)}
}

// parseSetValue parses a SET value: DEFAULT, a bare word (kept as a string)
// or an expression.
func (p *parser) parseSetValue() Expr {
	t := p.peek()
	after := p.peekAt(1)
	bare := after.kind == tokEOF || isOpTok(after, ",") || isOpTok(after, ";")
	if t.kind == tokIdent && bare {
		switch strings.ToUpper(t.val) {
		case "DEFAULT":
			p.i++
			return &DefaultExpr{}
		case "TRUE", "FALSE", "NULL":
			return p.parseExpr()
		}
		p.i++
		return &StringLit{Val: t.val}
	}
	if t.kind == tokQuotedIdent && bare {
		p.i++
		return &StringLit{Val: t.val}
	}
	return p.parseExpr()
}

func (p *parser) parseAdmin() Stmt {
	p.expectKw("COMPACT", "TABLE")
	s := &AdminCompact{Table: p.tableName()}
	p.expectKw("WHERE")
	if !p.acceptKw("TYPE") {
		p.fail("expected type = 'cumulative', 'base' or 'full'")
	}
	p.expectOp("=")
	s.Type = strings.ToLower(p.stringLit("'cumulative', 'base' or 'full'"))
	return s
}

// ---------------------------------------------------------------------------
// Expressions, lowest precedence first:
//
//	OR ||  <  AND &&  <  NOT  <  comparisons, IS, IN, BETWEEN, LIKE, REGEXP
//	<  |  <  &  <  << >>  <  + - (and ± INTERVAL)  <  * / % DIV  <  ^
//	<  unary - ! ~  <  primary

func (p *parser) parseExpr() Expr {
	p.enter()
	defer p.leave()
	start := p.peek()
	p.exprLevel++
	l := p.parseAnd()
	for p.acceptKw("OR") || p.acceptOp("||") {
		l = &BinaryExpr{Op: OpOr, L: l, R: p.parseAnd()}
	}
	p.exprLevel--
	if p.exprLevel == 0 {
		// The outermost expression of its query (or statement): checked
		// once, as a whole.
		if err := checkExprSize(l); err != nil {
			p.failAt(start, err.Error())
		}
	}
	return l
}

func (p *parser) parseAnd() Expr {
	l := p.parseNot()
	for p.acceptKw("AND") || p.acceptOp("&&") {
		l = &BinaryExpr{Op: OpAnd, L: l, R: p.parseNot()}
	}
	return l
}

func (p *parser) parseNot() Expr {
	p.enter()
	defer p.leave()
	if p.pending == nil && p.acceptKw("NOT") {
		return &UnaryExpr{Op: OpNot, X: p.parseNot()}
	}
	return p.parseComparison()
}

var comparisonOps = map[string]BinaryOp{
	"=": OpEq, "<>": OpNe, "!=": OpNe, "<": OpLt, "<=": OpLe, ">": OpGt, ">=": OpGe, "<=>": OpNullSafeEq,
}

func (p *parser) parseComparison() Expr {
	l := p.parseBitOr()
	for {
		t := p.peek()
		if t.kind == tokOp {
			op, ok := comparisonOps[t.val]
			if !ok {
				return l
			}
			p.i++
			if q, all := p.quantified(op); q != nil {
				l = &QuantifiedCmp{X: l, Op: op, All: all, Query: q}
				continue
			}
			l = &BinaryExpr{Op: op, L: l, R: p.parseBitOr()}
			continue
		}
		if p.acceptKw("IS") {
			e := &IsExpr{X: l, Not: p.acceptKw("NOT")}
			switch {
			case p.acceptKw("NULL"), p.acceptKw("UNKNOWN"):
				e.Test = IsNull
			case p.acceptKw("TRUE"):
				e.Test = IsTrue
			case p.acceptKw("FALSE"):
				e.Test = IsFalse
			default:
				p.fail("expected NULL, TRUE or FALSE")
			}
			l = e
			continue
		}
		not := false
		if p.isKw("NOT") {
			switch n := p.peekAt(1); {
			case isKwTok(n, "IN"), isKwTok(n, "BETWEEN"), isKwTok(n, "LIKE"), isKwTok(n, "REGEXP"), isKwTok(n, "RLIKE"):
				p.i++
				not = true
			}
		}
		switch {
		case p.acceptKw("IN"):
			p.expectOp("(")
			if q, list := p.parenBody(true); q != nil {
				l = &InSubquery{X: l, Not: not, Query: q}
			} else {
				l = &InExpr{X: l, Not: not, List: list}
			}
			p.expectOp(")")
		case p.acceptKw("REGEXP"), p.acceptKw("RLIKE"):
			l = &RegexpExpr{X: l, Not: not, Pattern: p.parseBitOr()}
		case p.acceptKw("BETWEEN"):
			e := &BetweenExpr{X: l, Not: not, Lo: p.parseBitOr()}
			p.expectKw("AND")
			e.Hi = p.parseBitOr()
			l = e
		case p.acceptKw("LIKE"):
			e := &LikeExpr{X: l, Not: not, Pattern: p.parseBitOr()}
			if p.acceptKw("ESCAPE") {
				e.Escape = p.parseBitOr()
			}
			l = e
		default:
			return l
		}
	}
}

// The bit operators bind as MySQL has them: | below &, below << and >>,
// below + and -; ^ above * and /.
func (p *parser) parseBitOr() Expr {
	l := p.parseBitAnd()
	for p.acceptOp("|") {
		l = &BinaryExpr{Op: OpBitOr, L: l, R: p.parseBitAnd()}
	}
	return l
}

func (p *parser) parseBitAnd() Expr {
	l := p.parseShift()
	for p.acceptOp("&") {
		l = &BinaryExpr{Op: OpBitAnd, L: l, R: p.parseShift()}
	}
	return l
}

func (p *parser) parseShift() Expr {
	l := p.parseAdditive()
	for {
		switch {
		case p.acceptOp("<<"):
			l = &BinaryExpr{Op: OpShl, L: l, R: p.parseAdditive()}
		case p.acceptOp(">>"):
			l = &BinaryExpr{Op: OpShr, L: l, R: p.parseAdditive()}
		default:
			return l
		}
	}
}

// quantified parses ANY|SOME|ALL (query) after the comparison op, or
// returns nil having consumed nothing when no quantifier follows.
func (p *parser) quantified(op BinaryOp) (QueryExpr, bool) {
	t := p.peek()
	if !(isKwTok(t, "ANY") || isKwTok(t, "SOME") || isKwTok(t, "ALL")) || !isOpTok(p.peekAt(1), "(") {
		return nil, false
	}
	if op == OpNullSafeEq {
		p.fail("<=> does not take ANY, SOME or ALL")
	}
	p.i += 2
	q, _ := p.parenBody(false)
	if q == nil {
		p.failAt(t, fmt.Sprintf("%s needs a subquery: %s (SELECT ...)", strings.ToUpper(t.val), strings.ToUpper(t.val)))
	}
	p.expectOp(")")
	return q, isKwTok(t, "ALL")
}

func (p *parser) parseAdditive() Expr {
	l := p.parseMul()
	for {
		var op BinaryOp
		switch {
		case p.acceptOp("+"):
			op = OpAdd
		case p.acceptOp("-"):
			op = OpSub
		default:
			return l
		}
		if p.isKw("INTERVAL") {
			p.i++
			n, unit := p.parseInterval()
			l = &DateArith{X: l, Sub: op == OpSub, N: n, Unit: unit}
			continue
		}
		l = &BinaryExpr{Op: op, L: l, R: p.parseMul()}
	}
}

func (p *parser) parseMul() Expr {
	l := p.parseBitXor()
	for {
		var op BinaryOp
		switch {
		case p.acceptOp("*"):
			op = OpMul
		case p.acceptOp("/"):
			op = OpDiv
		case p.acceptOp("%"):
			op = OpMod
		case p.acceptKw("DIV"):
			op = OpIntDiv
		default:
			return l
		}
		l = &BinaryExpr{Op: op, L: l, R: p.parseBitXor()}
	}
}

func (p *parser) parseBitXor() Expr {
	l := p.parseUnary()
	for p.acceptOp("^") {
		l = &BinaryExpr{Op: OpBitXor, L: l, R: p.parseUnary()}
	}
	return l
}

func (p *parser) parseUnary() Expr {
	p.enter()
	defer p.leave()
	if p.pending != nil {
		return p.parsePrimary()
	}
	switch {
	case p.acceptOp("-"):
		return negate(p.parseUnary())
	case p.acceptOp("+"):
		return p.parseUnary()
	case p.acceptOp("!"):
		return &UnaryExpr{Op: OpNot, X: p.parseUnary()}
	case p.acceptOp("~"):
		return &UnaryExpr{Op: OpBitNot, X: p.parseUnary()}
	}
	return p.parsePrimary()
}

// negate folds a minus sign into a numeric literal, or wraps x.
func negate(x Expr) Expr {
	switch x := x.(type) {
	case *IntLit:
		if x.Val != math.MinInt64 {
			return &IntLit{Val: -x.Val}
		}
		return &DecimalLit{Text: "9223372036854775808", Val: -float64(x.Val)}
	case *DecimalLit:
		text := negateText(x.Text)
		if v, err := strconv.ParseInt(text, 10, 64); err == nil {
			return &IntLit{Val: v}
		}
		return &DecimalLit{Text: text, Val: -x.Val}
	case *FloatLit:
		return &FloatLit{Text: negateText(x.Text), Val: -x.Val}
	}
	return &UnaryExpr{Op: OpNeg, X: x}
}

func negateText(s string) string {
	if t, ok := strings.CutPrefix(s, "-"); ok {
		return t
	}
	return "-" + s
}

// niladic lists the functions that may be called without parentheses.
var niladic = map[string]bool{
	"CURRENT_TIMESTAMP": true, "CURRENT_DATE": true, "CURRENT_TIME": true,
	"LOCALTIME": true, "LOCALTIMESTAMP": true,
}

// reservedFuncs lists reserved words that are still function names.
var reservedFuncs = map[string]bool{"LEFT": true, "RIGHT": true}

// typedLiterals maps the words of DATE 'x' style literals to their kind.
var typedLiterals = map[string]schema.Kind{
	"DATE": schema.Date, "DATEV2": schema.Date,
	"DATETIME": schema.Datetime, "DATETIMEV2": schema.Datetime, "TIMESTAMP": schema.Datetime,
}

func (p *parser) parsePrimary() Expr {
	if e := p.pending; e != nil {
		p.pending = nil
		return e
	}
	t := p.peek()
	switch t.kind {
	case tokInt:
		p.i++
		if v, err := strconv.ParseInt(t.val, 10, 64); err == nil {
			return &IntLit{Val: v}
		}
		v, _ := strconv.ParseFloat(t.val, 64)
		if math.IsInf(v, 0) {
			p.failAt(t, "number out of range")
		}
		return &DecimalLit{Text: t.val, Val: v}
	case tokNumber:
		p.i++
		v, err := strconv.ParseFloat(t.val, 64)
		if err != nil && math.IsInf(v, 0) {
			p.failAt(t, "number out of range")
		}
		if strings.ContainsAny(t.val, "eE") {
			return &FloatLit{Text: t.val, Val: v}
		}
		return &DecimalLit{Text: t.val, Val: v}
	case tokString:
		p.i++
		return &StringLit{Val: t.val}
	case tokQuotedIdent:
		return p.columnRef()
	case tokOp:
		if t.val == "@" && isOpTok(p.peekAt(1), "@") {
			return p.sysVar()
		}
		if t.val == "(" {
			p.enter()
			defer p.leave()
			p.i++
			q, es := p.parenBody(true)
			p.expectOp(")")
			if q != nil {
				return &SubqueryExpr{Query: q}
			}
			if len(es) > 1 {
				return &RowExpr{Items: es}
			}
			return es[0]
		}
		p.fail("expected expression")
	case tokIdent:
		return p.parseWord(t)
	}
	p.fail("expected expression")
	return nil
}

// parseWord parses a primary expression that starts with a word.
func (p *parser) parseWord(t token) Expr {
	w := strings.ToUpper(t.val)
	next := p.peekAt(1)
	switch w {
	case "NULL":
		p.i++
		return &NullLit{}
	case "TRUE", "FALSE":
		p.i++
		return &BoolLit{Val: w == "TRUE"}
	case "CASE":
		p.i++
		return p.parseCase()
	case "NOT":
		p.i++
		return &UnaryExpr{Op: OpNot, X: p.parseNot()}
	case "INTERVAL":
		p.i++
		n, unit := p.parseInterval()
		if !p.acceptOp("+") {
			p.fail("expected '+' after INTERVAL ... (write expr + INTERVAL n unit)")
		}
		return &DateArith{X: p.parseMul(), N: n, Unit: unit}
	case "DEFAULT":
		p.fail("DEFAULT is only allowed as a value of INSERT VALUES or UPDATE SET")
	case "EXISTS":
		p.i++
		p.expectOp("(")
		e := &ExistsExpr{Query: p.parseQuery()}
		p.expectOp(")")
		return e
	case "EXTRACT":
		if isOpTok(next, "(") {
			p.i += 2
			e := &ExtractExpr{Unit: p.unitWord()}
			p.expectKw("FROM")
			e.X = p.parseExpr()
			p.expectOp(")")
			return e
		}
	case "TIMESTAMPDIFF", "TIMESTAMPADD":
		if isOpTok(next, "(") {
			p.i += 2
			unit := p.unitWord()
			p.expectOp(",")
			a := p.parseExpr()
			p.expectOp(",")
			b := p.parseExpr()
			p.expectOp(")")
			if w == "TIMESTAMPADD" {
				return &DateArith{X: b, N: a, Unit: unit}
			}
			return &TimestampDiff{Unit: unit, From: a, To: b}
		}
	case "CAST":
		if isOpTok(next, "(") {
			p.i += 2
			x := p.parseExpr()
			p.expectKw("AS")
			typ := p.parseCastType()
			p.expectOp(")")
			return &CastExpr{X: x, Type: typ}
		}
	}
	if kind, ok := typedLiterals[w]; ok && next.kind == tokString {
		p.i += 2
		typ := schema.Type{Kind: kind}
		if kind == schema.Datetime {
			typ.Precision = fractionDigits(next.val)
		}
		return &CastExpr{X: &StringLit{Val: next.val}, Type: typ}
	}
	if niladic[w] && !isOpTok(next, "(") {
		p.i++
		return &FuncCall{Name: strings.ToLower(w)}
	}
	if isOpTok(next, "(") && (!reserved[w] || niladic[w] || reservedFuncs[w]) {
		return p.parseCall()
	}
	if reserved[w] {
		p.fail("expected expression")
	}
	return p.columnRef()
}

// fractionDigits counts the digits after the '.' of a datetime text, at
// most 6.
func fractionDigits(s string) int {
	i := strings.LastIndexByte(s, '.')
	if i < 0 || !strings.ContainsAny(s[:i], " T") {
		return 0
	}
	n := 0
	for _, c := range []byte(s[i+1:]) {
		if !isDigit(c) {
			break
		}
		n++
	}
	return min(n, 6)
}

// columnRef parses c, t.c or db.t.c. Words after a dot may be reserved.
func (p *parser) columnRef() *ColumnRef {
	parts := []string{p.name("column name")}
	for len(parts) < 3 && p.isOp(".") {
		p.i++
		t := p.peek()
		if t.kind != tokIdent && t.kind != tokQuotedIdent {
			p.fail("expected column name")
		}
		p.i++
		parts = append(parts, t.val)
	}
	switch len(parts) {
	case 1:
		return &ColumnRef{Name: parts[0]}
	case 2:
		return &ColumnRef{Table: parts[0], Name: parts[1]}
	}
	return &ColumnRef{DB: parts[0], Table: parts[1], Name: parts[2]}
}

// dateFuncs maps the date arithmetic functions to (subtract, unit); a zero
// unit means the unit comes from an INTERVAL argument or is DAY.
var dateFuncs = map[string]struct {
	sub  bool
	unit IntervalUnit
}{
	"date_add": {false, 0}, "adddate": {false, 0}, "date_sub": {true, 0}, "subdate": {true, 0},
	"years_add": {false, UnitYear}, "years_sub": {true, UnitYear},
	"months_add": {false, UnitMonth}, "months_sub": {true, UnitMonth},
	"weeks_add": {false, UnitWeek}, "weeks_sub": {true, UnitWeek},
	"days_add": {false, UnitDay}, "days_sub": {true, UnitDay},
	"hours_add": {false, UnitHour}, "hours_sub": {true, UnitHour},
	"minutes_add": {false, UnitMinute}, "minutes_sub": {true, UnitMinute},
	"seconds_add": {false, UnitSecond}, "seconds_sub": {true, UnitSecond},
	"microseconds_add": {false, UnitMicrosecond}, "microseconds_sub": {true, UnitMicrosecond},
}

// parseCall parses name(args).
func (p *parser) parseCall() Expr {
	nameTok := p.next()
	name := strings.ToLower(nameTok.val)
	p.expectOp("(")
	f := &FuncCall{Name: name}
	if df, ok := dateFuncs[name]; ok {
		x := p.parseExpr()
		if !p.acceptOp(",") {
			p.failf("%s expects 2 arguments", name)
		}
		d := &DateArith{X: x, Sub: df.sub, Unit: df.unit}
		if df.unit == 0 && p.acceptKw("INTERVAL") {
			d.N, d.Unit = p.parseInterval()
		} else {
			d.N = p.parseExpr()
			if d.Unit == 0 {
				d.Unit = UnitDay
			}
		}
		if !p.isOp(")") {
			p.failf("%s expects 2 arguments", name)
		}
		p.i++
		return d
	}
	switch name {
	case "trim":
		if !p.isOp(")") {
			return p.callTail(p.parseTrim(), nameTok)
		}
	case "position":
		// POSITION(x IN s) is locate(x, s); x stops below IN.
		x := p.parseBitOr()
		p.expectKw("IN")
		f = &FuncCall{Name: "locate", Args: []Expr{x, p.parseExpr()}}
		p.expectOp(")")
		return p.callTail(f, nameTok)
	}
	if p.acceptOp(")") {
		return p.callTail(f, nameTok)
	}
	if name == "count" && p.isOp("*") && isOpTok(p.peekAt(1), ")") {
		p.i += 2
		f.Star = true
		return p.callTail(f, nameTok)
	}
	if p.acceptKw("DISTINCT") {
		f.Distinct = true
	} else {
		p.acceptKw("ALL")
	}
	f.Args = p.exprList()
	if name == "group_concat" {
		if p.isKwSeq("ORDER", "BY") {
			p.fail("ORDER BY inside group_concat() is not supported")
		}
		// MySQL's group_concat(x SEPARATOR 's') is Doris's
		// group_concat(x, 's').
		if p.acceptKw("SEPARATOR") {
			sepTok := p.peek()
			sep, ok := p.parseExpr().(*StringLit)
			if !ok {
				p.failAt(sepTok, "the SEPARATOR of group_concat() must be a string literal")
			}
			f.Args = append(f.Args, sep)
		}
	}
	p.expectOp(")")
	return p.callTail(f, nameTok)
}

// parseTrim parses TRIM after its parenthesis. The SQL forms
// TRIM([BOTH|LEADING|TRAILING] [chars] FROM s) are trim, ltrim or rtrim(s
// [, chars]), each removing whole repeats of chars (spaces when omitted)
// from its ends, as MySQL and Doris do; the function form trim(s [, chars])
// is itself.
func (p *parser) parseTrim() *FuncCall {
	name, spec := "trim", true
	switch {
	case p.acceptKw("BOTH"):
	case p.acceptKw("LEADING"):
		name = "ltrim"
	case p.acceptKw("TRAILING"):
		name = "rtrim"
	default:
		spec = false
	}
	if spec && p.acceptKw("FROM") {
		f := &FuncCall{Name: name, Args: []Expr{p.parseExpr()}}
		p.expectOp(")")
		return f
	}
	x := p.parseExpr()
	f := &FuncCall{Name: name, Args: []Expr{x}}
	switch {
	case p.acceptKw("FROM"):
		f.Args = []Expr{p.parseExpr(), x}
	case spec:
		p.fail("expected FROM")
	default:
		for p.acceptOp(",") {
			f.Args = append(f.Args, p.parseExpr())
		}
	}
	p.expectOp(")")
	return f
}

// parseInterval parses N unit after the INTERVAL keyword.
func (p *parser) parseInterval() (Expr, IntervalUnit) {
	n := p.parseExpr()
	return n, p.unitWord()
}

// unitWord parses an interval unit, singular or plural.
func (p *parser) unitWord() IntervalUnit {
	t := p.peek()
	if t.kind != tokIdent {
		p.fail("expected an interval unit (MICROSECOND, SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER, YEAR)")
	}
	u, ok := parseUnit(t.val)
	if !ok {
		p.failf("unknown interval unit %s", strings.ToUpper(t.val))
	}
	p.i++
	return u
}

func (p *parser) parseCase() Expr {
	c := &CaseExpr{}
	if !p.isKw("WHEN") {
		c.Operand = p.parseExpr()
	}
	for p.acceptKw("WHEN") {
		w := &When{Cond: p.parseExpr()}
		p.expectKw("THEN")
		w.Result = p.parseExpr()
		c.Whens = append(c.Whens, w)
	}
	if len(c.Whens) == 0 {
		p.fail("expected WHEN")
	}
	if p.acceptKw("ELSE") {
		c.Else = p.parseExpr()
	}
	p.expectKw("END")
	return c
}

// parseCastType parses the target type of a CAST: a column type, or SIGNED
// / UNSIGNED [INT|INTEGER] (BIGINT) or CHAR without a length (STRING).
func (p *parser) parseCastType() schema.Type {
	switch {
	case p.acceptKw("SIGNED"), p.acceptKw("UNSIGNED"):
		if !p.acceptKw("INTEGER") {
			p.acceptKw("INT")
		}
		return schema.BigIntType
	case p.isKw("CHAR") && !isOpTok(p.peekAt(1), "("):
		p.i++
		return schema.StringType
	}
	return p.parseType()
}
