package sql

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rowttl/rowttl"
)

// Placeholders: the MySQL protocol's prepared statements and the
// database/sql driver send a statement with `?` marks and the values
// apart. The dialect has no placeholder of its own, so the values are
// written into the text as literals of the type they came with, where the
// lexer would have read a `?` outside quotes, backquotes and comments.

// CountParams returns the number of `?` placeholders of a statement.
func CountParams(text string) int {
	n := 0
	scanPlaceholders(text, func(int) { n++ })
	return n
}

// BindParams returns text with its `?` placeholders replaced, in order, by
// args written as SQL literals: nil as NULL, integers, floats as DOUBLE
// (with an exponent), bool as TRUE/FALSE, string and []byte as quoted
// strings, time.Time as a DATETIME(6) text of its wall clock in loc. A
// count that does not match or a value of another type is
// rowttl.ErrInvalidArgument.
func BindParams(text string, args []any, loc *time.Location) (string, error) {
	var pos []int
	scanPlaceholders(text, func(i int) { pos = append(pos, i) })
	if len(pos) != len(args) {
		return "", rowttl.Errorf(rowttl.ErrInvalidArgument, "statement has %d placeholder(s) but %d argument(s) were given", len(pos), len(args))
	}
	if len(pos) == 0 {
		return text, nil
	}
	var b strings.Builder
	b.Grow(len(text) + 16*len(args))
	last := 0
	var lit strings.Builder
	for k, i := range pos {
		b.WriteString(text[last:i])
		lit.Reset()
		if err := appendLiteral(&lit, args[k], loc); err != nil {
			return "", rowttl.Errorf(rowttl.ErrInvalidArgument, "argument %d: %w", k+1, err)
		}
		// A literal must stay one token: SELECT? is SELECT ?, a-? with -1
		// is no comment, ?'x' is no doubled quote.
		if i > 0 && !separates(text[i-1]) {
			b.WriteByte(' ')
		}
		b.WriteString(lit.String())
		if i+1 < len(text) && !separates(text[i+1]) {
			b.WriteByte(' ')
		}
		last = i + 1
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

func appendLiteral(b *strings.Builder, v any, loc *time.Location) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("NULL")
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int16:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int8:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case uint32:
		b.WriteString(strconv.FormatUint(uint64(x), 10))
	case float64:
		return appendFloat(b, x, 64)
	case float32:
		return appendFloat(b, float64(x), 32)
	case bool:
		if x {
			b.WriteString("TRUE")
		} else {
			b.WriteString("FALSE")
		}
	case string:
		appendQuoted(b, x)
	case []byte:
		appendQuoted(b, string(x))
	case time.Time:
		if loc == nil {
			loc = time.UTC
		}
		b.WriteByte('\'')
		b.WriteString(x.In(loc).Format("2006-01-02 15:04:05.000000"))
		b.WriteByte('\'')
	default:
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "values of type %T cannot be bound", v)
	}
	return nil
}

func appendFloat(b *strings.Builder, f float64, bits int) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "%v has no SQL literal", f)
	}
	// The exponent makes the literal a DOUBLE; without it 1.5 would be a
	// DECIMAL.
	b.WriteString(strconv.FormatFloat(f, 'e', -1, bits))
	return nil
}

// appendQuoted writes s as a single-quoted string the lexer reads back to
// s: backslash and quote escaped, every other byte as it is.
func appendQuoted(b *strings.Builder, s string) {
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
}

// separates reports the characters a literal may touch without joining
// a token of theirs.
func separates(c byte) bool {
	return strings.IndexByte(" \t\r\n(),;=<>+*/%!", c) >= 0
}

// scanPlaceholders calls fn with the offset of every `?` outside quotes,
// backquotes and comments, with the lexer's rules (backslash escapes in
// quotes, `--` and `#` to the end of the line, `/* ... */`).
func scanPlaceholders(text string, fn func(int)) {
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '?':
			fn(i)
		case c == '\'' || c == '"' || c == '`':
			for i++; i < len(text); i++ {
				if text[i] == '\\' && c != '`' {
					i++
					continue
				}
				if text[i] == c {
					if i+1 < len(text) && text[i+1] == c {
						i++
						continue
					}
					break
				}
			}
		case c == '#' || c == '-' && i+1 < len(text) && text[i+1] == '-':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				return
			}
			i += 2 + end + 1
		}
	}
}
