package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
)

// filter keeps the rows for which its predicate is TRUE (not FALSE or
// NULL). A batch that passes whole goes through without a copy; others are
// gathered from the predicate's bitmap by query.FilterBatch.
type filter struct {
	env  *Env
	in   Operator
	pred Expr
}

// NewFilter returns the rows of in for which pred, a BOOLEAN expression,
// is TRUE.
func NewFilter(env *Env, in Operator, pred Expr) (Operator, error) {
	if k := pred.Type().Kind; k != schema.Boolean && k != schema.Invalid {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: filter on %s, a %s expression", pred, pred.Type())
	}
	return &filter{env: env, in: in, pred: pred}, nil
}

func (f *filter) Schema() Schema { return f.in.Schema() }

func (f *filter) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := f.in.Next(ctx)
		if err != nil || b == nil {
			return nil, err
		}
		out, err := f.apply(b)
		b.Release()
		if err != nil {
			return nil, err
		}
		if out != nil {
			return out, nil
		}
	}
}

// apply returns the kept rows of b, nil when there are none.
func (f *filter) apply(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	p, err := evalBool(f.env, f.pred, b)
	if err != nil {
		return nil, err
	}
	defer p.Release()
	mask, sel := maskBytes(f.env.Mem, p)
	defer mask.Release()
	switch {
	case sel == 0:
		return nil, nil
	case sel == int(b.NumRows()):
		b.Retain()
		return b, nil
	case b.NumCols() == 0:
		return array.NewRecordBatch(b.Schema(), nil, int64(sel)), nil
	}
	return query.FilterBatch(context.Background(), f.env.Mem, b, mask.Bytes())
}

func (f *filter) Close() { f.in.Close() }

// project evaluates one expression per output column.
type project struct {
	env    *Env
	in     Operator
	exprs  []Expr
	schema Schema
	arrow  *arrow.Schema
}

// NewProject returns an operator whose columns are exprs over the rows of
// in, named by names.
func NewProject(env *Env, in Operator, exprs []Expr, names []string) (Operator, error) {
	if len(exprs) != len(names) {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: project of %d expressions and %d names", len(exprs), len(names))
	}
	s := make(Schema, len(exprs))
	for i, e := range exprs {
		s[i] = Column{Name: names[i], Type: e.Type(), Nullable: true}
	}
	return &project{env: env, in: in, exprs: exprs, schema: s, arrow: s.Arrow()}, nil
}

func (p *project) Schema() Schema { return p.schema }

func (p *project) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := p.in.Next(ctx)
	if err != nil || b == nil {
		return nil, err
	}
	defer b.Release()
	cols := make([]arrow.Array, 0, len(p.exprs))
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	for _, e := range p.exprs {
		c, err := e.Eval(p.env, b)
		if err != nil {
			release()
			return nil, err
		}
		cols = append(cols, c)
	}
	out := array.NewRecordBatch(p.arrow, cols, b.NumRows())
	release()
	return out, nil
}

func (p *project) Close() { p.in.Close() }

// limit skips offset rows, passes count, then closes its input.
type limit struct {
	in            Operator
	offset, count int64
	done          bool
}

// NewLimit returns at most count rows of in after skipping offset; count
// < 0 means no limit. It stops pulling once it has passed count rows and
// closes its input then, so that the scans below stop early.
func NewLimit(in Operator, offset, count int64) Operator {
	return &limit{in: in, offset: max(offset, 0), count: count}
}

func (l *limit) Schema() Schema { return l.in.Schema() }

func (l *limit) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for !l.done {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if l.count == 0 {
			l.finish()
			break
		}
		b, err := l.in.Next(ctx)
		if err != nil {
			return nil, err
		}
		if b == nil {
			l.finish()
			break
		}
		n := b.NumRows()
		lo := min(l.offset, n)
		l.offset -= lo
		hi := n
		if l.count >= 0 {
			hi = min(n, lo+l.count)
		}
		if hi <= lo {
			b.Release()
			continue
		}
		if l.count >= 0 {
			l.count -= hi - lo
		}
		if lo == 0 && hi == n {
			return b, nil
		}
		out := b.NewSlice(lo, hi)
		b.Release()
		return out, nil
	}
	return nil, nil
}

func (l *limit) finish() {
	l.done = true
	l.in.Close()
}

func (l *limit) Close() {
	l.done = true
	l.in.Close()
}
