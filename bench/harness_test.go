package bench

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/table"
)

const testRows = 20_000

// expected is the brute-force answer of every workload over the generated
// rows.
type expected struct {
	count  int64
	sum    float64
	groups map[int64]float64
	proj   Projection
}

func bruteForce(g *Generator) expected {
	now := Now.UnixMicro()
	e := expected{groups: map[int64]float64{}}
	for i := int64(0); i < g.Rows; i++ {
		r := g.Row(i)
		if !r.Live(now) {
			continue
		}
		e.count++
		e.sum += r.Amount
		e.groups[r.UserID] += r.Amount
		e.proj.Rows++
		e.proj.IDSum += r.ID
		e.proj.MessageBytes += int64(len(r.Message))
	}
	return e
}

func (e expected) digest() GroupDigest {
	var d GroupDigest
	for k, v := range e.groups {
		d.Add(k, v)
	}
	return d
}

func closeEnough(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// TestHarness runs every workload of the harness, through Run as the
// command does, on a small table of each layout and checks the answers
// against a brute-force computation over the generated rows.
func TestHarness(t *testing.T) {
	for _, layout := range []Layout{Random, Correlated} {
		t.Run(string(layout), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			o := Options{Dir: t.TempDir(), Rows: testRows, Layout: layout, Runs: 1, Warmup: -1, Mem: mem,
				PageRows: 1024, SegmentRows: 8192}
			if err := Prepare(ctx, o); err != nil {
				t.Fatal(err)
			}
			want := bruteForce(Events(testRows, layout, DefaultSeed))
			if want.count == 0 || want.count == testRows {
				t.Fatalf("degenerate data: %d of %d rows live", want.count, testRows)
			}
			got := map[string]Result{}
			for _, w := range apiWorkloads {
				if w == "smallwrites" || w == "memtable" {
					continue // TestSmallWrites, TestMemtable: they read more than the table's rows
				}
				if w == "import" {
					continue // it runs SQL, which sits above this package: cmd/rowttl's TestBenchImport
				}
				rs, err := Run(ctx, o, w)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rs {
					if r.Engine != Engine || r.Layout != string(layout) || r.Rows != testRows || r.Seconds <= 0 || len(r.Runs) != 1 {
						t.Errorf("%s: bad result %+v", r.Workload, r)
					}
					if r.BytesOnDisk <= 0 {
						t.Errorf("%s: bytes on disk %d", r.Workload, r.BytesOnDisk)
					}
					got[r.Workload] = r
				}
			}
			check := func(w, want string) {
				t.Helper()
				if got[w].Answer != want {
					t.Errorf("%s: answer %q, want %q", w, got[w].Answer, want)
				}
			}
			check("load", strconv.Itoa(testRows))
			check("count", strconv.FormatInt(want.count, 10))
			if s, err := strconv.ParseFloat(got["sum"].Answer, 64); err != nil || !closeEnough(s, want.sum) {
				t.Errorf("sum: answer %q, want %v", got["sum"].Answer, want.sum)
			}
			d := want.digest()
			if !strings.HasPrefix(got["groupby"].Answer, fmt.Sprintf("groups=%d ", d.Groups)) ||
				!strings.HasSuffix(got["groupby"].Answer, fmt.Sprintf(" checksum=%016x", d.Checksum)) {
				t.Errorf("groupby: answer %q, want %q", got["groupby"].Answer, FormatDigest(d))
			}
			check("project", want.proj.String())
			check("export", strconv.FormatInt(want.count, 10))
			rc := got["reclaim"]
			check("reclaim", fmt.Sprintf("rows_on_disk=%d", want.count))
			if rc.BytesBefore <= rc.BytesOnDisk || rc.LiveOnlyBytes <= 0 {
				t.Errorf("reclaim: before %d, after %d, live-only %d", rc.BytesBefore, rc.BytesOnDisk, rc.LiveOnlyBytes)
			}
			wantUp := bruteForceUpserts(testRows)
			for _, m := range []string{"upsert_mow", "upsert_mor"} {
				check(m, "versions=10")
				check(m+"_count", strconv.FormatInt(wantUp, 10))
			}
			// A full compaction of a UNIQUE table keeps exactly the newest
			// version of each key alive at Now.
			for _, m := range []string{"reclaim_mow", "reclaim_mor"} {
				check(m, fmt.Sprintf("rows_on_disk=%d", wantUp))
				if r := got[m]; r.BytesBefore <= r.BytesOnDisk || r.LiveOnlyBytes <= 0 || r.OpRows == 0 {
					t.Errorf("%s: before %d, after %d, live-only %d, op rows %d", m, r.BytesBefore, r.BytesOnDisk, r.LiveOnlyBytes, r.OpRows)
				}
			}
		})
	}
}

// bruteForceUpserts counts the keys whose last write is alive at Now.
func bruteForceUpserts(rows int64) int64 {
	g, _ := Upserts(rows, DefaultSeed)
	last := map[int64]Row{}
	for i := int64(0); i < g.Rows; i++ {
		r := g.Row(i)
		last[r.ID] = r
	}
	var n int64
	for _, r := range last {
		if r.Live(Now.UnixMicro()) {
			n++
		}
	}
	return n
}

// TestReclaimKeepsExactlyLiveRows compacts a copy of the prepared table as
// the reclaim workload does and checks, reading at a now before every
// expiration (which sees every row on disk), that exactly the live rows are
// left.
func TestReclaimKeepsExactlyLiveRows(t *testing.T) {
	ctx := context.Background()
	o := Options{Dir: t.TempDir(), Rows: testRows, Layout: Random, PageRows: 1024, SegmentRows: 8192}
	if err := Prepare(ctx, o); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(o.Dir, "copy")
	if err := cloneTable(o.EventsDir(), dir); err != nil {
		t.Fatal(err)
	}
	tbl, err := table.Open(dir, o.tableOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	if err := tbl.CompactAt(ctx, table.Full, Now); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Check(); err != nil {
		t.Fatal(err)
	}
	// A read at a now before every expiration sees every row still on disk.
	r, err := tbl.Scan(ctx, query.Request{Now: time.UnixMicro(0), Columns: []string{ColID}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	seen := map[int64]bool{}
	for r.Next() {
		for _, id := range r.RecordBatch().Column(0).(*array.Int64).Int64Values() {
			seen[id] = true
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	g := Events(testRows, Random, DefaultSeed)
	for i := int64(0); i < testRows; i++ {
		if live := g.Row(i).Live(Now.UnixMicro()); live != seen[i] {
			t.Fatalf("row %d: live %v, on disk after reclaim %v", i, live, seen[i])
		}
	}
	// The original table is untouched by the copy's compaction.
	orig, err := table.Open(o.EventsDir(), o.tableOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	st, err := orig.Stats(ctx, Now)
	if err != nil {
		t.Fatal(err)
	}
	if st.RowsOnDisk != testRows {
		t.Fatalf("prepared table has %d rows on disk after the copy's reclaim, want %d", st.RowsOnDisk, testRows)
	}
}
