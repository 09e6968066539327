package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rowttl/rowttl"
)

func TestDemoLevelsOff(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	c := demoConfig{dir: dir, days: 12, perDay: 6000, retention: "3 days", deadline: "1 day"}
	if err := runDemo(context.Background(), &out, c); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	m := regexp.MustCompile(`^plateau ratio: (\d+\.\d\d)$`).FindStringSubmatch(last)
	if m == nil {
		t.Fatalf("last line %q is not the plateau ratio", last)
	}
	ratio, _ := strconv.ParseFloat(m[1], 64)
	if ratio < 1 || ratio > 1.5 {
		t.Fatalf("plateau ratio %.2f, want between 1 and 1.5\n%s", ratio, out.String())
	}
	// The story: what was saved, and the write amplification explained.
	for _, re := range []string{
		`(?m)^After 12 days: \d+\.\d MiB on disk where keeping every row would take \d+\.\d MiB \((\d+)% saved\)`,
		`(?m)^\d+ compactions \(by trigger: .*\); write amplification \d+\.\d\d = bytes written by compaction \(.*\) / bytes ingested \(.*\)`,
	} {
		m := regexp.MustCompile(re).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("output lacks %s:\n%s", re, out.String())
		}
		if len(m) > 1 {
			if saved, _ := strconv.Atoi(m[1]); saved < 50 {
				t.Fatalf("only %d%% saved after 12 days at a 3-day retention:\n%s", saved, out.String())
			}
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "demo-plateau.png")); err != nil || st.Size() == 0 {
		t.Fatalf("no plot: %v", err)
	}
	// The demo table is left for the shell to look at.
	if _, err := os.Stat(filepath.Join(dir, "default", "demo_events", "CURRENT")); err != nil {
		t.Fatal(err)
	}
	// A second run replaces it.
	out.Reset()
	if err := runDemo(context.Background(), &out, c); err != nil {
		t.Fatal(err)
	}
}

// TestDemoModels: the demo of each key model, upserts on the UNIQUE ones,
// at a small size: the disk levels off, expired rows never wait past the
// reclaim deadline, and the write amplification stays low.
func TestDemoModels(t *testing.T) {
	for _, tc := range []struct {
		model    string
		upserts  bool
		header   string
		maxRatio float64
	}{
		{"dup", false, "(DUPLICATE)", 1.2},
		// At this small size a 3-day retention leaves a day's slack of
		// hidden versions between rewrites: 1.21 for both UNIQUE models.
		{"mow", true, "(UNIQUE merge-on-write)", 1.3},
		{"mor", true, "(UNIQUE merge-on-read)", 1.3},
	} {
		t.Run(tc.model, func(t *testing.T) {
			var out bytes.Buffer
			c := demoConfig{dir: t.TempDir(), days: 12, perDay: 6000, retention: "3 days", deadline: "1 day",
				model: tc.model, upserts: tc.upserts, keys: 0}
			if err := runDemo(context.Background(), &out, c); err != nil {
				t.Fatal(err)
			}
			text := out.String()
			if !strings.Contains(strings.SplitN(text, "\n", 2)[0], tc.header) {
				t.Fatalf("the first line does not name the model %s:\n%s", tc.header, text)
			}
			if tc.upserts && !strings.Contains(text, "each an upsert of one of 30000 keys") {
				t.Fatalf("the upserts and their keys (five days of events) are not said:\n%s", text)
			}
			m := regexp.MustCompile(`(?m)^plateau ratio: (\d+\.\d\d)$`).FindStringSubmatch(text)
			if m == nil {
				t.Fatalf("no plateau ratio:\n%s", text)
			}
			ratio, _ := strconv.ParseFloat(m[1], 64)
			if ratio < 1 || ratio > tc.maxRatio {
				t.Errorf("plateau ratio %.2f, want between 1 and %.2f\n%s", ratio, tc.maxRatio, text)
			}
			if !regexp.MustCompile(`(?m)^Lag: the oldest expired row still on disk had waited at most \S+ at the end of a day, within the 1d reclaim deadline every day\.$`).MatchString(text) {
				t.Errorf("expired rows waited past the reclaim deadline, or the lag is not said:\n%s", text)
			}
			m = regexp.MustCompile(`(?m)^\d+ compactions \(by trigger: [a-z]+ \d+.*\); write amplification (\d+\.\d\d) = `).FindStringSubmatch(text)
			if m == nil {
				t.Fatalf("no compaction line:\n%s", text)
			}
			if wa, _ := strconv.ParseFloat(m[1], 64); wa > 3 {
				t.Errorf("write amplification %.2f, want at most 3", wa)
			}
			t.Logf("%s: plateau ratio %.2f, write amplification %s", tc.model, ratio, m[1])
		})
	}
}

// TestDemoFlags: the model flags' failure modes say what is wrong.
func TestDemoFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--model", "agg"}, `--model "agg": want dup, mow or mor`},
		{[]string{"--upserts"}, "--upserts: a DUPLICATE table keeps every row; use --model mow or mor"},
		{[]string{"--model", "mor", "--keys", "10"}, "--keys: only the upserts draw from keys; add --upserts"},
		{[]string{"--model", "mow", "--upserts", "--keys", "-1"}, "--keys -1: must be at least 1"},
	} {
		_, _, err := runIn(demoCommand(), "", append([]string{"--dir", t.TempDir()}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.err)
		}
	}
}
