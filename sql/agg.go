package sql

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// aggCall is one aggregate function call of a query: count, sum, min, max
// or avg, with its arguments compiled over input rows.
type aggCall struct {
	name     string
	star     bool
	distinct bool
	args     []*compiled
	t        schema.Type // result type
	text     string
	// intCol names the argument when it is a bare column of an integer
	// type: such counts and sums are reduced inside the scan.
	intCol string
}

// aggState accumulates one aggregate over one group.
type aggState struct {
	n int64
	// i and hi are an integer sum as 128 bits (i the low 64): only the
	// final sum must fit a BIGINT, whatever the order of the rows.
	i, hi int64
	// dec is a DECIMAL sum, exact whatever the order of the rows.
	dec  decimal.Acc
	f    float64
	v    schema.Value
	has  bool
	seen map[string]bool
}

// aggregator runs GROUP BY and the aggregates. Its output rows ("post
// rows") hold the GROUP BY values followed by the aggregate results; select
// items, HAVING and ORDER BY are compiled over them by a compiler whose
// subst maps aggregate calls and GROUP BY expressions to those slots.
type aggregator struct {
	base  *compiler
	post  *compiler
	items []outItem
	// inAlias guards against an alias whose expression names itself.
	inAlias    map[string]bool
	groupExprs []parser.Expr
	groupKeys  []*compiled
	aggs       []*aggCall
	// sizes spares sameExpr formatting expressions that cannot match.
	sizes parser.ExprSizes
}

type group struct {
	keys   []schema.Value
	states []aggState
}

func slotRef(slot int, t schema.Type) *compiled {
	return &compiled{t: t, eval: func(row []schema.Value) (schema.Value, error) { return row[slot], nil }}
}

// sameExpr reports whether two expressions denote the same value: column
// references resolving to the same column, or the same canonical text.
func (ag *aggregator) sameExpr(a, b parser.Expr) bool {
	ra, okA := a.(*parser.ColumnRef)
	rb, okB := b.(*parser.ColumnRef)
	if okA && okB {
		sa, errA := ag.base.sc.resolve(ra)
		sb, errB := ag.base.sc.resolve(rb)
		return errA == nil && errB == nil && sa == sb
	}
	// sameExpr is asked of every node of an expression: comparing texts
	// only of trees of the same size keeps that linear (the nodes of one
	// size head disjoint subtrees).
	if ag.sizes.Of(a) != ag.sizes.Of(b) {
		return false
	}
	return parser.FormatExpr(a) == parser.FormatExpr(b)
}

func (ag *aggregator) subst(e parser.Expr) (*compiled, bool, error) {
	if f, ok := e.(*parser.FuncCall); ok && parser.IsAggregate(f.Name) {
		slot, t, err := ag.addAgg(f)
		if err != nil {
			return nil, true, err
		}
		return slotRef(slot, t), true, nil
	}
	for i, g := range ag.groupExprs {
		if ag.sameExpr(e, g) {
			return slotRef(i, ag.groupKeys[i].t), true, nil
		}
	}
	if ref, ok := e.(*parser.ColumnRef); ok {
		if _, err := ag.base.sc.resolve(ref); err != nil {
			// HAVING and ORDER BY may name a select item by its alias.
			if ref.Table == "" && !ag.inAlias[strings.ToLower(ref.Name)] {
				for _, it := range ag.items {
					if it.alias != "" && strings.EqualFold(it.alias, ref.Name) {
						ag.inAlias[strings.ToLower(ref.Name)] = true
						x, err := ag.post.compile(it.expr)
						delete(ag.inAlias, strings.ToLower(ref.Name))
						return x, true, err
					}
				}
			}
			return nil, true, err
		}
		return nil, true, invalidf("'%s' must appear in the GROUP BY clause or be used in an aggregate function", parser.FormatExpr(ref))
	}
	return nil, false, nil
}

