package main

import (
	"testing"
	"time"
)

func TestHumanDuration(t *testing.T) {
	const day = 24 * time.Hour
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{250 * time.Millisecond, "0.25s"},
		{45 * time.Second, "45s"},
		{27*time.Minute + 5*time.Second, "27m5s"},
		{12 * time.Hour, "12h"},
		{8*time.Hour + 27*time.Minute + 46*time.Second, "8h27m"},
		{7 * day, "7d"},
		{168 * time.Hour, "7d"},
		{7*day + 8*time.Hour + 27*time.Minute + 46*time.Second, "7d 8h27m"},
		{day + 30*time.Second, "1d"},
		{2*day + 5*time.Minute, "2d 5m"},
		{1500 * time.Millisecond, "2s"},
		{-90 * time.Minute, "-1h30m"},
	} {
		if got := humanDuration(tc.d); got != tc.want {
			t.Errorf("humanDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
