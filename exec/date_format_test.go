package exec

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestDateFormatWeeks checks the week specifiers on every day of 1990 to
// 2040 against independent definitions: %x-%v is ISO 8601 (time.ISOWeek);
// %U is C's strftime %U; %V/%X is %U, with a day before the year's first
// Sunday counted in the last week of the year before; %u is the ISO week
// when it belongs to the year, 0 when it belongs to the year before and 53
// when to the next.
func TestDateFormatWeeks(t *testing.T) {
	for d := time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() <= 2040; d = d.AddDate(0, 0, 1) {
		strftimeU := func(d time.Time) int { return (d.YearDay() - 1 + 7 - int(d.Weekday())) / 7 }
		iy, iw := d.ISOWeek()
		u := iw
		switch {
		case iy < d.Year():
			u = 0
		case iy > d.Year():
			u = 53
		}
		vw, vy := strftimeU(d), d.Year()
		if vw == 0 {
			prev := time.Date(d.Year()-1, 12, 31, 0, 0, 0, 0, time.UTC)
			vw, vy = strftimeU(prev), prev.Year()
		}
		want := fmt.Sprintf("%02d %02d %02d %02d %04d %04d", strftimeU(d), u, vw, iw, vy, iy)
		if got := string(AppendDateFormat(nil, d, "%U %u %V %v %X %x")); got != want {
			t.Fatalf("%s: %%U %%u %%V %%v %%X %%x = %q, want %q", d.Format("2006-01-02 Mon"), got, want)
		}
	}
}

// TestDateFormatSpecifiers is a table of the other specifiers.
func TestDateFormatSpecifiers(t *testing.T) {
	tm := time.Date(2026, 3, 1, 0, 5, 9, 7000, time.UTC) // a Sunday
	for _, tc := range []struct{ format, want string }{
		{"%Y-%m-%d %H:%i:%s.%f", "2026-03-01 00:05:09.000007"},
		{"%a %W %w", "Sun Sunday 0"},
		{"%b %M %c", "Mar March 3"},
		{"%D %e %j", "1st 1 060"},
		{"%h %I %l %k %p", "12 12 12 0 AM"},
		{"%r|%T", "12:05:09 AM|00:05:09"},
		{"%y %%", "26 %"},
		{"%q %", "q %"},
		{"no specifiers", "no specifiers"},
	} {
		if got := string(AppendDateFormat(nil, tm, tc.format)); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.format, got, tc.want)
		}
	}
	for d, want := range map[int]string{2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 23: "23rd", 31: "31st"} {
		if got := string(AppendDateFormat(nil, time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC), "%D")); got != want {
			t.Errorf("%%D of day %d: %q, want %q", d, got, want)
		}
	}
}

// FuzzDateFormat: any format on any date formats without panicking, text
// without '%' is copied as it is, and "%%" is one '%'.
func FuzzDateFormat(f *testing.F) {
	for _, s := range []string{"%Y-%m-%d %H:%i:%s.%f", "%a %b %D %j %U %u %V %v %X %x", "%", "%%", "plain", "%\xff", ""} {
		f.Add(s, int64(1767225600000000))
	}
	f.Fuzz(func(t *testing.T, format string, us int64) {
		us %= 253402300799000000 // up to 9999-12-31
		tm := time.UnixMicro(us).UTC()
		out := AppendDateFormat(nil, tm, format)
		if !strings.Contains(format, "%") && string(out) != format {
			t.Fatalf("%q formatted as %q", format, out)
		}
		if got := string(AppendDateFormat(nil, tm, "%%"+format)); got != "%"+string(out) {
			t.Fatalf("%%%% then %q: %q, want %q", format, got, "%"+string(out))
		}
	})
}
