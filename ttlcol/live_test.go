package ttlcol

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// naiveLive is the reference: one row at a time, straight from the rule.
func naiveLive(ttl []int64, validity []byte, offset int, threshold int64) []bool {
	live := make([]bool, len(ttl))
	for i, v := range ttl {
		null := validity != nil && validity[(offset+i)/8]&(1<<((offset+i)%8)) == 0
		live[i] = null || v > threshold
	}
	return live
}

// randColumn draws values clustered around threshold (so that equality is
// common) mixed with the int64 extremes.
func randColumn(r *rand.Rand, n int, threshold int64) []int64 {
	ttl := make([]int64, n)
	for i := range ttl {
		switch r.IntN(8) {
		case 0:
			ttl[i] = math.MinInt64
		case 1:
			ttl[i] = math.MaxInt64
		case 2:
			ttl[i] = int64(r.Uint64())
		default:
			ttl[i] = satAdd(threshold, r.Int64N(5)-2)
		}
	}
	return ttl
}

func TestLiveMaskRandom(t *testing.T) {
	const seed = 42
	r := rand.New(rand.NewPCG(seed, 3))
	thresholds := []int64{0, -1, 1, math.MinInt64, math.MaxInt64, math.MinInt64 + 1, math.MaxInt64 - 1}
	lengths := []int{}
	for n := 0; n <= 200; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 255, 256, 257, 511, 512, 513, 1000, 1031)
	for _, n := range lengths {
		for offset := 0; offset < 8+3; offset++ {
			off := offset
			if offset >= 8 {
				off = []int{13, 64 + 5, 127}[offset-8]
			}
			for trial := 0; trial < 3; trial++ {
				threshold := thresholds[r.IntN(len(thresholds))]
				if trial == 0 {
					threshold = int64(r.Uint64())
				}
				ttl := randColumn(r, n, threshold)

				var validity []byte
				switch trial {
				case 1:
					// Exact size: exercises the slow validity path at the end.
					validity = make([]byte, (off+n+7)/8)
				case 2:
					// Padded like Arrow buffers.
					validity = make([]byte, (off+n+7)/8+8)
				}
				for i := range validity {
					validity[i] = byte(r.Uint32())
				}
				if trial != 0 && r.IntN(4) == 0 {
					for i := range validity {
						validity[i] = 0xff
					}
				}
				if trial == 0 && r.IntN(2) == 0 {
					off = 0 // nil validity ignores the offset anyway
				}

				want := naiveLive(ttl, validity, off, threshold)
				wantCount := 0
				for _, l := range want {
					if l {
						wantCount++
					}
				}

				// out has a canary byte after the bitmap and junk in it before.
				nb := (n + 7) / 8
				out := make([]byte, nb+1)
				for i := range out {
					out[i] = 0xa5
				}
				got := LiveMask(ttl, validity, off, threshold, out)
				ctx := fmt.Sprintf("seed %d n %d offset %d threshold %d validity %d bytes", seed, n, off, threshold, len(validity))
				if got != wantCount {
					t.Fatalf("%s: LiveMask = %d live; want %d", ctx, got, wantCount)
				}
				for i := 0; i < nb*8; i++ {
					bit := out[i/8]&(1<<(i%8)) != 0
					if i < n && bit != want[i] {
						t.Fatalf("%s: row %d (ttl %d) live = %t; want %t", ctx, i, ttl[i], bit, want[i])
					}
					if i >= n && bit {
						t.Fatalf("%s: padding bit %d set", ctx, i)
					}
				}
				if out[nb] != 0xa5 {
					t.Fatalf("%s: LiveMask wrote past the bitmap", ctx)
				}
				if c := CountLive(ttl, validity, off, threshold); c != wantCount {
					t.Fatalf("%s: CountLive = %d; want %d", ctx, c, wantCount)
				}
			}
		}
	}
}

