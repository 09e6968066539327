package compaction

import (
	"context"
	"fmt"

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

// batchRows is DefaultBatchRows but in tests, which shrink it to cut
// output batches inside runs.
var batchRows int64 = DefaultBatchRows

func newOutput(mem memory.Allocator, sc *arrow.Schema, sink Sink) *output {
	return &output{mem: mem, schema: sc, sink: sink, pending: make([][]arrow.Array, sc.NumFields()), limit: batchRows}
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
	var read int64 // checked against the output in the invariants build
	for _, r := range readers {
		for r.Next() {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			rec := r.RecordBatch()
			read += rec.NumRows()
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
	if rowset.Invariants && read != o.total {
		panic(fmt.Sprintf("compaction invariant: concatenated %d rows but wrote %d", read, o.total))
	}
	return o.total, nil
}

// MergeByKey streams the rows of the readers to the sink in key order. Each
// reader must yield its rows sorted by the first keyCount columns, each key
// once. Readers are given oldest first, and the order is rowset.Merge's:
// when the same key comes from several readers, the row of the latest
// (highest-ranked) reader wins and the others are dropped. It returns the
// rows written.
func MergeByKey(ctx context.Context, mem memory.Allocator, sc *arrow.Schema, readers []array.RecordReader, keyCount int, sink Sink) (int64, error) {
	o := newOutput(mem, sc, sink)
	defer o.release()
	m := rowset.NewBytesMerge()
	cursors := make([]*cursor, len(readers))
	for rank, r := range readers {
		c := &cursor{r: r, keyCount: keyCount}
		cursors[rank] = c
		ok, err := c.advanceBatch()
		if err != nil {
			return 0, err
		}
		if ok {
			m.Push(rank, c.key)
		}
	}
	// run is the cursor whose pending run of kept rows has not reached the
	// output yet: it must, before any other cursor's row does.
	var run *cursor
	var won int64 // rows kept, checked against the output in the invariants build
	steps := 0
	for m.Len() > 0 {
		if steps++; steps&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		rank, wins := m.Next()
		c := cursors[rank]
		if run != nil && (run != c || !wins) {
			if err := run.flushRun(o); err != nil {
				return 0, err
			}
			run = nil
		}
		var more bool
		var err error
		if wins {
			won++
			run = c
			more, err = c.next(o)
		} else {
			more, err = c.skip()
		}
		if err != nil {
			return 0, err
		}
		if !more {
			if run == c {
				run = nil // next flushed the run at the end of the reader
			}
			m.Drop()
			continue
		}
		m.Advance(c.key)
	}
	if err := o.flush(); err != nil {
		return 0, err
	}
	if rowset.Invariants && won != o.total {
		panic(fmt.Sprintf("compaction invariant: the merge kept %d rows but wrote %d", won, o.total))
	}
	return o.total, nil
}

type cursor struct {
	r        array.RecordReader
	keyCount int
	rec      arrow.RecordBatch
	enc      *rowset.KeyEncoder
	i        int64 // current row
	runStart int64 // first row of the pending run in rec
	key      []byte
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
func (c *cursor) skip() (bool, error) {
	c.i++
	c.runStart = c.i
	if c.i < c.rec.NumRows() {
		c.key = c.enc.Append(c.key[:0], int(c.i))
		return true, nil
	}
	return c.advanceBatch()
}
