package ttlcol

import (
	"errors"
	"strconv"
	"testing"

	"github.com/rowttl/rowttl"
)

func TestParseRetention(t *testing.T) {
	const (
		neg = "row ttl duration must not be negative"
		bad = "invalid or overflowing row ttl duration: "
	)
	tests := []struct {
		in      string
		want    int64
		wantErr string // exact text; "" = accepted
	}{
		// Accepted: SPEC §2 forms.
		{"86400", 86400, ""},
		{"1 day", 86400, ""},
		{"24h", 86400, ""},
		{"24 H", 86400, ""},
		{"2weeks", 2 * 7 * 86400, ""},
		{"0", 0, ""},
		{" 1d ", 86400, ""},
		{"1 week", 7 * 86400, ""},
		{"1 WEEK", 7 * 86400, ""},
		{"3 days", 3 * 86400, ""},
		{"1 Day", 86400, ""},
		{"12 hours", 12 * 3600, ""},
		{"1 hour", 3600, ""},
		{"90 minutes", 5400, ""},
		{"1 minute", 60, ""},
		{"90m", 5400, ""},
		{"90M", 5400, ""},
		{"45 seconds", 45, ""},
		{"1 second", 1, ""},
		{"45s", 45, ""},
		{"0 days", 0, ""},
		{"007", 7, ""},
		{"1\tday", 86400, ""},
		{"1   day", 86400, ""},
		{"\t86400\n", 86400, ""},
		{"9223372036854", MaxRetentionSeconds, ""},
		{"9223372036854 s", MaxRetentionSeconds, ""},
		{"15250284 weeks", 15250284 * 7 * 86400, ""},
		{"106751991 days", 106751991 * 86400, ""},
		{"153722867280 minutes", 153722867280 * 60, ""},
		{"2562047788 hours", 2562047788 * 3600, ""},
		{"00000000000000000000000086400", 86400, ""},

		// Negative.
		{"-1", 0, neg},
		{"-1 day", 0, neg},
		{"-1.5 days", 0, neg},
		{" -86400 ", 0, neg},

		// Everything else.
		{"1.5 days", 0, bad + "1.5 days"},
		{"1.5", 0, bad + "1.5"},
		{"1 day 2 hours", 0, bad + "1 day 2 hours"},
		{"1d2h", 0, bad + "1d2h"},
		{"1 month", 0, bad + "1 month"},
		{"1 months", 0, bad + "1 months"},
		{"1 year", 0, bad + "1 year"},
		{"1y", 0, bad + "1y"},
		{"1 ms", 0, bad + "1 ms"},
		{"1 dayss", 0, bad + "1 dayss"},
		{"1 millisecond", 0, bad + "1 millisecond"},
		{"", 0, bad},
		{"   ", 0, bad + "   "},
		{"day", 0, bad + "day"},
		{"d", 0, bad + "d"},
		{"-", 0, bad + "-"},
		{"-0", 0, bad + "-0"},
		{"--1", 0, bad + "--1"},
		{"-day", 0, bad + "-day"},
		{"+1", 0, bad + "+1"},
		{"1e3", 0, bad + "1e3"},
		{"0x10", 0, bad + "0x10"},
		{"1,000", 0, bad + "1,000"},
		{"1_000", 0, bad + "1_000"},
		{"1-", 0, bad + "1-"},
		{"1 s x", 0, bad + "1 s x"},
		{"1 \u017f", 0, bad + "1 \u017f"},       // long s folds to 's' in Unicode; not here
		{"1 wee\u212a", 0, bad + "1 wee\u212a"}, // nor does the Kelvin sign
		{"\u0661", 0, bad + "\u0661"},           // Arabic-Indic one
		{"99999999999999999999", 0, bad + "99999999999999999999"},
		{"9223372036855", 0, bad + "9223372036855"},
		{"9223372036855 s", 0, bad + "9223372036855 s"},
		{"9223372036854775808", 0, bad + "9223372036854775808"},
		{"15250285 weeks", 0, bad + "15250285 weeks"},
		{"106751992 days", 0, bad + "106751992 days"},
		{"153722867281 minutes", 0, bad + "153722867281 minutes"},
		{"2562047789 hours", 0, bad + "2562047789 hours"},
	}
	for _, tt := range tests {
		got, err := ParseRetention(tt.in)
		if tt.wantErr == "" {
			if err != nil || got != tt.want {
				t.Errorf("ParseRetention(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("ParseRetention(%q) = %d, nil; want error %q", tt.in, got, tt.wantErr)
			continue
		}
		if err.Error() != tt.wantErr {
			t.Errorf("ParseRetention(%q) error %q; want %q", tt.in, err, tt.wantErr)
		}
		if !errors.Is(err, rowttl.ErrInvalidProperty) {
			t.Errorf("ParseRetention(%q) error %v does not wrap ErrInvalidProperty", tt.in, err)
		}
		if got != 0 {
			t.Errorf("ParseRetention(%q) returned %d with an error", tt.in, got)
		}
	}
}

func FuzzParseRetention(f *testing.F) {
	for _, s := range []string{
		"86400", "1 day", "24h", "24 H", "2weeks", "0", " 1d ", "1.5 days", "-1", "-1 day",
		"1 day 2 hours", "1 month", "1 year", "", "99999999999999999999", "9223372036855 s",
		"9223372036854", "15250284 weeks", "-0", "+1", "1 \u017f", "\t7 Minutes\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseRetention(s)
		if err != nil {
			if !errors.Is(err, rowttl.ErrInvalidProperty) {
				t.Fatalf("ParseRetention(%q): %v does not wrap ErrInvalidProperty", s, err)
			}
			if msg := err.Error(); msg != "row ttl duration must not be negative" &&
				msg != "invalid or overflowing row ttl duration: "+s {
				t.Fatalf("ParseRetention(%q): unexpected text %q", s, msg)
			}
			return
		}
		if v < 0 || v > MaxRetentionSeconds {
			t.Fatalf("ParseRetention(%q) = %d, out of range", s, v)
		}
		again, err := ParseRetention(strconv.FormatInt(v, 10))
		if err != nil || again != v {
			t.Fatalf("ParseRetention(%q) = %d, but its decimal form re-parses to %d, %v", s, v, again, err)
		}
	})
}
