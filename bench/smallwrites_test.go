package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestPercentile(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		var out []time.Duration
		for _, x := range xs {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // unsorted on purpose
	}
	for _, c := range []struct {
		ds   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 0.5, 0},
		{ms(7), 0.99, 7 * time.Millisecond},
		{ms(3, 1, 2), 0.5, 2 * time.Millisecond},
		{ms(hundred...), 0.5, 50 * time.Millisecond},
		{ms(hundred...), 0.99, 99 * time.Millisecond},
		{ms(hundred...), 1, 100 * time.Millisecond},
	} {
		if got := Percentile(c.ds, c.p); got != c.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", c.ds, c.p, got, c.want)
		}
	}
}

// TestSmallWrites runs the small-writes workloads on a small table: every
// write lands (the live count is the generated rows' own), latencies are
// ordered, and the compaction part times writes both idle and during the
// compaction.
func TestSmallWrites(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	const writes = 60
	o := Options{Dir: t.TempDir(), Rows: 5000, Runs: 1, Warmup: -1, Mem: mem, Writes: writes}
	if _, err := Run(ctx, o, "smallwrites"); err == nil || !strings.Contains(err.Error(), "run Prepare first") {
		t.Fatalf("without the prepared table: %v", err)
	}
	if err := Prepare(ctx, o); err != nil {
		t.Fatal(err)
	}
	rs, err := Run(ctx, o, "smallwrites")
	if err != nil {
		t.Fatal(err)
	}
	g := SmallWriteRows(writes, DefaultSeed)
	var live int
	for i := int64(0); i < int64(SmallWriteWarmup(writes)+writes); i++ {
		if g.Row(i).Live(Now.UnixMicro()) {
			live++
		}
	}
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3: %+v", len(rs), rs)
	}
	for i, workers := range SmallWriteWorkers {
		r := rs[i]
		if r.Workload != fmt.Sprintf("smallwrites_%d", workers) || r.Goroutines != workers || r.OpRows != writes || r.Rows != writes {
			t.Errorf("bad result %+v", r)
		}
		if r.P50Seconds <= 0 || r.P99Seconds < r.P50Seconds || r.Seconds <= 0 {
			t.Errorf("%s: p50 %v, p99 %v, seconds %v", r.Workload, r.P50Seconds, r.P99Seconds, r.Seconds)
		}
		if want := fmt.Sprintf("live=%d", live); r.Answer != want {
			t.Errorf("%s: answer %q, want %q", r.Workload, r.Answer, want)
		}
	}
	c := rs[2]
	var compactions, nduring, nidle int
	if _, err := fmt.Sscanf(c.Answer, "compactions=%d writes_during=%d writes_idle=%d", &compactions, &nduring, &nidle); err != nil {
		t.Fatalf("compaction answer %q: %v", c.Answer, err)
	}
	if c.Workload != "smallwrites_compaction" || c.Rows != 5000 || c.OpRows < 1 || c.IdleP99Seconds <= 0 || c.P99Seconds <= 0 ||
		nduring != int(c.OpRows) || (nduring < compactionWrites || nidle < compactionWrites) && compactions != maxCompactions {
		t.Errorf("bad compaction result %+v", c)
	}
	if s := SmallWriteSummary(c); !strings.Contains(s, "idle p50") {
		t.Errorf("summary %q", s)
	}
}

// TestSmallWritesTrace checks that Options.TraceDir gets an execution
// trace of the compaction writes' first round, their writes marked as
// regions, and that a directory it cannot write to fails the workload.
func TestSmallWritesTrace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	o := Options{Dir: dir, Rows: 5000, Runs: 1, Warmup: -1, Writes: 10}
	if err := Prepare(ctx, o); err != nil {
		t.Fatal(err)
	}
	o.defaults()
	o.TraceDir = filepath.Join(dir, "traces")
	if _, err := runCompactionWrites(ctx, &o); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(o.TraceDir, "smallwrites_compaction-random.trace"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("go 1.")) {
		t.Fatalf("the trace starts with %q, not a trace header", data[:min(len(data), 16)])
	}
	for _, region := range []string{"write idle", "write during compaction"} {
		if !bytes.Contains(data, []byte(region)) {
			t.Errorf("the trace has no region %q", region)
		}
	}

	o.TraceDir = filepath.Join(dir, "file")
	if err := os.WriteFile(o.TraceDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runCompactionWrites(ctx, &o); err == nil || !strings.Contains(err.Error(), "trace: ") {
		t.Fatalf("a trace directory that is a file: %v", err)
	}
}
