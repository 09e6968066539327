package sql

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/sql/parser"
)

// queryOperator plans the query of INSERT ... SELECT as SELECT runs it: a
// plain query block as planSelect decides, any other shape (joins,
// subqueries, set operations, WITH, windows) through the relational
// planner. A block planSelect sends to the row engine is run there and its
// rows come as one batch.
func (s *Session) queryOperator(ctx context.Context, env *stmtEnv, q parser.QueryExpr) (exec.Operator, error) {
	sel, ok := q.(*parser.Select)
	if !ok || !sel.IsSimple() {
		p, err := (&relPlanner{s: s, env: env}).planQuery(q)
		if err != nil {
			return nil, err
		}
		return p.build(s.execEnv(env))
	}
	p, err := s.planSelect(env, sel)
	if err == nil {
		return p.build(s.execEnv(env))
	}
	if !isRowEngine(err) {
		return nil, err
	}
	rs, err := s.runSelect(ctx, env, sel)
	if err != nil {
		return nil, err
	}
	r := rowsReader(s.mem, rs, env.loc)
	defer r.Release()
	r.Next()
	b := r.RecordBatch()
	b.Retain()
	cols := make(exec.Schema, len(rs.types))
	for i, t := range rs.types {
		cols[i] = exec.Column{Name: rs.names[i], Type: t, Nullable: true}
	}
	return exec.NewSliceSource(cols, []arrow.RecordBatch{b}), nil
}
