package table

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/compaction"
	"github.com/rowttl/rowttl/schema"
)

// debtTable is a DUPLICATE table fed by small writes that no compaction
// has followed: the debt a series of one-shot processes leaves.
func debtTable(t *testing.T, writes int) *Table {
	t.Helper()
	clock := base
	tbl := mustCreate(t, t.TempDir(), modelDef(schema.Duplicate, false),
		&Options{Clock: func() time.Time { return clock }, DisableAutoCompaction: true, SmallWriteRows: -1})
	for w := range writes {
		rows := make([]modelRow, 50)
		for i := range rows {
			rows[i] = modelRow{id: int64(w*50 + i), v: int64(w)}
		}
		rec := modelBatch(memory.DefaultAllocator, rows, false)
		if err := tbl.WriteWith(context.Background(), rec, WriteOptions{Now: base}); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	return tbl
}

func TestCompactDue(t *testing.T) {
	ctx := context.Background()
	tbl := debtTable(t, 3*compaction.CumulativeTrigger)
	defer checkClose(t, tbl)
	before, _ := tbl.Stats(ctx, base)
	var seen []int
	rounds, capped, err := tbl.CompactDue(ctx, time.Now().Add(time.Minute), func(n int) { seen = append(seen, n) })
	if err != nil || capped || rounds == 0 {
		t.Fatalf("CompactDue: %d rounds, capped %v, %v", rounds, capped, err)
	}
	if len(seen) != rounds || seen[len(seen)-1] != rounds {
		t.Fatalf("progress saw %v for %d rounds", seen, rounds)
	}
	after, _ := tbl.Stats(ctx, base)
	if after.Rowsets >= before.Rowsets || after.TotalCompactions() != int64(rounds) || after.VisibleRows != before.VisibleRows {
		t.Fatalf("before %+v\nafter %+v", before, after)
	}
	// Nothing is left due: the next round finds nothing.
	if did, err := tbl.CompactAuto(ctx); did || err != nil {
		t.Fatalf("a round was still due after CompactDue: %v %v", did, err)
	}
}

func TestCompactDueStops(t *testing.T) {
	ctx := context.Background()
	t.Run("cap passed", func(t *testing.T) {
		tbl := debtTable(t, 2*compaction.CumulativeTrigger)
		defer checkClose(t, tbl)
		rounds, capped, err := tbl.CompactDue(ctx, time.Now().Add(-time.Second), nil)
		if rounds != 0 || !capped || err != nil {
			t.Fatalf("a cap already passed: %d rounds, capped %v, %v", rounds, capped, err)
		}
		if st, _ := tbl.Stats(ctx, base); st.TotalCompactions() != 0 {
			t.Fatalf("%d compactions ran past the cap", st.TotalCompactions())
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		tbl := debtTable(t, 2*compaction.CumulativeTrigger)
		defer checkClose(t, tbl)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, _, err := tbl.CompactDue(cctx, time.Time{}, nil); err != context.Canceled {
			t.Fatalf("cancelled: %v", err)
		}
	})
	t.Run("property off", func(t *testing.T) {
		tbl := debtTable(t, 2*compaction.CumulativeTrigger)
		defer checkClose(t, tbl)
		if err := tbl.SetProperties(ctx, map[string]string{PropDisableAutoComp: "true"}); err != nil {
			t.Fatal(err)
		}
		if rounds, capped, err := tbl.CompactDue(ctx, time.Time{}, nil); rounds != 0 || capped || err != nil {
			t.Fatalf("disable_auto_compaction: %d rounds, capped %v, %v", rounds, capped, err)
		}
	})
}
