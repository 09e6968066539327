package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
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
		`(?m)^\d+ compactions; write amplification \d+\.\d\d = bytes written by compaction \(.*\) / bytes ingested \(.*\)`,
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
