package sql

import (
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/sql/parser"
)

// The row-at-a-time executor of this package runs the plain query block
// (Select.IsSimple) and nothing else: the analytic shapes the parser also
// accepts (joins, derived tables, set operations, WITH, subqueries, window
// functions, EXTRACT) belong to the planner, and
// are refused here by name rather than run wrongly.

// notYet is the refusal of a construct the planner will run.
func notYet(construct string) error {
	return rowttl.Errorf(rowttl.ErrNotSupported, "%s is not supported yet", construct)
}

// refuseQuery returns the refusal of the first construct of q that the
// executor cannot run, or nil for a plain query block.
func refuseQuery(q parser.QueryExpr) error {
	s, ok := q.(*parser.Select)
	if !ok {
		return notYet(q.(*parser.SetOp).Op.String())
	}
	if len(s.With) > 0 {
		return notYet("WITH")
	}
	if r := s.From; r != nil {
		switch {
		case r.IsJoin():
			if r.Join.Kind == parser.JoinComma {
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
	s.WalkExprs(func(e parser.Expr) {
		if err == nil {
			err = refuseExpr(e)
		}
	})
	return err
}

// refuseExpr returns the refusal of the first construct of e that the
// executor cannot compute, or nil.
func refuseExpr(e parser.Expr) error {
	var err error
	parser.Walk(e, func(x parser.Expr) bool {
		err = refuseNode(x)
		return err == nil
	})
	return err
}

// refuseNode returns the refusal of the node x itself, or nil.
func refuseNode(x parser.Expr) error {
	switch x := x.(type) {
	case *parser.SubqueryExpr:
		return notYet("a scalar subquery")
	case *parser.InSubquery:
		if x.Not {
			return notYet("NOT IN (subquery)")
		}
		return notYet("IN (subquery)")
	case *parser.ExistsExpr:
		return notYet("EXISTS")
	case *parser.QuantifiedCmp:
		return notYet(x.Op.String() + " " + quantWord(x.All) + " (subquery)")
	case *parser.WindowFunc:
		return notYet("the window function " + x.Name + "() OVER")
	}
	return nil
}
