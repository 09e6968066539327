package sql

import (
	"fmt"
	"strings"

	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/sql/parser"
)

// setOpPlan is UNION [ALL], INTERSECT or EXCEPT of two planned queries,
// each operand's columns converted to the unified type of its column, with
// the ORDER BY and LIMIT written after the last operand over the whole.
type setOpPlan struct {
	op          exec.SetOp
	left, right relPlan
	// lconv and rconv convert an operand's columns (nil: as they are).
	lconv, rconv []exec.Expr
	cols         exec.Schema
	keys         []exec.SortKey
	keyText      []string
	limit        *parser.Limit
}

func (p *relPlanner) planSetOp(q *parser.SetOp) (relPlan, error) {
	l, err := p.planQuery(q.L)
	if err != nil {
		return nil, err
	}
	r, err := p.planQuery(q.R)
	if err != nil {
		return nil, err
	}
	sp := &setOpPlan{left: l, right: r, limit: q.Limit}
	switch {
	case q.Op == parser.SetUnion && q.All:
		sp.op = exec.UnionAll
	case q.Op == parser.SetUnion:
		sp.op = exec.UnionDistinct
	case q.All:
		return nil, notYet(q.Op.String() + " ALL")
	case q.Op == parser.SetIntersect:
		sp.op = exec.Intersect
	default:
		sp.op = exec.Except
	}
	lc, rc := l.outCols(), r.outCols()
	if len(lc) != len(rc) {
		return nil, invalidf("The used SELECT statements have a different number of columns")
	}
	c := newVCompiler(p.env, &scope{multi: true})
	lconv, rconv := false, false
	var lx, rx []exec.Expr
	for i := range lc {
		t := unify(lc[i].Type, rc[i].Type)
		if isNullType(t) {
			t = stringType
		}
		var a, b exec.Expr = &exec.ColumnRef{Index: i, Name: lc[i].Name, Typ: lc[i].Type}, &exec.ColumnRef{Index: i, Name: rc[i].Name, Typ: rc[i].Type}
		if a, err = c.convert(a, t); err != nil {
			return nil, analytic(err)
		}
		if b, err = c.convert(b, t); err != nil {
			return nil, analytic(err)
		}
		if !arrowEqual(a.Type(), b.Type()) {
			return nil, notYet(fmt.Sprintf("%s of %s with %s", q.Op, lc[i].Type, rc[i].Type))
		}
		if _, ok := a.(*exec.ColumnRef); !ok {
			lconv = true
		}
		if _, ok := b.(*exec.ColumnRef); !ok {
			rconv = true
		}
		lx, rx = append(lx, a), append(rx, b)
		sp.cols = append(sp.cols, exec.Column{Name: lc[i].Name, Type: a.Type(), Nullable: true})
	}
	if lconv {
		sp.lconv = lx
	}
	if rconv {
		sp.rconv = rx
	}
	// ORDER BY over the whole names output columns: by position or name.
	for _, o := range q.OrderBy {
		col := -1
		switch e := o.Expr.(type) {
		case *parser.IntLit:
			if e.Val < 1 || int(e.Val) > len(sp.cols) {
				return nil, invalidf("Unknown column '%d' in 'order clause'", e.Val)
			}
			col = int(e.Val) - 1
		case *parser.ColumnRef:
			for i, c := range sp.cols {
				if e.Table == "" && strings.EqualFold(c.Name, e.Name) {
					col = i
					break
				}
			}
		}
		if col < 0 {
			return nil, notYet("ORDER BY " + parser.FormatExpr(o.Expr) + " over a set operation (name an output column)")
		}
		nf := !o.Desc
		switch o.Nulls {
		case parser.NullsFirst:
			nf = true
		case parser.NullsLast:
			nf = false
		}
		sp.keys = append(sp.keys, exec.SortKey{Column: col, Desc: o.Desc, NullsFirst: nf})
		text := parser.QuoteIdent(sp.cols[col].Name)
		if o.Desc {
			text += " DESC"
		}
		if nf != !o.Desc {
			if nf {
				text += " NULLS FIRST"
			} else {
				text += " NULLS LAST"
			}
		}
		sp.keyText = append(sp.keyText, text)
	}
	return sp, nil
}

func (sp *setOpPlan) outCols() exec.Schema { return sp.cols }

func (sp *setOpPlan) estRows() int64 {
	l, r := sp.left.estRows(), sp.right.estRows()
	n := l + r
	if sp.op == exec.Intersect || sp.op == exec.Except {
		n = l
	}
	if sp.limit != nil && sp.limit.Count < n {
		n = sp.limit.Count
	}
	return n
}

func (sp *setOpPlan) build(env *exec.Env) (exec.Operator, error) {
	side := func(p relPlan, conv []exec.Expr) (exec.Operator, error) {
		op, err := p.build(env)
		if err != nil || conv == nil {
			return op, err
		}
		names := make([]string, len(conv))
		for i := range conv {
			names[i] = sp.cols[i].Name
		}
		out, err := exec.NewProject(env, op, conv, names)
		if err != nil {
			op.Close()
			return nil, err
		}
		return out, nil
	}
	l, err := side(sp.left, sp.lconv)
	if err != nil {
		return nil, err
	}
	r, err := side(sp.right, sp.rconv)
	if err != nil {
		l.Close()
		return nil, err
	}
	op, err := exec.NewSetOp(env, sp.op, l, r)
	if err != nil {
		l.Close()
		r.Close()
		return nil, err
	}
	switch {
	case len(sp.keys) > 0 && sp.limit != nil:
		return exec.NewTopN(env, op, sp.keys, sp.limit.Count, sp.limit.Offset)
	case len(sp.keys) > 0:
		return exec.NewSort(env, op, sp.keys)
	case sp.limit != nil:
		return exec.NewLimit(op, sp.limit.Offset, sp.limit.Count), nil
	}
	return op, nil
}

func (sp *setOpPlan) explainTree(add explainFunc, d int) {
	switch {
	case len(sp.keys) > 0 && sp.limit != nil:
		add(d, "TopN: order by %s, offset %d, count %d", strings.Join(sp.keyText, ", "), sp.limit.Offset, sp.limit.Count)
		d++
	case len(sp.keys) > 0:
		add(d, "Sort: order by %s", strings.Join(sp.keyText, ", "))
		d++
	case sp.limit != nil:
		add(d, "Limit: offset %d, count %d", sp.limit.Offset, sp.limit.Count)
		d++
	}
	add(d, "SetOp: %s (estimated rows %d)", sp.op, sp.estRows())
	for i, p := range []relPlan{sp.left, sp.right} {
		conv := sp.lconv
		if i == 1 {
			conv = sp.rconv
		}
		dd := d + 1
		if conv != nil {
			texts := make([]string, len(conv))
			for j, x := range conv {
				texts[j] = x.String()
			}
			add(dd, "Project: %s", strings.Join(texts, ", "))
			dd++
		}
		p.explainTree(add, dd)
	}
}
