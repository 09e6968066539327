package table

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
)

// upsertPlateau is a steady upsert workload on a simulated clock: a 7-day
// retention, a 1-day reclaim deadline, perDay upserts a day over keys
// uniformly drawn keys, written in batches every 4 hours (each row's event
// time within the 4 hours before its batch), with the table's own
// auto-compaction run to completion after each batch.
type upsertPlateau struct {
	model        schema.Model
	keys, perDay int
	days         int
	seed         uint64
}

type upsertPlateauResult struct {
	// maxRatio is the largest bytes on disk / live bytes after the first
	// retention period (day 8 on).
	maxRatio float64
	writeAmp float64
	// behindDays lists the simulated days at whose end the table was behind
	// its reclaim deadline.
	behindDays  []int
	compactions int64
	triggers    map[string]int64
}

func (p upsertPlateau) run(t testing.TB) upsertPlateauResult {
	clock := base
	def := modelDef(p.model, true)
	def.Properties[PropTTL] = "7 days"
	def.Properties[PropReclaimDeadline] = "1 day"
	// Simulated days pass in moments: every batch makes a rowset, as the
	// disk the plateau measures would hold it after a flush.
	tbl := mustCreate(t, t.TempDir(), def, &Options{Clock: func() time.Time { return clock }, DisableAutoCompaction: true, SmallWriteRows: -1})
	defer checkClose(t, tbl)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(p.seed, uint64(p.model)))
	const batchesPerDay = 6
	var res upsertPlateauResult
	for day := 1; day <= p.days; day++ {
		for b := 0; b < batchesPerDay; b++ {
			clock = clock.Add(4 * time.Hour)
			now := clock.UnixMicro()
			rows := make([]modelRow, p.perDay/batchesPerDay)
			for i := range rows {
				ts := now - rng.Int64N(4*3600e6)
				rows[i] = modelRow{id: rng.Int64N(int64(p.keys)), v: int64(day), ttl: &ts}
			}
			rec := modelBatch(memory.DefaultAllocator, rows, true)
			if err := tbl.WriteWith(ctx, rec, WriteOptions{Now: clock}); err != nil {
				t.Fatal(err)
			}
			rec.Release()
			tbl.noteNow(clock)
			for {
				did, err := tbl.CompactAuto(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !did {
					break
				}
			}
		}
		st, err := tbl.Stats(ctx, clock)
		if err != nil {
			t.Fatal(err)
		}
		if st.Behind {
			res.behindDays = append(res.behindDays, day)
		}
		if day >= 8 && st.LiveBytes > 0 {
			res.maxRatio = max(res.maxRatio, float64(st.BytesOnDisk)/float64(st.LiveBytes))
		}
		res.writeAmp = st.WriteAmplification()
		res.compactions = st.TotalCompactions()
		res.triggers = st.Triggers
	}
	return res
}

// TestUpsertPlateau checks that every model levels off near its live bytes
// under steady upserts with a reclaim deadline, at a bounded write
// amplification and never behind the deadline. ROWTTL_PLATEAU_FULL=1 runs
// the full workload (60,000 upserts a day over 300,000 keys for 40 days);
// the default run is a twentieth of it over 16 days.
func TestUpsertPlateau(t *testing.T) {
	keys, perDay, days := 15_000, 3_000, 16
	if os.Getenv("ROWTTL_PLATEAU_FULL") != "" {
		keys, perDay, days = 300_000, 60_000, 40
	}
	for _, model := range []schema.Model{schema.Duplicate, schema.UniqueMOW, schema.UniqueMOR} {
		t.Run(modelName(model), func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			r := upsertPlateau{model: model, keys: keys, perDay: perDay, days: days, seed: seed}.run(t)
			t.Logf("%s: %d keys, %d upserts a day, %d days: max disk/live ratio %.2f, write amplification %.2f, %d compactions %v",
				modelName(model), keys, perDay, days, r.maxRatio, r.writeAmp, r.compactions, r.triggers)
			if r.maxRatio > 1.2 {
				t.Errorf("bytes on disk reached %.2f× the live bytes after the first retention period", r.maxRatio)
			}
			if r.writeAmp > 3 {
				t.Errorf("write amplification %.2f, want at most 3", r.writeAmp)
			}
			if len(r.behindDays) > 0 {
				t.Errorf("behind the reclaim deadline at the end of days %v", r.behindDays)
			}
		})
	}
}
