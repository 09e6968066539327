package exec

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rowttl/rowttl"
)

// Top-N: ORDER BY ... LIMIT n OFFSET m without sorting the input.
//
// A max-heap holds the best n+m rows seen so far, by (order key, input
// position), its root the worst of them. A new row is compared with the
// root once (a single fixed-width key without encoding the row): it enters only when its key is strictly smaller
// (among equal keys the earlier row wins, so a later equal row never
// does). The values of the rows in the heap live in one compacted batch:
// after a batch from which some rows entered, the rows still in the heap
// are gathered (gather.go) from the old compacted batch and that input
// batch into a new one, so that the operator holds n+m rows and one input batch whatever
// the size of the input.

const topNName = "TopN"

type topN struct {
	ordered
	limit  int64
	offset int64
	k      int

	h       topHeap
	kept    arrow.RecordBatch // the rows of entries with cur false
	seq     int64             // input position of the next row
	scratch []byte
	charged int64
	src     [1]arrow.RecordBatch // kept, as sources names it
}

// topEntry is one row in the heap.
type topEntry struct {
	key []byte
	seq int64
	row int32 // in kept, or in the current input batch when cur
	cur bool
}

// topHeap is a max-heap by (key, seq).
type topHeap []*topEntry

func (h topHeap) Len() int { return len(h) }
func (h topHeap) Less(i, j int) bool {
	return compareKeys(h[i].key, h[j].key, h[i].seq, h[j].seq) > 0
}
func (h topHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *topHeap) Push(x any)   { *h = append(*h, x.(*topEntry)) }
func (h *topHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// NewTopN returns the operator of ORDER BY keys LIMIT limit OFFSET offset:
// the rows of in in the order of Sort (equal keys in input order), from
// the offset-th, at most limit of them. It holds at most limit+offset rows
// and one input batch. It takes ownership of in.
func NewTopN(env *Env, in Operator, keys []SortKey, limit, offset int64) (Operator, error) {
	if limit < 0 || offset < 0 {
		in.Close()
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "TopN: LIMIT %d OFFSET %d out of range", limit, offset)
	}
	// A heap past MaxInt32 rows could never be held within a budget; a
	// larger LIMIT (MySQL's 18446744073709551615 idiom) keeps every row.
	k := int64(math.MaxInt32)
	if limit < k && offset < k-limit {
		k = limit + offset
	}
	o, err := newOrdered(topNName, env, in, keys)
	if err != nil {
		return nil, err
	}
	return &topN{ordered: o, limit: limit, offset: offset, k: int(k)}, nil
}

func (t *topN) Next(ctx context.Context) (arrow.RecordBatch, error) { return t.next(ctx, t) }

func (t *topN) Close() { t.close(t) }

func (t *topN) sources() []arrow.RecordBatch {
	t.src[0] = t.kept
	return t.src[:]
}

func (t *topN) release() {
	if t.kept != nil {
		t.kept.Release()
		t.kept = nil
	}
	t.src[0] = nil
	t.h = nil
	t.out = nil
	t.env.Budget.Shrink(t.charged)
	t.charged = 0
}

func (t *topN) build(ctx context.Context) error {
	if t.k == 0 {
		return nil
	}
	for {
		b, err := t.in.Next(ctx)
		if err != nil || b == nil {
			if err == nil {
				t.finish()
			}
			return err
		}
		err = t.fold(b)
		b.Release()
		if err != nil {
			return err
		}
	}
}

// fold offers every row of b to the heap, then compacts the rows kept.
func (t *topN) fold(b arrow.RecordBatch) error {
	t.keys.bind(b)
	n := int(b.NumRows())
	entered := false
	var fast *fixedCheck
	if t.keys.fixed {
		fast = newFixedCheck(b.Column(t.keys.keys[0].Column), t.keys.keys[0])
	}
	for i := range n {
		seq := t.seq + int64(i)
		if len(t.h) < t.k {
			heap.Push(&t.h, &topEntry{key: t.keys.appendKey(nil, i), seq: seq, row: int32(i), cur: true})
			entered = true
			continue
		}
		top := t.h[0]
		if fast != nil && !fast.enters(i, top.key) {
			continue
		}
		t.scratch = t.keys.appendKey(t.scratch[:0], i)
		if bytes.Compare(t.scratch, top.key) >= 0 {
			continue
		}
		top.key = append(top.key[:0], t.scratch...)
		top.seq, top.row, top.cur = seq, int32(i), true
		heap.Fix(&t.h, 0)
		entered = true
	}
	t.seq += int64(n)
	if !entered {
		return nil
	}
	return t.compact(b)
}

// compact gathers the rows of the heap, from kept and from the current
// batch cur, into a new kept batch.
func (t *topN) compact(cur arrow.RecordBatch) error {
	srcs := []arrow.RecordBatch{cur}
	if t.kept != nil {
		srcs = append(srcs, t.kept)
	}
	refs := make([]rowRef, len(t.h))
	keyBytes := int64(0)
	for i, e := range t.h {
		refs[i] = rowRef{row: e.row}
		if !e.cur {
			refs[i].batch = 1
		}
		e.row, e.cur = int32(i), false
		keyBytes += int64(cap(e.key)) + 48
	}
	kept := gatherBatch(t.env.Mem, t.arrow, srcs, t.cols, refs)
	if t.kept != nil {
		t.kept.Release()
	}
	t.kept = kept
	return t.charge(batchBytes(kept) + keyBytes)
}

// charge sets what the operator holds to n bytes.
func (t *topN) charge(n int64) error {
	if d := n - t.charged; d > 0 {
		if err := t.env.Budget.Grow(topNName, d); err != nil {
			return err
		}
	} else {
		t.env.Budget.Shrink(-d)
	}
	t.charged = n
	return nil
}

// finish orders the heap's rows and skips the offset.
func (t *topN) finish() {
	es := slices.Clone(t.h)
	slices.SortFunc(es, func(a, b *topEntry) int { return compareKeys(a.key, b.key, a.seq, b.seq) })
	if int64(len(es)) <= t.offset {
		return
	}
	for _, e := range es[t.offset:] {
		t.out = append(t.out, rowRef{row: e.row})
	}
}

func releaseBatches(bs []arrow.RecordBatch) {
	for _, b := range bs {
		if b != nil {
			b.Release()
		}
	}
}

// fixedCheck decides whether a row of a single fixed-width key is smaller
// than a heap key without encoding the row: the key is a null byte then 8
// bytes of the value's order-preserving uint64 (keys_order.go).
type fixedCheck struct {
	col        arrow.Array
	nulls      bool
	nullsFirst bool
	ord        func(int) uint64
	inv        uint64
}

func newFixedCheck(col arrow.Array, k SortKey) *fixedCheck {
	c := &fixedCheck{col: col, nulls: col.NullN() > 0, nullsFirst: k.NullsFirst, ord: orderU64(col)}
	if k.Desc {
		c.inv = ^uint64(0)
	}
	return c
}

// enters reports whether row i's key is strictly smaller than key.
func (c *fixedCheck) enters(i int, key []byte) bool {
	if c.nulls && c.col.IsNull(i) {
		// A NULL first is smaller than any value; a NULL last is not.
		return c.nullsFirst && key[0] != 0
	}
	switch key[0] {
	case 0:
		return false // a NULL placed first
	case 2:
		return true // a NULL placed last
	}
	return c.ord(i)^c.inv < binary.BigEndian.Uint64(key[1:])
}
