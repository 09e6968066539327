package sql

import (
	"context"
	"errors"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
)

// scanAgg is an aggregation the scan answers (scanReducible): count(*),
// count and sum of integer and DOUBLE columns under a WHERE pushed down
// whole, read from query.Scan.Aggregate, whose zone maps count and sum
// whole pages without decoding them.
type scanAgg struct {
	req query.Request
	// funcs and cols are, for each aggregate of the plan, its function
	// and the column it reads (empty for count(*)).
	funcs []exec.AggFunc
	cols  []string
}

// planScanAgg returns the scan aggregation of a plan scanReducible
// accepted, its aggregates already planned.
func planScanAgg(env *stmtEnv, st *parser.Select, src *selectSource, a *aggPlan) *scanAgg {
	colOf := map[string]string{}
	visit := func(e parser.Expr) {
		parser.Walk(e, func(x parser.Expr) bool {
			f, ok := x.(*parser.FuncCall)
			if !ok || !parser.IsAggregate(f.Name) {
				return true
			}
			if !f.Star && len(f.Args) == 1 {
				if ref, ok := f.Args[0].(*parser.ColumnRef); ok {
					if slot, err := src.sc.resolve(ref); err == nil {
						colOf[parser.FormatExpr(f)] = src.sc.cols[slot].name
					}
				}
			}
			return false
		})
	}
	for _, it := range st.Items {
		visit(it.Expr)
	}
	for _, o := range st.OrderBy {
		visit(o.Expr)
	}
	sa := &scanAgg{req: query.Request{Now: env.now, Columns: []string{}, Filter: pushdown(env, src.sc, st.Where)}}
	for _, ag := range a.aggs {
		col := ""
		if ag.Func != exec.CountStar {
			col = colOf[ag.Name]
			if !slices.Contains(sa.req.Columns, col) {
				sa.req.Columns = append(sa.req.Columns, col)
			}
		}
		sa.funcs = append(sa.funcs, ag.Func)
		sa.cols = append(sa.cols, col)
	}
	return sa
}

// scanAggOp emits the one row of a scan aggregation; when the scan cannot
// answer exactly (a sum past BIGINT) it runs the operators it stands for,
// which report what they find.
type scanAggOp struct {
	tbl      *table.Table
	sa       *scanAgg
	fallback exec.Operator
	env      *exec.Env
	done     bool
	// running says the fallback operators answer.
	running bool
}

func (o *scanAggOp) Schema() exec.Schema { return o.fallback.Schema() }

func (o *scanAggOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if o.running {
		return o.fallback.Next(ctx)
	}
	if o.done {
		return nil, nil
	}
	o.done = true
	tot, err := o.tbl.Aggregate(ctx, o.sa.req)
	if errors.Is(err, rowttl.ErrInvalidArgument) {
		o.running = true
		return o.fallback.Next(ctx)
	}
	if err != nil {
		return nil, err
	}
	sch := o.Schema()
	cols := make([]arrow.Array, len(sch))
	fields := make([]arrow.Field, len(sch))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, c := range sch {
		v := schema.IntVal(tot.Rows)
		if col := o.sa.cols[i]; col != "" {
			sum := tot.Sums[slices.Index(o.sa.req.Columns, col)]
			switch {
			case o.sa.funcs[i] == exec.Count:
				v = schema.IntVal(sum.Count)
			case sum.Count == 0:
				v = schema.Null
			case c.Type.Kind == schema.Double:
				v = schema.FloatVal(sum.Float)
			default:
				v = schema.IntVal(sum.Int)
			}
		}
		b := array.NewBuilder(o.env.Mem, c.Type.Arrow())
		schema.AppendValue(b, v)
		cols[i] = b.NewArray()
		b.Release()
		fields[i] = arrow.Field{Name: c.Name, Type: cols[i].DataType(), Nullable: true}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, 1), nil
}

func (o *scanAggOp) Close() {
	o.done = true
	o.fallback.Close()
}
