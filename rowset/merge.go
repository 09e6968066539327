package rowset

import (
	"bytes"
	"cmp"
)

// Merge orders the runs of a k-way merge of sorted runs, one run per rank.
// A rank is a version order: a higher rank is a newer version (a later
// rowset of a version, a later reader handed to a compaction). It is the
// engine's one merge order, shared by compaction and the merge-on-read scan,
// with one tie-break:
//
//	of equal keys, the highest rank — the newest version — wins.
//
// Runs come out in key order and, within one key, newest first: Next says
// of each run it yields whether it wins its key or is superseded by a newer
// run holding the same key. Each run's keys must be strictly increasing
// (unique within the run); Merge keeps no rows, only each run's current key,
// and the caller moves the run it was given on with Advance or Drop before
// the next call to Next.
//
// Merge[[]byte] (NewBytesMerge) orders memcomparable keys as KeyEncoder
// writes them; Merge[int64] (NewInt64Merge) is the fast path for one
// non-NULL BIGINT key column, with the same contract.
type Merge[K any] struct {
	items []mergeItem[K] // a binary min-heap by (key, rank descending)
	cmp   func(a, b K) int
	keep  func(dst, k K) K // copies k so that it outlives its run's next Advance

	// last is the key of the latest winner while other runs may still hold
	// it (tied); clear means the top run's key is known to be smaller than
	// every other run's, so Next need not compare.
	last  K
	tied  bool
	clear bool
}

type mergeItem[K any] struct {
	key  K
	rank int
	prev K // a copy of the key Next last returned, in the invariants build
}

// NewBytesMerge returns an empty merge of memcomparable keys.
func NewBytesMerge() *Merge[[]byte] {
	return &Merge[[]byte]{cmp: bytes.Compare, keep: func(dst, k []byte) []byte { return append(dst[:0], k...) }}
}

// NewInt64Merge returns an empty merge of int64 keys.
func NewInt64Merge() *Merge[int64] {
	return &Merge[int64]{cmp: cmp.Compare[int64], keep: func(_, k int64) int64 { return k }}
}

// Len is the number of runs not yet dropped.
func (m *Merge[K]) Len() int { return len(m.items) }

// Push adds a run of the given rank positioned at key. A run's key is read
// until its next Advance or Drop, so a []byte key's buffer may be reused only
// after that. Every rank must be pushed at most once.
func (m *Merge[K]) Push(rank int, key K) {
	m.items = append(m.items, mergeItem[K]{key: key, rank: rank})
	m.clear = false
	for i := len(m.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !m.less(i, p) {
			break
		}
		m.items[i], m.items[p] = m.items[p], m.items[i]
		i = p
	}
}

// Next returns the rank of the run holding the smallest key (newest first
// among equal keys) and whether that run wins its key: false when a newer
// run held the same key. The merge must not be empty.
func (m *Merge[K]) Next() (rank int, wins bool) {
	top := &m.items[0]
	if Invariants {
		top.prev = m.keep(top.prev, top.key)
	}
	if m.clear {
		m.tied = false
		return top.rank, true
	}
	if m.tied && m.cmp(top.key, m.last) == 0 {
		return top.rank, false
	}
	m.tied = false
	if s := m.second(); s > 0 && m.cmp(m.items[s].key, top.key) == 0 {
		m.tied = true
		m.last = m.keep(m.last, top.key)
	}
	return top.rank, true
}

// Advance moves the run last returned by Next on to key.
func (m *Merge[K]) Advance(key K) {
	if Invariants && m.cmp(key, m.items[0].prev) <= 0 {
		// A run out of order would make the merge hide or keep the wrong
		// rows.
		invariantf("merge: run of rank %d moved from key %v to key %v, not above it", m.items[0].rank, m.items[0].prev, key)
	}
	m.items[0].key = key
	s := m.second()
	if s < 0 {
		m.clear = true
		return
	}
	// The common step of a long run: the top stays smallest, one comparison.
	if c := m.cmp(key, m.items[s].key); c < 0 {
		m.clear = true
		return
	} else if c == 0 && m.items[0].rank > m.items[s].rank {
		m.clear = false
		return
	}
	m.clear = false
	m.down(0)
}

// Drop removes the run last returned by Next: it has no more keys.
func (m *Merge[K]) Drop() {
	n := len(m.items) - 1
	m.items[0] = m.items[n]
	m.items[n] = mergeItem[K]{}
	m.items = m.items[:n]
	m.clear = false
	if n > 0 {
		m.down(0)
	}
}

// Below reports whether key sorts before the key of every run but the one
// last returned by Next: a caller copying a run of rows may go on taking that
// run's rows up to the first that is not below.
func (m *Merge[K]) Below(key K) bool {
	s := m.second()
	return s < 0 || m.cmp(key, m.items[s].key) < 0
}

// less orders by key, then by rank descending: the newest version of a key
// comes first and wins.
func (m *Merge[K]) less(i, j int) bool {
	if c := m.cmp(m.items[i].key, m.items[j].key); c != 0 {
		return c < 0
	}
	return m.items[i].rank > m.items[j].rank
}

// second is the index of the run that follows the top in merge order, -1 if
// there is none: the smaller of the root's children.
func (m *Merge[K]) second() int {
	switch len(m.items) {
	case 0, 1:
		return -1
	case 2:
		return 1
	}
	if m.less(2, 1) {
		return 2
	}
	return 1
}

func (m *Merge[K]) down(i int) {
	n := len(m.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && m.less(r, l) {
			c = r
		}
		if !m.less(c, i) {
			return
		}
		m.items[i], m.items[c] = m.items[c], m.items[i]
		i = c
	}
}
