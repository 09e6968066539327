package exec

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// joinTable indexes the build side of a hash join by its key columns, with
// the equality keys of keys.go (rowKeys, groupMap) that grouping and
// DISTINCT use: per distinct key its first build row, per build row the
// next row of its key, so that a probe row walks its matches in build
// input order. A build row with a NULL key column is in no chain, since
// NULL equals nothing.
//
// A single integer-like key (keyInt) whose values span few more slots than
// there are build rows is addressed directly, head[key-min], as DuckDB's
// perfect hash join does: no hashing, and a table of 4 bytes a value that
// stays in cache where a hash table of 16 bytes a slot at most half full
// would not. Any other key goes through a groupMap of dense ids.
type joinTable struct {
	form keyForm
	// exists: the join asks only whether a probe row has a match (a semi
	// or anti join without residual), so no chains are kept, and a direct
	// table is a bitmap over a range 16 times wider.
	exists bool
	bits   []uint64
	// direct addressing: head[k-lo] for lo <= k < lo+len(head).
	direct bool
	lo     int64
	groups *groupMap
	// head is the first build row per key slot (direct) or group id; -1
	// none.
	head []int32
	next []int32
	// anyNull: some build row has a NULL key column.
	anyNull bool
	// keyLo and keyHi are the least and greatest non-NULL key of a keyInt
	// table (hasRange: there is one).
	keyLo, keyHi int64
	hasRange     bool

	keys  rowKeys
	ints  []int64
	nulls []bool
	gids  []uint32
	rows  []int32
}

// directSpan is the widest range of key values addressed directly for n
// build rows: a head array of at most 4 slots a row (16 bytes, what a hash
// table at half load spends on a row's slot), and small tables always.
func directSpan(n int) uint64 { return 4*uint64(n) + 1024 }

// existsSpan is directSpan for a bitmap: at most 8 bytes a row.
func existsSpan(n int) uint64 { return 64*uint64(n) + 1<<16 }

// directJoins enables direct addressing; the tests turn it off to run the
// hashed path over the same keys.
var directJoins = true

// joinChunk is the rows keyed at a time while building, so that the
// scratch keys stay a batch's worth whatever the build side's size.
const joinChunk = BatchRows

func newJoinTable(form keyForm, exists bool) *joinTable {
	return &joinTable{form: form, exists: exists}
}

// keyNulls returns, in dst, whether each row has a NULL in some key
// column, or nil when no row does.
func keyNulls(dst []bool, cols []arrow.Array) []bool {
	any := false
	for _, c := range cols {
		any = any || c.NullN() > 0
	}
	if !any {
		return nil
	}
	n := cols[0].Len()
	dst = resize(dst, n)
	clear(dst)
	for _, c := range cols {
		if c.NullN() == 0 {
			continue
		}
		for i := range n {
			if c.IsNull(i) {
				dst[i] = true
			}
		}
	}
	return dst
}

func sliceCols(cols []arrow.Array, start, end int) []arrow.Array {
	out := make([]arrow.Array, len(cols))
	for i, c := range cols {
		out[i] = array.NewSlice(c, int64(start), int64(end))
	}
	return out
}

func releaseCols(cols []arrow.Array) {
	for _, c := range cols {
		c.Release()
	}
}

// build indexes the n rows of the key columns cols (one array each, the
// whole build side).
func (t *joinTable) build(cols []arrow.Array) {
	n := cols[0].Len()
	if !t.exists {
		t.next = make([]int32, n)
		for i := range t.next {
			t.next[i] = -1
		}
	}
	if t.form == keyInt && t.buildDirect(cols, n) {
		return
	}
	t.keys.form = t.form
	t.groups = newGroupMapSized(t.form, n)
	gid := make([]int32, n)
	for start := 0; start < n; start += joinChunk {
		end := min(n, start+joinChunk)
		chunk := sliceCols(cols, start, end)
		t.nulls = keyNulls(t.nulls, chunk)
		t.keys.fill(chunk)
		t.rows = t.rows[:0]
		for i := range end - start {
			if t.nulls != nil && t.nulls[i] {
				gid[start+i] = -1
				t.anyNull = true
				continue
			}
			t.rows = append(t.rows, int32(i))
		}
		t.gids = resize(t.gids, len(t.rows))
		t.groups.find(&t.keys, t.rows, t.gids)
		for j, r := range t.rows {
			gid[start+int(r)] = int32(t.gids[j])
		}
		releaseCols(chunk)
	}
	t.head = make([]int32, t.groups.len())
	for i := range t.head {
		t.head[i] = -1
	}
	// Linked from the last row back, so that each chain is in input order.
	for r := n - 1; r >= 0; r-- {
		g := gid[r]
		if g < 0 {
			continue
		}
		if t.exists {
			t.head[g] = int32(r)
			continue
		}
		t.next[r] = t.head[g]
		t.head[g] = int32(r)
	}
}

