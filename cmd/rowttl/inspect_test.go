package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rowttl/rowttl/table"
)

func TestInspect(t *testing.T) {
	dir := t.TempDir()
	var demo bytes.Buffer
	if err := runDemo(context.Background(), &demo, demoConfig{dir: dir, days: 4, perDay: 600, retention: "2 days"}); err != nil {
		t.Fatal(err)
	}
	db, err := table.OpenDB(dir, &table.Options{DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl, err := db.Table("default", "demo_events")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := inspect(context.Background(), &out, "default.demo_events", tbl, time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"table default.demo_events: DUPLICATE KEY", "row TTL: event_time + 2d", "x every row of the line has expired", "rowset ", " expires 2026-01-0"} {
		if !strings.Contains(s, want) {
			t.Fatalf("inspect output lacks %q:\n%s", want, s)
		}
	}
}
