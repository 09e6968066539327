package schema

import (
	"fmt"
	"github.com/rowttl/rowttl"
	"strconv"
	"strings"
	"time"
)

// Dates are days since 1970-01-01; DATETIME values are the wall clock as
// microseconds since 1970-01-01 00:00:00 with no zone attached. Both are
// computed in UTC so that no local zone leaks in.

const microsPerDay = 86400 * 1000000

// DateFromTime returns the date of t's wall clock in t's location.
func DateFromTime(t time.Time) int32 {
	y, m, d := t.Date()
	return int32(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// DatetimeFromTime returns t's wall clock in t's location as DATETIME µs.
func DatetimeFromTime(t time.Time) int64 {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, t.Nanosecond(), time.UTC).UnixMicro()
}

// WallToInstant reads a wall clock (µs since 1970-01-01 00:00 of no zone,
// a DATETIME value) in loc and returns the instant (µs since the epoch),
// as time.Date does for DST gaps and folds. A nil loc is UTC. It is the
// one conversion of a wall clock to an instant for every package.
func WallToInstant(wall int64, loc *time.Location) int64 {
	if loc == nil || loc == time.UTC {
		return wall
	}
	t := time.UnixMicro(wall).UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc).UnixMicro()
}

// InstantToWall returns the wall clock (DATETIME µs) of an instant in loc;
// a nil loc is UTC.
func InstantToWall(us int64, loc *time.Location) int64 {
	if loc == nil || loc == time.UTC {
		return us
	}
	return DatetimeFromTime(time.UnixMicro(us).In(loc))
}

// FormatDate renders days since the epoch as YYYY-MM-DD.
func FormatDate(days int32) string {
	return time.Unix(int64(days)*86400, 0).UTC().Format("2006-01-02")
}

// FormatDatetime renders DATETIME µs as YYYY-MM-DD HH:MM:SS with p
// fractional digits when p > 0.
func FormatDatetime(micros int64, p int) string {
	t := time.UnixMicro(micros).UTC()
	s := t.Format("2006-01-02 15:04:05")
	if p > 0 {
		frac := fmt.Sprintf("%06d", t.Nanosecond()/1000)
		s += "." + frac[:min(p, 6)]
	}
	return s
}

// ParseDate parses YYYY-MM-DD (a time part, if any, must be midnight-free
// of meaning and is ignored only when it is all zeros).
func ParseDate(s string) (int32, error) {
	s = strings.TrimSpace(s)
	us, err := ParseDatetime(s)
	if err != nil {
		return 0, rowttl.Errorf(rowttl.ErrInvalidArgument, "invalid DATE value %q", s)
	}
	return int32(floorDiv(us, microsPerDay)), nil
}

// ParseDatetime parses 'YYYY-MM-DD[ HH:MM[:SS[.ffffff]]]' (also with a 'T'
// separator, and single-digit month, day, hour fields) into DATETIME µs.
// It is the one reader of datetime text: casts, literals compared with
// DATETIME columns, INSERT values and loads all come here.
func ParseDatetime(s string) (int64, error) {
	orig := s
	s = strings.TrimSpace(s)
	bad := func() (int64, error) {
		return 0, rowttl.Errorf(rowttl.ErrInvalidArgument, "invalid DATETIME value %q", orig)
	}
	datePart, timePart := s, ""
	if i := strings.IndexAny(s, " T"); i >= 0 {
		datePart, timePart = s[:i], strings.TrimSpace(s[i+1:])
	}
	dp := strings.Split(datePart, "-")
	if len(dp) != 3 {
		return bad()
	}
	y, err1 := strconv.Atoi(dp[0])
	mo, err2 := strconv.Atoi(dp[1])
	d, err3 := strconv.Atoi(dp[2])
	if err1 != nil || err2 != nil || err3 != nil || len(dp[0]) != 4 || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return bad()
	}
	var h, mi, sec, frac int
	if timePart != "" {
		fracText, dot := "", false
		if i := strings.IndexByte(timePart, '.'); i >= 0 {
			fracText, dot = timePart[i+1:], true
			timePart = timePart[:i]
		}
		tp := strings.Split(timePart, ":")
		// HH:MM without seconds is what MySQL and Doris also read (as
		// HH:MM:00); a fraction needs the seconds it divides.
		if len(tp) == 2 && !dot {
			tp = append(tp, "0")
		}
		if len(tp) != 3 {
			return bad()
		}
		var e1, e2, e3 error
		h, e1 = strconv.Atoi(tp[0])
		mi, e2 = strconv.Atoi(tp[1])
		sec, e3 = strconv.Atoi(tp[2])
		if e1 != nil || e2 != nil || e3 != nil || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 {
			return bad()
		}
		if fracText != "" {
			if len(fracText) > 9 {
				return bad()
			}
			for _, c := range fracText {
				if c < '0' || c > '9' {
					return bad()
				}
			}
			for len(fracText) < 6 {
				fracText += "0"
			}
			// Digits past the microsecond are truncated, as a DATETIME(6)
			// cast does.
			frac, _ = strconv.Atoi(fracText[:6])
		}
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, frac*1000, time.UTC)
	if t.Day() != d {
		return bad()
	}
	return t.UnixMicro(), nil
}

// TruncateMicros drops the digits of a DATETIME/TIMESTAMPTZ value beyond
// precision p.
func TruncateMicros(us int64, p int) int64 {
	if p >= 6 {
		return us
	}
	unit := int64(1)
	for i := p; i < 6; i++ {
		unit *= 10
	}
	return floorDiv(us, unit) * unit
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
