package table

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
)

// TestMORCarriedMergeModel checks the key merge carried from version to
// version against the full merge of each version's rowsets (seed printed):
// random upserts over a key range that drifts, mostly upwards, and at the
// end may jump far off (an index that no longer fits), merge-on-read DELETEs,
// compactions (which drop the index), memtable flushes, and versions pinned
// across later writes, which must keep their own merge. Most versions must
// have been installed with their merge carried, not merged again, and a
// count must agree with the rows a scan returns.
func TestMORCarriedMergeModel(t *testing.T) {
	for _, c := range []struct {
		name           string
		small, segRows int
	}{{"direct", -1, 0}, {"segments", -1, 40}, {"memtables", 0, 0}} {
		for _, seed := range []uint64{1, 2, uint64(time.Now().UnixNano())} {
			t.Run(fmt.Sprintf("%s/%d", c.name, seed), func(t *testing.T) {
				t.Logf("seed %d", seed)
				runCarriedMergeModel(t, seed, c.small, c.segRows, 90)
			})
		}
	}
}

// runCarriedMergeModel runs the model with writes of at most small rows
// through the write-ahead log and segments of segRows rows (0: defaults).
func runCarriedMergeModel(t *testing.T, seed uint64, small, segRows, steps int) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	clock := base
	def := modelDef(schema.UniqueMOR, true)
	tbl := mustCreate(t, t.TempDir(), def, &Options{Clock: func() time.Time { return clock }, DisableAutoCompaction: true,
		PageRows: 16, SegmentRows: int64(segRows), Allocator: mem, SmallWriteRows: small})
	defer checkClose(t, tbl)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 11))
	lo := int64(0)
	var log []string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d after %v: %s", seed, log, fmt.Sprintf(format, args...))
	}
	// check compares v's merge with the full merge of its rowsets.
	check := func(v *version, what string) {
		t.Helper()
		got, err := v.hidden(mem)
		if err != nil {
			fail("%s: hidden: %v", what, err)
		}
		want, err := query.Superseded(ctx, mem, v.rowsets, 1, v.deleted)
		if err != nil {
			fail("%s: full merge: %v", what, err)
		}
		for _, h := range v.rowsets {
			a, b := want[h.Meta.ID], got[h.Meta.ID]
			if cardinality(a) == 0 && cardinality(b) == 0 {
				continue
			}
			if a == nil || b == nil || !a.Equals(b) {
				fail("%s: rowset %d: carried merge hides %v, full merge %v", what, h.Meta.ID, bits(b), bits(a))
			}
		}
	}
	type pinned struct {
		v    *version
		step int
	}
	var pins []pinned
	defer func() {
		for _, p := range pins {
			p.v.unref()
		}
	}()
	carried, checked := 0, 0
	for step := 0; step < steps; step++ {
		switch op := rng.IntN(20); {
		case op < 11:
			n := 1 + rng.IntN(120)
			if rng.IntN(4) == 0 {
				lo += int64(rng.IntN(130)) - 30 // the keys drift, mostly upwards
			}
			// Keys too far off for an index, near the end only: no later
			// version gets one.
			far := step >= steps-10 && rng.IntN(4) == 0
			rows := make([]modelRow, n)
			for i := range rows {
				ts := clock.UnixMicro() + rng.Int64N(int64(20*time.Hour/time.Microsecond))
				rows[i] = modelRow{id: lo + rng.Int64N(300), v: int64(step), ttl: &ts}
				if far {
					rows[i].id += 1 << 40
				}
			}
			log = append(log, fmt.Sprintf("write %d far=%v", n, far))
			rec := modelBatch(mem, rows, true)
			err := tbl.WriteWith(ctx, rec, WriteOptions{Now: clock})
			rec.Release()
			if err != nil {
				fail("write: %v", err)
			}
		case op < 13:
			lim := rng.Int64N(int64(step + 1))
			log = append(log, fmt.Sprintf("delete v < %d", lim))
			if _, err := tbl.DeleteWhere(ctx, Matcher{Filter: query.Compare("v", query.Lt, lim)}, WriteOptions{Now: clock}); err != nil {
				fail("delete: %v", err)
			}
		case op < 15:
			log = append(log, "flush")
			if err := tbl.Flush(ctx); err != nil {
				fail("flush: %v", err)
			}
		case op < 17:
			v, err := tbl.pin()
			if err != nil {
				fail("pin: %v", err)
			}
			log = append(log, "pin")
			pins = append(pins, pinned{v, step})
		case op < 18 && len(pins) > 0:
			i := rng.IntN(len(pins))
			log = append(log, "unpin")
			p := pins[i]
			if len(p.v.mems) == 0 {
				check(p.v, fmt.Sprintf("version pinned at step %d", p.step))
			}
			p.v.unref()
			pins = append(pins[:i], pins[i+1:]...)
		default:
			kind := []CompactionKind{Cumulative, Full}[rng.IntN(2)]
			log = append(log, fmt.Sprintf("compact %q", kind))
			if err := tbl.CompactAt(ctx, kind, clock); err != nil {
				fail("compact %s: %v", kind, err)
			}
		}
		// A count reduces pages without their rows: it must agree with
		// the rows a scan returns.
		for _, d := range []time.Duration{0, time.Duration(rng.Int64N(int64(24 * time.Hour)))} {
			at := clock.Add(d)
			n, err := tbl.Count(ctx, at, nil)
			if err != nil {
				fail("count: %v", err)
			}
			if rows := tableVisible(t, tbl, at.UnixMicro()); n != int64(len(rows)) {
				fail("step %d: count at +%v: %d, a scan returns %d rows", step, d, n, len(rows))
			}
		}
		v, err := tbl.pin()
		if err != nil {
			fail("pin: %v", err)
		}
		if len(v.mems) == 0 {
			checked++
			if v.supersededOK {
				carried++
			}
			check(v, fmt.Sprintf("step %d", step))
		}
		v.unref()
	}
	t.Logf("%d of %d versions checked had their merge carried", carried, checked)
	if carried < checked/3 {
		t.Fatalf("seed %d: only %d of %d versions had their merge carried", seed, carried, checked)
	}
}

