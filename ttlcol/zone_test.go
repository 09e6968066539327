package ttlcol

import (
	"errors"
	"testing"

	"github.com/rowttl/rowttl"
)

func TestParseZone(t *testing.T) {
	const (
		form = "function_column.ttl_time_zone must be UTC, Z, or a fixed UTC offset in the form +HH:MM or -HH:MM"
		rng  = "function_column.ttl_time_zone must be a fixed UTC offset between -12:00 and +14:00"
	)
	tests := []struct {
		in      string
		want    int
		wantErr string
	}{
		{"UTC", 0, ""},
		{"utc", 0, ""},
		{"Utc", 0, ""},
		{"Z", 0, ""},
		{"z", 0, ""},
		{"+00:00", 0, ""},
		{"-00:00", 0, ""},
		{"-12:00", -12 * 3600, ""},
		{"+14:00", 14 * 3600, ""},
		{"+08:00", 8 * 3600, ""},
		{"+05:30", 5*3600 + 30*60, ""},
		{"-03:30", -(3*3600 + 30*60), ""},
		{"+05:45", 5*3600 + 45*60, ""},
		{" +08:00 ", 8 * 3600, ""},

		{"+14:01", 0, rng},
		{"-12:30", 0, rng},
		{"-12:01", 0, rng},
		{"+15:00", 0, rng},
		{"+24:00", 0, rng},
		{"+99:59", 0, rng},

		{"Asia/Shanghai", 0, form},
		{"+8:00", 0, form},
		{"+08", 0, form},
		{"08:00", 0, form},
		{"+08:60", 0, form},
		{"+08:99", 0, form},
		{"GMT+8", 0, form},
		{"UTC+8", 0, form},
		{"UTC+08:00", 0, form},
		{"", 0, form},
		{"   ", 0, form},
		{"+0800", 0, form},
		{"+08:0", 0, form},
		{"+08:00:00", 0, form},
		{"+08-00", 0, form},
		{"CST", 0, form},
		{"ZZ", 0, form},
		{"GMT", 0, form},
		{"+\u0660\u0668:00", 0, form},
		{"+ 8:00", 0, form},
	}
	for _, tt := range tests {
		got, err := ParseZone(tt.in)
		if tt.wantErr == "" {
			if err != nil || got != tt.want {
				t.Errorf("ParseZone(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("ParseZone(%q) = %d, nil; want error %q", tt.in, got, tt.wantErr)
			continue
		}
		if err.Error() != tt.wantErr {
			t.Errorf("ParseZone(%q) error %q; want %q", tt.in, err, tt.wantErr)
		}
		if !errors.Is(err, rowttl.ErrInvalidProperty) {
			t.Errorf("ParseZone(%q) error %v does not wrap ErrInvalidProperty", tt.in, err)
		}
	}
}

func TestFormatZone(t *testing.T) {
	tests := []struct {
		in   int
		want string
	}{
		{0, "+00:00"},
		{8 * 3600, "+08:00"},
		{-12 * 3600, "-12:00"},
		{14 * 3600, "+14:00"},
		{5*3600 + 30*60, "+05:30"},
		{-(3*3600 + 30*60), "-03:30"},
		{-30 * 60, "-00:30"},
		{3600 + 59, "+01:00"},
	}
	for _, tt := range tests {
		if got := FormatZone(tt.in); got != tt.want {
			t.Errorf("FormatZone(%d) = %q; want %q", tt.in, got, tt.want)
		}
	}
	// Every accepted offset round-trips.
	for off := MinZoneOffset; off <= MaxZoneOffset; off += 60 {
		got, err := ParseZone(FormatZone(off))
		if err != nil || got != off {
			t.Fatalf("ParseZone(FormatZone(%d)) = %d, %v", off, got, err)
		}
	}
}

func FuzzParseZone(f *testing.F) {
	for _, s := range []string{
		"UTC", "utc", "Z", "+00:00", "-12:00", "+14:00", "+14:01", "-12:30", "+15:00",
		"Asia/Shanghai", "+8:00", "+08", "08:00", "+08:60", "GMT+8", "", " +05:30 ", "-00:00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		off, err := ParseZone(s)
		if err != nil {
			if !errors.Is(err, rowttl.ErrInvalidProperty) {
				t.Fatalf("ParseZone(%q): %v does not wrap ErrInvalidProperty", s, err)
			}
			return
		}
		if off < MinZoneOffset || off > MaxZoneOffset || off%60 != 0 {
			t.Fatalf("ParseZone(%q) = %d, out of range", s, off)
		}
		formatted := FormatZone(off)
		again, err := ParseZone(formatted)
		if err != nil || again != off {
			t.Fatalf("ParseZone(%q) = %d, formatted %q re-parses to %d, %v", s, off, formatted, again, err)
		}
		if FormatZone(again) != formatted {
			t.Fatalf("FormatZone not stable for %q", s)
		}
	})
}

func TestParseOffset(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"+08:00", 8 * 3600, true},
		{"-05:30", -(5*3600 + 30*60), true},
		{"+0800", 8 * 3600, true},
		{"+800", 8 * 3600, true},
		{"+8:00", 8 * 3600, true},
		{"+08", 8 * 3600, true},
		{"-8", -8 * 3600, true},
		{"-00:00", 0, true},
		{"+99:59", 99*3600 + 59*60, true}, // callers bound the range
		{"+08:60", 0, false},
		{"+08:5", 0, false},
		{"+080", 0, false}, // three digits: hours 0, minutes 80
		{"08:00", 0, false},
		{"+", 0, false},
		{"", 0, false},
		{"+1:2:3", 0, false},
		{"+0a:00", 0, false},
		{"+123:00", 0, false},
		{"+08:00:00", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseOffset(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseOffset(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzParseOffset(f *testing.F) {
	for _, s := range []string{"+08:00", "-0530", "+8", "+8:00", "+08:60", "", "+", "-99:59", "+1:2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		off, ok := ParseOffset(s)
		if !ok {
			if off != 0 {
				t.Fatalf("ParseOffset(%q) refused with %d", s, off)
			}
			return
		}
		if off%60 != 0 || off < -(99*3600+59*60) || off > 99*3600+59*60 {
			t.Fatalf("ParseOffset(%q) = %d", s, off)
		}
		// Every accepted offset in the zone range reads back from the one
		// form ParseZone takes.
		if off >= MinZoneOffset && off <= MaxZoneOffset {
			if again, ok := ParseOffset(FormatZone(off)); !ok || again != off {
				t.Fatalf("ParseOffset(%q) = %d, but %q reads %d, %v", s, off, FormatZone(off), again, ok)
			}
		}
	})
}
