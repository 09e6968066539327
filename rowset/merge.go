package rowset

import (
	"bytes"
	"fmt"
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
// A merge orders either memcomparable keys as KeyEncoder writes them
// (NewBytesMerge: Push, Advance) or, the fast path for one non-NULL BIGINT
// key column, int64 keys (NewInt64Merge: PushInt, AdvanceInt), with the
// same contract. The kind is fixed at creation; one branch on it, always
// predicted, picks the comparison, so the int64 path compares inline.
type Merge struct {
	heap []int32     // ranks, a binary min-heap by (key, rank descending)
	keys []mergeItem // by rank: each run's current key
	ints bool

	// last is the key of the latest winner while other runs may still hold
	// it (tied); clear means the top run's key is known to be smaller than
	// every other run's, so Next need not compare.
	last  mergeItem
	tied  bool
	clear bool
}

type mergeItem struct {
	b    []byte
	i    int64
	prev *mergeItem // a copy of the key Next last returned, in the invariants build
}

// NewBytesMerge returns an empty merge of memcomparable keys.
func NewBytesMerge() *Merge { return &Merge{} }

// NewInt64Merge returns an empty merge of int64 keys.
func NewInt64Merge() *Merge { return &Merge{ints: true} }

// Len is the number of runs not yet dropped.
func (m *Merge) Len() int { return len(m.heap) }

// Push adds a run of the given rank positioned at key. A run's key is read
// until its next Advance or Drop, so its buffer may be reused only after
// that. Every rank must be pushed at most once.
func (m *Merge) Push(rank int, key []byte) { m.push(rank, mergeItem{b: key}) }

// PushInt is Push for an int64 merge.
func (m *Merge) PushInt(rank int, key int64) { m.push(rank, mergeItem{i: key}) }

func (m *Merge) push(rank int, it mergeItem) {
	if rank >= len(m.keys) {
		m.keys = append(m.keys, make([]mergeItem, rank+1-len(m.keys))...)
	}
	m.keys[rank] = it
	m.heap = append(m.heap, int32(rank))
	m.clear = false
	for i := len(m.heap) - 1; i > 0; {
		p := (i - 1) / 2
		if !m.less(i, p) {
			break
		}
		m.heap[i], m.heap[p] = m.heap[p], m.heap[i]
		i = p
	}
}

// Next returns the rank of the run holding the smallest key (newest first
// among equal keys) and whether that run wins its key: false when a newer
// run held the same key. The merge must not be empty.
func (m *Merge) Next() (rank int, wins bool) {
	rank = int(m.heap[0])
	top := &m.keys[rank]
	if Invariants {
		// One copy per run, reused: a copy per key would be garbage the
		// size of every key merged.
		if top.prev == nil {
			top.prev = &mergeItem{}
		}
		top.prev.i, top.prev.b = top.i, append(top.prev.b[:0], top.b...)
	}
	if m.clear {
		m.tied = false
		return rank, true
	}
	if m.tied && m.cmp(top, &m.last) == 0 {
		return rank, false
	}
	m.tied = false
	if s := m.second(); s > 0 && m.cmp(m.at(s), top) == 0 {
		m.tied = true
		m.last.i, m.last.b = top.i, append(m.last.b[:0], top.b...)
	}
	return rank, true
}

// at is the key of the run at heap position i.
func (m *Merge) at(i int) *mergeItem { return &m.keys[m.heap[i]] }

// Advance moves the run last returned by Next on to key.
func (m *Merge) Advance(key []byte) {
	m.at(0).b = key
	m.advanced()
}

// AdvanceInt is Advance for an int64 merge.
func (m *Merge) AdvanceInt(key int64) {
	m.at(0).i = key
	m.advanced()
}

func (m *Merge) advanced() {
	top := m.at(0)
	if Invariants && top.prev != nil && m.cmp(top, top.prev) <= 0 {
		// A run out of order would make the merge hide or keep the wrong
		// rows.
		invariantf("merge: run of rank %d moved from key %s to key %s, not above it", m.heap[0], m.show(top.prev), m.show(top))
	}
	s := m.second()
	if s < 0 {
		m.clear = true
		return
	}
	// The common step of a long run: the top stays smallest, one comparison.
	if c := m.cmp(top, m.at(s)); c < 0 {
		m.clear = true
		return
	} else if c == 0 && m.heap[0] > m.heap[s] {
		m.clear = false
		return
	}
	m.clear = false
	m.down(0)
}

// Drop removes the run last returned by Next: it has no more keys.
func (m *Merge) Drop() {
	m.keys[m.heap[0]] = mergeItem{}
	n := len(m.heap) - 1
	m.heap[0] = m.heap[n]
	m.heap = m.heap[:n]
	m.clear = false
	if n > 0 {
		m.down(0)
	}
}

// Below reports whether key sorts before the key of every run but the one
// last returned by Next: a caller copying a run of rows may go on taking that
// run's rows up to the first that is not below.
func (m *Merge) Below(key []byte) bool {
	s := m.second()
	return s < 0 || bytes.Compare(key, m.at(s).b) < 0
}

// BelowInt is Below for an int64 merge.
func (m *Merge) BelowInt(key int64) bool {
	s := m.second()
	return s < 0 || key < m.at(s).i
}

func (m *Merge) cmp(a, b *mergeItem) int {
	if m.ints {
		switch {
		case a.i < b.i:
			return -1
		case a.i > b.i:
			return 1
		}
		return 0
	}
	return bytes.Compare(a.b, b.b)
}

func (m *Merge) show(it *mergeItem) string {
	if m.ints {
		return fmt.Sprint(it.i)
	}
	return fmt.Sprintf("%x", it.b)
}

// less orders by key, then by rank descending: the newest version of a key
// comes first and wins.
func (m *Merge) less(i, j int) bool {
	ri, rj := m.heap[i], m.heap[j]
	a, b := &m.keys[ri], &m.keys[rj]
	if m.ints {
		if a.i != b.i {
			return a.i < b.i
		}
	} else if c := bytes.Compare(a.b, b.b); c != 0 {
		return c < 0
	}
	return ri > rj
}

// second is the index of the run that follows the top in merge order, -1 if
// there is none: the smaller of the root's children.
func (m *Merge) second() int {
	switch len(m.heap) {
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

func (m *Merge) down(i int) {
	n := len(m.heap)
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
		m.heap[i], m.heap[c] = m.heap[c], m.heap[i]
		i = c
	}
}