func (ag *aggregator) addAgg(f *parser.FuncCall) (int, schema.Type, error) {
	text := parser.FormatExpr(f)
	for i, a := range ag.aggs {
		if a.text == text {
			return len(ag.groupExprs) + i, a.t, nil
		}
	}
	call := &aggCall{name: strings.ToLower(f.Name), star: f.Star, distinct: f.Distinct, text: text}
	for _, a := range f.Args {
		if parser.ContainsAggregate(a) {
			return 0, nullType, invalidf("aggregate functions cannot be nested: %s", text)
		}
	}
	if f.Star && call.name != "count" {
		return 0, nullType, invalidf("%s(*) is not supported; only count(*)", call.name)
	}
	if !f.Star && (len(f.Args) == 0 || (len(f.Args) > 1 && !(call.name == "count" && f.Distinct))) {
		return 0, nullType, invalidf("%s() takes one argument", call.name)
	}
	args, err := ag.base.compileAll(f.Args)
	if err != nil {
		return 0, nullType, err
	}
	if len(f.Args) == 1 && !f.Star {
		if ref, ok := f.Args[0].(*parser.ColumnRef); ok {
			if slot, err := ag.base.sc.resolve(ref); err == nil && ag.base.sc.cols[slot].typ.IsInteger() {
				call.intCol = ag.base.sc.cols[slot].name
			}
		}
	}
	switch call.name {
	case "count":
		call.t = bigintType
	case "sum", "avg":
		a := args[0]
		switch {
		case isIntLike(a.t):
			if args[0], err = ag.base.convert(a, bigintType); err != nil {
				return 0, nullType, err
			}
			call.t = bigintType
		case a.t.Kind == schema.Decimal:
			rt := decimal.SumType(a.t.Decimal())
			if call.name == "avg" {
				rt = decimal.AvgType(a.t.Decimal())
			}
			call.t = schema.DecimalType(rt.Precision, rt.Scale)
		case isFloat(a.t) || a.t.IsString() || isNullType(a.t):
			if args[0], err = ag.base.convert(a, doubleType); err != nil {
				return 0, nullType, err
			}
			call.t = doubleType
		default:
			return 0, nullType, invalidf("%s() does not take a %s argument", call.name, a.t)
		}
		if call.name == "avg" && call.t.Kind != schema.Decimal {
			call.t = doubleType
		}
	case "min", "max":
		call.t = args[0].t
	}
	call.args = args
	ag.aggs = append(ag.aggs, call)
	return len(ag.groupExprs) + len(ag.aggs) - 1, call.t, nil
}

// add folds one input row into a group's state of call.
func (call *aggCall) add(st *aggState, row []schema.Value) error {
	if call.star {
		st.n++
		return nil
	}
	vals := make([]schema.Value, len(call.args))
	for i, a := range call.args {
		v, err := a.eval(row)
		if err != nil {
			return err
		}
		if v.IsNull() {
			return nil
		}
		vals[i] = v
	}
	if call.distinct {
		k := encodeKey(vals)
		if st.seen == nil {
			st.seen = map[string]bool{}
		}
		if st.seen[k] {
			return nil
		}
		st.seen[k] = true
	}
	v := vals[0]
	at := call.args[0].t
	switch call.name {
	case "count":
		st.n++
	case "sum":
		if at.Kind == schema.Decimal {
			st.dec.Add(v.Decimal())
		} else if v.Kind == schema.FloatValue {
			st.f += v.Float
		} else {
			lo, c := bits.Add64(uint64(st.i), uint64(v.Int), 0)
			st.i, st.hi = int64(lo), st.hi+int64(c)+v.Int>>63
		}
	case "avg":
		if at.Kind == schema.Decimal {
			st.dec.Add(v.Decimal())
		} else {
			st.f += toFloat(v, at)
		}
		st.n++
	case "min", "max":
		if !st.has {
			st.v = v
		} else {
			c := compareIn(at)(v, st.v)
			if (call.name == "min" && c < 0) || (call.name == "max" && c > 0) {
				st.v = v
			}
		}
	}
	st.has = true
	return nil
}

