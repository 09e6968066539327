package exec

import (
	"context"
	"runtime"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// Hash aggregation.
//
// Rows are split by the high bits of their key's hash into aggParts
// partitions, each with its own groupMap and aggregate states. A batch is
// first scattered (a stable counting sort of its row numbers by
// partition), then folded partition by partition: the probes and state
// updates of one partition touch a table about 1/64th of the whole, which
// stays in cache where a single table of a million groups would miss on
// almost every row.
//
// Parallelism divides the partitions, not the batches: the calling
// goroutine pulls each batch and prepares it once (keys hashed, rows
// scattered, arguments converted), and worker w of P folds into the
// partitions p with p%P == w only. While the groups are few (their tables
// in cache), folding costs less than preparing, and the calling goroutine
// folds every worker's partitions itself; past parallelGroups each worker
// folds on its own goroutine. Either way each group lives in exactly one
// table and sees its rows in input order: no partial states are merged, a
// float sum is added in the same order whatever P is, and the result,
// including the order of the groups, does not depend on the number of
// workers. The order of output groups is otherwise unspecified (it follows
// the hash).

const (
	aggPartBits = 6
	aggParts    = 1 << aggPartBits
)

// hashAggName is the name HashAggregate gives the Budget.
const hashAggName = "HashAggregate"

type hashAgg struct {
	env     *Env
	in      Operator
	schema  Schema
	groups  []int
	form    keyForm
	plans   []aggPlan
	workers int
	// parallelFrom is parallelGroups; tests lower it.
	parallelFrom int

	built   bool
	parts   [aggParts]*aggPart
	charged int64
	// the output cursor: the next group to emit is group gid of parts[part].
	part, gid int
	done      bool
}

// aggPart is one partition's groups: their keys and their states.
type aggPart struct {
	keys    *groupMap // nil without group keys: one group, 0
	n       int
	states  []aggState
	charged int64
}

func (p *aggPart) bytes() int64 {
	var n int64
	if p.keys != nil {
		n = p.keys.bytes()
	}
	for _, s := range p.states {
		n += s.bytes()
	}
	return n
}

// NewHashAggregate returns the operator of GROUP BY groups (input column
// indices) with aggregates aggs. Its output is the group columns, with
// their names and types, then one column per aggregate named by it, of the
// type exec/spec.go documents. Without group keys it returns exactly one
// row, even for an empty input (count 0, other aggregates NULL); with keys,
// one row per group (NULL is a group) in an unspecified order, in batches
// of at most BatchRows rows. It takes ownership of in.
func NewHashAggregate(env *Env, in Operator, groups []int, aggs []Aggregate) (Operator, error) {
	fail := func(err error) (Operator, error) {
		in.Close()
		return nil, err
	}
	ins := in.Schema()
	if CountDistinctApplies(ins, groups, aggs) {
		return newCountDistinct(env, in, aggs[0]), nil
	}
	h := &hashAgg{env: env, in: in, groups: append([]int(nil), groups...), parallelFrom: parallelGroups}
	types := make([]schema.Type, len(groups))
	for i, g := range groups {
		if g < 0 || g >= len(ins) {
			return fail(rowttl.Errorf(rowttl.ErrInvalidArgument, "HashAggregate: group key %d of an input of %d columns", g, len(ins)))
		}
		if err := checkKeyType(hashAggName, ins[g].Type); err != nil {
			return fail(err)
		}
		types[i] = ins[g].Type
		h.schema = append(h.schema, ins[g])
	}
	for _, a := range aggs {
		p, err := planAggregate(ins, a)
		if err != nil {
			return fail(err)
		}
		h.plans = append(h.plans, p)
		h.schema = append(h.schema, Column{Name: a.Name, Type: p.out, Nullable: a.Func != Count && a.Func != CountStar})
	}
	h.workers = 1
	if len(groups) > 0 {
		h.form = keyFormOf(types)
		h.workers = env.Parallelism
		if h.workers <= 0 {
			h.workers = runtime.GOMAXPROCS(0)
		}
		h.workers = min(h.workers, aggParts)
	}
	return h, nil
}

func (h *hashAgg) Schema() Schema { return h.schema }

func (h *hashAgg) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !h.built {
		h.built = true
		err := h.build(ctx)
		h.in.Close()
		if err != nil {
			h.release()
			h.done = true
			return nil, err
		}
	}
	if h.done {
		return nil, nil
	}
	b, err := h.emit()
	if err != nil || b == nil {
		h.release()
		h.done = true
	}
	return b, err
}

