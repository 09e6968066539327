package sql

import "strings"

// Piece is one statement of a script.
type Piece struct {
	// Text is the statement's source, from its first token to the last
	// character before its ';' (trailing white space trimmed). Comments
	// before the first token are not part of it.
	Text string
	// Line is the 1-based line of the statement's first token.
	Line int
}

// SplitStatements splits a script on the ';' that are outside quotes,
// backquotes and comments, with the comment rules of the lexer (`--` and `#`
// to the end of the line, `/* ... */`). Empty statements (only spaces and
// comments) are dropped. An unterminated quote or comment runs to the end of
// the script; Parse then reports it.
func SplitStatements(src string) []Piece {
	var out []Piece
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
			out = append(out, Piece{Text: text, Line: startLine})
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
	return out
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