// result is the aggregate's value for a group; a sum or mean beyond its
// type is an error.
func (call *aggCall) result(st *aggState) (schema.Value, error) {
	switch call.name {
	case "count":
		return schema.IntVal(st.n), nil
	case "sum":
		if !st.has {
			return schema.Null, nil
		}
		switch call.t.Kind {
		case schema.Double:
			return schema.FloatVal(st.f), nil
		case schema.Decimal:
			n, ok := st.dec.Total(call.t.Decimal())
			if !ok {
				return schema.Null, invalidf("DECIMAL value is out of range in '%s'", call.text)
			}
			return schema.DecimalVal(n), nil
		}
		if st.hi != st.i>>63 {
			return schema.Null, invalidf("BIGINT value is out of range in '%s'", call.text)
		}
		return schema.IntVal(st.i), nil
	case "avg":
		if st.n == 0 {
			return schema.Null, nil
		}
		if call.t.Kind == schema.Decimal {
			n, ok := st.dec.Avg(st.n, call.args[0].t.Scale, call.t.Decimal())
			if !ok {
				return schema.Null, invalidf("DECIMAL value is out of range in '%s'", call.text)
			}
			return schema.DecimalVal(n), nil
		}
		return schema.FloatVal(st.f / float64(st.n)), nil
	}
	if !st.has {
		return schema.Null, nil
	}
	return st.v, nil
}

// encodeKey encodes values into a string that is equal exactly when the
// values are (NULLs equal to each other).
func encodeKey(vals []schema.Value) string {
	var b []byte
	for _, v := range vals {
		switch v.Kind {
		case schema.NullValue:
			b = append(b, 'N')
		case schema.IntValue:
			b = append(b, 'I')
			b = binary.BigEndian.AppendUint64(b, uint64(v.Int))
		case schema.FloatValue:
			f := v.Float
			if f == 0 {
				f = 0 // -0 groups with 0
			}
			b = append(b, 'F')
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(f))
		case schema.DecimalValue:
			b = append(b, 'D')
			b = binary.BigEndian.AppendUint64(b, uint64(v.Hi))
			b = binary.BigEndian.AppendUint64(b, uint64(v.Int))
		case schema.BytesValue:
			b = append(b, 'B')
			b = binary.BigEndian.AppendUint32(b, uint32(len(v.Bytes)))
			b = append(b, v.Bytes...)
		}
	}
	return string(b)
}

// pushedAggregate says whether an aggregate query can be reduced inside
// the scan (query.Scan.Aggregate): no GROUP BY, a table source, a WHERE
// whose every conjunct pushes down exactly, and only count(*), and count
// and sum of bare integer columns, which the scan computes exactly. It
// returns the scan's request.
func pushedAggregate(env *stmtEnv, st *parser.Select, src *selectSource, ag *aggregator) (query.Request, bool) {
	if src.tbl == nil || len(st.GroupBy) > 0 {
		return query.Request{}, false
	}
	cols := []string{}
	for _, a := range ag.aggs {
		switch {
		case a.distinct:
			return query.Request{}, false
		case a.name == "count" && a.star:
		case (a.name == "count" || a.name == "sum") && a.intCol != "":
			if !slices.Contains(cols, a.intCol) {
				cols = append(cols, a.intCol)
			}
		default:
			return query.Request{}, false
		}
	}
	for _, c := range conjuncts(st.Where) {
		if pushOne(env, src.sc, c) == nil {
			return query.Request{}, false
		}
	}
	return query.Request{Now: env.now, Columns: cols, Filter: pushdown(env, src.sc, st.Where)}, true
}

