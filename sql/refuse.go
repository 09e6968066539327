package sql

import (
	"github.com/rowttl/rowttl"
)

// The row-at-a-time executor of this package runs the plain query block
// (Select.IsSimple) and nothing else: the analytic shapes the parser also
// accepts (joins, derived tables, set operations, WITH, subqueries, window
// functions, REGEXP, EXTRACT, TIMESTAMPDIFF) belong to the planner, and
// are refused here by name rather than run wrongly.

// notYet is the refusal of a construct the planner will run.
func notYet(construct string) error {
	return rowttl.Errorf(rowttl.ErrNotSupported, "%s is not supported yet", construct)
}

// refuseQuery returns the refusal of the first construct of q that the
// executor cannot run, or nil for a plain query block.
func refuseQuery(q QueryExpr) error {
	s, ok := q.(*Select)
	if !ok {
		return notYet(q.(*SetOp).Op.String())
	}
	if len(s.With) > 0 {
		return notYet("WITH")
	}
	if r := s.From; r != nil {
		switch {
		case r.IsJoin():
			if r.Join.Kind == JoinComma {
				return notYet("JOIN (a comma-separated FROM list)")
			}
			return notYet(r.Join.Kind.String())
		case r.IsSubquery():
			return notYet("a subquery in FROM")
		}
	}
	if len(s.Windows) > 0 {
		return notYet("WINDOW")
	}
	var err error
	s.WalkExprs(func(e Expr) {
		if err == nil {
			err = refuseExpr(e)
		}
	})
	return err
}

// refuseExpr returns the refusal of the first construct of e that the
// executor cannot compute, or nil.
func refuseExpr(e Expr) error {
	var err error
	Walk(e, func(x Expr) bool {
		err = refuseNode(x)
		return err == nil
	})
	return err
}

// refuseNode returns the refusal of the node x itself, or nil.
func refuseNode(x Expr) error {
	switch x := x.(type) {
	case *SubqueryExpr:
		return notYet("a scalar subquery")
	case *InSubquery:
		if x.Not {
			return notYet("NOT IN (subquery)")
		}
		return notYet("IN (subquery)")
	case *ExistsExpr:
		return notYet("EXISTS")
	case *WindowFunc:
		return notYet("the window function " + x.Name + "() OVER")
	case *RegexpExpr:
		return notYet("REGEXP")
	case *TimestampDiff:
		return notYet("TIMESTAMPDIFF")
	case *ExtractExpr:
		return notYet("EXTRACT")
	}
	return nil
}
