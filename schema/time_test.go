package schema

import (
	"testing"
	"time"
)

func TestWallToInstant(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skipf("no zone database: %v", err)
	}
	wall := func(s string) int64 {
		w, err := ParseDatetime(s)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	utc := func(s string) int64 { return wall(s) }
	tests := []struct {
		name string
		wall string
		loc  *time.Location
		want int64
	}{
		{"nil is UTC", "2026-03-01 12:00:00", nil, utc("2026-03-01 12:00:00")},
		{"UTC", "2026-03-01 12:00:00.123456", time.UTC, utc("2026-03-01 12:00:00.123456")},
		{"fixed +08:00", "2026-03-01 08:00:00", time.FixedZone("", 8*3600), utc("2026-03-01 00:00:00")},
		{"winter", "2026-01-15 12:00:00", ny, utc("2026-01-15 17:00:00")},
		{"summer", "2026-07-15 12:00:00", ny, utc("2026-07-15 16:00:00")},
		// 02:30 on 2026-03-08 does not exist in New York; time.Date reads it
		// with the offset after the gap (EDT), the instant of 01:30 EST.
		{"DST gap", "2026-03-08 02:30:00", ny, utc("2026-03-08 06:30:00")},
		// 01:30 on 2026-11-01 happens twice; time.Date takes the first (EDT).
		{"DST fold", "2026-11-01 01:30:00", ny, utc("2026-11-01 05:30:00")},
		{"before 1970", "1969-12-31 23:00:00", time.FixedZone("", -3600), utc("1970-01-01 00:00:00")},
	}
	for _, tt := range tests {
		got := WallToInstant(wall(tt.wall), tt.loc)
		if got != tt.want {
			t.Errorf("%s: WallToInstant(%s) = %s, want %s", tt.name, tt.wall,
				FormatDatetime(got, 6), FormatDatetime(tt.want, 6))
		}
		// Outside a gap or fold the conversion is a bijection.
		if tt.name != "DST gap" {
			if back := InstantToWall(got, tt.loc); back != wall(tt.wall) {
				t.Errorf("%s: InstantToWall(WallToInstant(%s)) = %s", tt.name, tt.wall, FormatDatetime(back, 6))
			}
		}
	}
}

func TestParseDatetime(t *testing.T) {
	for _, tt := range []struct {
		in, want string // want "" for an invalid text
	}{
		{"2026-01-02 01:00:00", "2026-01-02 01:00:00.000000"},
		{"2026-01-02", "2026-01-02 00:00:00.000000"},
		{"2026-01-02 01:00", "2026-01-02 01:00:00.000000"},
		{"2026-01-02T23:59", "2026-01-02 23:59:00.000000"},
		{"2026-1-2 1:05", "2026-01-02 01:05:00.000000"},
		{"2026-01-02 01:00:00.25", "2026-01-02 01:00:00.250000"},
		{"2026-01-02 01:00.5", ""},
		{"2026-01-02 01:00.", ""},
		{"2026-01-02 01", ""},
		{"2026-01-02 24:00", ""},
		{"2026-01-02 01:60", ""},
		{"2026-01-02 01:", ""},
		{"2026-01-02 :05", ""},
		{"2026-02-30 01:00", ""},
	} {
		us, err := ParseDatetime(tt.in)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("ParseDatetime(%q) = %s, want an error", tt.in, FormatDatetime(us, 6))
		case tt.want != "" && err != nil:
			t.Errorf("ParseDatetime(%q): %v", tt.in, err)
		case tt.want != "" && FormatDatetime(us, 6) != tt.want:
			t.Errorf("ParseDatetime(%q) = %s, want %s", tt.in, FormatDatetime(us, 6), tt.want)
		}
	}
}
