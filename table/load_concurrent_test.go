package table

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// keyRows returns rows with ids lo..hi-1, all of value v, never expiring.
func keyRows(lo, hi, v int64) []modelRow {
	var rows []modelRow
	for id := lo; id < hi; id++ {
		rows = append(rows, modelRow{id: id, v: v})
	}
	return rows
}

// within runs f and fails the test if it does not return in time: the
// callers check that f does not wait for a lock another load holds.
func within(t *testing.T, what string, f func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s waits for a load that has not published", what)
	}
}

// TestLoadsRunSideBySide: a load that has started but not published holds
// up no other write; versions follow publish order, and merge-on-write
// marks of the later publish cover the rowsets published meanwhile, for
// every model.
func TestLoadsRunSideBySide(t *testing.T) {
	old := loadRunBytes
	loadRunBytes = 4 << 10 // UNIQUE loads spill runs
	defer func() { loadRunBytes = old }()
	for _, model := range []schema.Model{schema.Duplicate, schema.UniqueMOW, schema.UniqueMOR} {
		t.Run(model.String(), func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			tbl := mustCreate(t, t.TempDir(), modelDef(model, false), &Options{Allocator: mem, DisableAutoCompaction: true, PageRows: 64})
			ref := &refModel{unique: model.IsUnique(), keys: map[int64]modelRow{}}
			write := func(w func(*LoadWriter) error, lw *LoadWriter, rows []modelRow) {
				t.Helper()
				rec := modelBatch(mem, rows, false)
				defer rec.Release()
				if err := w(lw); err != nil {
					t.Fatal(err)
				}
				if err := lw.Write(rec); err != nil {
					t.Fatal(err)
				}
			}
			noop := func(*LoadWriter) error { return nil }

			// The slow load starts first and writes keys 0..999.
			slow, err := tbl.NewLoadWriter(ctx, WriteOptions{Label: "slow"})
			if err != nil {
				t.Fatal(err)
			}
			write(noop, slow, keyRows(0, 1000, 1))
			// Meanwhile another load, a plain write, and the slow load's
			// next batch.
			within(t, "a second load", func() error {
				lw, err := tbl.NewLoadWriter(ctx, WriteOptions{Label: "fast"})
				if err != nil {
					return err
				}
				write(noop, lw, keyRows(500, 1500, 2))
				if err := lw.Commit(); err != nil {
					return err
				}
				if lw.Version() != 1 {
					return fmt.Errorf("the first load to publish got version %d", lw.Version())
				}
				return nil
			})
			ref.write(keyRows(500, 1500, 2))
			within(t, "a write", func() error {
				rec := modelBatch(mem, keyRows(1400, 1600, 3), false)
				defer rec.Release()
				return tbl.Write(ctx, rec)
			})
			ref.write(keyRows(1400, 1600, 3))
			write(noop, slow, keyRows(900, 1450, 4))
			if err := slow.Commit(); err != nil {
				t.Fatal(err)
			}
			if slow.Version() != 3 || tbl.LastVersion() != 3 {
				t.Fatalf("the slow load published version %d (last %d), want 3", slow.Version(), tbl.LastVersion())
			}
			// Published last, the slow load's rows are the newest.
			ref.write(keyRows(0, 1000, 1))
			ref.write(keyRows(900, 1450, 4))
			for _, now := range []int64{0, 2e9} {
				if got, want := tableVisible(t, tbl, now), ref.visible(now); !slices.Equal(got, want) {
					t.Fatalf("at %d: %d rows, want %d: %v", now, len(got), len(want), trunc(got))
				}
			}
			checkClose(t, tbl)
		})
	}
}

// TestLoadLabelRaceAndAlter: of two loads with one label, the first to
// publish applies it and the other fails writing nothing; a load whose
// table is altered before it publishes fails writing nothing; a load
// waiting for the writer lock gives up when its context ends.
func TestLoadLabelRaceAndAlter(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl := mustCreate(t, t.TempDir(), modelDef(schema.UniqueMOW, false), &Options{Allocator: mem, DisableAutoCompaction: true})
	rec := modelBatch(mem, keyRows(0, 10, 1), false)
	defer rec.Release()
	start := func(c context.Context, label string) *LoadWriter {
		t.Helper()
		lw, err := tbl.NewLoadWriter(c, WriteOptions{Label: label})
		if err != nil {
			t.Fatal(err)
		}
		if err := lw.Write(rec); err != nil {
			t.Fatal(err)
		}
		return lw
	}
	a := start(ctx, "same")
	within(t, "a second load of the same label", func() error { return start(ctx, "same").Commit() })
	if err := a.Commit(); !errors.Is(err, rowttl.ErrLabelExists) {
		t.Fatalf("second publish of one label: %v", err)
	}
	if tbl.LastVersion() != 1 {
		t.Fatalf("version %d after one label applied", tbl.LastVersion())
	}

	lw := start(ctx, "altered")
	if err := tbl.AddColumn(ctx, schema.Column{Name: "extra", Type: schema.BigIntType, Nullable: true}, ""); err != nil {
		t.Fatal(err)
	}
	if err := lw.Commit(); !errors.Is(err, rowttl.ErrNotSupported) || tbl.LastVersion() != 1 || tbl.HasLabel("altered") {
		t.Fatalf("load across an ALTER: %v, version %d", err, tbl.LastVersion())
	}

	c, cancel := context.WithCancel(ctx)
	lw = start(c, "waits")
	tbl.writeMu.Lock() // another writer publishing
	done := make(chan error, 1)
	go func() { done <- lw.Commit() }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled wait for the lock: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a load waiting for the writer lock ignored its context")
	}
	tbl.writeMu.Unlock()
	if tbl.LastVersion() != 1 || tbl.HasLabel("waits") {
		t.Fatalf("a cancelled load published: version %d", tbl.LastVersion())
	}
	checkClose(t, tbl)
}
