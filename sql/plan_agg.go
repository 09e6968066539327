package sql

import (
	"strings"

	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// scanReducible reports an aggregate query the scan answers (planScanAgg):
// no GROUP BY or HAVING, only count(*) and
// count and sum of bare integer and DOUBLE columns, and a WHERE whose every
// conjunct pushes down exactly. Zone maps then count and sum whole pages
// without decoding them, and a DOUBLE stored decimal-scaled sums as exact
// integers divided once per page, which no operator above the scan can
// match. FLOAT stays with the operators: the scan would sum it on its row
// path, building the very batches the operators read.
func scanReducible(env *stmtEnv, st *parser.Select, src *selectSource) bool {
	if src.tbl == nil || len(st.GroupBy) > 0 || st.Having != nil || st.Distinct {
		return false
	}
	ok := true
	check := func(e parser.Expr) {
		parser.Walk(e, func(x parser.Expr) bool {
			f, isCall := x.(*parser.FuncCall)
			if !ok || !isCall || !parser.IsAggregate(f.Name) {
				return ok
			}
			name := strings.ToLower(f.Name)
			switch {
			case f.Distinct:
				ok = false
			case name == "count" && f.Star:
			case (name == "count" || name == "sum") && len(f.Args) == 1:
				ref, isRef := f.Args[0].(*parser.ColumnRef)
				if !isRef {
					ok = false
					break
				}
				slot, err := src.sc.resolve(ref)
				if err != nil {
					ok = false
					break
				}
				t := src.sc.cols[slot].typ
				ok = t.IsInteger() || t.Kind == schema.Double
			default:
				ok = false
			}
			return false
		})
	}
	for _, it := range st.Items {
		if it.Star {
			return false
		}
		check(it.Expr)
	}
	for _, o := range st.OrderBy {
		check(o.Expr)
	}
	for _, c := range conjuncts(st.Where) {
		if pushOne(env, src.sc, c) == nil {
			return false
		}
	}
	return ok
}

// aggFuncs maps the dialect's aggregates (parser.IsAggregate) to the
// operator's. any_value is min, a value of the group and the same whatever
// order the rows come in; approx_count_distinct and ndv count the distinct
// values exactly.
var aggFuncs = map[string]exec.AggFunc{"count": exec.Count, "sum": exec.Sum, "min": exec.Min, "max": exec.Max, "avg": exec.Avg,
	"stddev": exec.StddevPop, "std": exec.StddevPop, "stddev_pop": exec.StddevPop, "stddev_samp": exec.StddevSamp,
	"variance": exec.VarPop, "var_pop": exec.VarPop, "variance_pop": exec.VarPop,
	"var_samp": exec.VarSamp, "variance_samp": exec.VarSamp,
	"group_concat": exec.GroupConcat, "any_value": exec.Min,
	"approx_count_distinct": exec.Count, "ndv": exec.Count, "max_by": exec.MaxBy, "min_by": exec.MinBy}

// isCountAgg reports an aggregate that counts, 0 (not NULL) over no row.
func isCountAgg(name string) bool {
	return aggFuncs[strings.ToLower(name)] == exec.Count
}

// planAggregate plans GROUP BY and the aggregates, resolving them (positions and aliases in GROUP BY, aliases
// in HAVING and ORDER BY, one aggregate per distinct call text) and returns
// the compiler of the expressions over the aggregation's output.
func (p *selectPlan) planAggregate(env *stmtEnv, st *parser.Select, src *selectSource, items []outItem, in *vcompiler) (*vcompiler, error) {
	a := &aggPlan{}
	p.agg = a
	var groupExprs []parser.Expr
	for _, g := range st.GroupBy {
		e := g
		if lit, ok := g.(*parser.IntLit); ok {
			if lit.Val < 1 || int(lit.Val) > len(items) {
				return nil, notFoundf("Unknown column '%d' in 'group statement'", lit.Val)
			}
			e = items[lit.Val-1].expr
		} else if ref, ok := g.(*parser.ColumnRef); ok && ref.Table == "" {
			if _, err := src.sc.resolve(ref); err != nil {
				for _, it := range items {
					if it.alias != "" && strings.EqualFold(it.alias, ref.Name) {
						e = it.expr
					}
				}
			}
		}
		if parser.ContainsAggregate(e) {
			return nil, invalidf("GROUP BY cannot contain aggregate functions: %s", parser.FormatExpr(e))
		}
		x, err := in.compile(e)
		if err != nil {
			return nil, err
		}
		a.groups = append(a.groups, len(a.pre))
		a.pre = append(a.pre, x)
		a.preNames = append(a.preNames, parser.FormatExpr(e))
		groupExprs = append(groupExprs, e)
	}
	nGroups := len(a.groups)
	var aggTexts []string
	var aggTypes []schema.Type
	sizes := parser.ExprSizes{}
	sameExpr := func(x, y parser.Expr) bool {
		rx, okX := x.(*parser.ColumnRef)
		ry, okY := y.(*parser.ColumnRef)
		if okX && okY {
			sx, errX := src.sc.resolve(rx)
			sy, errY := src.sc.resolve(ry)
			return errX == nil && errY == nil && sx == sy
		}
		// Asked of every node: comparing texts only of trees of the same
		// size keeps compiling linear (see aggregator.sameExpr).
		if sizes.Of(x) != sizes.Of(y) {
			return false
		}
		return parser.FormatExpr(x) == parser.FormatExpr(y)
	}
	post := newVCompiler(env, src.sc)
	inAlias := map[string]bool{}
	post.subst = func(e parser.Expr) (exec.Expr, bool, error) {
		if f, ok := e.(*parser.FuncCall); ok && parser.IsAggregate(f.Name) {
			text := parser.FormatExpr(f)
			for i, t := range aggTexts {
				if t == text {
					return &exec.ColumnRef{Index: nGroups + i, Name: text, Typ: aggTypes[i]}, true, nil
				}
			}
			ag, t, err := a.addAggregate(f, text, in)
			if err != nil {
				return nil, true, err
			}
			aggTexts = append(aggTexts, text)
			aggTypes = append(aggTypes, t)
			a.aggs = append(a.aggs, ag)
			return &exec.ColumnRef{Index: nGroups + len(a.aggs) - 1, Name: text, Typ: t}, true, nil
		}
		for i, g := range groupExprs {
			if sameExpr(e, g) {
				return &exec.ColumnRef{Index: i, Name: parser.FormatExpr(g), Typ: a.pre[i].Type()}, true, nil
			}
		}
		if f, ok := e.(*parser.FuncCall); ok && !parser.IsAggregate(f.Name) {
			// Checked before its arguments, which would otherwise fail
			// first as columns outside GROUP BY when the call is not a
			// function at all (an aggregate of another dialect).
			if err := checkKnownFunc(env, f); err != nil {
				return nil, true, err
			}
			return nil, false, nil
		}
		if ref, ok := e.(*parser.ColumnRef); ok {
			_, rerr := src.sc.resolve(ref)
			if rerr == nil {
				return nil, true, invalidf("'%s' must appear in the GROUP BY clause or be used in an aggregate function", parser.FormatExpr(ref))
			}
			// HAVING and ORDER BY may name a select item by its alias.
			key := strings.ToLower(ref.Name)
			if ref.Table == "" && !inAlias[key] {
				for _, it := range items {
					if it.alias != "" && strings.EqualFold(it.alias, ref.Name) {
						inAlias[key] = true
						x, err := post.compile(it.expr)
						delete(inAlias, key)
						return x, true, err
					}
				}
			}
			return nil, true, rerr
		}
		return nil, false, nil
	}
	return post, nil
}

// checkKnownFunc returns the row compiler's error for a call of a function
// it does not know, and nil for any other call, whatever its arguments: each
// argument is compiled as a NULL, so that only the name is checked.
func checkKnownFunc(env *stmtEnv, f *parser.FuncCall) error {
	c := newCompiler(env, &scope{})
	c.subst = func(e parser.Expr) (*compiled, bool, error) {
		if e == parser.Expr(f) {
			return nil, false, nil
		}
		return constant(nullType, schema.Null), true, nil
	}
	if _, err := c.compile(f); err != nil && isUnknownFunc(err) {
		return err
	}
	return nil
}

// addAggregate compiles one aggregate call's argument over the input and
// returns its description and result type:
// count BIGINT, sum BIGINT over integers, DECIMAL(38,s) over DECIMAL(p,s)
// and DOUBLE otherwise, avg DOUBLE, min and max the argument's type.
func (a *aggPlan) addAggregate(f *parser.FuncCall, text string, in *vcompiler) (exec.Aggregate, schema.Type, error) {
	name := strings.ToLower(f.Name)
	ag := exec.Aggregate{Func: aggFuncs[name], Distinct: f.Distinct || name == "approx_count_distinct" || name == "ndv", Name: text}
	for _, x := range f.Args {
		if parser.ContainsAggregate(x) {
			return ag, nullType, invalidf("aggregate functions cannot be nested: %s", text)
		}
	}
	if f.Star {
		if name != "count" || f.Distinct {
			return ag, nullType, invalidf("%s(*) is not supported; only count(*)", name)
		}
		ag.Func = exec.CountStar
		return ag, bigintType, nil
	}
	switch name {
	case "group_concat":
		return a.addGroupConcat(f, ag, in)
	case "max_by", "min_by":
		return a.addMaxBy(f, ag, in)
	}
	if len(f.Args) == 0 || (len(f.Args) > 1 && !(name == "count" && f.Distinct)) {
		return ag, nullType, invalidf("%s() takes one argument", name)
	}
	var x exec.Expr
	if len(f.Args) > 1 {
		// count(DISTINCT a, b, ...) counts the distinct tuples.
		k := &tupleKey{}
		texts := make([]string, len(f.Args))
		for i, arg := range f.Args {
			ax, err := in.compile(arg)
			if err != nil {
				return ag, nullType, err
			}
			k.args = append(k.args, ax)
			texts[i] = parser.FormatExpr(arg)
		}
		k.text = strings.Join(texts, ", ")
		ag.Arg = len(a.pre)
		a.pre = append(a.pre, k)
		a.preNames = append(a.preNames, k.String())
		return ag, bigintType, nil
	}
	x, err := in.compile(f.Args[0])
	if err != nil {
		return ag, nullType, err
	}
	t := x.Type()
	var out schema.Type
	switch name {
	case "count":
		out = bigintType
	case "sum", "avg":
		switch {
		case isIntLike(t):
			if x, err = in.convert(x, bigintType); err != nil {
				return ag, nullType, err
			}
			out = bigintType
		case t.Kind == schema.Decimal:
			// Exact, through decimal.Acc.
			rt := decimal.SumType(t.Decimal())
			if name == "avg" {
				rt = decimal.AvgType(t.Decimal())
			}
			out = schema.DecimalType(rt.Precision, rt.Scale)
		case isFloat(t) || t.IsString() || isNullType(t):
			if x, err = in.convert(x, doubleType); err != nil {
				return ag, nullType, err
			}
			out = doubleType
		default:
			return ag, nullType, invalidf("%s() does not take a %s argument", name, t)
		}
		if name == "avg" && out.Kind != schema.Decimal {
			out = doubleType
		}
	case "stddev", "std", "stddev_pop", "stddev_samp", "variance", "var_pop", "variance_pop", "var_samp", "variance_samp":
		// DOUBLE whatever the numeric type, as Doris computes them.
		if !(isIntLike(t) || t.Kind == schema.Decimal || isFloat(t) || t.IsString() || isNullType(t)) {
			return ag, nullType, invalidf("%s() does not take a %s argument", name, t)
		}
		if x, err = in.convert(x, doubleType); err != nil {
			return ag, nullType, err
		}
		out = doubleType
	case "approx_count_distinct", "ndv":
		out = bigintType
	case "min", "max", "any_value":
		if isNullType(t) {
			// Of nothing but NULLs: NULL, typed as its argument.
			if x, err = in.convert(x, bigintType); err != nil {
				return ag, nullType, err
			}
		}
		out = x.Type()
	}
	ag.Arg = len(a.pre)
	a.pre = append(a.pre, x)
	a.preNames = append(a.preNames, parser.FormatExpr(f.Args[0]))
	return ag, out, nil
}

// addGroupConcat compiles group_concat(x [, sep]): x as a string, sep a
// constant string (", " when omitted, as Doris has it).
func (a *aggPlan) addGroupConcat(f *parser.FuncCall, ag exec.Aggregate, in *vcompiler) (exec.Aggregate, schema.Type, error) {
	if len(f.Args) < 1 || len(f.Args) > 2 {
		return ag, nullType, invalidf("group_concat() takes one or two arguments")
	}
	ag.Sep = ", "
	if len(f.Args) == 2 {
		lit, ok := f.Args[1].(*parser.StringLit)
		if !ok {
			return ag, nullType, invalidf("the separator of group_concat() must be a string literal")
		}
		ag.Sep = lit.Val
	}
	x, err := in.compile(f.Args[0])
	if err != nil {
		return ag, nullType, err
	}
	if !x.Type().IsString() {
		if x, err = in.convert(x, stringType); err != nil {
			return ag, nullType, err
		}
	}
	ag.Arg = len(a.pre)
	a.pre = append(a.pre, x)
	a.preNames = append(a.preNames, parser.FormatExpr(f.Args[0]))
	return ag, stringType, nil
}

// addMaxBy compiles max_by(x, y) and min_by(x, y): x of the row of the
// largest or smallest y, in x's type.
func (a *aggPlan) addMaxBy(f *parser.FuncCall, ag exec.Aggregate, in *vcompiler) (exec.Aggregate, schema.Type, error) {
	if len(f.Args) != 2 {
		return ag, nullType, invalidf("%s() takes two arguments", f.Name)
	}
	if f.Distinct {
		return ag, nullType, invalidf("%s() does not take DISTINCT", f.Name)
	}
	var xs [2]exec.Expr
	for i, arg := range f.Args {
		x, err := in.compile(arg)
		if err != nil {
			return ag, nullType, err
		}
		if isNullType(x.Type()) {
			// Of nothing but NULLs: NULL, typed as a BIGINT.
			if x, err = in.convert(x, bigintType); err != nil {
				return ag, nullType, err
			}
		}
		xs[i] = x
		a.pre = append(a.pre, x)
		a.preNames = append(a.preNames, parser.FormatExpr(arg))
	}
	ag.Arg, ag.By = len(a.pre)-2, len(a.pre)-1
	return ag, xs[0].Type(), nil
}