func bits(b *roaring.Bitmap) []uint32 {
	if b == nil {
		return nil
	}
	return b.ToArray()
}

// TestMORKeyIndexLifecycle follows the index the key merge is carried with:
// built by the first write of a table, carried by writes, dropped by a
// compaction and by keys too far off, rebuilt only by a write after a read
// merged, and never built by a process that only writes.
func TestMORKeyIndexLifecycle(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	opts := &Options{Clock: func() time.Time { return base }, DisableAutoCompaction: true, PageRows: 16, Allocator: mem, SmallWriteRows: -1}
	tbl := mustCreate(t, dir, modelDef(schema.UniqueMOR, true), opts)
	ctx := context.Background()
	write := func(lo, n int64) {
		t.Helper()
		rows := make([]modelRow, n)
		for i := range rows {
			ts := base.UnixMicro()
			rows[i] = modelRow{id: lo + int64(i)*3%n, v: lo, ttl: &ts}
		}
		rec := modelBatch(mem, rows, true)
		defer rec.Release()
		if err := tbl.WriteWith(ctx, rec, WriteOptions{Now: base}); err != nil {
			t.Fatal(err)
		}
	}
	state := func(what string, wantIndex bool) {
		t.Helper()
		v, err := tbl.pin()
		if err != nil {
			t.Fatal(err)
		}
		defer v.unref()
		if got := v.owners != nil; got != wantIndex {
			t.Errorf("%s: index %v, want %v", what, got, wantIndex)
		}
		if v.supersededOK != wantIndex {
			t.Errorf("%s: merge carried %v, want %v", what, v.supersededOK, wantIndex)
		}
	}
	count := func(want int64) {
		t.Helper()
		n, err := tbl.Count(ctx, base, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Fatalf("count %d, want %d", n, want)
		}
	}
	write(0, 100)
	state("first write", true)
	write(50, 100)
	state("second write", true)
	count(150)
	if err := tbl.CompactAt(ctx, Full, base); err != nil {
		t.Fatal(err)
	}
	state("full compaction", false)
	write(100, 100)
	state("write after the compaction, nothing read", false)
	count(200)
	write(150, 100)
	state("write after a read", true)
	if err := tbl.CompactAt(ctx, Full, base); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Aggregate(ctx, query.Request{Now: base, Columns: []string{"v"}}); err != nil {
		t.Fatal(err)
	}
	write(200, 50)
	state("write after a compaction and a read", true)
	write(1<<40, 10)
	state("keys far off", false)
	count(260)
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	var err error
	if tbl, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	defer checkClose(t, tbl)
	write(0, 10)
	state("write after open, nothing read", false)
	count(260)
}
