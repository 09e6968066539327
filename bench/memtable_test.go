package bench

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestMemtable runs the memtable workload on a small table: every read
// gives one result with both timings, the count is the generated rows'
// own (the table's and the memtables'), and the workload refuses to run
// without the prepared table or a SQL session.
func TestMemtable(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	const rows = 6000
	o := Options{Dir: t.TempDir(), Rows: rows, Runs: 2, Warmup: -1, Mem: mem, SQL: openTestSQL}
	if _, err := Run(ctx, o, "memtable"); err == nil || !strings.Contains(err.Error(), "run Prepare first") {
		t.Fatalf("without the prepared table: %v", err)
	}
	if err := Prepare(ctx, o); err != nil {
		t.Fatal(err)
	}
	noSQL := o
	noSQL.SQL = nil
	if _, err := Run(ctx, noSQL, "memtable"); err == nil || !strings.Contains(err.Error(), "needs a SQL session") {
		t.Fatalf("without a SQL session: %v", err)
	}
	rs, err := Run(ctx, o, "memtable")
	if err != nil {
		t.Fatal(err)
	}
	m := MemtableRows(rows)
	if m != rows/10 || m%MemtableWriteRows == 0 {
		t.Fatalf("%d rows in memtables: want a tenth of the table, its last write a short one", m)
	}
	g := Events(rows+m, Random, DefaultSeed)
	var live int64
	for i := int64(0); i < rows+m; i++ {
		if g.Row(i).Live(Now.UnixMicro()) {
			live++
		}
	}
	reads := memtableReads()
	if len(rs) != len(reads) {
		t.Fatalf("%d results, want %d", len(rs), len(reads))
	}
	for i, r := range rs {
		if r.Workload != MemtableWorkload(reads[i]) || r.Rows != rows || r.MemtableRows != m || len(r.Runs) != 2 {
			t.Errorf("bad result %+v", r)
		}
		if r.Seconds <= 0 || r.FlushedSeconds <= 0 || MemtableRatio(r) <= 0 || strings.HasPrefix(r.Answer, ErrorAnswer) {
			t.Errorf("%s: seconds %v, flushed %v, answer %q", r.Workload, r.Seconds, r.FlushedSeconds, r.Answer)
		}
		if !strings.Contains(MemtableSummary(r), "after their flush") {
			t.Errorf("summary %q", MemtableSummary(r))
		}
	}
	for _, name := range []string{"count", "q01"} {
		r := rs[indexOf(reads, name)]
		if r.Answer != strconv.FormatInt(live, 10) {
			t.Errorf("%s: answer %q, want %d live rows", name, r.Answer, live)
		}
	}
	// The target's size: the newest million of ten million rows.
	if MemtableRows(10_000_000) != 1_000_000 || MemtableRows(1e9) != DefaultMemtableRows {
		t.Errorf("memtable rows %d at 10M rows, %d at 1G", MemtableRows(10_000_000), MemtableRows(1e9))
	}
	// Options.MemtableRows sets them directly.
	set := o
	set.MemtableRows, set.Runs = 1500, 1
	if rs, err := Run(ctx, set, "memtable"); err != nil || len(rs) == 0 || rs[0].MemtableRows != 1500 || rs[0].OpRows != rows+1500 {
		t.Fatalf("with 1500 memtable rows asked: %v, %+v", err, rs)
	}
	var b strings.Builder
	CompareTable(&b, rs)
	if out := b.String(); !strings.Contains(out, "memtable_q12") || !strings.Contains(out, "worst") {
		t.Errorf("compare table:\n%s", out)
	}
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}