// reduceInScan fills the states of the one group of a pushed aggregate
// from the scan's totals; ok is false when a sum overflows BIGINT, which
// the row path then reports.
func reduceInScan(ctx context.Context, src *selectSource, req query.Request, ag *aggregator, states []aggState) (bool, error) {
	tot, err := src.tbl.Aggregate(ctx, req)
	if errors.Is(err, rowttl.ErrInvalidArgument) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for i, a := range ag.aggs {
		if a.star {
			states[i].n = tot.Rows
			continue
		}
		sum := tot.Sums[slices.Index(req.Columns, a.intCol)]
		switch a.name {
		case "count":
			states[i].n = sum.Count
		case "sum":
			states[i].i, states[i].hi, states[i].has = sum.Int, sum.Int>>63, sum.Count > 0
		}
	}
	return true, nil
}

func (s *Session) runAggregate(ctx context.Context, env *stmtEnv, st *parser.Select, src *selectSource, items []outItem, base *compiler, where *compiled) (*rowSet, error) {
	ag := &aggregator{base: base, items: items, inAlias: map[string]bool{}, sizes: parser.ExprSizes{}}
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
		x, err := base.compile(e)
		if err != nil {
			return nil, err
		}
		ag.groupExprs = append(ag.groupExprs, e)
		ag.groupKeys = append(ag.groupKeys, x)
	}
	post := newCompiler(env, src.sc)
	post.subst = ag.subst
	ag.post = post
	rs := &rowSet{}
	outs := make([]*compiled, len(items))
	var err error
	for i, it := range items {
		if outs[i], err = post.compile(it.expr); err != nil {
			return nil, err
		}
		rs.names = append(rs.names, it.name)
		rs.types = append(rs.types, outs[i].t)
	}
	var having *compiled
	if st.Having != nil {
		if having, err = post.compile(st.Having); err != nil {
			return nil, err
		}
		if having, err = post.asBool(having); err != nil {
			return nil, err
		}
	}
	keys, extra, err := compileOrder(st, items, post)
	if err != nil {
		return nil, err
	}

	groups := map[string]*group{}
	var order []*group
	newGroup := func(k []schema.Value) *group {
		g := &group{keys: append([]schema.Value(nil), k...), states: make([]aggState, len(ag.aggs))}
		order = append(order, g)
		return g
	}
	keyVals := make([]schema.Value, len(ag.groupKeys))
	pushed := false
	if req, ok := pushedAggregate(env, st, src, ag); ok {
		states := make([]aggState, len(ag.aggs))
		if pushed, err = reduceInScan(ctx, src, req, ag, states); err != nil {
			return nil, err
		}
		if pushed {
			newGroup(nil).states = states
		}
	}
	if !pushed {
		err = s.scanRows(ctx, env, src, base, st.Where, func(row []schema.Value) (bool, error) {
			if keep, err := where.keeps(row); !keep || err != nil {
				return err == nil, err
			}
			for i, x := range ag.groupKeys {
				v, err := x.eval(row)
				if err != nil {
					return false, err
				}
				keyVals[i] = v
			}
			k := encodeKey(keyVals)
			g := groups[k]
			if g == nil {
				g = newGroup(keyVals)
				groups[k] = g
			}
			for i, call := range ag.aggs {
				if err := call.add(&g.states[i], row); err != nil {
					return false, err
				}
			}
			return true, nil
		})
	}
	if err != nil {
		return nil, err
	}
	if len(st.GroupBy) == 0 && len(order) == 0 {
		newGroup(nil)
	}
	var rows [][]schema.Value
	for _, g := range order {
		post := make([]schema.Value, len(ag.groupKeys)+len(ag.aggs))
		copy(post, g.keys)
		for i, call := range ag.aggs {
			v, err := call.result(&g.states[i])
			if err != nil {
				return nil, err
			}
			post[len(ag.groupKeys)+i] = v
		}
		if having != nil {
			v, err := having.eval(post)
			if err != nil {
				return nil, err
			}
			if v.IsNull() || v.Int == 0 {
				continue
			}
		}
		out, err := projectRow(post, outs, extra)
		if err != nil {
			return nil, err
		}
		rows = append(rows, out)
	}
	rs.finish(rows, len(outs), extra, keys, st)
	return rs, nil
}
