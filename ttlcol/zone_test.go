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
