package query

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/ttlcol"
)

// memoRow is a row of the tables of the liveness memo's tests (scanTable):
// id, v and a stored __TTL__ (nil: NULL).
type memoRow struct {
	v   int64
	ttl *int64
}

// memoRowset writes rows into one rowset of pages of pageRows rows.
func memoRowset(t *testing.T, mem memory.Allocator, rows []memoRow, pageRows int) *rowset.Handle {
	t.Helper()
	b := array.NewRecordBuilder(mem, scanPhysical())
	defer b.Release()
	for i, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Int64Builder).Append(r.v)
		if r.ttl == nil {
			b.Field(2).(*array.Int64Builder).AppendNull()
		} else {
			b.Field(2).(*array.Int64Builder).Append(*r.ttl)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return writeRowset(t, scanPhysical(), 2, segment.WriterOptions{PageRows: pageRows}, rec)
}

// memoForm is one way a scan reads the rows: the three Aggregate paths that
// consult the memo and the row path.
type memoForm int

const (
	formCount    memoForm = iota // count(*): the memo's count
	formSum                      // sum(v): the memo's bits
	formFiltered                 // count(*) WHERE v >= 50: ANDed into the filter's rows
	formRows                     // Next WHERE v >= 50: the row path's late TTL check
	formProject                  // Next of id: the row path, unfiltered
	numForms
)

func (f memoForm) String() string {
	return [...]string{"count", "sum", "filtered", "rows", "project"}[f]
}

// memoResult is a scan's answer: rows and the sum of v (or of the ids, for
// the row path).
type memoResult struct{ rows, sum int64 }

