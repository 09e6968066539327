package segment

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Every double that scales comes back bit for bit; one that cannot (NaN,
// -0, ±Inf, 0.1+0.2, huge) keeps the page plain.
func TestScaledRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	gens := map[string]func() float64{
		"cents":    func() float64 { return float64(rng.IntN(10_000_000)) / 100 },
		"negative": func() float64 { return -float64(1+rng.IntN(1000)) / 8 },
		"integers": func() float64 { return float64(rng.Int64N(1 << 40)) },
		"micro":    func() float64 { return float64(rng.IntN(1_000_000)) / 1e6 },
		"random":   func() float64 { return rng.Float64() },
	}
	for name, gen := range gens {
		vals := make([]float64, 1000)
		for i := range vals {
			vals[i] = gen()
		}
		var scratch []uint64
		var ints []int64
		body, ok := encodeScaled(nil, vals, len(vals)*8, &scratch, &ints)
		if !ok {
			if name != "random" {
				t.Errorf("%s: not scaled", name)
			}
			continue
		}
		out := make([]byte, len(vals)*8)
		if err := decodeScaled(out, len(vals), body); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := castSlice[float64](out, len(vals))
		for i, v := range vals {
			if math.Float64bits(got[i]) != math.Float64bits(v) {
				t.Fatalf("%s: value %d: %v came back as %v", name, i, v, got[i])
			}
		}
		t.Logf("%s: %d bytes for %d values (plain: %d)", name, len(body), len(vals), len(vals)*8)
	}
	tenth, fifth := 0.1, 0.2 // at run time: the constant 0.1 + 0.2 is exactly 0.3
	for _, bad := range []float64{math.NaN(), math.Copysign(0, -1), math.Inf(1), math.Inf(-1), tenth + fifth, 1e300, 1e-12} {
		var scratch []uint64
		var ints []int64
		if _, ok := encodeScaled(nil, []float64{1.5, bad}, 16, &scratch, &ints); ok {
			t.Errorf("%v was scaled", bad)
		}
	}
}
