package sql

import (
	"context"

	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/sql/parser"
)

// queryOperator plans the query of INSERT ... SELECT as SELECT runs it: a
// plain query block as planSelect decides, any other shape (joins,
// subqueries, set operations, WITH, windows) through the relational
// planner.
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
	if err != nil {
		return nil, err
	}
	return p.build(s.execEnv(env))
}