// memoScan reads h at threshold thr (direct mode: the now) in form f,
// without the memo when off.
func memoScan(t *testing.T, mem memory.Allocator, h *rowset.Handle, pol ttlcol.Policy, now int64, f memoForm, off bool, workers int) (memoResult, Counters) {
	t.Helper()
	h.Ref()
	snap := &Snapshot{Schema: scanTable, Policy: pol, Model: schema.Duplicate,
		Rowsets: []*rowset.Handle{h}, Release: h.Unref, PageMem: mem}
	req := Request{Now: time.UnixMicro(now), Parallelism: workers, Columns: []string{}}
	switch f {
	case formSum:
		req.Columns = []string{"v"}
	case formFiltered:
		req.Filter = Compare("v", Ge, int64(50))
	case formRows:
		req.Filter = Compare("v", Ge, int64(50))
		req.Columns = []string{"id"}
	case formProject:
		req.Columns = []string{"id"}
	}
	s, err := NewScan(context.Background(), mem, snap, req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	s.noLiveMemo = off
	var res memoResult
	if f == formRows || f == formProject {
		for s.Next() {
			ids := s.RecordBatch().Column(0).(*array.Int64)
			res.rows += int64(ids.Len())
			for _, id := range ids.Int64Values() {
				res.sum += id
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		return res, s.Counters
	}
	agg, err := s.Aggregate()
	if err != nil {
		t.Fatal(err)
	}
	res.rows = agg.Rows
	if f == formSum {
		res.sum = agg.Sums[0].Int
	}
	return res, s.Counters
}

// memoModel is the answer of form f over rows at threshold thr.
func memoModel(rows []memoRow, thr int64, f memoForm) memoResult {
	var res memoResult
	for i, r := range rows {
		if r.ttl != nil && *r.ttl <= thr || (f == formFiltered || f == formRows) && r.v < 50 {
			continue
		}
		res.rows++
		switch f {
		case formSum:
			res.sum += r.v
		case formRows, formProject:
			res.sum += int64(i)
		}
	}
	return res
}

// memoHorizon is what the memo built at thr must answer up to: the
// expiration after the soonRows soonest of the live rows, or none.
func memoHorizon(rows []memoRow, thr int64) (int64, bool) {
	var live []int64
	for _, r := range rows {
		if r.ttl != nil && *r.ttl > thr {
			live = append(live, *r.ttl)
		}
	}
	slices.Sort(live)
	if len(live) <= soonRows {
		return 0, false
	}
	return live[soonRows], true
}

func ttlOf(v int64) *int64 { return &v }

// TestLiveMemoEdges checks the rule of the memo at its edges: built at a
// threshold T (the second scan that tests the page), it answers at T and
// up to H-1, H being the expiration after its soon rows, and never at H
// or below T; NULL expirations stay live; pages the zone maps decide
// (all expired, all live, every expiration passed) never build one.
func TestLiveMemoEdges(t *testing.T) {
	const T = 1000
	// mixed: 300 rows, every 10th NULL, the others expiring at 800 + 2i:
	// the memo at T keeps 64 soon rows and stops at the next expiration.
	var mixed []memoRow
	for i := range 300 {
		r := memoRow{v: int64(i % 100)}
		if i%10 != 0 {
			r.ttl = ttlOf(800 + 2*int64(i))
		}
		mixed = append(mixed, r)
	}
	H, ok := memoHorizon(mixed, T)
	if !ok {
		t.Fatal("mixed page: no horizon")
	}
	// few: 40 rows live with expirations after T, the others expired or
	// NULL: the memo answers at any later threshold.
	var few []memoRow
	for i := range 300 {
		r := memoRow{v: int64(i % 100)}
		switch {
		case i%10 == 0:
		case i%7 == 0 && i < 280:
			r.ttl = ttlOf(2000 + int64(i))
		default:
			r.ttl = ttlOf(int64(i))
		}
		few = append(few, r)
	}
	var expired, live []memoRow
	for i := range 300 {
		expired = append(expired, memoRow{v: int64(i % 100), ttl: ttlOf(int64(i))})
		live = append(live, memoRow{v: int64(i % 100), ttl: ttlOf(T + 1 + int64(i))})
	}
	for _, tc := range []struct {
		name     string
		rows     []memoRow
		now      int64
		wantMemo bool
		// rowsMemo: the row path tests the rows a filter left of a
		// page whose expirations have all passed, where Aggregate
		// reads the validity alone.
		rowsMemo bool
	}{
		{"now = T", mixed, T, true, false},
		{"now = H-1", mixed, H - 1, true, false},
		{"now = H", mixed, H, false, false},
		{"now = T-1", mixed, T - 1, false, false},
		{"now well before T", mixed, 900, false, false},
		{"few live: far later", few, 2250, true, false},
		{"few live: last expiration", few, 2272, true, false},
		{"few live: all passed", few, 2273, false, true},
		{"all expired", expired, T, false, false},
		{"all live", live, T, false, false},
	} {
		for f := range numForms {
			t.Run(fmt.Sprintf("%s/%s", tc.name, f), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				h := memoRowset(t, mem, tc.rows, 1024)
				defer h.Unref()
				pol := ttlcol.Policy{Mode: ttlcol.DirectMode}
				for i := range 2 {
					// The first scan marks the page, the second builds.
					got, c := memoScan(t, mem, h, pol, T, f, false, 1)
					if want := memoModel(tc.rows, T, f); got != want || c.PagesMemo != 0 {
						t.Fatalf("scan %d at T: %+v with %d memo pages, want %+v and none", i, got, c.PagesMemo, want)
					}
				}
				got, c := memoScan(t, mem, h, pol, tc.now, f, false, 1)
				if want := memoModel(tc.rows, tc.now, f); got != want {
					t.Fatalf("now %d: %+v, want %+v", tc.now, got, want)
				}
				if (c.PagesMemo > 0) != (tc.wantMemo || (f == formRows || f == formProject) && tc.rowsMemo) {
					t.Fatalf("now %d: %d memo pages (H %d), want memo %v", tc.now, c.PagesMemo, H, tc.wantMemo)
				}
			})
		}
	}
}

// TestLiveMemoRandom compares scans of a random table at a random walk of
// nows (up and down, so memos are built, used, outlived and passed by
// earlier nows), with the memo and without, against a plain model, in
// every form, with several workers; in source mode the retention changes
// between scans, as an ALTER changes it. The seed is printed.
func TestLiveMemoRandom(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	// gap puts the expirations in two clusters, at the start and the end
	// of the span, so that a page's zone map misjudges where its soon rows
	// lie and the memo's search for them widens its span.
	for _, gap := range []bool{false, true} {
		for _, pageRows := range []int{256, 4096} {
			t.Run(fmt.Sprintf("gap=%v/page-rows=%d", gap, pageRows), func(t *testing.T) {
				memoRandomWalk(t, seed, rng, gap, pageRows)
			})
		}
	}
}

func memoRandomWalk(t *testing.T, seed uint64, rng *rand.Rand, gap bool, pageRows int) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n, span = 10000, 10_000_000
	rows := make([]memoRow, n)
	for i := range rows {
		rows[i].v = rng.Int64N(100)
		switch k := rng.IntN(20); {
		case k < 2:
		case k < 3:
			// Runs of close expirations: ties and many soon rows.
			rows[i].ttl = ttlOf(span / 2)
		case gap && k < 12:
			rows[i].ttl = ttlOf(rng.Int64N(span / 10))
		case gap:
			rows[i].ttl = ttlOf(span - rng.Int64N(span/10))
		default:
			rows[i].ttl = ttlOf(rng.Int64N(span))
		}
	}
	h := memoRowset(t, mem, rows, pageRows)
	defer h.Unref()
	now := rng.Int64N(span / 2)
	memoPages := int64(0)
	for step := range 300 {
		switch rng.IntN(10) {
		case 0:
			now -= rng.Int64N(span / 50)
		case 1, 2:
			// Stay: the memo's own threshold.
		default:
			now += rng.Int64N(span / 100)
		}
		f := memoForm(rng.IntN(int(numForms)))
		workers := 1 + rng.IntN(3)
		pol := ttlcol.Policy{Mode: ttlcol.DirectMode}
		thr := now
		if rng.IntN(4) == 0 {
			// A source-mode table whose __TTL__ holds the source column's
			// µs: a retention of r seconds judges at now - r·10^6.
			r := rng.Int64N(3)
			pol = ttlcol.Policy{Mode: ttlcol.SourceMode, SourceColumn: "v", Retention: r}
			thr = now - r*1_000_000
		}
		want := memoModel(rows, thr, f)
		got, c := memoScan(t, mem, h, pol, now, f, false, workers)
		plain, pc := memoScan(t, mem, h, pol, now, f, true, workers)
		if got != want || plain != want || pc.PagesMemo != 0 {
			t.Fatalf("seed %d step %d: now %d threshold %d, %s, %d workers: %+v with the memo, %+v without (%d memo pages), want %+v",
				seed, step, now, thr, f, workers, got, plain, pc.PagesMemo, want)
		}
		memoPages += c.PagesMemo
	}
	if memoPages == 0 {
		t.Fatalf("seed %d: no scan used the memo", seed)
	}
}

// TestLiveMemoConcurrent runs scans of one table from several goroutines at
// nows that move on, so that they build, publish and read the memos of the
// same pages at once (run with -race).
func TestLiveMemoConcurrent(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]memoRow, 4000)
	for i := range rows {
		rows[i].v = rng.Int64N(100)
		if rng.IntN(10) > 0 {
			rows[i].ttl = ttlOf(rng.Int64N(1_000_000))
		}
	}
	h := memoRowset(t, mem, rows, 256)
	defer h.Unref()
	pol := ttlcol.Policy{Mode: ttlcol.DirectMode}
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := range 40 {
				now := int64(400_000 + i*1000 + g)
				f := memoForm((i + g) % int(numForms))
				got, _ := memoScan(t, mem, h, pol, now, f, false, 2)
				if want := memoModel(rows, now, f); got != want {
					errs <- fmt.Errorf("goroutine %d, now %d, %s: %+v, want %+v", g, now, f, got, want)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