func TestLiveMaskEdges(t *testing.T) {
	ttl := []int64{math.MinInt64, -1, 0, 1, math.MaxInt64, 5, 5, 5}
	tests := []struct {
		threshold int64
		want      byte
	}{
		{0, 0b1111_1000}, // 0 == threshold is expired
		{5, 0b0001_0000}, // 5 == threshold is expired
		{4, 0b1111_0000},
		{math.MinInt64, 0b1111_1110}, // MinInt64 <= MinInt64: expired
		{math.MaxInt64, 0},           // nothing is greater
		{math.MaxInt64 - 1, 0b0001_0000},
	}
	for _, tt := range tests {
		out := []byte{0}
		n := LiveMask(ttl, nil, 0, tt.threshold, out)
		if out[0] != tt.want {
			t.Errorf("threshold %d: mask %08b; want %08b", tt.threshold, out[0], tt.want)
		}
		if n != popcount(tt.want) {
			t.Errorf("threshold %d: count %d", tt.threshold, n)
		}
		// All NULL: everything is alive whatever the values.
		if n := LiveMask(ttl, []byte{0, 0}, 3, tt.threshold, out); n != 8 || out[0] != 0xff {
			t.Errorf("threshold %d, all NULL: %d live, mask %08b", tt.threshold, n, out[0])
		}
	}
	if n := LiveMask(nil, nil, 0, 0, nil); n != 0 {
		t.Errorf("empty column: %d live", n)
	}
	if n := CountLive(nil, []byte{}, 0, 0); n != 0 {
		t.Errorf("empty column: %d live", n)
	}
}

func popcount(b byte) int {
	n := 0
	for ; b != 0; b &= b - 1 {
		n++
	}
	return n
}

func TestLiveMaskPanics(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
	}
	ttl := make([]int64, 17)
	mustPanic("short out", func() { LiveMask(ttl, nil, 0, 0, make([]byte, 2)) })
	mustPanic("short validity", func() { LiveMask(ttl, make([]byte, 3), 8, 0, make([]byte, 3)) })
	mustPanic("short validity count", func() { CountLive(ttl, make([]byte, 2), 0, 0) })
	mustPanic("negative offset", func() { CountLive(ttl, make([]byte, 3), -1, 0) })
}

func TestLiveMaskNoAllocs(t *testing.T) {
	ttl := make([]int64, 1000)
	validity := make([]byte, 130)
	out := make([]byte, 125)
	if a := testing.AllocsPerRun(10, func() {
		LiveMask(ttl, validity, 3, 0, out)
		CountLive(ttl, validity, 3, 0)
	}); a != 0 {
		t.Errorf("kernel allocates %v times per run", a)
	}
}

// Benchmarks: 8 bytes of __TTL__ per row; rows/s is reported per core.

const benchRows = 4096

func benchData(withValidity bool) ([]int64, []byte, int64) {
	r := rand.New(rand.NewPCG(1, 1))
	const threshold = 1_000_000
	ttl := make([]int64, benchRows)
	for i := range ttl {
		ttl[i] = threshold + r.Int64N(2_000_000) - 1_000_000 // half expired, unpredictable
	}
	var validity []byte
	if withValidity {
		validity = make([]byte, benchRows/8+8)
		for i := range validity {
			validity[i] = byte(r.Uint32()) | 0x81 // mostly valid
		}
	}
	return ttl, validity, threshold
}

func reportRows(b *testing.B) {
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkLiveMask(b *testing.B) {
	for _, v := range []bool{false, true} {
		b.Run(fmt.Sprintf("validity=%t", v), func(b *testing.B) {
			ttl, validity, th := benchData(v)
			out := make([]byte, benchRows/8)
			b.SetBytes(8 * benchRows)
			b.ReportAllocs()
			for b.Loop() {
				LiveMask(ttl, validity, 3, th, out)
			}
			reportRows(b)
		})
	}
}

func BenchmarkCountLive(b *testing.B) {
	for _, v := range []bool{false, true} {
		b.Run(fmt.Sprintf("validity=%t", v), func(b *testing.B) {
			ttl, validity, th := benchData(v)
			b.SetBytes(8 * benchRows)
			b.ReportAllocs()
			for b.Loop() {
				CountLive(ttl, validity, 3, th)
			}
			reportRows(b)
		})
	}
}
