package query

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rowttl/rowttl/schema"
)

// TestValueKernelsMatchNaive checks the comparison kernels of
// values_filter.go against test(op, cmp.Compare(...)), the semantics of
// eval.go, on lengths that end mid-byte, with NaN, infinities, -0 and the
// ends of int64, and constants on and between the values of a
// decimal-scaled page.
func TestValueKernelsMatchNaive(t *testing.T) {
	ops := []Op{Eq, Ne, Lt, Le, Gt, Ge, NullSafeEq}
	rng := rand.New(rand.NewPCG(3, 4))
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1e300, -1e300, 5e-324}
	for iter := range 400 {
		n := rng.IntN(40)
		ints := make([]int64, n)
		floats := make([]float64, n)
		for i := range n {
			ints[i] = int64(rng.IntN(21) - 10)
			if rng.IntN(8) == 0 {
				ints[i] = []int64{math.MinInt64, math.MaxInt64, math.MinInt64 + 1, math.MaxInt64 - 1}[rng.IntN(4)]
			}
			floats[i] = float64(rng.IntN(21)-10) / 4
			if rng.IntN(6) == 0 {
				floats[i] = special[rng.IntN(len(special))]
			}
		}
		op := ops[rng.IntN(len(ops))]
		bl := (n + 7) / 8
		check := func(what string, want func(i int) bool, t1, f1 []byte) {
			t.Helper()
			for i := range bl * 8 {
				tb, fb := t1[i/8]>>(i%8)&1 == 1, f1[i/8]>>(i%8)&1 == 1
				if i >= n {
					if tb || fb {
						t.Fatalf("iter %d %s %v: bit %d past %d rows set", iter, what, op, i, n)
					}
					continue
				}
				if w := want(i); tb != w || fb == w {
					t.Fatalf("iter %d %s %v: row %d: true %v false %v, want %v", iter, what, op, i, tb, fb, w)
				}
			}
		}

		ci := int64(rng.IntN(21) - 10)
		if rng.IntN(5) == 0 {
			ci = []int64{math.MinInt64, math.MaxInt64}[rng.IntN(2)]
		}
		tt, ff := make([]byte, bl), make([]byte, bl)
		cmpInts(ints, ci, op, tt, ff)
		check("ints", func(i int) bool { return test(op, cmp.Compare(ints[i], ci)) }, tt, ff)

		cf := float64(rng.IntN(21)-10) / 4
		if rng.IntN(5) == 0 {
			cf = special[1+rng.IntN(len(special)-1)] // NaN constants are declined
		}
		clear(tt)
		clear(ff)
		if !cmpFloats(floats, schema.FloatValue, cf, 0, op, tt, ff) {
			t.Fatalf("cmpFloats declined %v", cf)
		}
		check("floats", func(i int) bool { return test(op, cmp.Compare(floats[i], cf)) }, tt, ff)
		clear(tt)
		clear(ff)
		cmpFloats(floats, schema.IntValue, 0, ci, op, tt, ff)
		check("floats/int", func(i int) bool { return test(op, cmp.Compare(floats[i], float64(ci))) }, tt, ff)

		scale := rng.IntN(4)
		p := math.Pow10(scale)
		consts := []float64{cf, float64(ci) / p, math.Nextafter(cf, 10)}
		if n > 0 {
			consts = append(consts, float64(ints[rng.IntN(n)])/p)
		}
		for _, c := range consts {
			clear(tt)
			clear(ff)
			if !cmpScaled(ints, p, schema.FloatValue, c, 0, op, tt, ff) {
				t.Fatalf("cmpScaled declined %v", c)
			}
			check("scaled", func(i int) bool { return test(op, cmp.Compare(float64(ints[i])/p, c)) }, tt, ff)
		}
	}
	var tt, ff [1]byte
	if cmpFloats([]float64{1}, schema.FloatValue, math.NaN(), 0, Eq, tt[:], ff[:]) ||
		cmpScaled([]int64{1}, 1, schema.FloatValue, math.NaN(), 0, Eq, tt[:], ff[:]) ||
		cmpFloats([]float64{1}, schema.BytesValue, 0, 0, Eq, tt[:], ff[:]) {
		t.Fatal("a NaN or non-number constant was not declined")
	}
}

func TestRecompared(t *testing.T) {
	cmp := func(slot int) bound { return &boundCmp{slot: slot, op: Eq} }
	for _, tc := range []struct {
		name string
		b    bound
		want []bool
	}{
		{"none", nil, []bool{}},
		{"one comparison", cmp(2), []bool{false, false, false}},
		{"an IN list", &boundLogic{kids: []bound{cmp(1), cmp(1), cmp(1)}}, []bool{false, true}},
		{"a range and another column", &boundLogic{and: true, kids: []bound{cmp(0), &boundNot{k: cmp(0)}, cmp(3), &boundIsNull{slot: 3}}}, []bool{true, false, false, false}},
	} {
		got := recompared(tc.b)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
