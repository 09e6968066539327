package ttlcol

import (
	"math"

	"github.com/rowttl/rowttl"
)

// MaxRetentionSeconds is the longest retention ParseRetention accepts: the
// largest number of seconds whose microseconds still fit in an int64
// (about 292,271 years).
const MaxRetentionSeconds = math.MaxInt64 / microsPerSecond

// Texts of SPEC §5 for bad retentions.
const (
	msgNegativeRetention = "row ttl duration must not be negative"
	msgInvalidRetention  = "invalid or overflowing row ttl duration: "
)

// retentionUnits maps each accepted unit, in lower case, to its length in
// seconds. A day is always 24 hours; months and years are not units.
var retentionUnits = map[string]int64{
	"week": 7 * 86400, "weeks": 7 * 86400,
	"day": 86400, "days": 86400, "d": 86400,
	"hour": 3600, "hours": 3600, "h": 3600,
	"minute": 60, "minutes": 60, "m": 60,
	"second": 1, "seconds": 1, "s": 1,
}

// ParseRetention parses a retention as written in the table property
// function_column.ttl (SPEC §2 "Retention format") and returns it in whole
// seconds.
//
// Accepted: an unsigned decimal integer alone (seconds), or an integer,
// optional spaces or tabs and one unit, matched case-insensitively (ASCII
// only): week/weeks, day/days/d, hour/hours/h, minute/minutes/m,
// second/seconds/s. Spaces, tabs and line breaks around the whole value are
// ignored. Leading zeros are allowed ("007" is 7).
//
// Rejected, with an error wrapping rowttl.ErrInvalidProperty:
//   - a value starting with '-' followed by a digit: "row ttl duration must
//     not be negative" ("-0", whose value is not negative, is rejected as
//     invalid instead);
//   - everything else that is not of the form above — the empty string,
//     decimals, exponents, a leading '+', combinations ("1 day 2 hours"),
//     months, years, unknown units — and any value above
//     MaxRetentionSeconds: "invalid or overflowing row ttl duration: X",
//     where X is s exactly as given.
func ParseRetention(s string) (seconds int64, err error) {
	t := trimSpace(s)
	invalid := func() (int64, error) {
		return 0, rowttl.Errorf(rowttl.ErrInvalidProperty, "%s", msgInvalidRetention+s)
	}
	if t == "" {
		return invalid()
	}
	if t[0] == '-' {
		if len(t) > 1 && isDigit(t[1]) && !leadingDigitsAllZero(t[1:]) {
			return 0, rowttl.Errorf(rowttl.ErrInvalidProperty, "%s", msgNegativeRetention)
		}
		return invalid()
	}

	// The integer. Accumulating past MaxRetentionSeconds stops early, so the
	// loop can never overflow whatever the number of digits.
	var n int64
	i := 0
	for ; i < len(t) && isDigit(t[i]); i++ {
		n = n*10 + int64(t[i]-'0')
		if n > MaxRetentionSeconds {
			return invalid()
		}
	}
	if i == 0 {
		return invalid()
	}

	// Optional spaces, then at most one unit and nothing after it.
	rest := t[i:]
	for len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\t') {
		rest = rest[1:]
	}
	mult := int64(1)
	if rest != "" {
		u, ok := retentionUnits[lowerASCII(rest)]
		if !ok {
			return invalid()
		}
		mult = u
	}
	if n > MaxRetentionSeconds/mult {
		return invalid()
	}
	return n * mult, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// leadingDigitsAllZero reports whether the run of digits that starts s
// consists of zeros only.
func leadingDigitsAllZero(s string) bool {
	for i := 0; i < len(s) && isDigit(s[i]); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}

// trimSpace removes ASCII spaces, tabs and line breaks around s.
func trimSpace(s string) string {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// lowerASCII lowers ASCII letters only, so that no Unicode case folding
// (the Kelvin sign, the long s) can turn a foreign letter into a unit.
// Strings longer than any unit are returned unchanged: they cannot match.
func lowerASCII(s string) string {
	if len(s) > len("minutes") {
		return s
	}
	var b [len("minutes")]byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return string(b[:len(s)])
}
