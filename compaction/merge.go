package compaction

import (
	"bytes"
	"container/heap"
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/rowset"
)

// Sink receives output batches (a rowset writer).
type Sink interface {
	Write(rec arrow.RecordBatch) error
}

// DefaultBatchRows is the size of the batches handed to the sink.
const DefaultBatchRows = 64 << 10

// output gathers runs of input rows (as slices, no copy) and hands them to
// the sink as batches of the output schema.
type output struct {
	mem     memory.Allocator
	schema  *arrow.Schema
	sink    Sink
	pending [][]arrow.Array // per column, slices awaiting concatenation
	rows    int64
	total   int64
	limit   int64
}

func newOutput(mem memory.Allocator, sc *arrow.Schema, sink Sink) *output {
	return &output{mem: mem, schema: sc, sink: sink, pending: make([][]arrow.Array, sc.NumFields()), limit: DefaultBatchRows}
}

// add appends rows [i, j) of rec.
func (o *output) add(rec arrow.RecordBatch, i, j int64) error {
	if j <= i {
		return nil
	}
	for c := range o.pending {
		o.pending[c] = append(o.pending[c], array.NewSlice(rec.Column(c), i, j))
	}
	o.rows += j - i
	if o.rows >= o.limit {
		return o.flush()
	}
	return nil
}

func (o *output) flush() error {
	if o.rows == 0 {
		return nil
	}
	cols := make([]arrow.Array, len(o.pending))
	var err error
	for c, parts := range o.pending {
		if err == nil {
			if len(parts) == 1 {
				parts[0].Retain()
				cols[c] = parts[0]
			} else {
				cols[c], err = array.Concatenate(parts, o.mem)
			}
		}
		for _, p := range parts {
			p.Release()
		}
		o.pending[c] = o.pending[c][:0]
	}
	if err == nil {
		rec := array.NewRecordBatch(o.schema, cols, o.rows)
		err = o.sink.Write(rec)
		rec.Release()
	}
	for _, c := range cols {
		if c != nil {
			c.Release()
		}
	}
	o.total += o.rows
	o.rows = 0
	return err
}

func (o *output) release() {
	for c, parts := range o.pending {
		for _, p := range parts {
			p.Release()
		}
		o.pending[c] = nil
	}
}

// Concat streams every row of the readers, in order, to the sink. The
// readers' batches must have the output schema's columns in order. It
// returns the number of rows written.
func Concat(ctx context.Context, mem memory.Allocator, sc *arrow.Schema, readers []array.RecordReader, sink Sink) (int64, error) {
	o := newOutput(mem, sc, sink)
	defer o.release()
	for _, r := range readers {
		for r.Next() {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			rec := r.RecordBatch()
			if err := o.add(rec, 0, rec.NumRows()); err != nil {
				return 0, err
			}
		}
		if err := r.Err(); err != nil {
			return 0, err
		}
	}
	if err := o.flush(); err != nil {
		return 0, err
	}
	return o.total, nil
}

// MergeByKey streams the rows of the readers to the sink in key order. Each
// reader must yield its rows sorted by the first keyCount columns. When the
// same key comes from several readers, only the row of the latest reader is
// kept: readers are given oldest first. It returns the rows written.
func MergeByKey(ctx context.Context, mem memory.Allocator, sc *arrow.Schema, readers []array.RecordReader, keyCount int, sink Sink) (int64, error) {
	o := newOutput(mem, sc, sink)
	defer o.release()
	h := &mergeHeap{}
	for rank, r := range readers {
		c := &cursor{r: r, rank: rank, keyCount: keyCount}
		ok, err := c.advanceBatch()
		if err != nil {
			return 0, err
		}
		if ok {
			heap.Push(h, c)
		}
	}
	steps := 0
	for h.Len() > 0 {
		if steps++; steps&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		c := heap.Pop(h).(*cursor)
		// Of rows with one key, the newest reader's wins; the heap orders
		// equal keys newest first, so c is the winner.
		for h.Len() > 0 && bytes.Equal(h.items[0].key, c.key) {
			loser := heap.Pop(h).(*cursor)
			if err := loser.skip(); err != nil {
				return 0, err
			}
			if !loser.done {
				heap.Push(h, loser)
			}
		}
		// Keep c's rows while they stay below every other cursor's key;
		// the run goes to the output before another cursor's rows do.
		for {
			more, err := c.next(o)
			if err != nil {
				return 0, err
			}
			if !more {
				break
			}
			if h.Len() > 0 && bytes.Compare(c.key, h.items[0].key) >= 0 {
				if err := c.flushRun(o); err != nil {
					return 0, err
				}
				heap.Push(h, c)
				break
			}
		}
	}
	if err := o.flush(); err != nil {
		return 0, err
	}
	return o.total, nil
}

type cursor struct {
	r        array.RecordReader
	rank     int
	keyCount int
	rec      arrow.RecordBatch
	enc      *rowset.KeyEncoder
	i        int64 // current row
	runStart int64 // first row of the pending run in rec
	key      []byte
	done     bool
}

// advanceBatch moves to the first row of the next non-empty batch.
func (c *cursor) advanceBatch() (bool, error) {
	for c.r.Next() {
		rec := c.r.RecordBatch()
		if rec.NumRows() == 0 {
			continue
		}
		c.rec = rec
		cols := make([]arrow.Array, c.keyCount)
		for k := range cols {
			cols[k] = rec.Column(k)
		}
		c.enc = rowset.NewKeyEncoder(cols)
		c.i, c.runStart = 0, 0
		c.key = c.enc.Append(c.key[:0], 0)
		return true, nil
	}
	c.done = true
	return false, c.r.Err()
}

// next keeps the current row in the pending run and moves on; at the end of
// a batch the run is handed to the output.
func (c *cursor) next(o *output) (bool, error) {
	c.i++
	if c.i < c.rec.NumRows() {
		c.key = c.enc.Append(c.key[:0], int(c.i))
		return true, nil
	}
	if err := c.flushRun(o); err != nil {
		return false, err
	}
	return c.advanceBatch()
}

// flushRun hands the pending run [runStart, i) to the output.
func (c *cursor) flushRun(o *output) error {
	err := o.add(c.rec, c.runStart, c.i)
	c.runStart = c.i
	return err
}

// skip drops the current row; the cursor has no pending run.
func (c *cursor) skip() error {
	c.i++
	c.runStart = c.i
	if c.i < c.rec.NumRows() {
		c.key = c.enc.Append(c.key[:0], int(c.i))
		return nil
	}
	_, err := c.advanceBatch()
	return err
}

type mergeHeap struct{ items []*cursor }

func (h *mergeHeap) Len() int { return len(h.items) }
func (h *mergeHeap) Less(i, j int) bool {
	if c := bytes.Compare(h.items[i].key, h.items[j].key); c != 0 {
		return c < 0
	}
	return h.items[i].rank > h.items[j].rank
}
func (h *mergeHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *mergeHeap) Push(x any)    { h.items = append(h.items, x.(*cursor)) }
func (h *mergeHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
