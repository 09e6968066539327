package main

import (
	"strconv"
	"strings"
	"time"
)

// humanDuration writes d the way people read it: 7d, 12h, 7d 8h27m, 8h27m,
// 27m5s, 45s, 0.25s. Days and hours drop the seconds (nobody reads them
// beside a day), and zero parts are left out. SHOW CREATE TABLE keeps
// SPEC's seconds; this is for the command line's own output.
func humanDuration(d time.Duration) string {
	if d < 0 {
		return "-" + humanDuration(-d)
	}
	if d < time.Second {
		if d == 0 {
			return "0s"
		}
		return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
	}
	d = d.Round(time.Second)
	days := d / (24 * time.Hour)
	d -= days * 24 * time.Hour
	h, m, s := d/time.Hour, d/time.Minute%60, d/time.Second%60
	var parts []string
	if days > 0 {
		parts = append(parts, strconv.FormatInt(int64(days), 10)+"d")
	}
	var clock strings.Builder
	if h > 0 {
		clock.WriteString(strconv.FormatInt(int64(h), 10) + "h")
	}
	if m > 0 {
		clock.WriteString(strconv.FormatInt(int64(m), 10) + "m")
	}
	if s > 0 && days == 0 && h == 0 {
		clock.WriteString(strconv.FormatInt(int64(s), 10) + "s")
	}
	if clock.Len() > 0 {
		parts = append(parts, clock.String())
	}
	if len(parts) == 0 {
		return "0s"
	}
	return strings.Join(parts, " ")
}
