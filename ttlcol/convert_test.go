package ttlcol

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"
)

var (
	bigMinInt64 = big.NewInt(math.MinInt64)
	bigMaxInt64 = big.NewInt(math.MaxInt64)
)

// fitsInt64 returns v as int64 and whether it fits.
func fitsInt64(v *big.Int) (int64, bool) {
	if v.Cmp(bigMinInt64) < 0 || v.Cmp(bigMaxInt64) > 0 {
		return 0, false
	}
	return v.Int64(), true
}

func clampInt64(v *big.Int) int64 {
	switch {
	case v.Cmp(bigMinInt64) < 0:
		return math.MinInt64
	case v.Cmp(bigMaxInt64) > 0:
		return math.MaxInt64
	}
	return v.Int64()
}

// Reference implementations in arbitrary precision.
func refDateToMicros(days int32, off int) (int64, bool) {
	v := new(big.Int).Mul(big.NewInt(int64(days)), big.NewInt(secondsPerDay))
	v.Sub(v, big.NewInt(int64(off)))
	v.Mul(v, big.NewInt(microsPerSecond))
	return fitsInt64(v)
}

func refDatetimeToMicros(wall int64, off int) (int64, bool) {
	v := new(big.Int).Sub(big.NewInt(wall), new(big.Int).Mul(big.NewInt(int64(off)), big.NewInt(microsPerSecond)))
	return fitsInt64(v)
}

func refMicrosToDate(ttl int64, off int) int32 {
	v := new(big.Int).Add(big.NewInt(ttl), new(big.Int).Mul(big.NewInt(int64(off)), big.NewInt(microsPerSecond)))
	v.Div(v, big.NewInt(microsPerDay)) // Euclidean: floor for a positive divisor
	return int32(v.Int64())
}

func refMicrosToDatetime(ttl int64, off int) int64 {
	v := new(big.Int).Add(big.NewInt(ttl), new(big.Int).Mul(big.NewInt(int64(off)), big.NewInt(microsPerSecond)))
	return clampInt64(v)
}

func TestDateToMicros(t *testing.T) {
	tests := []struct {
		days int32
		off  int
		want int64
		ok   bool
	}{
		{0, 0, 0, true},
		{1, 0, microsPerDay, true},
		{-1, 0, -microsPerDay, true},
		{0, 8 * 3600, -8 * 3600 * microsPerSecond, true}, // midnight at +08:00 is 16:00 the day before in UTC
		{0, -5 * 3600, 5 * 3600 * microsPerSecond, true}, // and at -05:00 it is 05:00 UTC
		{106751991, 0, 106751991 * microsPerDay, true},
		{106751992, 0, 0, false},
		{-106751991, 0, -106751991 * microsPerDay, true},
		{-106751992, 0, 0, false},
		{-106751991, MaxZoneOffset, 0, false},
		{106751991, MinZoneOffset, 0, false},
		{106751991, MaxZoneOffset, 106751991*microsPerDay - MaxZoneOffset*microsPerSecond, true},
		{math.MaxInt32, 0, 0, false},
		{math.MinInt32, 0, 0, false},
	}
	for _, tt := range tests {
		got, ok := DateToMicros(tt.days, tt.off)
		if got != tt.want || ok != tt.ok {
			t.Errorf("DateToMicros(%d, %d) = %d, %t; want %d, %t", tt.days, tt.off, got, ok, tt.want, tt.ok)
		}
	}

	// Against the time package for ordinary dates.
	for _, off := range []int{0, 8 * 3600, -12 * 3600, 14 * 3600, 5*3600 + 30*60} {
		zone := time.FixedZone("", off)
		for _, d := range []time.Time{
			time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC),
			time.Date(1900, 2, 28, 0, 0, 0, 0, time.UTC),
			time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
			time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		} {
			days := int32(d.Unix() / secondsPerDay)
			if d.Unix() < 0 && d.Unix()%secondsPerDay != 0 {
				t.Fatal("test dates must be midnights")
			}
			want := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, zone).UnixMicro()
			got, ok := DateToMicros(days, off)
			if !ok || got != want {
				t.Errorf("DateToMicros(%s, %s) = %d, %t; want %d", d.Format(time.DateOnly), FormatZone(off), got, ok, want)
			}
			if back := MicrosToDate(got, off); back != days {
				t.Errorf("MicrosToDate(DateToMicros(%d, %d)) = %d", days, off, back)
			}
		}
	}
}

func TestDatetimeToMicros(t *testing.T) {
	tests := []struct {
		wall int64
		off  int
		want int64
		ok   bool
	}{
		{0, 0, 0, true},
		{0, 8 * 3600, -8 * 3600 * microsPerSecond, true},
		{-1, -3600, 3600*microsPerSecond - 1, true},
		{math.MaxInt64, 0, math.MaxInt64, true},
		{math.MaxInt64, 1, math.MaxInt64 - microsPerSecond, true},
		{math.MaxInt64, -1, 0, false},
		{math.MinInt64, 0, math.MinInt64, true},
		{math.MinInt64, -1, math.MinInt64 + microsPerSecond, true},
		{math.MinInt64, 1, 0, false},
		{math.MinInt64 + microsPerSecond, 1, math.MinInt64, true},
		{0, math.MaxInt64/microsPerSecond + 1, 0, false}, // absurd offset
	}
	for _, tt := range tests {
		got, ok := DatetimeToMicros(tt.wall, tt.off)
		if got != tt.want || ok != tt.ok {
			t.Errorf("DatetimeToMicros(%d, %d) = %d, %t; want %d, %t", tt.wall, tt.off, got, ok, tt.want, tt.ok)
		}
	}
	// Against the time package: a wall clock at an offset.
	zone := time.FixedZone("", 8*3600)
	wall := time.Date(2026, 3, 4, 5, 6, 7, 890123000, time.UTC).UnixMicro()
	want := time.Date(2026, 3, 4, 5, 6, 7, 890123000, zone).UnixMicro()
	if got, ok := DatetimeToMicros(wall, 8*3600); !ok || got != want {
		t.Errorf("DatetimeToMicros(2026-03-04 05:06:07.890123 at +08:00) = %d, %t; want %d", got, ok, want)
	}
}

