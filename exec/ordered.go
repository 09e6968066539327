package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
)

// ordered is what Sort and TopN share: their input and keys, and, once the
// whole input is read, the rows to emit in order, gathered (gather.go) from
// the batches the operator holds in batches of BatchRows. The operator owns
// what it holds; ordered only drives the reading and the emitting.
type ordered struct {
	env    *Env
	in     Operator
	schema Schema
	arrow  *arrow.Schema
	keys   *orderKeys
	cols   []int // every column, for gatherBatch

	built bool
	out   []rowRef // the rows still to emit, in order
	done  bool
}

// orderer is an operator over ordered: build reads the whole input and
// sets out, sources names the batches out refers to, release drops all
// the operator holds (and its charge).
type orderer interface {
	build(ctx context.Context) error
	sources() []arrow.RecordBatch
	release()
}

// newOrdered checks keys against the schema of in; on an error it closes in.
func newOrdered(name string, env *Env, in Operator, keys []SortKey) (ordered, error) {
	ok, err := newOrderKeys(name, in.Schema(), keys)
	if err != nil {
		in.Close()
		return ordered{}, err
	}
	s := in.Schema()
	cols := make([]int, len(s))
	for i := range cols {
		cols[i] = i
	}
	return ordered{env: env, in: in, schema: s, arrow: s.Arrow(), keys: ok, cols: cols}, nil
}

func (o *ordered) Schema() Schema { return o.schema }

func (o *ordered) next(ctx context.Context, op orderer) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !o.built {
		o.built = true
		err := op.build(ctx)
		o.in.Close()
		if err != nil {
			op.release()
			o.done = true
			return nil, err
		}
	}
	if o.done || len(o.out) == 0 {
		op.release()
		o.done = true
		return nil, nil
	}
	n := min(len(o.out), BatchRows)
	b := gatherBatch(o.env.Mem, o.arrow, op.sources(), o.cols, o.out[:n])
	o.out = o.out[n:]
	return b, nil
}

func (o *ordered) close(op orderer) {
	o.in.Close()
	op.release()
	o.done = true
}
