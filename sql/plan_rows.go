package sql

import (
	"context"

	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// queryRows runs the query of INSERT ... SELECT: a plain query block on
// the row engine as before, any other shape (joins, subqueries, set
// operations, WITH, windows) through the relational planner, its rows
// collected as values.
func (s *Session) queryRows(ctx context.Context, env *stmtEnv, q parser.QueryExpr) (*rowSet, error) {
	if sel, ok := q.(*parser.Select); ok && sel.IsSimple() {
		return s.runSelect(ctx, env, sel)
	}
	p, err := (&relPlanner{s: s, env: env}).planQuery(q)
	if err != nil {
		return nil, err
	}
	op, err := p.build(s.execEnv(env))
	if err != nil {
		return nil, err
	}
	defer op.Close()
	rs := &rowSet{}
	for _, c := range op.Schema() {
		rs.names = append(rs.names, c.Name)
		rs.types = append(rs.types, c.Type)
	}
	for {
		b, err := op.Next(ctx)
		if err != nil {
			return nil, err
		}
		if b == nil {
			return rs, nil
		}
		for i := 0; i < int(b.NumRows()); i++ {
			row := make([]schema.Value, b.NumCols())
			for j := range row {
				v := schema.ValueAt(b.Column(j), i)
				if v.Bytes != nil {
					v.Bytes = append([]byte(nil), v.Bytes...)
				}
				row[j] = v
			}
			rs.rows = append(rs.rows, row)
		}
		b.Release()
	}
}
