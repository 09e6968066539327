package ttlcol

import (
	"math"
	"testing"
)

func TestClassify(t *testing.T) {
	const th = 100
	tests := []struct {
		name        string
		rows, nulls int64
		hasMinMax   bool
		min, max    int64
		want        PageState
	}{
		{"all below", 10, 0, true, 1, 99, AllExpired},
		{"max equals threshold is expired", 10, 0, true, 1, 100, AllExpired},
		{"max just above", 10, 0, true, 1, 101, Mixed},
		{"all above", 10, 0, true, 101, 200, AllLive},
		{"min equals threshold", 10, 0, true, 100, 200, Mixed},
		{"nulls keep it alive", 10, 3, true, 1, 99, Mixed},
		{"nulls and all above", 10, 3, true, 101, 200, AllLive},
		{"all null", 10, 10, false, 0, 0, AllLive},
		{"all null with junk stats", 10, 10, true, 1, 1, AllLive},
		{"empty", 0, 0, false, 0, 0, AllLive},
		{"no stats", 10, 0, false, 0, 0, Mixed},
		{"no stats, some nulls", 10, 2, false, 0, 0, Mixed},
		{"extremes expired", 2, 0, true, math.MinInt64, math.MinInt64, AllExpired},
		{"extremes live", 2, 0, true, math.MaxInt64, math.MaxInt64, AllLive},
		{"single value at threshold", 1, 0, true, 100, 100, AllExpired},
	}
	for _, tt := range tests {
		if got := Classify(tt.rows, tt.nulls, tt.hasMinMax, tt.min, tt.max, th); got != tt.want {
			t.Errorf("%s: Classify = %s; want %s", tt.name, got, tt.want)
		}
	}
	if got := Classify(1, 0, true, 0, 0, math.MinInt64); got != AllLive {
		t.Errorf("threshold MinInt64: %s", got)
	}
	if got := Classify(1, 0, true, math.MaxInt64, math.MaxInt64, math.MaxInt64); got != AllExpired {
		t.Errorf("threshold MaxInt64: %s", got)
	}
}

func TestPageStateString(t *testing.T) {
	for s, want := range map[PageState]string{Mixed: "mixed", AllExpired: "all-expired", AllLive: "all-live", 7: "PageState(?)"} {
		if got := s.String(); got != want {
			t.Errorf("%d.String() = %q; want %q", s, got, want)
		}
	}
}
