package segment

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func int128Big(a Int128) *big.Int {
	v := new(big.Int).Lsh(big.NewInt(a.Hi), 64)
	return v.Add(v, new(big.Int).SetUint64(a.Lo))
}

// TestInt128 checks sums against math/big, and Float64 against the
// correctly rounded value, negative sums included.
func TestInt128(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for trial := 0; trial < 2000; trial++ {
		var a Int128
		want := new(big.Int)
		for range rng.IntN(20) {
			v := int64(rng.Uint64()) >> rng.IntN(64)
			if trial%3 == 0 {
				v = -rng.Int64N(1000) // small negatives: the case of refunds
			}
			a.Add(v)
			want.Add(want, big.NewInt(v))
		}
		if int128Big(a).Cmp(want) != 0 {
			t.Fatalf("sum %s, want %s", int128Big(a), want)
		}
		f, _ := new(big.Float).SetInt(want).Float64()
		if got := a.Float64(); got != f {
			t.Fatalf("Float64 of %s: %v, want %v", want, got, f)
		}
		v, ok := a.Int64()
		if ok != want.IsInt64() || (ok && v != want.Int64()) {
			t.Fatalf("Int64 of %s: %d, %t", want, v, ok)
		}
		if a.String() != want.String() {
			t.Fatalf("String %s, want %s", a, want)
		}
	}
	var b Int128
	b.Add(-5)
	if b.Float64() != -5 {
		t.Fatalf("-5 as a float: %v", b.Float64())
	}
	var c Int128
	for range 4 {
		c.Add(math.MinInt64)
	}
	if c.Float64() != -4*math.Pow(2, 63) {
		t.Fatalf("4 × MinInt64 as a float: %v", c.Float64())
	}
}
