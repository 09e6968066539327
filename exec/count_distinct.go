package exec

import (
	"context"
	"runtime"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl/schema"
)

// count(DISTINCT x) without GROUP BY over a fixed-width column.
//
// HashAggregate has a single group here, so one table would take every
// value on one goroutine and, past a few hundred thousand values, miss the
// cache on almost every probe. This operator instead splits the values by
// the high bits of their hash into aggParts intSets, the way HashAggregate
// splits groups: the calling goroutine pulls each batch, hashes its
// non-NULL values and scatters them by partition into a buffer, and worker
// w of P inserts the partitions of its contiguous share. As in
// HashAggregate the workers fold on the calling goroutine while the sets
// are small and on their own goroutines once they hold parallelGroups
// keys. The answer is the sum of the sets' sizes, which no order of
// insertion changes.

type countDistinct struct {
	env          *Env
	in           Operator
	schema       Schema
	arg          int
	workers      int
	parallelFrom int

	sets    [aggParts]intSet
	charged int64
	done    bool
}

// CountDistinctApplies reports whether NewHashAggregate computes aggs
// grouped by groups over in with the dedicated count(DISTINCT) operator: no
// groups and one count(DISTINCT x) of a fixed-width column.
func CountDistinctApplies(in Schema, groups []int, aggs []Aggregate) bool {
	if len(groups) != 0 || len(aggs) != 1 {
		return false
	}
	a := aggs[0]
	if a.Func != Count || !a.Distinct || a.Arg < 0 || a.Arg >= len(in) {
		return false
	}
	t := in[a.Arg].Type
	return checkKeyType(hashAggName, t) == nil && keyFormOf([]schema.Type{t}) == keyInt
}

func newCountDistinct(env *Env, in Operator, a Aggregate) *countDistinct {
	w := env.Parallelism
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return &countDistinct{
		env: env, in: in, arg: a.Arg, workers: min(w, aggParts), parallelFrom: parallelGroups,
		schema: Schema{{Name: a.Name, Type: schema.BigIntType, Nullable: false}},
	}
}

func (c *countDistinct) Schema() Schema { return c.schema }

func (c *countDistinct) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.done {
		return nil, nil
	}
	c.done = true
	err := c.build(ctx)
	c.in.Close()
	var n int64
	for i := range c.sets {
		n += int64(c.sets[i].len())
	}
	c.release()
	if err != nil {
		return nil, err
	}
	b := array.NewInt64Builder(c.env.Mem)
	defer b.Release()
	b.Append(n)
	arr := b.NewArray()
	defer arr.Release()
	return array.NewRecordBatch(c.schema.Arrow(), []arrow.Array{arr}, 1), nil
}

func (c *countDistinct) Close() {
	c.in.Close()
	c.release()
	c.done = true
}

func (c *countDistinct) release() {
	c.sets = [aggParts]intSet{}
	c.env.Budget.Shrink(c.charged)
	c.charged = 0
}

// cdBatch is one batch's non-NULL keys scattered by partition: those of
// partition p at vals[start[p]:start[p+1]].
type cdBatch struct {
	keys  []int64
	hash  []uint64
	vals  []int64
	start [aggParts + 1]int
	// pending counts the workers yet to insert it.
	pending atomic.Int32
}

// prepare fills cb from b, which it releases.
func (c *countDistinct) prepare(cb *cdBatch, b arrow.RecordBatch) {
	defer b.Release()
	arr := b.Column(c.arg)
	var keys []int64
	if a, ok := arr.(*array.Int64); ok {
		keys = a.Int64Values()
	} else {
		cb.keys = intKeys(cb.keys, arr)
		keys = cb.keys
	}
	if arr.NullN() > 0 {
		// Compacted in place when keys is cb.keys (the write index never
		// passes the read index), into cb.keys when keys views the batch.
		if _, view := arr.(*array.Int64); view {
			cb.keys = resize(cb.keys, len(keys))
		}
		kept := cb.keys[:0]
		for i, k := range keys {
			if arr.IsValid(i) {
				kept = append(kept, k)
			}
		}
		cb.keys, keys = kept, kept
	}
	cb.hash = resize(cb.hash, len(keys))
	start := &cb.start
	*start = [aggParts + 1]int{}
	for i, k := range keys {
		h := hashInt(k)
		cb.hash[i] = h
		start[h>>(64-aggPartBits)+1]++
	}
	for p := 1; p <= aggParts; p++ {
		start[p] += start[p-1]
	}
	cb.vals = resize(cb.vals, len(keys))
	pos := *start
	for i, h := range cb.hash {
		p := h >> (64 - aggPartBits)
		cb.vals[pos[p]] = keys[i]
		pos[p]++
	}
}

// cdWorker inserts the partitions [lo, hi) of prepared batches.
type cdWorker struct {
	c       *countDistinct
	lo, hi  int
	charged int64
}

func (w *cdWorker) fold(cb *cdBatch) error {
	var bytes int64
	for p := w.lo; p < w.hi; p++ {
		s := &w.c.sets[p]
		if lo, hi := cb.start[p], cb.start[p+1]; lo < hi {
			s.addAll(cb.vals[lo:hi])
		}
		bytes += s.bytes()
	}
	if d := bytes - w.charged; d > 0 {
		if err := w.c.env.Budget.Grow(hashAggName, d); err != nil {
			return err
		}
		w.charged += d
	}
	return nil
}

func (c *countDistinct) build(ctx context.Context) error {
	ws := make([]*cdWorker, c.workers)
	for i := range ws {
		ws[i] = &cdWorker{c: c, lo: i * aggParts / c.workers, hi: (i + 1) * aggParts / c.workers}
	}
	defer func() {
		for _, w := range ws {
			c.charged += w.charged
		}
	}()
	cb := &cdBatch{}
	for {
		b, err := c.in.Next(ctx)
		if err != nil || b == nil {
			return err
		}
		c.prepare(cb, b)
		for _, w := range ws {
			if err := w.fold(cb); err != nil {
				return err
			}
		}
		if len(ws) > 1 && c.held() >= c.parallelFrom {
			return c.buildParallel(ctx, ws)
		}
	}
}

func (c *countDistinct) held() int {
	n := 0
	for i := range c.sets {
		n += c.sets[i].n
	}
	return n
}

// buildParallel inserts the rest of the input with a goroutine per worker,
// as hashAgg.consumeParallel folds: a few prepared batches circulate
// between the calling goroutine and the workers.
func (c *countDistinct) buildParallel(ctx context.Context, ws []*cdWorker) error {
	return foldBroadcast(ctx, c.in, len(ws), func() *cdBatch { return &cdBatch{} }, c.prepare,
		func(w int, cb *cdBatch) error { return ws[w].fold(cb) }, nil)
}

func (cb *cdBatch) refs() *atomic.Int32 { return &cb.pending }
