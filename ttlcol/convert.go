package ttlcol

import "math"

const (
	microsPerSecond = 1_000_000
	secondsPerDay   = 86_400
	microsPerDay    = secondsPerDay * microsPerSecond
)

// DateToMicros converts a DATE (days since 1970-01-01) to the instant of its
// midnight at the given offset (seconds east of UTC), in µs since the epoch.
// ok is false when the instant does not fit in int64 µs.
func DateToMicros(days int32, zoneOffsetSeconds int) (int64, bool) {
	// |days| < 2^31, so days*86400 (< 2^48) and the offset never overflow.
	return mulMicros(int64(days)*secondsPerDay - int64(zoneOffsetSeconds))
}

// DatetimeToMicros converts a DATETIME wall clock (µs since 1970-01-01
// 00:00:00 read as local time at the given offset) to the UTC instant in µs
// since the epoch. ok is false on overflow.
func DatetimeToMicros(wallMicros int64, zoneOffsetSeconds int) (int64, bool) {
	off, ok := mulMicros(int64(zoneOffsetSeconds))
	if !ok {
		return 0, false
	}
	return subChecked(wallMicros, off)
}

// MicrosToDate returns the local date (days since 1970-01-01) of an instant
// at the given offset; days are floored, so instants before the epoch fall on
// the right day. It never overflows: every int64 instant has a date within
// int32 for any offset up to ±10^9 seconds.
func MicrosToDate(ttl int64, zoneOffsetSeconds int) int32 {
	days := floorDiv(ttl, microsPerDay)
	rem := ttl - days*microsPerDay // 0 <= rem < microsPerDay
	// The offset in whole days and the rest, so nothing here overflows.
	offDays := floorDiv(int64(zoneOffsetSeconds), secondsPerDay)
	offRem := int64(zoneOffsetSeconds) - offDays*secondsPerDay // 0..86399
	rem += offRem * microsPerSecond                            // < 2 days
	days += offDays + floorDiv(rem, microsPerDay)
	if days > math.MaxInt32 {
		return math.MaxInt32
	}
	if days < math.MinInt32 {
		return math.MinInt32
	}
	return int32(days)
}

// MicrosToDatetime returns the local wall clock (µs since 1970-01-01
// 00:00:00) of an instant at the given offset. At the extremes of int64 the
// result saturates instead of wrapping. MicrosToDatetime(DatetimeToMicros(x,
// z), z) == x whenever the conversion succeeded.
func MicrosToDatetime(ttl int64, zoneOffsetSeconds int) int64 {
	return satAdd(ttl, satMul(int64(zoneOffsetSeconds), microsPerSecond))
}

// mulMicros converts seconds to µs; ok is false on overflow.
func mulMicros(secs int64) (int64, bool) {
	if secs > math.MaxInt64/microsPerSecond || secs < math.MinInt64/microsPerSecond {
		return 0, false
	}
	return secs * microsPerSecond, true
}

func addChecked(a, b int64) (int64, bool) {
	s := a + b
	if (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0) {
		return 0, false
	}
	return s, true
}

func subChecked(a, b int64) (int64, bool) {
	d := a - b
	if (a >= 0) != (b >= 0) && (d >= 0) != (a >= 0) {
		return 0, false
	}
	return d, true
}

func satAdd(a, b int64) int64 {
	if s, ok := addChecked(a, b); ok {
		return s
	}
	if b > 0 {
		return math.MaxInt64
	}
	return math.MinInt64
}

func satSub(a, b int64) int64 {
	if d, ok := subChecked(a, b); ok {
		return d
	}
	if b > 0 {
		return math.MinInt64
	}
	return math.MaxInt64
}

// satMul multiplies by a positive constant m, saturating.
func satMul(v, m int64) int64 {
	switch {
	case v > math.MaxInt64/m:
		return math.MaxInt64
	case v < math.MinInt64/m:
		return math.MinInt64
	}
	return v * m
}

// floorDiv divides rounding towards negative infinity (d > 0).
func floorDiv(n, d int64) int64 {
	q := n / d
	if n%d < 0 {
		q--
	}
	return q
}
