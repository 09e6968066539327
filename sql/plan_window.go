package sql

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// Window functions run after WHERE (and, once a block aggregates, after
// GROUP BY and HAVING), before ORDER BY and LIMIT: a Project appends the
// PARTITION BY, ORDER BY and argument expressions to the rows, one
// exec.NewWindow computes every window function of the block, and the
// select items read its output columns.

// windowPlan is the window functions of a query block.
type windowPlan struct {
	// args are the expressions the specs read, appended to the input
	// columns; a spec's Arg, Partition and Order index args until build
	// moves them past the input's width.
	args  []exec.Expr
	specs []exec.WindowSpec
	// outs are the references to each spec's output column, pointed at it
	// by build.
	outs  [][]*exec.ColumnRef
	texts []string
	// defaults are the constant defaults of lag and lead (nil: NULL),
	// made into arrays by build.
	defaults []*exec.Literal
}

// window compiles a window function call into a reference to its output.
func (wp *windowPlan) window(c *vcompiler, st *parser.Select, w *parser.WindowFunc) (exec.Expr, error) {
	spec, err := st.ResolveWindow(w.Over)
	if err != nil {
		return nil, err
	}
	arg := func(e parser.Expr) (int, exec.Expr, error) {
		x, err := c.compile(e)
		if err != nil {
			return 0, nil, err
		}
		wp.args = append(wp.args, x)
		return len(wp.args) - 1, x, nil
	}
	var ws exec.WindowSpec
	ws.Name = parser.FormatExpr(w)
	for _, p := range spec.PartitionBy {
		i, _, err := arg(p)
		if err != nil {
			return nil, err
		}
		ws.Partition = append(ws.Partition, i)
	}
	for _, o := range spec.OrderBy {
		i, _, err := arg(o.Expr)
		if err != nil {
			return nil, err
		}
		k := exec.SortKey{Column: i, Desc: o.Desc, NullsFirst: !o.Desc}
		switch o.Nulls {
		case parser.NullsFirst:
			k.NullsFirst = true
		case parser.NullsLast:
			k.NullsFirst = false
		}
		ws.Order = append(ws.Order, k)
	}
	nargs := func(lo, hi int) error {
		if len(w.Args) < lo || len(w.Args) > hi {
			return invalidf("Incorrect parameter count in the call to native function '%s'", w.Name)
		}
		return nil
	}
	var typ schema.Type
	var def *exec.Literal
	switch strings.ToLower(w.Name) {
	case "row_number", "rank", "dense_rank":
		if err := nargs(0, 0); err != nil {
			return nil, err
		}
		ws.Func = map[string]exec.WindowFunc{"row_number": exec.RowNumber, "rank": exec.Rank, "dense_rank": exec.DenseRank}[strings.ToLower(w.Name)]
		typ = bigintType
	case "ntile":
		if err := nargs(1, 1); err != nil {
			return nil, err
		}
		n, ok := w.Args[0].(*parser.IntLit)
		if !ok || n.Val < 1 {
			return nil, invalidf("the argument of ntile() must be a positive integer constant")
		}
		ws.Func, ws.Offset, typ = exec.NTile, n.Val, bigintType
	case "percent_rank", "cume_dist":
		if err := nargs(0, 0); err != nil {
			return nil, err
		}
		ws.Func, typ = exec.PercentRank, doubleType
		if strings.EqualFold(w.Name, "cume_dist") {
			ws.Func = exec.CumeDist
		}
	case "first_value", "last_value", "nth_value":
		name := strings.ToLower(w.Name)
		ws.Func = map[string]exec.WindowFunc{"first_value": exec.FirstValue, "last_value": exec.LastValue, "nth_value": exec.NthValue}[name]
		if name == "nth_value" {
			if err := nargs(2, 2); err != nil {
				return nil, err
			}
			n, ok := w.Args[1].(*parser.IntLit)
			if !ok || n.Val < 1 {
				return nil, invalidf("the row of nth_value() must be a positive integer constant")
			}
			ws.Offset = n.Val
		} else if err := nargs(1, 1); err != nil {
			return nil, err
		}
		i, x, err := arg(w.Args[0])
		if err != nil {
			return nil, err
		}
		ws.Arg, typ = i, x.Type()
		if ws.Frame, err = wp.windowFrame(spec, ws.Order); err != nil {
			return nil, err
		}
	case "lag", "lead":
		if err := nargs(1, 3); err != nil {
			return nil, err
		}
		ws.Func = exec.Lag
		if strings.EqualFold(w.Name, "lead") {
			ws.Func = exec.Lead
		}
		i, x, err := arg(w.Args[0])
		if err != nil {
			return nil, err
		}
		ws.Arg, typ = i, x.Type()
		ws.Offset = 1
		if len(w.Args) > 1 {
			n, ok := w.Args[1].(*parser.IntLit)
			if !ok || n.Val < 0 {
				return nil, invalidf("the offset of %s() must be a non-negative integer constant", w.Name)
			}
			ws.Offset = n.Val
		}
		if len(w.Args) > 2 {
			d, err := c.compile(w.Args[2])
			if err != nil {
				return nil, err
			}
			if d, err = c.convert(d, typ); err != nil {
				return nil, err
			}
			l, ok := d.(*exec.Literal)
			if !ok {
				return nil, notYet("a default of " + w.Name + "() that is not a constant")
			}
			if !l.Val.IsNull() {
				def = l
			}
		}
	case "count", "sum", "min", "max", "avg",
		"stddev", "std", "stddev_pop", "stddev_samp", "variance", "var_pop", "variance_pop", "var_samp", "variance_samp":
		ws.Func = exec.WindowAgg
		name := strings.ToLower(w.Name)
		if w.Star {
			if name != "count" {
				return nil, invalidf("%s(*) is not an aggregate", name)
			}
			ws.Agg, typ = exec.CountStar, bigintType
			// count(*) counts the rows of its frame too.
			if ws.Frame, err = wp.windowFrame(spec, ws.Order); err != nil {
				return nil, err
			}
			break
		}
		if err := nargs(1, 1); err != nil {
			return nil, err
		}
		x, err := c.compile(w.Args[0])
		if err != nil {
			return nil, err
		}
		t := x.Type()
		switch name {
		case "stddev", "std", "stddev_pop", "stddev_samp", "variance", "var_pop", "variance_pop", "var_samp", "variance_samp":
			// DOUBLE over every numeric type, as the GROUP BY forms.
			if !(isIntLike(t) || t.Kind == schema.Decimal || isFloat(t) || t.IsString() || isNullType(t)) {
				return nil, invalidf("%s() does not take a %s argument", name, t)
			}
			if x, err = c.convert(x, doubleType); err != nil {
				return nil, err
			}
			ws.Agg, typ = aggFuncs[name], doubleType
		case "count":
			ws.Agg, typ = exec.Count, bigintType
		case "min", "max":
			ws.Agg, typ = exec.Min, t
			if name == "max" {
				ws.Agg = exec.Max
			}
		case "sum", "avg":
			ws.Agg = exec.Sum
			if name == "avg" {
				ws.Agg = exec.Avg
			}
			switch {
			case t.Kind == schema.Decimal:
				s := t.Scale
				if name == "avg" {
					s = max(s, 4)
				}
				typ = schema.DecimalType(38, s)
			case isIntLike(t) && name == "sum":
				typ = bigintType
			case isIntLike(t) || isFloat(t):
				typ = doubleType
			default:
				if x, err = c.convert(x, doubleType); err != nil {
					return nil, err
				}
				typ = doubleType
			}
		}
		wp.args = append(wp.args, x)
		ws.Arg = len(wp.args) - 1
		if ws.Frame, err = wp.windowFrame(spec, ws.Order); err != nil {
			return nil, err
		}
	default:
		return nil, notYet("the window function " + w.Name + "()")
	}
	ref := &exec.ColumnRef{Index: -1, Name: ws.Name, Typ: typ}
	wp.specs = append(wp.specs, ws)
	wp.defaults = append(wp.defaults, def)
	wp.outs = append(wp.outs, []*exec.ColumnRef{ref})
	wp.texts = append(wp.texts, ws.Name)
	return ref, nil
}

