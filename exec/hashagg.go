package exec

import (
	"context"
	"runtime"
	"sync"

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
// Parallelism divides the partitions, not the batches: worker w of P owns
// the partitions p with p%P == w and reads every batch, folding only its
// own rows. Each group therefore lives in exactly one table and sees its
// rows in input order, so that no partial states are merged and a float
// sum is added in the same order whatever P is: the result, including the
// order of the groups, does not depend on the number of workers. The
// order of output groups is otherwise unspecified (it follows the hash).

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
	h := &hashAgg{env: env, in: in, groups: append([]int(nil), groups...)}
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

func (h *hashAgg) consume(ctx context.Context, ws []*aggWorker) error {
	if len(ws) == 1 {
		for {
			b, err := h.in.Next(ctx)
			if err != nil || b == nil {
				return err
			}
			err = ws[0].fold(b)
			b.Release()
			if err != nil {
				return err
			}
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	chans := make([]chan arrow.RecordBatch, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		chans[i] = make(chan arrow.RecordBatch, 2)
		wg.Go(func() {
			for b := range chans[i] {
				if ctx.Err() == nil {
					if err := w.fold(b); err != nil {
						cancel(err)
					}
				}
				b.Release()
			}
		})
	}
	var err error
pull:
	for {
		var b arrow.RecordBatch
		if b, err = h.in.Next(ctx); err != nil || b == nil {
			break
		}
		for _, c := range chans {
			b.Retain()
			select {
			case c <- b:
			case <-ctx.Done():
				b.Release()
				b.Release()
				break pull
			}
		}
		b.Release()
	}
	for _, c := range chans {
		close(c)
	}
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return err
}

// aggWorker folds batches into the partitions it owns.
type aggWorker struct {
	h      *hashAgg
	id     int
	parts  [aggParts]*aggPart
	keys   rowKeys
	cols   []arrow.Array
	inputs []aggInput
	// scratch of the scatter
	rows    []int32
	gids    []uint32
	charged int64
}

func (h *hashAgg) newWorker(id int) *aggWorker {
	return &aggWorker{h: h, id: id, keys: rowKeys{form: h.form}, cols: make([]arrow.Array, len(h.groups)),
		inputs: make([]aggInput, len(h.plans))}
}

// fold adds one batch's rows of the worker's partitions.
func (w *aggWorker) fold(b arrow.RecordBatch) error {
	h := w.h
	n := int(b.NumRows())
	for i, pl := range h.plans {
		var arr arrow.Array
		if pl.Func != CountStar {
			arr = b.Column(pl.Arg)
		}
		w.inputs[i].prepare(pl.arg, arr)
	}
	w.gids = resize(w.gids, n)
	if len(h.groups) == 0 {
		w.rows = resize(w.rows, n)
		for i := range w.rows {
			w.rows[i] = int32(i)
		}
		clear(w.gids)
		return w.foldPart(0, w.rows, w.gids)
	}
	for i, g := range h.groups {
		w.cols[i] = b.Column(g)
	}
	w.keys.fill(w.cols)
	var start [aggParts + 1]int
	P := uint64(h.workers)
	own := uint64(w.id)
	for _, x := range w.keys.hash {
		if p := x >> (64 - aggPartBits); p%P == own {
			start[p+1]++
		}
	}
	for p := 1; p <= aggParts; p++ {
		start[p] += start[p-1]
	}
	w.rows = resize(w.rows, start[aggParts])
	pos := start
	for i, x := range w.keys.hash {
		if p := x >> (64 - aggPartBits); p%P == own {
			w.rows[pos[p]] = int32(i)
			pos[p]++
		}
	}
	for p := range aggParts {
		if lo, hi := start[p], start[p+1]; lo < hi {
			if err := w.foldPart(p, w.rows[lo:hi], w.gids[lo:hi]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *aggWorker) foldPart(p int, rows []int32, gids []uint32) error {
	part := w.parts[p]
	if part == nil {
		part = w.h.newPart()
		w.parts[p] = part
	}
	if part.keys != nil {
		if part.keys.find(&w.keys, rows, gids) > 0 {
			part.n = part.keys.len()
			for _, s := range part.states {
				s.grow(part.n)
			}
		}
	}
	for i, s := range part.states {
		s.update(&w.inputs[i], gids, rows)
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
	return rb.NewRecordBatch(), nil
}
