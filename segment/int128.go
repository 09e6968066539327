package segment

import (
	"math/big"
	"math/bits"
)

// Int128 is an exact sum of int64 values, as page zone maps keep them: no
// page, and no table, can overflow it.
type Int128 struct {
	Hi int64
	Lo uint64
}

// Add adds v.
func (a *Int128) Add(v int64) {
	var c uint64
	a.Lo, c = bits.Add64(a.Lo, uint64(v), 0)
	a.Hi += int64(c) + v>>63
}

// AddInt128 adds b.
func (a *Int128) AddInt128(b Int128) {
	var c uint64
	a.Lo, c = bits.Add64(a.Lo, b.Lo, 0)
	a.Hi += b.Hi + int64(c)
}

// Float64 returns the value, rounded.
func (a Int128) Float64() float64 {
	if v, ok := a.Int64(); ok {
		return float64(v)
	}
	if a.Hi < 0 {
		// Convert the magnitude: a negative high word times 2^64 plus a
		// large low word would cancel away the low word's digits.
		return -a.neg().Float64()
	}
	return float64(a.Hi)*(1<<64) + float64(a.Lo)
}

// neg returns -a (two's complement; -MinInt128 wraps to itself).
func (a Int128) neg() Int128 {
	lo, c := bits.Add64(^a.Lo, 1, 0)
	return Int128{Hi: ^a.Hi + int64(c), Lo: lo}
}

// Int64 returns the value and whether it fits an int64.
func (a Int128) Int64() (int64, bool) {
	v := int64(a.Lo)
	return v, a.Hi == v>>63
}

// String prints the value in decimal.
func (a Int128) String() string {
	v := new(big.Int).Lsh(big.NewInt(a.Hi), 64)
	return v.Add(v, new(big.Int).SetUint64(a.Lo)).String()
}

func (a *Int128) addUint64(v uint64) {
	var c uint64
	a.Lo, c = bits.Add64(a.Lo, v, 0)
	a.Hi += int64(c)
}

// mulInt128 returns x × k exactly.
func mulInt128(x, k int64) Int128 {
	neg := (x < 0) != (k < 0)
	ux, uk := uint64(x), uint64(k)
	if x < 0 {
		ux = -ux
	}
	if k < 0 {
		uk = -uk
	}
	hi, lo := bits.Mul64(ux, uk)
	r := Int128{Hi: int64(hi), Lo: lo}
	if neg {
		r = r.neg()
	}
	return r
}
