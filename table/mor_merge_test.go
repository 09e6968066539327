package table

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
)

// TestMORCompactionMergesVersions checks that compactions of a
// merge-on-read table leave one version per key: the newest, kept even
// expired or a deletion until a compaction from version 0, so that no
// older version comes back.
func TestMORCompactionMergesVersions(t *testing.T) {
	clock := base
	def := modelDef(schema.UniqueMOR, true)
	tbl := mustCreate(t, t.TempDir(), def, &Options{Clock: func() time.Time { return clock }, DisableAutoCompaction: true, PageRows: 16, SmallWriteRows: -1})
	defer checkClose(t, tbl)
	ctx := context.Background()
	at := func(h int) *int64 { v := base.Add(time.Duration(h) * time.Hour).UnixMicro(); return &v }
	write := func(rows ...modelRow) {
		t.Helper()
		rec := modelBatch(memory.DefaultAllocator, rows, true)
		defer rec.Release()
		if err := tbl.WriteWith(ctx, rec, WriteOptions{Now: clock}); err != nil {
			t.Fatal(err)
		}
	}
	// The base rowset, then three versions of keys 1-3 above it. Key 1's
	// newest version expires first (10h retention); key 2's newest is a
	// deletion; key 3's newest lives on.
	write(modelRow{id: 0, v: 0, ttl: at(100)})
	write(modelRow{id: 1, v: 1, ttl: at(100)}, modelRow{id: 2, v: 1, ttl: at(100)}, modelRow{id: 3, v: 1, ttl: at(100)})
	write(modelRow{id: 1, v: 2, ttl: at(100)}, modelRow{id: 2, v: 2, ttl: at(100)}, modelRow{id: 3, v: 2, ttl: at(100)})
	write(modelRow{id: 1, v: 3, ttl: at(0)}, modelRow{id: 2, v: 3, ttl: at(100)}, modelRow{id: 3, v: 3, ttl: at(100)})
	if _, err := tbl.DeleteWhere(ctx, Matcher{Filter: query.Compare("id", query.Eq, int64(2))}, WriteOptions{Now: clock}); err != nil {
		t.Fatal(err)
	}
	clock = base.Add(20 * time.Hour) // key 1's newest version has expired
	want := []string{"0:0", "3:3"}
	check := func(step string, wantRows int64) {
		t.Helper()
		if got := tableVisible(t, tbl, clock.UnixMicro()); !slices.Equal(got, want) {
			t.Fatalf("%s: visible %v, want %v", step, got, want)
		}
		st, err := tbl.Stats(ctx, clock)
		if err != nil {
			t.Fatal(err)
		}
		if st.RowsOnDisk != wantRows {
			t.Fatalf("%s: %d rows on disk, want %d", step, st.RowsOnDisk, wantRows)
		}
	}
	check("before", 1+3+3+3+1)

	// A cumulative compaction keeps one version of each of keys 1-3: key
	// 1's expired one and key 2's deletion among them, since the base
	// rowset below could hold older versions.
	if err := tbl.CompactAt(ctx, Cumulative, clock); err != nil {
		t.Fatal(err)
	}
	check("after cumulative", 1+3)

	// From version 0, the expired version and the deletion go too.
	if err := tbl.CompactAt(ctx, Full, clock); err != nil {
		t.Fatal(err)
	}
	check("after full", 2)

	// A base compaction of the base rowset and the next drops key 3's
	// version there: the newer one above the inputs hides it. A reader
	// pinned before still sees its version whole.
	write(modelRow{id: 3, v: 4, ttl: at(100)})
	write(modelRow{id: 3, v: 5, ttl: at(100)})
	want = []string{"0:0", "3:5"}
	check("before base", 2+1+1)
	pin, err := tbl.Scan(ctx, query.Request{Now: clock, Columns: []string{"id", "v"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.CompactAt(ctx, Base, clock); err != nil {
		t.Fatal(err)
	}
	check("after base", 1+1)
	n := 0
	for pin.Next() {
		n += int(pin.RecordBatch().NumRows())
	}
	if err := pin.Err(); err != nil {
		t.Fatal(err)
	}
	pin.Release()
	if n != 2 {
		t.Fatalf("the pinned reader read %d rows, want 2", n)
	}
}

// TestMORMergeModel runs random upserts, deletions, clock moves and
// compactions of every kind on a merge-on-read table against a reference
// model (seed printed), with readers pinning versions across the merges:
// no compaction changes an answer, no older version of a key comes back at
// any later now, and a pinned reader sees its version whole however its
// rowsets were merged since.
func TestMORMergeModel(t *testing.T) {
	for _, seed := range []uint64{1, 2, uint64(time.Now().UnixNano())} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Logf("seed %d", seed)
			runMORMergeModel(t, seed, 150)
		})
	}
}

