package exec

import (
	"math/rand/v2"
	"testing"
	"time"
)

// refAddInterval is AddInterval written with time.Time, the reference.
func refAddInterval(us, k int64, u IntervalUnit) (int64, bool) {
	lo := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	hi := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro() - 1
	var out int64
	switch u {
	case Month, Quarter, Year:
		months := k
		switch u {
		case Quarter:
			months = k * 3
		case Year:
			months = k * 12
		}
		t := time.UnixMicro(us).UTC()
		y, m, d := t.Date()
		total := int64(y)*12 + int64(m-1) + months
		ny, nm := int(floorDiv(total, 12)), time.Month(total-floorDiv(total, 12)*12+1)
		last := time.Date(ny, nm+1, 0, 0, 0, 0, 0, time.UTC).Day()
		out = time.Date(ny, nm, min(d, last), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC).UnixMicro()
	default:
		out = us + k*u.micros()
	}
	return out, out >= lo && out <= hi
}

func TestAddIntervalAgainstTime(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	span := int64(10000 * 365 * 86400 * 1_000_000)
	lo := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	for range 20000 {
		us := lo + r.Int64N(span)
		u := IntervalUnit(1 + r.IntN(9))
		k := r.Int64N(2000) - 1000
		if u <= Hour {
			k *= 1_000_000
		}
		got, ok := AddInterval(us, k, u)
		want, wok := refAddInterval(us, k, u)
		if ok != wok || (ok && got != want) {
			t.Fatalf("seed %d: %d + %d %s = %d %v, want %d %v", seed, us, k, u, got, ok, want, wok)
		}
	}
	if _, ok := AddInterval(0, 1<<62, Week); ok {
		t.Fatal("overflowing week count accepted")
	}
}

func TestTruncDatetimeAgainstTime(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	lo := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	span := int64(9998 * 365 * 86400 * 1_000_000)
	for range 20000 {
		us := lo + r.Int64N(span)
		tm := time.UnixMicro(us).UTC()
		y, m, d := tm.Date()
		want := map[string]time.Time{
			"second":  tm.Truncate(time.Second),
			"minute":  time.Date(y, m, d, tm.Hour(), tm.Minute(), 0, 0, time.UTC),
			"hour":    time.Date(y, m, d, tm.Hour(), 0, 0, 0, time.UTC),
			"day":     time.Date(y, m, d, 0, 0, 0, 0, time.UTC),
			"week":    time.Date(y, m, d-(int(tm.Weekday())+6)%7, 0, 0, 0, 0, time.UTC),
			"month":   time.Date(y, m, 1, 0, 0, 0, 0, time.UTC),
			"quarter": time.Date(y, (m-1)/3*3+1, 1, 0, 0, 0, 0, time.UTC),
			"year":    time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC),
		}
		for unit, w := range want {
			if got := TruncDatetime(us, unit); got != w.UnixMicro() {
				t.Fatalf("seed %d: date_trunc(%s, %s) = %s, want %s", seed, tm, unit, time.UnixMicro(got).UTC(), w)
			}
		}
	}
}
