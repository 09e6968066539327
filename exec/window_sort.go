package exec

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// flatCol is one column of a held input, all batches end to end, in the
// form comparisons read fastest: integer-like values (integers, BOOLEAN,
// DATE, DATETIME) as int64, floats as float64. Strings point into the
// held batches' buffers, which outlive it.
type flatCol struct {
	ints   []int64
	floats []float64
	decs   []decimal128.Num
	strs   []string
	// valid is nil when the column has no NULL.
	valid []bool
}

func newFlatCol(typ arrow.DataType, arrs []arrow.Array, n int) *flatCol {
	c := &flatCol{}
	nulls := 0
	for _, a := range arrs {
		nulls += a.NullN()
	}
	if nulls > 0 {
		c.valid = make([]bool, 0, n)
		for _, a := range arrs {
			for i := 0; i < a.Len(); i++ {
				c.valid = append(c.valid, a.IsValid(i))
			}
		}
	}
	switch typ.ID() {
	case arrow.FLOAT32, arrow.FLOAT64:
		c.floats = make([]float64, 0, n)
		for _, a := range arrs {
			switch a := a.(type) {
			case *array.Float32:
				for _, v := range a.Float32Values() {
					c.floats = append(c.floats, float64(v))
				}
			case *array.Float64:
				c.floats = append(c.floats, a.Float64Values()...)
			}
		}
	case arrow.DECIMAL128:
		c.decs = make([]decimal128.Num, 0, n)
		for _, a := range arrs {
			c.decs = append(c.decs, a.(*array.Decimal128).Values()...)
		}
	case arrow.STRING:
		c.strs = make([]string, 0, n)
		for _, a := range arrs {
			s := a.(*array.String)
			for i := 0; i < s.Len(); i++ {
				c.strs = append(c.strs, s.Value(i))
			}
		}
	case arrow.BOOL:
		c.ints = make([]int64, 0, n)
		for _, a := range arrs {
			b := a.(*array.Boolean)
			for i := 0; i < b.Len(); i++ {
				v := int64(0)
				if b.Value(i) {
					v = 1
				}
				c.ints = append(c.ints, v)
			}
		}
	default:
		if !int64KeyType(typ) {
			panic(fmt.Sprintf("exec: no flat column of %s", typ))
		}
		c.ints = make([]int64, 0, n)
		for _, a := range arrs {
			c.ints = int64Keys(c.ints, a)
		}
	}
	return c
}

func (c *flatCol) null(i int32) bool { return c.valid != nil && !c.valid[i] }

// cmp orders two non-NULL values as cmp.Compare does: NaN before every
// number and equal to NaN, -0 equal to 0.
func (c *flatCol) cmp(i, j int32) int {
	switch {
	case c.ints != nil:
		return cmp.Compare(c.ints[i], c.ints[j])
	case c.floats != nil:
		return cmp.Compare(c.floats[i], c.floats[j])
	case c.decs != nil:
		return c.decs[i].Cmp(c.decs[j])
	case c.strs != nil:
		return strings.Compare(c.strs[i], c.strs[j])
	}
	return 0
}

func (c *flatCol) bytes() int64 {
	return int64(cap(c.ints))*8 + int64(cap(c.floats))*8 + int64(cap(c.decs))*16 + int64(cap(c.strs))*16 + int64(cap(c.valid))
}

// sortCol is a flat column with its direction.
type sortCol struct {
	col        *flatCol
	desc       bool
	nullsFirst bool
}

// compareRows orders rows i and j by keys; NULLs equal each other.
func compareRows(keys []sortCol, i, j int32) int {
	for _, k := range keys {
		ni, nj := k.col.null(i), k.col.null(j)
		switch {
		case ni && nj:
			continue
		case ni:
			if k.nullsFirst {
				return -1
			}
			return 1
		case nj:
			if k.nullsFirst {
				return 1
			}
			return -1
		}
		c := k.col.cmp(i, j)
		if c != 0 {
			if k.desc {
				return -c
			}
			return c
		}
	}
	return 0
}

// sortRows returns the permutation of rows 0..n-1 ordered by keys,
// equal rows in input order, and where in it the groups of rows equal on
// the first nPart keys (partitions) and on all keys (peers) start.
func sortRows(keys []sortCol, nPart, n int) (perm []int32, partStart, peerStart []bool) {
	perm = make([]int32, n)
	partStart, peerStart = make([]bool, n), make([]bool, n)
	fast := len(keys) <= 2
	for _, k := range keys {
		fast = fast && k.col.ints != nil && k.col.valid == nil
	}
	if fast {
		sortIntRows(keys, nPart, perm, partStart, peerStart)
		return perm, partStart, peerStart
	}
	for i := range perm {
		perm[i] = int32(i)
	}
	// Ties broken by row number make the unstable sort stable.
	slices.SortFunc(perm, func(a, b int32) int {
		if c := compareRows(keys, a, b); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for i, r := range perm {
		if i == 0 || compareRows(keys[:nPart], perm[i-1], r) != 0 {
			partStart[i], peerStart[i] = true, true
		} else if compareRows(keys[nPart:], perm[i-1], r) != 0 {
			peerStart[i] = true
		}
	}
	return perm, partStart, peerStart
}

// sortScratch is the most bytes a row needs while sortRows runs.
const sortScratch = 48

// keyedRow is a row with up to two integer keys, normalised so that
// unsigned order is the sort order.
type keyedRow struct {
	a, b uint64
	row  int32
}

// sortIntRows sorts by up to two integer-like keys without NULLs: an LSD
// radix sort of (key, key, row), stable, skipping the bytes in which all
// keys agree (the high bytes of small numbers), so that 1M rows keyed on
// numbers below 2^24 take a handful of passes.
func sortIntRows(keys []sortCol, nPart int, perm []int32, partStart, peerStart []bool) {
	n := len(perm)
	// Flipping the sign bit orders int64 as uint64; complementing
	// reverses the order.
	norm := func(k sortCol, i int) uint64 {
		v := uint64(k.col.ints[i]) ^ (1 << 63)
		if k.desc {
			v = ^v
		}
		return v
	}
	rows := make([]keyedRow, n)
	for i := range rows {
		rows[i].row = int32(i)
		if len(keys) > 0 {
			rows[i].a = norm(keys[0], i)
		}
		if len(keys) > 1 {
			rows[i].b = norm(keys[1], i)
		}
	}
	var counts [16][256]int
	for _, r := range rows {
		for k := 0; k < 8; k++ {
			counts[k][byte(r.b>>(8*k))]++
			counts[8+k][byte(r.a>>(8*k))]++
		}
	}
	src, dst := rows, make([]keyedRow, n)
	for pass := 0; pass < 16 && n > 0; pass++ {
		digit := func(r keyedRow) byte {
			if pass < 8 {
				return byte(r.b >> (8 * pass))
			}
			return byte(r.a >> (8 * (pass - 8)))
		}
		c := &counts[pass]
		if c[digit(src[0])] == n {
			continue
		}
		var offs [256]int
		sum := 0
		for d := range offs {
			offs[d] = sum
			sum += c[d]
		}
		for _, r := range src {
			d := digit(r)
			dst[offs[d]] = r
			offs[d]++
		}
		src, dst = dst, src
	}
	for i, r := range src {
		perm[i] = r.row
		if i == 0 {
			partStart[i], peerStart[i] = true, true
			continue
		}
		p := src[i-1]
		switch {
		case nPart >= 1 && p.a != r.a || nPart == 2 && p.b != r.b:
			partStart[i], peerStart[i] = true, true
		case p.a != r.a || p.b != r.b:
			peerStart[i] = true
		}
	}
}
