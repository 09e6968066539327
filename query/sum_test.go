package query

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/rowttl/rowttl/segment"
)

func randomSelection(rng *rand.Rand, n int) []byte {
	sel := make([]byte, (n+7)/8)
	density := rng.IntN(4)
	for i := 0; i < n; i++ {
		var on bool
		switch density {
		case 0:
			on = false
		case 1:
			on = true
		case 2:
			on = rng.IntN(2) == 0
		default:
			on = rng.IntN(10) == 0
		}
		if on {
			sel[i/8] |= 1 << (i % 8)
		}
	}
	return sel
}

func selected(sel []byte, i int) bool { return sel == nil || sel[i/8]>>(i%8)&1 == 1 }

func TestSumKernelsMatchNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 2000; trial++ {
		n := rng.IntN(1500)
		var sel []byte
		if rng.IntN(5) > 0 {
			sel = randomSelection(rng, n)
		}
		small := make([]int64, n)
		wide := make([]int64, n)
		floats := make([]float64, n)
		for i := range small {
			small[i] = rng.Int64N(1<<54) - 1<<53
			wide[i] = int64(rng.Uint64())
			floats[i] = rng.NormFloat64() * 1e6
			if !selected(sel, i) && rng.IntN(3) == 0 {
				// What a deselected slot holds must not leak in.
				floats[i] = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[rng.IntN(3)]
			}
		}
		wantSmall, wantWide := new(big.Int), new(big.Int)
		var fsum [4]float64
		for i := 0; i < n; i++ {
			if selected(sel, i) {
				wantSmall.Add(wantSmall, big.NewInt(small[i]))
				wantWide.Add(wantWide, big.NewInt(wide[i]))
				fsum[i&3] += floats[i]
			}
		}
		if got := toBig(sumSmallInts(small, sel)); got.Cmp(wantSmall) != 0 {
			t.Fatalf("trial %d: sumSmallInts %s, want %s", trial, got, wantSmall)
		}
		if got := toBig(sumInts(wide, sel)); got.Cmp(wantWide) != 0 {
			t.Fatalf("trial %d: sumInts %s, want %s", trial, got, wantWide)
		}
		want := (fsum[0] + fsum[1]) + (fsum[2] + fsum[3])
		if got := sumFloats(floats, sel); math.Float64bits(got) != math.Float64bits(want) && !(got == 0 && want == 0) {
			t.Fatalf("trial %d: sumFloats %v, want %v", trial, got, want)
		}
	}
}

func toBig(a segment.Int128) *big.Int {
	v := new(big.Int).Lsh(big.NewInt(a.Hi), 64)
	return v.Add(v, new(big.Int).SetUint64(a.Lo))
}

func BenchmarkSumKernels(b *testing.B) {
	const n = 65536
	rng := rand.New(rand.NewPCG(1, 2))
	ints := make([]int64, n)
	floats := make([]float64, n)
	sel := make([]byte, n/8)
	tenth := make([]byte, n/8)
	for i := range ints {
		ints[i] = rng.Int64N(100000)
		floats[i] = float64(ints[i]) / 100
		if rng.IntN(2) == 0 {
			sel[i/8] |= 1 << (i % 8)
		}
		if rng.IntN(10) == 0 {
			tenth[i/8] |= 1 << (i % 8)
		}
	}
	b.Run("scaled-ints/tenth", func(b *testing.B) {
		b.SetBytes(n * 8)
		for b.Loop() {
			sumSmallInts(ints, tenth)
		}
	})
	b.Run("scaled-ints/half", func(b *testing.B) {
		b.SetBytes(n * 8)
		for b.Loop() {
			sumSmallInts(ints, sel)
		}
	})
	b.Run("scaled-ints/all", func(b *testing.B) {
		b.SetBytes(n * 8)
		for b.Loop() {
			sumSmallInts(ints, nil)
		}
	})
	b.Run("floats/half", func(b *testing.B) {
		b.SetBytes(n * 8)
		for b.Loop() {
			sumFloats(floats, sel)
		}
	})
}

func TestFloatTotal(t *testing.T) {
	scaled := func(v int64, e int) pageSum {
		var x segment.Int128
		x.Add(v)
		return pageSum{count: 1, exact: x, scale: e}
	}
	plain := func(f float64) pageSum { return pageSum{count: 1, float: f, scale: -1} }
	for _, tc := range []struct {
		name  string
		parts []pageSum
		want  float64
	}{
		{"none", nil, 0},
		{"one plain page", []pageSum{plain(0.1 + 0.2)}, 0.1 + 0.2},
		{"scaled pages round once", []pageSum{scaled(1, 1), scaled(2, 1)}, 0.3},
		{"scales mix", []pageSum{scaled(1, 1), scaled(2, 2), scaled(3, 9)}, 0.120000003},
		{"plain and scaled", []pageSum{plain(0.5), scaled(1, 1), scaled(2, 1)}, 0.8},
		// Added in order, 1e16 + 1 + 1 would lose both ones.
		{"exact across pages", []pageSum{plain(1e16), plain(1), plain(1)}, 1e16 + 2},
		{"cancels exactly", []pageSum{plain(1e300), scaled(7, 0), plain(-1e300)}, 7},
		{"empty page ignored", []pageSum{{scale: 3}, scaled(25, 1)}, 2.5},
		{"infinity", []pageSum{plain(math.Inf(1)), scaled(5, 0)}, math.Inf(1)},
		{"opposite infinities", []pageSum{plain(math.Inf(1)), plain(math.Inf(-1)), scaled(5, 0)}, math.NaN()},
		{"NaN", []pageSum{plain(math.NaN()), plain(1)}, math.NaN()},
	} {
		var ft floatTotal
		for _, p := range tc.parts {
			ft.add(p)
		}
		got := ft.value()
		if got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestFloatTotalRandom checks floatTotal against the exact sum of random
// scaled and plain pages, in any order.
func TestFloatTotalRandom(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	for trial := 0; trial < 500; trial++ {
		var parts []pageSum
		var exact big.Rat
		for range rng.IntN(20) {
			if rng.IntN(3) == 0 {
				f := (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(30)-10))
				parts = append(parts, pageSum{count: 1, float: f, scale: -1})
				exact.Add(&exact, new(big.Rat).SetFloat64(f))
				continue
			}
			e := rng.IntN(10)
			var x segment.Int128
			var n big.Int
			for range 1 + rng.IntN(5) {
				v := rng.Int64N(1<<53) - 1<<52
				x.Add(v)
				n.Add(&n, big.NewInt(v))
			}
			parts = append(parts, pageSum{count: 1, exact: x, scale: e})
			exact.Add(&exact, new(big.Rat).SetFrac(&n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil)))
		}
		want, _ := exact.Float64()
		rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		var ft floatTotal
		for _, p := range parts {
			ft.add(p)
		}
		if got := ft.value(); got != want {
			t.Fatalf("seed %d trial %d: %v, want %v (%d parts)", seed, trial, got, want, len(parts))
		}
	}
}
