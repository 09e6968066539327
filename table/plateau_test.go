package table

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
)

// plateauRun feeds a table with a steady hourly ingest for ten retention
// periods on a simulated clock, running auto-compaction after every write,
// and reports the largest rows-on-disk / visible-rows ratio seen after the
// first retention period, the oldest expired row's age, and the write
// amplification.
type plateauResult struct {
	maxRatio  float64
	maxAge    time.Duration
	writeAmp  float64
	finalRows int64
}

func plateauRun(t testing.TB, model schema.Model, deadline string, updateShare float64, perHour int) plateauResult {
	return plateauRunFor(t, model, "1 day", 10, deadline, updateShare, perHour)
}

func plateauRunFor(t testing.TB, model schema.Model, retention string, periods int, deadline string, updateShare float64, perHour int) plateauResult {
	clock := base
	def := modelDef(model, true)
	def.Properties[PropTTL] = retention
	if deadline != "" {
		def.Properties[PropReclaimDeadline] = deadline
	}
	tbl := mustCreate(t, t.TempDir(), def, &Options{Clock: func() time.Time { return clock }, DisableAutoCompaction: true, PageRows: 256, SmallWriteRows: -1})
	defer checkClose(t, tbl)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(21, uint64(model)))
	var nextID int64
	var res plateauResult
	hours := int(tbl.Policy().Retention/3600) * periods
	retentionHours := int(tbl.Policy().Retention / 3600)
	for hr := 0; hr < hours; hr++ {
		now := clock.UnixMicro()
		rows := make([]modelRow, perHour)
		for i := range rows {
			ts := now + rng.Int64N(3600e6)
			id := nextID
			if model.IsUnique() && nextID > int64(perHour*retentionHours) && rng.Float64() < updateShare {
				// Rewrite a live key: it lives on with a new event time.
				id = nextID - 1 - rng.Int64N(int64(perHour*retentionHours*5/6))
			} else {
				nextID++
			}
			rows[i] = modelRow{id: id, v: int64(hr), ttl: &ts}
		}
		rec := modelBatch(memory.DefaultAllocator, rows, true)
		if err := tbl.WriteWith(ctx, rec, WriteOptions{Now: clock}); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		clock = clock.Add(time.Hour)
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
		st, err := tbl.Stats(ctx, clock)
		if err != nil {
			t.Fatal(err)
		}
		if hr >= retentionHours+1 && st.VisibleRows > 0 {
			ratio := float64(st.RowsOnDisk) / float64(st.VisibleRows)
			res.maxRatio = max(res.maxRatio, ratio)
			res.maxAge = max(res.maxAge, st.OldestExpiredAge(clock))
		}
		res.writeAmp = st.WriteAmplification()
		res.finalRows = st.RowsOnDisk
	}
	return res
}

func TestStoragePlateau(t *testing.T) {
	for _, c := range []struct {
		model    schema.Model
		updates  float64
		deadline string
	}{
		{schema.Duplicate, 0, ""},
		{schema.Duplicate, 0, "2 hours"},
		{schema.UniqueMOW, 0.3, ""},
		{schema.UniqueMOW, 0.3, "2 hours"},
		{schema.UniqueMOR, 0.3, ""},
		{schema.UniqueMOR, 0.3, "2 hours"},
	} {
		name := fmt.Sprintf("%d/deadline=%q", c.model, c.deadline)
		t.Run(name, func(t *testing.T) {
			r := plateauRun(t, c.model, c.deadline, c.updates, 200)
			t.Logf("max disk/live ratio %.2f, oldest expired age %v, write amplification %.2f", r.maxRatio, r.maxAge, r.writeAmp)
			if r.maxRatio > 1.5 {
				t.Errorf("rows on disk reached %.2f× the live rows after the first retention period", r.maxRatio)
			}
			if c.deadline == "2 hours" && r.maxAge > 2*time.Hour {
				t.Errorf("an expired row stayed %v on disk, past the 2h reclaim deadline", r.maxAge)
			}
		})
	}
}

// BenchmarkPlateau reports, for each model with and without a one-day
// reclaim deadline, the plateau ratio (largest rows on disk / visible rows
// after the first retention period of 7 days, three periods of hourly
// ingest, 30% updates on UNIQUE tables) and the write amplification.
func BenchmarkPlateau(b *testing.B) {
	for _, model := range []schema.Model{schema.Duplicate, schema.UniqueMOW, schema.UniqueMOR} {
		for _, deadline := range []string{"", "1 day"} {
			updates := 0.0
			if model.IsUnique() {
				updates = 0.3
			}
			b.Run(fmt.Sprintf("model=%d/deadline=%q", model, deadline), func(b *testing.B) {
				var r plateauResult
				for i := 0; i < b.N; i++ {
					r = plateauRunFor(b, model, "7 days", 3, deadline, updates, 500)
				}
				b.ReportMetric(r.maxRatio, "plateau-ratio")
				b.ReportMetric(r.writeAmp, "write-amp")
				b.ReportMetric(r.maxAge.Hours(), "max-expired-age-h")
			})
		}
	}
}
