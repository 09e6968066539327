package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowttl/rowttl/bench"
)

func smallBench(t *testing.T) benchFlags {
	return benchFlags{rows: 5000, layouts: "random,correlated", workloads: "count,sum,reclaim", runs: 1, warmup: 0,
		dir: t.TempDir(), seed: bench.DefaultSeed, isolate: false, writes: 10}
}

// The command prints one JSON line per workload and layout with the
// contract's fields, in process (the test binary is not rowttl, so no
// --isolate).
func TestBenchJSON(t *testing.T) {
	f := smallBench(t)
	f.json = true
	var out, progress bytes.Buffer
	if err := runBench(context.Background(), &out, &progress, f); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	rs, err := bench.ReadResults(&out)
	if err != nil {
		t.Fatal(err)
	}
	// reclaim gives three per layout: the events table, reclaim_mow and
	// reclaim_mor.
	if len(rs) != 10 {
		t.Fatalf("%d results, want 10:\n%s", len(rs), text)
	}
	for _, r := range rs {
		if r.Engine != "rowttl" || r.Rows != 5000 || r.Seconds <= 0 || r.BytesOnDisk <= 0 || r.Answer == "" {
			t.Errorf("bad result %+v", r)
		}
	}
	if !strings.Contains(progress.String(), "preparing 5000 random rows") {
		t.Errorf("no progress on stderr: %q", progress.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		for _, field := range []string{`"engine"`, `"workload"`, `"layout"`, `"rows"`, `"seconds"`, `"bytes_on_disk"`, `"peak_rss_bytes"`} {
			if !strings.Contains(line, field) {
				t.Errorf("line %s lacks %s", line, field)
			}
		}
	}
}

// Without --json the command prints a table; --clean removes the prepared
// tables.
func TestBenchTable(t *testing.T) {
	f := smallBench(t)
	f.layouts = "random"
	f.clean = true
	var out bytes.Buffer
	if err := runBench(context.Background(), &out, &bytes.Buffer{}, f); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"workload", "peak RSS", "count", "sum", "reclaim", "reclaim_mow", "reclaim_mor", "live-only"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	ents, _ := os.ReadDir(f.dir)
	if len(ents) != 0 {
		t.Errorf("--clean left %v", ents)
	}
}

func TestBenchFlagsRejected(t *testing.T) {
	for _, f := range []benchFlags{
		{rows: 0, runs: 1, layouts: "random", workloads: "count", writes: 1},
		{rows: 10, runs: 1, layouts: "sideways", workloads: "count", writes: 1},
		{rows: 10, runs: 1, layouts: "random", workloads: "count,fly", writes: 1},
		{rows: 10, runs: 1, layouts: "random", workloads: "smallwrites", writes: 0},
	} {
		f.dir = t.TempDir()
		if err := runBench(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, f); err == nil {
			t.Errorf("%+v: no error", f)
		}
	}
}

// import loads the live rows back through SQL, import_load through
// rowttl load's path: the table then holds as many rows as count finds
// alive in the events table.
func TestBenchImport(t *testing.T) {
	f := smallBench(t)
	f.layouts, f.workloads, f.json = "random", "count,import", true
	var out bytes.Buffer
	if err := runBench(context.Background(), &out, &bytes.Buffer{}, f); err != nil {
		t.Fatal(err)
	}
	rs, err := bench.ReadResults(&out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || rs[0].Workload != "count" || rs[1].Workload != "import" || rs[2].Workload != "import_load" {
		t.Fatalf("results %+v", rs)
	}
	for _, imp := range rs[1:] {
		if imp.Answer != rs[0].Answer || imp.Answer == "0" || imp.OpRows <= 0 || imp.BytesOnDisk <= 0 {
			t.Errorf("%s %+v, count answered %s", imp.Workload, imp, rs[0].Answer)
		}
	}
}

// --compare pairs rowttl's lines with DuckDB's, upserts included.
func TestBenchCompare(t *testing.T) {
	lines := []bench.Result{
		{Engine: "rowttl", Workload: "count", Layout: "random", Rows: 10, Seconds: 1, Answer: "5"},
		{Engine: "duckdb", Workload: "count", Layout: "random", Rows: 10, Seconds: 2, Answer: "5"},
		{Engine: "rowttl", Workload: "sum", Layout: "random", Rows: 10, Seconds: 1, Answer: "2.499319835e+10"},
		{Engine: "duckdb", Workload: "sum", Layout: "random", Rows: 10, Seconds: 1, Answer: "2.499319834e+10"},
		{Engine: "rowttl", Workload: "upsert_mor_count", Layout: "random", Rows: 10, Seconds: 3, Answer: "7"},
		{Engine: "duckdb", Workload: "upsert_count", Layout: "random", Rows: 10, Seconds: 1, Answer: "8"},
	}
	var in bytes.Buffer
	for _, r := range lines {
		if err := r.WriteJSON(&in); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "results.jsonl")
	if err := os.WriteFile(path, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runBench(context.Background(), &out, &bytes.Buffer{}, benchFlags{compare: path}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"0.50", "same", "3.00", "DIFFER: 7 vs 8"} {
		if !strings.Contains(got, want) {
			t.Errorf("comparison lacks %q:\n%s", want, got)
		}
	}
}

// --compare puts the small writes of every engine side by side, rowttl's
// rate beside each other's.
func TestBenchCompareSmallWrites(t *testing.T) {
	lines := []bench.Result{
		{Engine: "sqlite", Workload: "smallwrites_1", Rows: 100, OpRows: 100, Seconds: 0.1, P50Seconds: 0.0008, P99Seconds: 0.002, Goroutines: 1, Answer: "live=60"},
		{Engine: "rowttl", Workload: "smallwrites_1", Rows: 100, OpRows: 100, Seconds: 0.2, P50Seconds: 0.0015, P99Seconds: 0.004, Goroutines: 1, Answer: "live=60"},
		{Engine: "duckdb", Workload: "smallwrites_16", Rows: 100, OpRows: 100, Seconds: 0.25, P50Seconds: 0.01, P99Seconds: 0.03, Goroutines: 16, Answer: "live=60"},
		{Engine: "rowttl", Workload: "smallwrites_16", Rows: 100, OpRows: 100, Seconds: 0.5, P50Seconds: 0.02, P99Seconds: 0.05, Goroutines: 16, Answer: "live=60"},
		{Engine: "rowttl", Workload: "smallwrites_compaction", Rows: 1000000, OpRows: 40, Seconds: 1.5, P50Seconds: 0.002, P99Seconds: 0.006, IdleP99Seconds: 0.003, Goroutines: 1},
	}
	var in bytes.Buffer
	for _, r := range lines {
		if err := r.WriteJSON(&in); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "results.jsonl")
	if err := os.WriteFile(path, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runBench(context.Background(), &out, &bytes.Buffer{}, benchFlags{compare: path}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"small writes", "sqlite", "duckdb", "1000", "500", "0.50", "200", "6.00", "3.00",
		"p99 of a 10-row write during full compactions of 1000000 rows (1.50 s in all) is 2.0x its idle p99"} {
		if !strings.Contains(got, want) {
			t.Errorf("comparison lacks %q:\n%s", want, got)
		}
	}
	// rowttl's line comes first in each workload.
	if i, j := strings.Index(got, "rowttl"), strings.Index(got, "sqlite"); i < 0 || i > j {
		t.Errorf("rowttl not first:\n%s", got)
	}
}

// --trace reaches the smallwrites workload: its trace file is written.
func TestBenchTrace(t *testing.T) {
	f := smallBench(t)
	f.layouts, f.workloads = "random", "smallwrites"
	f.traceDir = filepath.Join(t.TempDir(), "traces")
	if err := runBench(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}, f); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(f.traceDir, "smallwrites_compaction-random.trace")); err != nil || st.Size() == 0 {
		t.Fatalf("no trace: %v", err)
	}
}
