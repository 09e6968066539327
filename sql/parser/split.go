package parser

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// Piece is one statement of a script.
type Piece struct {
	// Text is the statement's source, from its first token to the last
	// character before its ';' (trailing white space trimmed). Comments
	// before the first token are not part of it.
	Text string
	// Line is the 1-based line of the statement's first token.
	Line int
	// Column is the 1-based column (in characters) of its first token on
	// Line, so that a position inside Text maps back to the script.
	Column int
	// Offset is the byte offset of its first token in the script.
	Offset int
}

// SplitStatements splits a script on the ';' that are outside quotes,
// backquotes and comments, with the comment rules of the lexer (`--` and `#`
// to the end of the line, `/* ... */`). Empty statements (only spaces and
// comments) are dropped. An unterminated quote or comment runs to the end of
// the script; Parse then reports it.
func SplitStatements(src string) []Piece {
	out, _ := splitScript(src)
	return out
}

// CompleteStatements splits the statements of src that a ';' ends from the
// text after the last such ';': the shell runs each statement as soon as
// its ';' is typed and keeps the rest as the start of the next one. Rest
// is empty when only spaces and comments follow the last ';'.
func CompleteStatements(src string) (done []Piece, rest string) {
	pieces, tail := splitScript(src)
	for _, p := range pieces {
		if p.Offset < tail {
			done = append(done, p)
		}
	}
	rest = src[tail:]
	if len(SplitStatements(rest)) == 0 {
		rest = ""
	}
	return done, rest
}

// splitScript is SplitStatements that also returns the offset just past
// the last ';' that ends a statement (0 when none does).
func splitScript(src string) ([]Piece, int) {
	var out []Piece
	tail := 0
	start, startLine := -1, 0 // start of the current statement; -1 before its first token
	line := 1
	begin := func(i int) {
		if start < 0 {
			start, startLine = i, line
		}
	}
	emit := func(end int) {
		if start >= 0 {
			text := strings.TrimRight(src[start:end], " \t\r\n\f\v")
			lineStart := strings.LastIndexByte(src[:start], '\n') + 1
			col := utf8.RuneCountInString(src[lineStart:start]) + 1
			out = append(out, Piece{Text: text, Line: startLine, Column: col, Offset: start})
		}
		start = -1
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case isSpace(c):
			i++
		case c == '#' || c == '-' && strings.HasPrefix(src[i:], "--"):
			if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
				i += j // the newline is counted by the next iteration
			} else {
				i = len(src)
			}
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			end := len(src)
			if j := strings.Index(src[i+2:], "*/"); j >= 0 {
				end = i + 2 + j + 2
			}
			line += strings.Count(src[i:end], "\n")
			i = end
		case c == ';':
			emit(i)
			i++
			tail = i
		case c == '\'' || c == '"' || c == '`':
			begin(i)
			end := skipQuoted(src, i)
			line += strings.Count(src[i:end], "\n")
			i = end
		default:
			begin(i)
			i++
		}
	}
	emit(len(src))
	return out, tail
}

// skipQuoted returns the offset just past the quoted text starting at i: a
// doubled quote stands for itself and, in strings, a backslash escapes the
// next byte. An unterminated quote runs to the end.
func skipQuoted(src string, i int) int {
	q := src[i]
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			if q != '`' {
				j++
			}
		case q:
			if j+1 < len(src) && src[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(src)
}

// InScript returns err with a syntax error's position moved from the
// statement's text to the script it was split from: line 1 of the
// statement is line p.Line of the script, and its columns start at
// p.Column. Other errors are returned as they are.
func InScript(err error, p Piece) error {
	var pe *ParseError
	if !errors.As(err, &pe) || (p.Line <= 1 && p.Column <= 1) {
		return err
	}
	moved := *pe
	if moved.Line == 1 {
		moved.Column += p.Column - 1
	}
	moved.Line += p.Line - 1
	return &moved
}