func (h *hashAgg) Close() {
	h.in.Close()
	h.release()
	h.done = true
}

func (h *hashAgg) release() {
	h.parts = [aggParts]*aggPart{}
	h.env.Budget.Shrink(h.charged)
	h.charged = 0
}

func (h *hashAgg) newPart() *aggPart {
	p := &aggPart{states: make([]aggState, len(h.plans))}
	if len(h.groups) > 0 {
		p.keys = newGroupMap(h.form)
	}
	for i, pl := range h.plans {
		p.states[i] = pl.state()
	}
	return p
}

// build consumes the input into the partitions.
func (h *hashAgg) build(ctx context.Context) error {
	ws := make([]*aggWorker, h.workers)
	for i := range ws {
		ws[i] = h.newWorker(i)
	}
	defer func() {
		for _, w := range ws {
			h.charged += w.charged
		}
	}()
	if len(h.groups) == 0 {
		p := h.newPart()
		p.n = 1
		for _, s := range p.states {
			s.grow(1)
		}
		h.parts[0] = p
		ws[0].parts[0] = p
	}
	if err := h.consume(ctx, ws); err != nil {
		return err
	}
	for i, w := range ws {
		for p, part := range w.parts {
			if part != nil && p%h.workers == i {
				h.parts[p] = part
			}
		}
	}
	return nil
}

// aggBatch is one input batch prepared for folding, once for every
// worker: its keys hashed, its rows scattered by partition (rows of
// partition p at rows[start[p]:start[p+1]], in input order), its aggregate
// arguments converted. Workers read it and never write it.
type aggBatch struct {
	b      arrow.RecordBatch
	keys   rowKeys
	cols   []arrow.Array
	inputs []aggInput
	rows   []int32
	start  [aggParts + 1]int
	// pending counts the workers yet to fold it.
	pending atomic.Int32
}

func (h *hashAgg) newAggBatch() *aggBatch {
	return &aggBatch{keys: rowKeys{form: h.form}, cols: make([]arrow.Array, len(h.groups)),
		inputs: make([]aggInput, len(h.plans))}
}

// prepare fills ab from b, which it takes ownership of.
func (h *hashAgg) prepare(ab *aggBatch, b arrow.RecordBatch) {
	ab.b = b
	n := int(b.NumRows())
	for i, pl := range h.plans {
		var arr arrow.Array
		if pl.Func != CountStar {
			arr = b.Column(pl.Arg)
		}
		ab.inputs[i].prepare(pl.arg, arr)
		if pl.Func == MaxBy || pl.Func == MinBy {
			ab.inputs[i].prepareBy(b.Column(pl.By))
		}
		if pl.intKeys {
			ab.inputs[i].prepareKeys(arr)
		}
	}
	ab.rows = resize(ab.rows, n)
	ab.start = [aggParts + 1]int{}
	if len(h.groups) == 0 {
		for i := range ab.rows {
			ab.rows[i] = int32(i)
		}
		for p := 1; p <= aggParts; p++ {
			ab.start[p] = n
		}
		return
	}
	for i, g := range h.groups {
		ab.cols[i] = b.Column(g)
	}
	ab.keys.fill(ab.cols)
	start := &ab.start
	for _, x := range ab.keys.hash {
		start[x>>(64-aggPartBits)+1]++
	}
	for p := 1; p <= aggParts; p++ {
		start[p] += start[p-1]
	}
	pos := *start
	for i, x := range ab.keys.hash {
		p := x >> (64 - aggPartBits)
		ab.rows[pos[p]] = int32(i)
		pos[p]++
	}
}

func (ab *aggBatch) releaseBatch() {
	if ab.b != nil {
		ab.b.Release()
		ab.b = nil
	}
}

// parallelGroups is the number of groups from which the workers fold on
// their own goroutines. Below it the tables sit in cache, preparing a batch
// costs more than folding it, and the calling goroutine folds every
// partition itself.
const parallelGroups = 1 << 15

