package bench

import "math"

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
