package parser

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rowttl/rowttl"
)

// tokenKind classifies a token.
type tokenKind uint8

const (
	tokEOF         tokenKind = iota
	tokIdent                 // an unquoted word: a keyword or an identifier
	tokQuotedIdent           // a `backquoted` identifier; val is unquoted
	tokString                // a '...' or "..." literal; val is decoded
	tokInt                   // digits only; val is the text
	tokNumber                // digits with a '.' or an exponent; val is the text
	tokOp                    // punctuation and operators; val is the operator
)

// token is one lexeme. pos and end are byte offsets into the source; the
// source text of the token is src[pos:end].
type token struct {
	kind     tokenKind
	val      string
	pos, end int
}

// ParseError is a syntax error. Its message names the position and the
// offending token, for example
//
//	syntax error at line 1, column 17 near 'FROM': expected expression
//
// It wraps rowttl.ErrInvalidArgument (rowttl.ErrInvalidSchema for an unknown
// column type), so callers can test it with errors.Is.
type ParseError struct {
	// Line and Column are 1-based; Column counts characters, not bytes.
	Line, Column int
	// Near is the offending token as written (shortened when long), empty at
	// the end of the input.
	Near string
	// Msg says what was wrong or expected.
	Msg string

	sentinel error
}

func (e *ParseError) Error() string {
	if e.Near == "" {
		return fmt.Sprintf("syntax error at line %d, column %d at end of input: %s", e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("syntax error at line %d, column %d near '%s': %s", e.Line, e.Column, e.Near, e.Msg)
}

// Unwrap returns the sentinel the error wraps.
func (e *ParseError) Unwrap() error {
	if e.sentinel != nil {
		return e.sentinel
	}
	return rowttl.ErrInvalidArgument
}

// maxNear bounds the token text quoted in an error message.
const maxNear = 40

// newParseError builds the error for the text src[pos:end] (end == pos at the
// end of the input).
func newParseError(src string, pos, end int, msg string) *ParseError {
	line, col := position(src, pos)
	near := src[pos:end]
	if utf8.RuneCountInString(near) > maxNear {
		r := []rune(near)
		near = string(r[:maxNear]) + "..."
	}
	return &ParseError{Line: line, Column: col, Near: near, Msg: msg}
}

// position converts a byte offset into a 1-based line and column.
func position(src string, pos int) (line, col int) {
	if pos > len(src) {
		pos = len(src)
	}
	before := src[:pos]
	line = 1 + strings.Count(before, "\n")
	if i := strings.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return line, utf8.RuneCountInString(before) + 1
}

// lexer turns source text into tokens. Comments (`-- ...`, `# ...`,
// `/* ... */`, hints `/*+ ... */` included) and white space separate tokens
// and are dropped.
type lexer struct {
	src  string
	pos  int
	toks []token
}

// lex returns the tokens of src, ending with a tokEOF token.
func lex(src string) ([]token, error) {
	l := &lexer{src: src}
	for {
		if err := l.skipSpace(); err != nil {
			return nil, err
		}
		if l.pos >= len(src) {
			l.toks = append(l.toks, token{kind: tokEOF, pos: len(src), end: len(src)})
			return l.toks, nil
		}
		if err := l.next(); err != nil {
			return nil, err
		}
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isIdentStart reports bytes that may begin an unquoted identifier. Bytes
// of multi-byte UTF-8 sequences are accepted, so non-ASCII names work.
func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c >= 0x80
}

func isIdentByte(c byte) bool { return isIdentStart(c) || isDigit(c) }

// skipSpace skips white space and comments.
func (l *lexer) skipSpace() error {
	src := l.src
	for l.pos < len(src) {
		c := src[l.pos]
		switch {
		case isSpace(c):
			l.pos++
		case c == '#' || c == '-' && strings.HasPrefix(src[l.pos:], "--"):
			if i := strings.IndexByte(src[l.pos:], '\n'); i >= 0 {
				l.pos += i + 1
			} else {
				l.pos = len(src)
			}
		case c == '/' && strings.HasPrefix(src[l.pos:], "/*"):
			i := strings.Index(src[l.pos+2:], "*/")
			if i < 0 {
				return newParseError(src, l.pos, min(l.pos+2, len(src)), "unterminated comment")
			}
			l.pos += 2 + i + 2
		default:
			return nil
		}
	}
	return nil
}

// operators lists the multi-character operators, longest first.
var operators = []string{"<=>", "<=", ">=", "<>", "<<", ">>", "!=", "&&", "||", ":="}

func (l *lexer) emit(kind tokenKind, val string, start int) {
	l.toks = append(l.toks, token{kind: kind, val: val, pos: start, end: l.pos})
}

// next scans one token at l.pos.
func (l *lexer) next() error {
	src := l.src
	start := l.pos
	c := src[start]
	switch {
	case c == '\'' || c == '"':
		return l.scanString(c)
	case c == '`':
		return l.scanQuotedIdent()
	case isDigit(c) || c == '.' && start+1 < len(src) && isDigit(src[start+1]) && !l.afterName():
		l.scanNumber()
		return nil
	case isIdentStart(c):
		for l.pos < len(src) && isIdentByte(src[l.pos]) {
			l.pos++
		}
		l.emit(tokIdent, src[start:l.pos], start)
		return nil
	}
	for _, op := range operators {
		if strings.HasPrefix(src[start:], op) {
			l.pos += len(op)
			l.emit(tokOp, op, start)
			return nil
		}
	}
	if c < 0x80 && c > ' ' && c != 0x7f {
		l.pos++
		l.emit(tokOp, src[start:l.pos], start)
		return nil
	}
	_, size := utf8.DecodeRuneInString(src[start:])
	return newParseError(src, start, start+size, "unexpected character")
}

// afterName reports whether the previous token is a name, so that a '.'
// right after it qualifies (t.5 is not t followed by .5).
func (l *lexer) afterName() bool {
	if len(l.toks) == 0 {
		return false
	}
	prev := l.toks[len(l.toks)-1]
	return prev.end == l.pos && (prev.kind == tokIdent || prev.kind == tokQuotedIdent)
}

// scanNumber scans digits [. digits] [e [+-] digits].
func (l *lexer) scanNumber() {
	src := l.src
	start := l.pos
	kind := tokInt
	for l.pos < len(src) && isDigit(src[l.pos]) {
		l.pos++
	}
	if l.pos < len(src) && src[l.pos] == '.' {
		kind = tokNumber
		l.pos++
		for l.pos < len(src) && isDigit(src[l.pos]) {
			l.pos++
		}
	}
	if l.pos < len(src) && (src[l.pos] == 'e' || src[l.pos] == 'E') {
		j := l.pos + 1
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if j < len(src) && isDigit(src[j]) {
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			kind = tokNumber
			l.pos = j
		}
	}
	l.emit(kind, src[start:l.pos], start)
}

// scanString scans a string literal quoted by q. A doubled quote stands for
// itself; a backslash escapes the next character as in MySQL (\n, \t, \r,
// \0, \b, \Z; \% and \_ keep their backslash for LIKE; any other character
// stands for itself).
func (l *lexer) scanString(q byte) error {
	src := l.src
	start := l.pos
	l.pos++
	var b strings.Builder
	for {
		if l.pos >= len(src) {
			return newParseError(src, start, len(src), "unterminated string")
		}
		c := src[l.pos]
		switch {
		case c == '\\':
			if l.pos+1 >= len(src) {
				return newParseError(src, start, len(src), "unterminated string")
			}
			e := src[l.pos+1]
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'b':
				b.WriteByte('\b')
			case 'Z':
				b.WriteByte(0x1a)
			case '%', '_':
				b.WriteByte('\\')
				b.WriteByte(e)
			default:
				b.WriteByte(e)
			}
			l.pos += 2
		case c == q:
			if l.pos+1 < len(src) && src[l.pos+1] == q {
				b.WriteByte(q)
				l.pos += 2
				continue
			}
			l.pos++
			l.emit(tokString, b.String(), start)
			return nil
		default:
			b.WriteByte(c)
			l.pos++
		}
	}
}

// scanQuotedIdent scans a `backquoted` identifier; a doubled backquote stands
// for itself.
func (l *lexer) scanQuotedIdent() error {
	src := l.src
	start := l.pos
	l.pos++
	var b strings.Builder
	for {
		if l.pos >= len(src) {
			return newParseError(src, start, len(src), "unterminated quoted identifier")
		}
		c := src[l.pos]
		if c == '`' {
			if l.pos+1 < len(src) && src[l.pos+1] == '`' {
				b.WriteByte('`')
				l.pos += 2
				continue
			}
			l.pos++
			l.emit(tokQuotedIdent, b.String(), start)
			return nil
		}
		b.WriteByte(c)
		l.pos++
	}
}

// reserved lists the words that cannot be used unquoted as a table, column
// or alias name (write them `backquoted`). Other keywords (KEY, TYPE, DATE,
// COMMENT, ...) are ordinary names wherever a name is expected; FULL and
// WINDOW are names too, except that they do not become an alias without AS
// where they start FULL [OUTER] JOIN or WINDOW w AS.
var reserved = map[string]bool{
	"AND": true, "AS": true, "ASC": true, "BETWEEN": true, "BY": true,
	"CASE": true, "CROSS": true, "CURRENT_DATE": true, "CURRENT_TIME": true,
	"CURRENT_TIMESTAMP": true, "DEFAULT": true, "DESC": true,
	"DISTINCT": true, "DIV": true, "ELSE": true, "END": true,
	"EXCEPT": true, "EXISTS": true, "FALSE": true, "FROM": true, "GROUP": true,
	"HAVING": true, "IN": true, "INNER": true, "INTERSECT": true, "INTERVAL": true,
	"INTO": true, "IS": true, "JOIN": true, "LEFT": true, "LIKE": true,
	"LIMIT": true, "LOCALTIME": true, "LOCALTIMESTAMP": true, "NATURAL": true, "NOT": true,
	"NULL": true, "ON": true, "OR": true, "ORDER": true, "OUTER": true, "REGEXP": true,
	"RIGHT": true, "RLIKE": true, "SELECT": true, "SET": true,
	"THEN": true, "TRUE": true, "UNION": true, "USING": true,
	"VALUES": true, "WHEN": true, "WHERE": true, "WITH": true, "XOR": true,
}

// isReserved reports whether the unquoted word w is reserved.
func isReserved(w string) bool { return reserved[strings.ToUpper(w)] }