// buildDirect builds the direct table when the keys' range allows it.
func (t *joinTable) buildDirect(cols []arrow.Array, n int) bool {
	a := cols[0]
	nulls := a.NullN() > 0
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for start := 0; start < n; start += joinChunk {
		end := min(n, start+joinChunk)
		s := array.NewSlice(a, int64(start), int64(end))
		t.ints = intKeys(t.ints, s)
		for i, k := range t.ints {
			if nulls && s.IsNull(i) {
				continue
			}
			lo, hi = min(lo, k), max(hi, k)
		}
		s.Release()
	}
	if lo > hi {
		// No key at all: every row is NULL, or none is there.
		lo, hi = 0, -1
	} else {
		t.keyLo, t.keyHi, t.hasRange = lo, hi, true
	}
	limit := directSpan(n)
	if t.exists {
		limit = existsSpan(n)
	}
	if uint64(hi)-uint64(lo) >= limit || !directJoins {
		return false
	}
	t.direct, t.lo = true, lo
	if t.exists {
		span := uint64(hi) - uint64(lo) + 1
		t.bits = make([]uint64, (span+63)/64)
		for start := 0; start < n; start += joinChunk {
			end := min(n, start+joinChunk)
			s := array.NewSlice(a, int64(start), int64(end))
			t.ints = intKeys(t.ints, s)
			for i, k := range t.ints {
				if nulls && s.IsNull(i) {
					t.anyNull = true
					continue
				}
				x := uint64(k) - uint64(lo)
				t.bits[x/64] |= 1 << (x % 64)
			}
			s.Release()
		}
		return true
	}
	t.head = make([]int32, uint64(hi)-uint64(lo)+1)
	for i := range t.head {
		t.head[i] = -1
	}
	for start := (n - 1) / joinChunk * joinChunk; start >= 0; start -= joinChunk {
		end := min(n, start+joinChunk)
		s := array.NewSlice(a, int64(start), int64(end))
		t.ints = intKeys(t.ints, s)
		for i := len(t.ints) - 1; i >= 0; i-- {
			if nulls && s.IsNull(i) {
				t.anyNull = true
				continue
			}
			r := int32(start + i)
			x := uint64(t.ints[i]) - uint64(lo)
			t.next[r] = t.head[x]
			t.head[x] = r
		}
		s.Release()
	}
	return true
}

// probeScratch is the scratch space of probing, one per goroutine that
// probes: the table itself is only read.
type probeScratch struct {
	keys  rowKeys
	ints  []int64
	nulls []bool
}

// probe sets first[i] to the first build row matching row i of the key
// columns cols (one batch), or -1, and returns first; with exists, to some
// non-negative value for a match.
func (t *joinTable) probe(first []int32, cols []arrow.Array, sc *probeScratch) []int32 {
	n := cols[0].Len()
	first = resize(first, n)
	sc.nulls = keyNulls(sc.nulls, cols)
	switch {
	case !t.direct && t.groups == nil:
		// Nothing was built: an empty build side.
		for i := range first {
			first[i] = -1
		}
	case t.direct && t.exists:
		sc.ints = intKeys(sc.ints, cols[0])
		bits, lo, span := t.bits, t.lo, uint64(len(t.bits))*64
		for i, k := range sc.ints {
			first[i] = -1
			if x := uint64(k) - uint64(lo); k >= lo && x < span && bits[x/64]&(1<<(x%64)) != 0 {
				first[i] = 0
			}
		}
	case t.direct:
		sc.ints = intKeys(sc.ints, cols[0])
		head, lo, span := t.head, t.lo, uint64(len(t.head))
		for i, k := range sc.ints {
			if x := uint64(k) - uint64(lo); k >= lo && x < span {
				first[i] = head[x]
			} else {
				first[i] = -1
			}
		}
	default:
		sc.keys.form = t.form
		sc.keys.fill(cols)
		t.groups.lookup(&sc.keys, first)
		head := t.head
		for i, g := range first {
			if g >= 0 {
				first[i] = head[g]
			}
		}
	}
	if sc.nulls != nil {
		for i, null := range sc.nulls {
			if null {
				first[i] = -1
			}
		}
	}
	return first
}

// bytes returns the memory the table holds.
func (t *joinTable) bytes() int64 {
	n := int64(cap(t.head)+cap(t.next))*4 + int64(cap(t.bits))*8
	if t.groups != nil {
		n += t.groups.bytes()
	}
	return n
}

// estimateBytes is what a table of n build rows may hold at most, charged
// before it is built.
func estimateJoinTable(n int) int64 {
	return int64(n)*4 + max(int64(directSpan(n))*4, int64(n)*(16+8+4)*2)
}
