package exec

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortRowsPaths: the radix path for integer keys without NULLs orders
// rows and finds partitions and peers exactly as the comparison path
// (forced by marking every value valid) does, extreme values and
// descending keys included.
func TestSortRowsPaths(t *testing.T) {
	seed := relSeed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	for iter := range relIters(200) {
		n := rng.IntN(300)
		nkeys := rng.IntN(3)
		var fast, slow []sortCol
		for k := 0; k < nkeys; k++ {
			c := &flatCol{ints: make([]int64, n)}
			spread := []int64{3, 1000, math.MaxInt64}[rng.IntN(3)]
			for i := range c.ints {
				switch rng.IntN(10) {
				case 0:
					c.ints[i] = math.MinInt64
				case 1:
					c.ints[i] = math.MaxInt64
				default:
					c.ints[i] = rng.Int64N(spread) - spread/2
				}
			}
			valid := make([]bool, n)
			for i := range valid {
				valid[i] = true
			}
			desc := rng.IntN(2) == 0
			fast = append(fast, sortCol{col: c, desc: desc})
			slow = append(slow, sortCol{col: &flatCol{ints: c.ints, valid: valid}, desc: desc})
		}
		nPart := rng.IntN(nkeys + 1)
		p1, ps1, pe1 := sortRows(fast, nPart, n)
		p2, ps2, pe2 := sortRows(slow, nPart, n)
		if !slices.Equal(p1, p2) || !slices.Equal(ps1, ps2) || !slices.Equal(pe1, pe2) {
			t.Fatalf("iter %d: %d keys, %d partition keys, %d rows: radix and comparison sorts differ\n%v\n%v",
				iter, nkeys, nPart, n, p1, p2)
		}
	}
}
