package bench

import (
	"math"
	"math/bits"
)

// GroupSum is a hash aggregation of float64 sums by an int64
// key, built for GROUP BY over a stream of Arrow batches with many groups.
//
// Rows are first scattered by the high bits of their key's hash into
// partBits² partitions, each with a small staging buffer; a full buffer is
// folded into its partition's own open-addressing table. A partition's
// table is a fraction of the whole (about 1/64th), so the random probes of a
// fold stay in the L2 cache instead of missing to memory on almost every
// row, which is what a single table of a million groups does. Memory stays
// bounded by the number of groups plus the staging buffers.
//
// The zero value is not usable; call NewGroupSum. A GroupSum is not safe for
// concurrent use.
type GroupSum struct {
	parts [numParts]partition
}

const (
	partBits = 6
	numParts = 1 << partBits
	// stageLen rows are staged per partition before a fold.
	stageLen = 2048
)

// slot is one bucket: the key and its running sum side by side, so that a
// probe touches one cache line.
type slot struct {
	key  int64
	sum  float64
	used bool
}

type partition struct {
	slots []slot
	mask  uint64
	n     int
	// staged rows, not yet folded.
	keys []int64
	vals []float64
}

// NewGroupSum returns an empty aggregation sized for about groups groups
// (a hint; the tables grow as needed).
func NewGroupSum(groups int) *GroupSum {
	g := &GroupSum{}
	per := max(groups/numParts, 64)
	size := 1 << bits.Len(uint(per*2-1)) // load factor <= 1/2
	for i := range g.parts {
		p := &g.parts[i]
		p.slots = make([]slot, size)
		p.mask = uint64(size - 1)
		p.keys = make([]int64, 0, stageLen)
		p.vals = make([]float64, 0, stageLen)
	}
	return g
}

func hashKey(k int64) uint64 {
	// A multiplicative hash (Fibonacci hashing): the high bits pick the
	// partition, the next bits the bucket.
	return uint64(k) * 0x9e3779b97f4a7c15
}

// Add adds one row.
func (g *GroupSum) Add(key int64, val float64) {
	p := &g.parts[hashKey(key)>>(64-partBits)]
	p.keys = append(p.keys, key)
	p.vals = append(p.vals, val)
	if len(p.keys) == stageLen {
		p.fold()
	}
}

// AddBatch adds rows keys[i], vals[i] for which live is nil or has bit i
// set (an LSB-first bitmap, as Arrow validity).
func (g *GroupSum) AddBatch(keys []int64, vals []float64, live []byte) {
	if live == nil {
		for i, k := range keys {
			g.Add(k, vals[i])
		}
		return
	}
	for i, k := range keys {
		if live[i>>3]&(1<<(i&7)) != 0 {
			g.Add(k, vals[i])
		}
	}
}

// fold moves the staged rows into the partition's table.
func (p *partition) fold() {
	if p.n+len(p.keys) > len(p.slots)/2 {
		p.grow(p.n + len(p.keys))
	}
	slots, mask := p.slots, p.mask
	for i, k := range p.keys {
		h := hashKey(k) << partBits >> partBits
		j := h & mask
		for {
			s := &slots[j]
			if !s.used {
				s.used, s.key, s.sum = true, k, p.vals[i]
				p.n++
				break
			}
			if s.key == k {
				s.sum += p.vals[i]
				break
			}
			j = (j + 1) & mask
		}
	}
	p.keys, p.vals = p.keys[:0], p.vals[:0]
}

// grow rehashes into a table with room for at least need groups at a load
// factor of 1/2.
func (p *partition) grow(need int) {
	size := len(p.slots)
	for need > size/2 {
		size *= 2
	}
	old := p.slots
	p.slots = make([]slot, size)
	p.mask = uint64(size - 1)
	for _, s := range old {
		if !s.used {
			continue
		}
		j := (hashKey(s.key) << partBits >> partBits) & p.mask
		for p.slots[j].used {
			j = (j + 1) & p.mask
		}
		p.slots[j] = s
	}
}

// Finish folds every staged row; call it before reading the groups.
func (g *GroupSum) Finish() {
	for i := range g.parts {
		g.parts[i].fold()
	}
}

// Len is the number of groups (after Finish).
func (g *GroupSum) Len() int {
	n := 0
	for i := range g.parts {
		n += g.parts[i].n
	}
	return n
}

// Each calls fn for every group (after Finish), in no particular order.
func (g *GroupSum) Each(fn func(key int64, sum float64)) {
	for i := range g.parts {
		for _, s := range g.parts[i].slots {
			if s.used {
				fn(s.key, s.sum)
			}
		}
	}
}

// GroupDigest summarises a GROUP BY result independently of the order of
// its groups and of the order in which each group's values were added: the
// number of groups, the total of the sums, and a checksum over every
// (key, sum rounded to cents). Two engines that agree on every group
// agree on the digest.
type GroupDigest struct {
	Groups   int64
	Total    float64
	Checksum uint64
}

// Add accounts for one group.
func (d *GroupDigest) Add(key int64, sum float64) {
	d.Groups++
	d.Total += sum
	cents := uint64(int64(math.Round(sum * 100)))
	d.Checksum += splitmix64(uint64(key)*0x9e3779b97f4a7c15 ^ splitmix64(cents))
}

// Digest summarises the groups of g (after Finish).
func (g *GroupSum) Digest() GroupDigest {
	var d GroupDigest
	g.Each(d.Add)
	return d
}
