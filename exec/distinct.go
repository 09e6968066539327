package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// Distinct streams: every batch is probed into one groupMap of the rows
// seen so far (keys.go: NULLs equal to each other, -0 equal to 0, every NaN
// equal), and the rows whose key is new pass through in input order. A
// key's group id is assigned in row order, so a row is the first of its
// key exactly when its id is the next new one.

const distinctName = "Distinct"

type distinctOp struct {
	env    *Env
	in     Operator
	schema Schema
	arrow  *arrow.Schema

	keys rowKeys
	seen *groupMap
	rows []int32
	gids []uint32
	keep []int32
	refs []rowRef
	// cols is every column, for gatherBatch; keyCols their arrays in the
	// current batch.
	cols    []int
	keyCols []arrow.Array
	charged int64
	done    bool
}

// NewDistinct returns the operator of SELECT DISTINCT over every column of
// in: each row the first time its values are seen, in input order. It
// holds the distinct keys, charged to env.Budget. It takes ownership of
// in.
func NewDistinct(env *Env, in Operator) (Operator, error) {
	return NewDistinctOn(env, in, len(in.Schema()))
}

// NewDistinctOn is NewDistinct keyed on the first nKeys columns of in only:
// the other columns pass through with the values of the first row of each
// key, as SELECT DISTINCT ordered by an unselected expression keeps the
// first row's value of it on the row engine.
func NewDistinctOn(env *Env, in Operator, nKeys int) (Operator, error) {
	s := in.Schema()
	if len(s) == 0 || nKeys < 1 || nKeys > len(s) {
		in.Close()
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "Distinct: %d key columns of an input of %d", nKeys, len(s))
	}
	types := make([]schema.Type, nKeys)
	for i, c := range s[:nKeys] {
		if err := checkKeyType(distinctName, c.Type); err != nil {
			in.Close()
			return nil, err
		}
		types[i] = c.Type
	}
	form := keyFormOf(types)
	d := &distinctOp{env: env, in: in, schema: s, arrow: s.Arrow(), keys: rowKeys{form: form},
		seen: newGroupMap(form), keyCols: make([]arrow.Array, nKeys), cols: make([]int, len(s))}
	for i := range d.cols {
		d.cols[i] = i
	}
	return d, nil
}

func (d *distinctOp) Schema() Schema { return d.schema }

func (d *distinctOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for !d.done {
		if err := ctx.Err(); err != nil {
			d.Close()
			return nil, err
		}
		b, err := d.in.Next(ctx)
		if err != nil || b == nil {
			d.Close()
			return nil, err
		}
		out, err := d.filter(ctx, b)
		if err != nil {
			d.Close()
			return nil, err
		}
		if out != nil {
			return out, nil
		}
	}
	return nil, nil
}

// filter returns the rows of b seen for the first time, or nil if none
// is; it takes ownership of b.
func (d *distinctOp) filter(ctx context.Context, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	defer b.Release()
	n := int(b.NumRows())
	copy(d.keyCols, b.Columns()[:len(d.keyCols)])
	d.keys.fill(d.keyCols)
	d.rows, d.gids = resize(d.rows, n), resize(d.gids, n)
	for i := range d.rows {
		d.rows[i] = int32(i)
	}
	next := uint32(d.seen.len())
	if d.seen.find(&d.keys, d.rows, d.gids) == 0 {
		return nil, nil
	}
	if delta := d.seen.bytes() - d.charged; delta > 0 {
		if err := d.env.Budget.Grow(distinctName, delta); err != nil {
			return nil, err
		}
		d.charged += delta
	}
	d.keep = d.keep[:0]
	for i, g := range d.gids {
		if g == next {
			d.keep = append(d.keep, int32(i))
			next++
		}
	}
	if len(d.keep) == n {
		b.Retain()
		return b, nil
	}
	d.refs = d.refs[:0]
	for _, r := range d.keep {
		d.refs = append(d.refs, rowRef{row: r})
	}
	return gatherBatch(d.env.Mem, d.arrow, []arrow.RecordBatch{b}, d.cols, d.refs), nil
}

func (d *distinctOp) Close() {
	d.in.Close()
	d.seen = newGroupMap(d.keys.form)
	d.env.Budget.Shrink(d.charged)
	d.charged = 0
	d.done = true
}