func (h *hashAgg) consume(ctx context.Context, ws []*aggWorker) error {
	ab := h.newAggBatch()
	for {
		b, err := h.in.Next(ctx)
		if err != nil || b == nil {
			return err
		}
		h.prepare(ab, b)
		for _, w := range ws {
			if err = w.fold(ab); err != nil {
				break
			}
		}
		ab.releaseBatch()
		if err != nil {
			return err
		}
		if len(ws) > 1 && h.groupsHeld(ws) >= h.parallelFrom {
			return h.consumeParallel(ctx, ws)
		}
	}
}

func (h *hashAgg) groupsHeld(ws []*aggWorker) int {
	n := 0
	for _, w := range ws {
		for _, p := range w.parts {
			if p != nil {
				n += p.n
			}
		}
	}
	return n
}

// consumeParallel folds the rest of the input with a goroutine per worker.
// A worker's batches reach it in input order, whichever goroutine folds
// them.
func (h *hashAgg) consumeParallel(ctx context.Context, ws []*aggWorker) error {
	return foldBroadcast(ctx, h.in, len(ws), h.newAggBatch, h.prepare,
		func(w int, ab *aggBatch) error { return ws[w].fold(ab) },
		(*aggBatch).releaseBatch)
}

func (ab *aggBatch) refs() *atomic.Int32 { return &ab.pending }

// aggWorker folds prepared batches into the partitions it owns: those p
// with p % workers == id.
type aggWorker struct {
	h       *hashAgg
	id      int
	parts   [aggParts]*aggPart
	gids    []uint32
	charged int64
}

func (h *hashAgg) newWorker(id int) *aggWorker {
	return &aggWorker{h: h, id: id}
}

// fold adds the rows of ab in the worker's partitions.
func (w *aggWorker) fold(ab *aggBatch) error {
	w.gids = resize(w.gids, len(ab.rows))
	if len(w.h.groups) == 0 {
		clear(w.gids)
		return w.foldPart(ab, 0, ab.rows, w.gids)
	}
	for p := w.id; p < aggParts; p += w.h.workers {
		if lo, hi := ab.start[p], ab.start[p+1]; lo < hi {
			if err := w.foldPart(ab, p, ab.rows[lo:hi], w.gids[lo:hi]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *aggWorker) foldPart(ab *aggBatch, p int, rows []int32, gids []uint32) error {
	part := w.parts[p]
	if part == nil {
		part = w.h.newPart()
		w.parts[p] = part
	}
	if part.keys != nil {
		if part.keys.find(&ab.keys, rows, gids) > 0 {
			part.n = part.keys.len()
			for _, s := range part.states {
				s.grow(part.n)
			}
		}
	}
	for i, s := range part.states {
		s.update(&ab.inputs[i], gids, rows)
	}
	if d := part.bytes() - part.charged; d > 0 {
		if err := w.h.env.Budget.Grow(hashAggName, d); err != nil {
			return err
		}
		part.charged += d
		w.charged += d
	}
	return nil
}

// emit builds the next batch of at most BatchRows groups, or returns nil
// after the last.
func (h *hashAgg) emit() (arrow.RecordBatch, error) {
	type span struct{ part, g0, g1 int }
	var spans []span
	rows := 0
	for h.part < aggParts && rows < BatchRows {
		p := h.parts[h.part]
		if p == nil || h.gid >= p.n {
			h.part, h.gid = h.part+1, 0
			continue
		}
		g1 := min(p.n, h.gid+BatchRows-rows)
		spans = append(spans, span{h.part, h.gid, g1})
		rows += g1 - h.gid
		h.gid = g1
	}
	if rows == 0 {
		return nil, nil
	}
	rb := array.NewRecordBuilder(h.env.Mem, h.schema.Arrow())
	defer rb.Release()
	rb.Reserve(rows)
	fields := rb.Fields()
	ng := len(h.groups)
	for _, s := range spans {
		p := h.parts[s.part]
		if ng > 0 {
			p.keys.appendGroupKeys(fields[:ng], s.g0, s.g1)
		}
		for i, st := range p.states {
			if err := st.appendTo(fields[ng+i], s.g0, s.g1); err != nil {
				return nil, err
			}
		}
	}
	// Partitions wholly emitted are dropped now rather than at the end, so
	// that what the operator holds shrinks as its output streams.
	for i := range min(h.part, aggParts) {
		if p := h.parts[i]; p != nil {
			h.env.Budget.Shrink(p.charged)
			h.charged -= p.charged
			h.parts[i] = nil
		}
	}
	return rb.NewRecordBatch(), nil
}