func runMORMergeModel(t *testing.T, seed uint64, steps int) {
	const hour = int64(3600e6)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	clock := base
	def := modelDef(schema.UniqueMOR, true)
	def.Properties[PropReclaimDeadline] = "2 hours"
	tbl := mustCreate(t, t.TempDir(), def, &Options{Clock: func() time.Time { return clock }, DisableAutoCompaction: true, PageRows: 8, Allocator: mem})
	defer checkClose(t, tbl)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 7))
	ref := newRef(schema.UniqueMOR, true)
	type pinned struct {
		r    array.RecordReader
		want []string
		step int
	}
	var pins []pinned
	release := func(p pinned) {
		defer p.r.Release()
		var got []string
		for p.r.Next() {
			rec := p.r.RecordBatch()
			for i := 0; i < int(rec.NumRows()); i++ {
				got = append(got, fmt.Sprintf("%d:%d", schema.ValueAt(rec.Column(0), i).Int, schema.ValueAt(rec.Column(1), i).Int))
			}
		}
		if err := p.r.Err(); err != nil {
			t.Fatalf("reader pinned at step %d: %v", p.step, err)
		}
		slices.Sort(got)
		if !slices.Equal(got, p.want) {
			t.Fatalf("reader pinned at step %d: got %v, want %v", p.step, trunc(got), trunc(p.want))
		}
	}
	var log []string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d after %v: %s", seed, log, fmt.Sprintf(format, args...))
	}
	for step := 0; step < steps; step++ {
		now := clock.UnixMicro()
		switch op := rng.IntN(12); {
		case op < 5:
			rows := make([]modelRow, 1+rng.IntN(30))
			for i := range rows {
				ts := now - ref.retention + rng.Int64N(6*hour) - 2*hour
				rows[i] = modelRow{id: rng.Int64N(40), v: int64(step), ttl: &ts}
			}
			log = append(log, fmt.Sprintf("write %d", len(rows)))
			rec := modelBatch(mem, rows, true)
			err := tbl.WriteWith(ctx, rec, WriteOptions{Now: clock})
			rec.Release()
			if err != nil {
				fail("write: %v", err)
			}
			ref.write(rows)
		case op < 6:
			lim := rng.Int64N(int64(step + 1))
			log = append(log, fmt.Sprintf("delete v < %d", lim))
			if _, err := tbl.DeleteWhere(ctx, Matcher{Filter: query.Compare("v", query.Lt, lim)}, WriteOptions{Now: clock}); err != nil {
				fail("delete: %v", err)
			}
			ref.deleteWhere(now, lim)
		case op < 8:
			d := rng.Int64N(3 * hour)
			clock = clock.Add(time.Duration(d) * time.Microsecond)
			log = append(log, fmt.Sprintf("clock +%v", time.Duration(d)*time.Microsecond))
		case op < 9 && len(pins) < 3:
			r, err := tbl.Scan(ctx, query.Request{Now: clock, Columns: []string{"id", "v"}})
			if err != nil {
				fail("scan: %v", err)
			}
			log = append(log, "pin")
			pins = append(pins, pinned{r: r, want: ref.visible(now), step: step})
		case op < 10 && len(pins) > 0:
			i := rng.IntN(len(pins))
			log = append(log, "unpin")
			release(pins[i])
			pins = slices.Delete(pins, i, i+1)
		default:
			kind := []CompactionKind{Cumulative, Base, Full, ""}[rng.IntN(4)]
			log = append(log, fmt.Sprintf("compact %q", kind))
			if kind == "" {
				for {
					did, err := tbl.CompactAuto(ctx)
					if err != nil {
						fail("auto compaction: %v", err)
					}
					if !did {
						break
					}
				}
			} else if err := tbl.CompactAt(ctx, kind, clock); err != nil {
				fail("compact %s: %v", kind, err)
			}
		}
		for _, d := range []int64{0, rng.Int64N(12 * hour)} {
			at := clock.UnixMicro() + d
			if got, want := tableVisible(t, tbl, at), ref.visible(at); !slices.Equal(got, want) {
				fail("step %d: scan at +%v: got %v\nwant %v", step, time.Duration(d)*time.Microsecond, trunc(got), trunc(want))
			}
		}
	}
	for _, p := range pins {
		release(p)
	}
}