// windowFrame translates a frame clause (nil: SQL's default). A RANGE
// frame with an offset measures the one ORDER BY key, which must be a
// number (DECIMAL included) or a DATE (its offset in days).
func (wp *windowPlan) windowFrame(spec *parser.WindowSpec, order []exec.SortKey) (*exec.WindowFrame, error) {
	f := spec.Frame
	if f == nil {
		return nil, nil
	}
	bound := func(b parser.FrameBound) exec.FrameBound {
		switch b.Kind {
		case parser.FrameUnboundedPreceding:
			return exec.FrameBound{Kind: exec.UnboundedPreceding}
		case parser.FramePreceding:
			return exec.FrameBound{Kind: exec.Preceding, Offset: b.N}
		case parser.FrameCurrentRow:
			return exec.FrameBound{Kind: exec.CurrentRow}
		case parser.FrameFollowing:
			return exec.FrameBound{Kind: exec.Following, Offset: b.N}
		}
		return exec.FrameBound{Kind: exec.UnboundedFollowing}
	}
	fr := &exec.WindowFrame{Start: bound(f.Start), End: bound(f.End), Range: f.Unit == parser.FrameRange}
	if !fr.Range {
		return fr, nil
	}
	if fr.Start.Kind == exec.UnboundedPreceding && fr.End.Kind == exec.CurrentRow && len(order) > 0 {
		return nil, nil // the default, which EXPLAIN does not spell out
	}
	if fr.Start.Kind == exec.Following || fr.End.Kind == exec.Preceding {
		return nil, notYet("a RANGE frame starting after or ending before the current row")
	}
	if fr.Start.Kind == exec.Preceding || fr.End.Kind == exec.Following {
		if len(order) != 1 {
			return nil, invalidf("a RANGE frame with an offset needs exactly one ORDER BY expression")
		}
		t := wp.args[order[0].Column].Type()
		switch {
		case t.Kind == schema.Datetime || t.Kind == schema.TimestampTZ:
			return nil, notYet("a RANGE frame with an offset over a " + t.String() + " ORDER BY key")
		case !t.IsInteger() && t.Kind != schema.Date && t.Kind != schema.Decimal && !isFloat(t):
			return nil, invalidf("a RANGE frame with an offset needs a numeric or date ORDER BY expression, not %s", t)
		}
	}
	return fr, nil
}