func TestMicrosToDate(t *testing.T) {
	tests := []struct {
		ttl  int64
		off  int
		want int32
	}{
		{0, 0, 0},
		{-1, 0, -1},
		{-microsPerDay, 0, -1},
		{-microsPerDay - 1, 0, -2},
		{microsPerDay - 1, 0, 0},
		{microsPerDay, 0, 1},
		{16 * 3600 * microsPerSecond, 8 * 3600, 1},
		{16*3600*microsPerSecond - 1, 8 * 3600, 0},
		{0, -3600, -1},
		{0, 3600, 0},
		{math.MaxInt64, 0, 106751991},
		{math.MinInt64, 0, -106751992},
		{math.MaxInt64, MaxZoneOffset, 106751991},
		{106751991*microsPerDay - 1, 1, 106751991},
		{math.MinInt64, MinZoneOffset, -106751992},
	}
	for _, tt := range tests {
		if got := MicrosToDate(tt.ttl, tt.off); got != tt.want {
			t.Errorf("MicrosToDate(%d, %d) = %d; want %d", tt.ttl, tt.off, got, tt.want)
		}
		if ref := refMicrosToDate(tt.ttl, tt.off); ref != tt.want {
			t.Errorf("reference disagrees with the table for (%d, %d): %d", tt.ttl, tt.off, ref)
		}
	}
	if got := MicrosToDate(math.MaxInt64, math.MaxInt64); got != math.MaxInt32 {
		t.Errorf("MicrosToDate with an absurd offset = %d; want saturation", got)
	}
	if got := MicrosToDate(math.MinInt64, math.MinInt64); got != math.MinInt32 {
		t.Errorf("MicrosToDate with an absurd offset = %d; want saturation", got)
	}
}

func TestMicrosToDatetime(t *testing.T) {
	tests := []struct {
		ttl  int64
		off  int
		want int64
	}{
		{0, 0, 0},
		{0, 8 * 3600, 8 * 3600 * microsPerSecond},
		{-1, -1, -1 - microsPerSecond},
		{math.MaxInt64, 1, math.MaxInt64},
		{math.MinInt64, -1, math.MinInt64},
		{math.MaxInt64, -1, math.MaxInt64 - microsPerSecond},
	}
	for _, tt := range tests {
		if got := MicrosToDatetime(tt.ttl, tt.off); got != tt.want {
			t.Errorf("MicrosToDatetime(%d, %d) = %d; want %d", tt.ttl, tt.off, got, tt.want)
		}
	}
}

// randInstant draws µs values that hit the int64 edges, the epoch and
// ordinary dates.
func randInstant(r *rand.Rand) int64 {
	switch r.IntN(6) {
	case 0:
		return math.MaxInt64 - r.Int64N(1e12)
	case 1:
		return math.MinInt64 + r.Int64N(1e12)
	case 2:
		return r.Int64N(4*microsPerDay) - 2*microsPerDay
	case 3:
		return int64(r.Uint64())
	}
	return r.Int64N(2e17) - 1e17 // within ±3000 years
}

func randOffset(r *rand.Rand) int {
	if r.IntN(4) == 0 {
		return MinZoneOffset + r.IntN(MaxZoneOffset-MinZoneOffset+1) // any second
	}
	return MinZoneOffset + 60*r.IntN((MaxZoneOffset-MinZoneOffset)/60+1)
}

func TestConversionsRandom(t *testing.T) {
	const seed = 20260101
	r := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i < 20000; i++ {
		x, off := randInstant(r), randOffset(r)
		days := int32(r.Uint32())
		if r.IntN(2) == 0 {
			days = int32(r.IntN(2*106751993) - 106751993)
		}

		got, ok := DatetimeToMicros(x, off)
		want, wantOK := refDatetimeToMicros(x, off)
		if got != want || ok != wantOK {
			t.Fatalf("seed %d: DatetimeToMicros(%d, %d) = %d, %t; want %d, %t", seed, x, off, got, ok, want, wantOK)
		}
		if ok {
			if back := MicrosToDatetime(got, off); back != x {
				t.Fatalf("seed %d: MicrosToDatetime(DatetimeToMicros(%d, %d)) = %d", seed, x, off, back)
			}
		}
		if got, want := MicrosToDatetime(x, off), refMicrosToDatetime(x, off); got != want {
			t.Fatalf("seed %d: MicrosToDatetime(%d, %d) = %d; want %d", seed, x, off, got, want)
		}
		if got, want := MicrosToDate(x, off), refMicrosToDate(x, off); got != want {
			t.Fatalf("seed %d: MicrosToDate(%d, %d) = %d; want %d", seed, x, off, got, want)
		}

		got, ok = DateToMicros(days, off)
		want, wantOK = refDateToMicros(days, off)
		if got != want || ok != wantOK {
			t.Fatalf("seed %d: DateToMicros(%d, %d) = %d, %t; want %d, %t", seed, days, off, got, ok, want, wantOK)
		}
		if ok {
			if back := MicrosToDate(got, off); back != days {
				t.Fatalf("seed %d: MicrosToDate(DateToMicros(%d, %d)) = %d", seed, days, off, back)
			}
		}
	}
}
