package table

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
	"github.com/rowttl/rowttl/vfs"
)

// TestEstimateRowsReadsNoPage: the planners' row estimate comes from
// metadata in memory, so it works with every file read failing, while the
// exact expired counts of Rowsets read the straddling __TTL__ pages; and it
// stays within the bounds the zone maps and histogram allow.
func TestEstimateRowsReadsNoPage(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	var failReads atomic.Bool
	efs := vfs.NewErrorFS(vfs.NewMemFS(), vfs.InjectorFunc(func(o vfs.Op, path string) error {
		if failReads.Load() && o == vfs.OpRead {
			return &vfs.InjectedError{Op: o, Path: path, Err: vfs.ErrInjected}
		}
		return nil
	}))
	tbl := mustCreate(t, "/t", directDef(), reliabilityOpts(efs, mem))
	defer checkClose(t, tbl)
	for i := range 4 {
		rec := eventBatch(mem, genEvents(rng, int64(i)*100, 100), true)
		mustWrite(t, tbl, rec)
		rec.Release()
	}
	ctx := context.Background()
	b := base.UnixMicro()
	for _, now := range []time.Time{base.Add(-10 * 24 * time.Hour), base, base.Add(10 * 24 * time.Hour)} {
		exact, err := tbl.Rowsets(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		var written, live int64
		for _, r := range exact {
			written += r.Rows
			live += r.Rows - r.ExpiredRows - r.DeletedRows
		}
		failReads.Store(true)
		est, err := tbl.EstimateRows(now)
		_, rerr := tbl.Rowsets(ctx, now)
		failReads.Store(false)
		if err != nil {
			t.Fatalf("now %v: EstimateRows read a file: %v", now, err)
		}
		if now.Equal(base) && rerr == nil {
			t.Fatalf("Rowsets read no page with reads failing: the test no longer tells reading from not")
		}
		switch {
		case now.UnixMicro() < b-5*86400e6 || now.UnixMicro() > b+5*86400e6:
			// Outside every expiration the zone maps decide: exact.
			if est != live {
				t.Fatalf("now %v: estimate %d, exact %d", now, est, live)
			}
		case est < 0 || est > written:
			t.Fatalf("now %v: estimate %d outside [0, %d]", now, est, written)
		}
	}

	// Without a histogram the straddling pages count half their non-NULL
	// rows: between the fully expired pages and those plus the straddling.
	v, err := tbl.pin()
	if err != nil {
		t.Fatal(err)
	}
	defer v.unref()
	threshold := v.policy.Threshold(b)
	for _, h := range v.rowsets {
		bare := &rowset.Handle{Meta: h.Meta, Segments: h.Segments}
		bare.Meta.Hist = nil
		var lo, hi int64
		for _, r := range h.Segments {
			idx := r.Schema().FieldIndices(schema.TTLColumn)[0]
			for p := 0; p < r.NumPages(); p++ {
				z := r.PageStats(idx, p)
				switch query.ClassifyPage(z, threshold) {
				case ttlcol.AllExpired:
					lo += z.Rows
					hi += z.Rows
				case ttlcol.Mixed:
					hi += z.Rows - z.NullCount
				}
			}
		}
		exact, _, err := expiredRows(h, threshold)
		if err != nil {
			t.Fatal(err)
		}
		if exact < lo || exact > hi {
			t.Fatalf("rowset %d: exact %d outside the zone maps' [%d, %d]", h.Meta.ID, exact, lo, hi)
		}
		if got := estimateExpired(bare, threshold); got < lo || got > hi {
			t.Fatalf("rowset %d without histogram: estimate %d outside [%d, %d]", h.Meta.ID, got, lo, hi)
		}
		if h.Meta.Hist == nil {
			t.Fatalf("rowset %d has no histogram", h.Meta.ID)
		}
	}
}
