package table

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// TestLoadWriterMatchesWriteBatches loads the same batches through a
// LoadWriter (spilling small runs) and through WriteBatches, for every
// model, and compares what each table shows.
func TestLoadWriterMatchesWriteBatches(t *testing.T) {
	old := loadRunBytes
	loadRunBytes = 4 << 10 // a run every batch or two
	defer func() { loadRunBytes = old }()
	for _, model := range []schema.Model{schema.Duplicate, schema.UniqueMOW, schema.UniqueMOR} {
		t.Run(model.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			opts := &Options{Allocator: mem, DisableAutoCompaction: true, PageRows: 64}
			a := mustCreate(t, t.TempDir(), modelDef(model, false), opts)
			b := mustCreate(t, t.TempDir(), modelDef(model, false), opts)
			rng := rand.New(rand.NewPCG(7, uint64(model)))
			ref := &refModel{unique: model.IsUnique(), keys: map[int64]modelRow{}}
			// A first version, so that merge-on-write marks older rows.
			for _, tbl := range []*Table{a, b} {
				first := modelBatch(mem, []modelRow{{id: 1, v: -1}, {id: 2, v: -2}}, false)
				mustWrite(t, tbl, first)
				first.Release()
			}
			ref.write([]modelRow{{id: 1, v: -1}, {id: 2, v: -2}})

			lw, err := a.NewLoadWriter(context.Background(), WriteOptions{Label: "l1"})
			if err != nil {
				t.Fatal(err)
			}
			var all []modelRow
			for i := 0; i < 20; i++ {
				rows := make([]modelRow, 1+rng.IntN(300))
				for j := range rows {
					rows[j] = modelRow{id: rng.Int64N(500), v: rng.Int64N(1000)}
					if rng.IntN(4) == 0 {
						e := int64(rng.IntN(3)-1) * 1e9 // some expired, some not
						rows[j].ttl = &e
					}
				}
				all = append(all, rows...)
				rec := modelBatch(mem, rows, false)
				if err := lw.Write(rec); err != nil {
					t.Fatal(err)
				}
				rec.Release()
			}
			if model.IsUnique() && len(lw.runs) < 2 {
				t.Fatalf("%d runs spilled, want several", len(lw.runs))
			}
			if err := lw.Commit(); err != nil {
				t.Fatal(err)
			}
			if lw.Version() != 2 {
				t.Errorf("version %d, want 2", lw.Version())
			}
			rec := modelBatch(mem, all, false)
			if err := b.WriteWith(context.Background(), rec, WriteOptions{Label: "l1"}); err != nil {
				t.Fatal(err)
			}
			rec.Release()
			ref.write(all)
			for _, now := range []int64{-2e9, 0, 1, 2e9} {
				want := ref.visible(now)
				ga, gb := tableVisible(t, a, now), tableVisible(t, b, now)
				if !slices.Equal(ga, want) || !slices.Equal(gb, want) {
					t.Fatalf("at %d: load writer %d rows, WriteBatches %d rows, model %d rows", now, len(ga), len(gb), len(want))
				}
			}
			// No run file is left behind.
			names, err := os.ReadDir(a.Dir())
			if err != nil {
				t.Fatal(err)
			}
			segs := 0
			for _, n := range names {
				if strings.HasSuffix(n.Name(), ".tmp") {
					t.Errorf("temporary file %s left", n.Name())
				}
				if strings.HasSuffix(n.Name(), ".seg") {
					segs++
				}
			}
			var live int
			v, _ := a.pin()
			for _, h := range v.rowsets {
				live += len(h.Meta.Segments)
			}
			v.unref()
			if segs != live {
				t.Errorf("%d segment files, %d live", segs, live)
			}
			checkClose(t, a)
			checkClose(t, b)
		})
	}
}

func TestLoadWriterAbortAndLabels(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	opts := &Options{Allocator: mem, DisableAutoCompaction: true}
	tbl := mustCreate(t, dir, modelDef(schema.UniqueMOW, false), opts)
	rec := modelBatch(mem, []modelRow{{id: 1, v: 1}}, false)
	defer rec.Release()

	lw, err := tbl.NewLoadWriter(context.Background(), WriteOptions{Label: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := lw.Write(rec); err != nil {
		t.Fatal(err)
	}
	lw.Abort()
	lw.Abort() // idempotent
	if err := lw.Commit(); err == nil {
		t.Fatal("commit after abort succeeded")
	}
	if n := mustCount(t, tbl, base, nil); n != 0 || tbl.LastVersion() != 0 || tbl.HasLabel("x") {
		t.Fatalf("after abort: %d rows, version %d, label %v", n, tbl.LastVersion(), tbl.HasLabel("x"))
	}

	lw, err = tbl.NewLoadWriter(context.Background(), WriteOptions{Label: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := lw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := lw.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.NewLoadWriter(context.Background(), WriteOptions{Label: "x"}); !errors.Is(err, rowttl.ErrLabelExists) {
		t.Fatalf("second load with label x: %v", err)
	}
	// The writer lock was released by the failed start.
	mustWrite(t, tbl, rec)
	checkClose(t, tbl)

	tbl, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !tbl.HasLabel("x") {
		t.Error("label x lost across reopen")
	}
	if _, err := tbl.NewLoadWriter(context.Background(), WriteOptions{Label: "x"}); !errors.Is(err, rowttl.ErrLabelExists) {
		t.Fatalf("after reopen, load with label x: %v", err)
	}
	checkClose(t, tbl)
}
