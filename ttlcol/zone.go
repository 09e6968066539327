package ttlcol

import (
	"fmt"

	"github.com/rowttl/rowttl"
)

// Bounds of function_column.ttl_time_zone, in seconds east of UTC.
const (
	MinZoneOffset = -12 * 3600
	MaxZoneOffset = 14 * 3600
)

// Texts of SPEC §5 for bad zones.
const (
	msgZoneForm  = "function_column.ttl_time_zone must be UTC, Z, or a fixed UTC offset in the form +HH:MM or -HH:MM"
	msgZoneRange = "function_column.ttl_time_zone must be a fixed UTC offset between -12:00 and +14:00"
)

// ParseZone parses function_column.ttl_time_zone and returns the offset in
// seconds east of UTC.
//
// Accepted: "UTC" and "Z" in any ASCII case, and ±HH:MM with exactly two
// digits of hours and two of minutes, minutes below 60, between -12:00 and
// +14:00 inclusive ("-00:00" is UTC). Spaces, tabs and line breaks around
// the value are ignored.
//
// Errors wrap rowttl.ErrInvalidProperty. A value not of those forms (region
// names such as Asia/Shanghai, "GMT+8", "+8:00", "+08", "08:00", "+08:60",
// the empty string) gets the SPEC §5 form message; a well-formed offset
// outside the range ("+14:01", "-12:30", "+15:00") gets the range message.
func ParseZone(s string) (offsetSeconds int, err error) {
	t := trimSpace(s)
	switch {
	case len(t) == 3 && lowerASCII(t) == "utc", len(t) == 1 && lowerASCII(t) == "z":
		return 0, nil
	}
	if len(t) != 6 || t[3] != ':' {
		return 0, rowttl.Errorf(rowttl.ErrInvalidProperty, "%s", msgZoneForm)
	}
	off, ok := ParseOffset(t)
	if !ok {
		return 0, rowttl.Errorf(rowttl.ErrInvalidProperty, "%s", msgZoneForm)
	}
	if off < MinZoneOffset || off > MaxZoneOffset {
		return 0, rowttl.Errorf(rowttl.ErrInvalidProperty, "%s", msgZoneRange)
	}
	return off, nil
}

// ParseOffset parses a UTC offset written ±HH, ±HHMM or ±HH:MM (one or two
// digits of hours, two of minutes below 60) into seconds east of UTC. It is
// the one offset reader of the engine: ParseZone accepts only its ±HH:MM form
// and bounds it; session time zones and TIMESTAMPTZ texts take every form.
// Hours are not bounded here beyond two digits.
func ParseOffset(s string) (offsetSeconds int, ok bool) {
	if len(s) < 2 || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	d := s[1:]
	var h, m string
	switch {
	case len(d) <= 2:
		h = d
	case len(d) == 5 && d[2] == ':':
		h, m = d[:2], d[3:]
	case len(d) == 4 && d[1] == ':':
		h, m = d[:1], d[2:]
	case len(d) == 3 || len(d) == 4:
		h, m = d[:len(d)-2], d[len(d)-2:]
	default:
		return 0, false
	}
	hh, ok := digits(h)
	if !ok {
		return 0, false
	}
	mm := 0
	if m != "" {
		if mm, ok = digits(m); !ok || len(m) != 2 || mm >= 60 {
			return 0, false
		}
	}
	off := hh*3600 + mm*60
	if s[0] == '-' {
		off = -off
	}
	return off, true
}

// digits reads one or two decimal digits.
func digits(s string) (int, bool) {
	if len(s) == 0 || len(s) > 2 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// FormatZone renders an offset in seconds east of UTC as "+HH:MM" or
// "-HH:MM"; 0 is "+00:00". Seconds below a whole minute are dropped (ParseZone
// never produces them). Every offset ParseZone accepts formats to a string
// ParseZone parses back to the same offset.
func FormatZone(offsetSeconds int) string {
	sign := byte('+')
	abs := int64(offsetSeconds)
	if abs < 0 {
		sign, abs = '-', -abs
	}
	return fmt.Sprintf("%c%02d:%02d", sign, abs/3600, abs%3600/60)
}
