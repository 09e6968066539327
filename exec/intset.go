package exec

import "unsafe"

// Typed sets of fixed-width keys for DISTINCT aggregates. A key is the
// int64 intKeys makes of a value (floats canonical, so -0 equals 0 and every
// NaN every NaN), which is exactly the equality of the equality encoding:
// the sets agree with groupMap's keyEncoded form while probing one machine
// word instead of hashing and comparing bytes.

// intSet is an open-addressing set of int64 keys at a load factor of at
// most 1/2, probed linearly from hashInt's low bits. A slot holding 0 is
// empty, so the key 0 is kept apart in zero.
type intSet struct {
	slots []int64
	n     int // keys in slots
	zero  bool
}

func (s *intSet) len() int {
	if s.zero {
		return s.n + 1
	}
	return s.n
}

func (s *intSet) bytes() int64 { return int64(cap(s.slots)) * 8 }

// addAll inserts keys.
func (s *intSet) addAll(keys []int64) {
	if s.slots == nil {
		s.slots = make([]int64, minSlots)
	}
	slots := s.slots
	mask := uint64(len(slots) - 1)
	for _, k := range keys {
		if k == 0 {
			s.zero = true
			continue
		}
		i := hashInt(k) & mask
		for {
			v := slots[i]
			if v == k {
				break
			}
			if v == 0 {
				slots[i] = k
				s.n++
				if uint64(s.n)*2 > mask+1 {
					s.grow()
					slots = s.slots
					mask = uint64(len(slots) - 1)
				}
				break
			}
			i = (i + 1) & mask
		}
	}
}

// fastGrowSlots is the size up to which an intSet grows fourfold: the
// rehashing of doubling a set from empty costs as much again as inserting
// its keys, a third of that when growing fourfold, and a small set's spare
// slots cost little.
const fastGrowSlots = 1 << 14

func (s *intSet) grow() {
	old := s.slots
	f := 2
	if len(old) < fastGrowSlots {
		f = 4
	}
	s.slots = make([]int64, f*len(old))
	mask := uint64(len(s.slots) - 1)
	for _, k := range old {
		if k == 0 {
			continue
		}
		i := hashInt(k) & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = k
	}
}

// pairSet is a set of (group, key) pairs, the seen values of a DISTINCT
// aggregate under GROUP BY: open addressing at a load factor of at most
// 1/2, a pair in its slot so that a probe touches one cache line.
type pairSet struct {
	slots []pairSlot
	mask  uint64
	n     int
}

type pairSlot struct {
	key int64
	g   uint32 // group + 1; 0 marks an empty slot
}

func newPairSet() *pairSet {
	return &pairSet{slots: make([]pairSlot, minSlots), mask: minSlots - 1}
}

func (s *pairSet) bytes() int64 {
	return int64(cap(s.slots)) * int64(unsafe.Sizeof(pairSlot{}))
}

func hashPair(g uint32, k int64) uint64 {
	return hashInt(k ^ int64(g)*-0x61c8864680b583eb)
}

// add inserts (g, k) and reports whether it was new.
func (s *pairSet) add(g uint32, k int64) bool {
	i := hashPair(g, k) & s.mask
	for {
		sl := &s.slots[i]
		if sl.g == 0 {
			*sl = pairSlot{key: k, g: g + 1}
			s.n++
			if uint64(s.n)*2 > s.mask+1 {
				s.grow()
			}
			return true
		}
		if sl.key == k && sl.g == g+1 {
			return false
		}
		i = (i + 1) & s.mask
	}
}

func (s *pairSet) grow() {
	old := s.slots
	s.slots = make([]pairSlot, 2*len(old))
	s.mask = uint64(len(s.slots) - 1)
	for _, sl := range old {
		if sl.g == 0 {
			continue
		}
		i := hashPair(sl.g-1, sl.key) & s.mask
		for s.slots[i].g != 0 {
			i = (i + 1) & s.mask
		}
		s.slots[i] = sl
	}
}
