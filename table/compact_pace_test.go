package table

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestPacerRule steps a pacer through a scripted clock: unpaced while no
// small write is recent, rate bytes a second (burst at once) while one is,
// and back to unpaced, with a full bucket, once writes stop.
func TestPacerRule(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const rate = 1e6 // 1 MB/s: 1,000 bytes a millisecond
	type step struct {
		at    time.Duration // the clock, from t0
		write time.Duration // the last small write, from t0; -1: never
		n     int
		wait  time.Duration
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"never written: unpaced", []step{
			{0, -1, 10 << 20, 0},
			{time.Millisecond, -1, 10 << 20, 0},
		}},
		{"writes long ago: unpaced", []step{
			{10 * time.Second, 0, 10 << 20, 0},
			{10*time.Second + smallWritesRecent, 8 * time.Second, 10 << 20, 0},
		}},
		{"recent write: the burst goes at once, then the rate", []step{
			{0, 0, compactionPaceBurst, 0},
			{0, 0, 1000, time.Millisecond},
			// The wait paid that debt: a millisecond later 1,000 more
			// bytes cost another millisecond.
			{time.Millisecond, 0, 1000, time.Millisecond},
			{2 * time.Millisecond, 0, 5000, 5 * time.Millisecond},
		}},
		{"a pause refills the bucket, never above the burst", []step{
			{0, 0, compactionPaceBurst, 0},
			{time.Second, time.Second, compactionPaceBurst, 0},
			{time.Second, time.Second, 2000, 2 * time.Millisecond},
		}},
		{"a debt within the burst waits nothing", []step{
			{0, 0, compactionPaceBurst - 1000, 0},
			{0, 0, 1000, 0},
			{0, 0, 1, time.Microsecond},
		}},
		{"writes stop: unpaced and the bucket full again", []step{
			{0, 0, compactionPaceBurst + 3000, 3 * time.Millisecond},
			{smallWritesRecent, 0, 10 << 20, 0},
			{smallWritesRecent, smallWritesRecent, compactionPaceBurst, 0},
			{smallWritesRecent, smallWritesRecent, 1000, time.Millisecond},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var now time.Time
			var last int64
			p := newPacer(rate, func() int64 { return last })
			p.now = func() time.Time { return now }
			var slept time.Duration
			p.sleep = func(d time.Duration) { slept += d }
			for i, s := range c.steps {
				now = t0.Add(s.at)
				last = 0
				if s.write >= 0 {
					last = t0.Add(s.write).UnixNano()
				}
				slept = 0
				p.pace(s.n)
				if d := slept - s.wait; d < -time.Nanosecond || d > time.Nanosecond {
					t.Errorf("step %d: %d bytes at %v waited %v, want %v", i, s.n, s.at, slept, s.wait)
				}
			}
		})
	}
}

// TestPacerOptions: Options.CompactionWriteRate 0 paces at the default
// rate, a rate of its own at that, and a negative one never waits, recent
// writes or not.
func TestPacerOptions(t *testing.T) {
	now := time.Unix(1000, 0)
	recent := func() int64 { return now.UnixNano() }
	for _, c := range []struct {
		opt  int64
		wait time.Duration // for compactionPaceBurst + 1e6 bytes
	}{
		{0, time.Duration(1e6 / defaultCompactionWriteRate * float64(time.Second))},
		{4e6, 250 * time.Millisecond},
		{-1, 0},
	} {
		p := newPacerFor(&Options{CompactionWriteRate: c.opt}, recent)
		p.now = func() time.Time { return now }
		var slept time.Duration
		p.sleep = func(d time.Duration) { slept += d }
		p.pace(compactionPaceBurst + 1e6)
		if slept != c.wait {
			t.Errorf("CompactionWriteRate %d: waited %v, want %v", c.opt, slept, c.wait)
		}
		if c.opt < 0 {
			for range 10 {
				p.pace(1 << 30)
			}
			if slept != 0 {
				t.Errorf("CompactionWriteRate %d: waited %v", c.opt, slept)
			}
		}
	}
}

// TestCompactionPaced compacts a table right after a small write, then
// one no small write ever reached: the first rewrite's every output byte
// goes through the table's pacer and waits for the bytes past the burst
// at the pacer's rate; the second never waits.
func TestCompactionPaced(t *testing.T) {
	for _, recent := range []bool{true, false} {
		dir := t.TempDir()
		tbl := mustCreate(t, dir, directDef(), quiet())
		rng := rand.New(rand.NewPCG(21, 22))
		for i := range 3 {
			rec := eventBatch(memory.DefaultAllocator, genEvents(rng, int64(i)*20_000, 20_000), false)
			mustWrite(t, tbl, rec)
			rec.Release()
		}
		const rate = 1e6
		now := time.Unix(1000, 0)
		if recent {
			tbl.lastSmallWrite.Store(now.UnixNano())
		}
		p := newPacer(rate, tbl.lastSmallWrite.Load)
		// The clock stands still but for the waits: they alone pay for
		// the bytes.
		p.now = func() time.Time { return now }
		var slept time.Duration
		p.sleep = func(d time.Duration) { slept += d; now = now.Add(d) }
		tbl.pacer = p
		if err := tbl.CompactAt(context.Background(), Full, base); err != nil {
			t.Fatal(err)
		}
		out := dataBytes(t, dir)
		if n := mustCount(t, tbl, base, nil); n != 60_000 {
			t.Fatalf("%d rows after compaction", n)
		}
		checkClose(t, tbl)
		if !recent {
			if slept != 0 {
				t.Fatalf("no small write, but the compaction waited %v", slept)
			}
			continue
		}
		want := time.Duration(float64(out-compactionPaceBurst) / rate * float64(time.Second))
		if d := slept - want; d < -time.Millisecond || d > time.Millisecond {
			t.Fatalf("a %d-byte output waited %v at %.0f bytes/s, want %v", out, slept, rate, want)
		}
	}
}
