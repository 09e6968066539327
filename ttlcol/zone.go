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
	if len(t) != 6 || (t[0] != '+' && t[0] != '-') || t[3] != ':' ||
		!isDigit(t[1]) || !isDigit(t[2]) || !isDigit(t[4]) || !isDigit(t[5]) {
		return 0, &ttlError{msg: msgZoneForm, sentinel: rowttl.ErrInvalidProperty}
	}
	hh := int(t[1]-'0')*10 + int(t[2]-'0')
	mm := int(t[4]-'0')*10 + int(t[5]-'0')
	if mm >= 60 {
		return 0, &ttlError{msg: msgZoneForm, sentinel: rowttl.ErrInvalidProperty}
	}
	off := hh*3600 + mm*60
	if t[0] == '-' {
		off = -off
	}
	if off < MinZoneOffset || off > MaxZoneOffset {
		return 0, &ttlError{msg: msgZoneRange, sentinel: rowttl.ErrInvalidProperty}
	}
	return off, nil
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