// build appends the window columns to op.
func (wp *windowPlan) build(env *exec.Env, op exec.Operator) (exec.Operator, error) {
	s := op.Schema()
	w := len(s)
	exprs := make([]exec.Expr, 0, w+len(wp.args))
	names := make([]string, 0, w+len(wp.args))
	for i, c := range s {
		exprs = append(exprs, &exec.ColumnRef{Index: i, Name: c.Name, Typ: c.Type})
		names = append(names, c.Name)
	}
	for i, a := range wp.args {
		exprs = append(exprs, a)
		names = append(names, fmt.Sprintf("w%d", i))
	}
	pre, err := exec.NewProject(env, op, exprs, names)
	if err != nil {
		op.Close()
		return nil, err
	}
	specs := make([]exec.WindowSpec, len(wp.specs))
	for i, sp := range wp.specs {
		sp.Arg += w
		sp.Partition = append([]int(nil), sp.Partition...)
		for j := range sp.Partition {
			sp.Partition[j] += w
		}
		sp.Order = append([]exec.SortKey(nil), sp.Order...)
		for j := range sp.Order {
			sp.Order[j].Column += w
		}
		if d := wp.defaults[i]; d != nil {
			b := array.NewBuilder(env.Mem, d.Typ.Arrow())
			schema.AppendValue(b, d.Val)
			sp.Default = b.NewArray()
			b.Release()
		}
		specs[i] = sp
		for _, r := range wp.outs[i] {
			r.Index = w + len(wp.args) + i
		}
	}
	out, err := exec.NewWindow(env, pre, specs)
	// NewWindow holds its own reference to each default.
	for _, sp := range specs {
		if sp.Default != nil {
			sp.Default.Release()
		}
	}
	if err != nil {
		pre.Close()
		return nil, err
	}
	os := out.Schema()
	for i, r := range wp.outs {
		if got := os[w+len(wp.args)+i].Type; !arrowEqual(got, r[0].Typ) {
			out.Close()
			return nil, fmt.Errorf("window %s: planned %s, computed %s", wp.texts[i], r[0].Typ, got)
		}
	}
	return out, nil
}

func (wp *windowPlan) explain(add explainFunc, d int) {
	var parts []string
	for i, sp := range wp.specs {
		text := wp.texts[i]
		var over []string
		if len(sp.Partition) > 0 {
			ps := make([]string, len(sp.Partition))
			for j, p := range sp.Partition {
				ps[j] = wp.args[p].String()
			}
			over = append(over, "partition by "+strings.Join(ps, ", "))
		}
		if len(sp.Order) > 0 {
			os := make([]string, len(sp.Order))
			for j, o := range sp.Order {
				os[j] = wp.args[o.Column].String()
				if o.Desc {
					os[j] += " DESC"
				}
			}
			over = append(over, "order by "+strings.Join(os, ", "))
		}
		if sp.Frame != nil {
			over = append(over, sp.Frame.String())
		}
		parts = append(parts, fmt.Sprintf("%s [%s]", text, strings.Join(over, "; ")))
	}
	add(d, "Window: %s", strings.Join(parts, ", "))
}
