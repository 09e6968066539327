package sql

import (
	"encoding/binary"
	"math"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// rowExpr is an expression the vectorised compiler has no kernel for (a
// function such as abs(), an expression deeper or larger than the kernels
// are built for), evaluated inside the vectorised plan by the row
// compiler (eval.go) one row at a time over each batch. It keeps the row
// compiler's values and errors, so that no SELECT needs another engine.
type rowExpr struct {
	x *compiled
	// ins are the inputs x reads, each the value of row slot slots[i]
	// of a row of width values.
	ins   []exec.Expr
	slots []int
	width int
	text  string
}

// rowFallback reports whether err asks for e to be evaluated by the row
// compiler: the vectorised compiler has no kernel for it (a reason
// without an error) and e reads nothing only the planner can place
// (subqueries, window functions; aggregates only where an aggregation's
// output substitutes them).
func (c *vcompiler) rowFallback(e parser.Expr, err error) bool {
	re, ok := err.(*rowEngineError)
	if !ok || re.err != nil || c.sc == nil {
		return false
	}
	plain := true
	parser.Walk(e, func(x parser.Expr) bool {
		switch f := x.(type) {
		case *parser.SubqueryExpr, *parser.InSubquery, *parser.ExistsExpr, *parser.QuantifiedCmp, *parser.WindowFunc:
			plain = false
		case *parser.FuncCall:
			if parser.IsAggregate(f.Name) && c.subst == nil {
				plain = false
			}
		}
		return plain
	})
	return plain
}

// compileRow compiles e with the row compiler into a rowExpr. Over an
// aggregation's output, what the substitution replaces (aggregates, group
// keys, aliases) are inputs compiled as kernels.
func (c *vcompiler) compileRow(e parser.Expr) (exec.Expr, error) {
	r := &rowExpr{text: parser.FormatExpr(e)}
	rc := newCompiler(c.env, c.sc)
	if c.subst != nil {
		rc = newCompiler(c.env, nil)
		rc.subst = func(e parser.Expr) (*compiled, bool, error) {
			x, ok, err := c.subst(e)
			if !ok || err != nil {
				return nil, ok, err
			}
			slot := len(r.ins)
			r.ins = append(r.ins, x)
			r.slots = append(r.slots, slot)
			return &compiled{t: x.Type(), eval: func(row []schema.Value) (schema.Value, error) { return row[slot], nil }}, true, nil
		}
	}
	x, err := rc.compile(e)
	if err != nil {
		return nil, err
	}
	if x.folded {
		// A constant is a literal, as compileVec folds it: callers such
		// as IN lists expect one.
		v, err := x.eval(nil)
		if err != nil {
			return nil, err
		}
		return c.lit(x.t, v), nil
	}
	r.x = x
	if c.subst != nil {
		r.width = len(r.ins)
		return r, nil
	}
	r.width = len(c.sc.cols)
	used := make([]int, 0, len(rc.used))
	for slot := range rc.used {
		used = append(used, slot)
	}
	sort.Ints(used)
	for _, slot := range used {
		col := c.sc.cols[slot]
		ref := &exec.ColumnRef{Index: -1, Name: col.name, Typ: col.typ}
		c.refs[slot] = append(c.refs[slot], ref)
		r.ins = append(r.ins, ref)
		r.slots = append(r.slots, slot)
	}
	return r, nil
}

func (r *rowExpr) Type() schema.Type { return r.x.t }

// String marks the expression as evaluated row by row, for EXPLAIN.
func (r *rowExpr) String() string { return "row(" + r.text + ")" }

func (r *rowExpr) Eval(env *exec.Env, b arrow.RecordBatch) (arrow.Array, error) {
	in := make([]arrow.Array, len(r.ins))
	for i, x := range r.ins {
		a, err := x.Eval(env, b)
		if err != nil {
			return nil, err
		}
		defer a.Release()
		in[i] = a
	}
	out := array.NewBuilder(env.Mem, r.x.t.Arrow())
	defer out.Release()
	n := int(b.NumRows())
	out.Reserve(n)
	row := make([]schema.Value, r.width)
	for i := range n {
		for j, slot := range r.slots {
			row[slot] = schema.ValueAt(in[j], i)
		}
		v, err := r.x.eval(row)
		if err != nil {
			return nil, err
		}
		schema.AppendValue(out, v)
	}
	return out.NewArray(), nil
}

// compileRowCall compiles a call of a function the vectorised compiler has
// no kernel for: its arguments as kernels (so that it may stand over an
// aggregation's output, or read columns of a join), the function itself
// by the row compiler, applied row by row to the arguments' values.
func (c *vcompiler) compileRowCall(f *parser.FuncCall) (exec.Expr, error) {
	var args []exec.Expr
	slots := map[parser.Expr]int{}
	for _, a := range f.Args {
		if markConst(a, c.konst, c.depth+1) {
			// Constant arguments stay as written: units, formats and
			// digits must be constants to the row compiler.
			continue
		}
		x, err := c.compile(a)
		if err != nil {
			return nil, err
		}
		slots[a] = len(args)
		args = append(args, x)
	}
	// The row compiler reads each argument from its slot of the row of
	// argument values; the call keeps its text for messages.
	rc := newCompiler(c.env, nil)
	rc.subst = func(e parser.Expr) (*compiled, bool, error) {
		slot, ok := slots[e]
		if !ok {
			return nil, false, nil
		}
		t := args[slot].Type()
		return &compiled{t: t, eval: func(row []schema.Value) (schema.Value, error) { return row[slot], nil }}, true, nil
	}
	x, err := rc.compile(f)
	if err != nil {
		return nil, err
	}
	return &rowCallExpr{x: x, args: args, text: parser.FormatExpr(f)}, nil
}

// rowCallExpr is a function evaluated by the row compiler over the values
// of kernel-evaluated arguments.
type rowCallExpr struct {
	x    *compiled
	args []exec.Expr
	text string
}

func (r *rowCallExpr) Type() schema.Type { return r.x.t }

// String marks the call as evaluated row by row, for EXPLAIN.
func (r *rowCallExpr) String() string { return "row(" + r.text + ")" }

func (r *rowCallExpr) Eval(env *exec.Env, b arrow.RecordBatch) (arrow.Array, error) {
	in := make([]arrow.Array, len(r.args))
	for i, a := range r.args {
		arr, err := a.Eval(env, b)
		if err != nil {
			return nil, err
		}
		defer arr.Release()
		in[i] = arr
	}
	out := array.NewBuilder(env.Mem, r.x.t.Arrow())
	defer out.Release()
	n := int(b.NumRows())
	out.Reserve(n)
	row := make([]schema.Value, len(in))
	for i := range n {
		for j, a := range in {
			row[j] = schema.ValueAt(a, i)
		}
		v, err := r.x.eval(row)
		if err != nil {
			return nil, err
		}
		schema.AppendValue(out, v)
	}
	return out.NewArray(), nil
}

// tupleKey is the argument of count(DISTINCT a, b, ...): the values of its
// arguments encoded as one key (equal exactly when every value is), NULL
// when any of them is, so that counting its distinct non-NULL values
// counts the distinct tuples without a NULL.
type tupleKey struct {
	args []exec.Expr
	text string
}

func (k *tupleKey) Type() schema.Type { return stringType }
func (k *tupleKey) String() string    { return "(" + k.text + ")" }

func (k *tupleKey) Eval(env *exec.Env, b arrow.RecordBatch) (arrow.Array, error) {
	in := make([]arrow.Array, len(k.args))
	for i, a := range k.args {
		arr, err := a.Eval(env, b)
		if err != nil {
			return nil, err
		}
		defer arr.Release()
		in[i] = arr
	}
	out := array.NewBuilder(env.Mem, stringType.Arrow())
	defer out.Release()
	n := int(b.NumRows())
	out.Reserve(n)
	vals := make([]schema.Value, len(in))
	for i := range n {
		null := false
		for j, a := range in {
			vals[j] = schema.ValueAt(a, i)
			null = null || vals[j].IsNull()
		}
		if null {
			out.AppendNull()
			continue
		}
		schema.AppendValue(out, schema.BytesVal([]byte(encodeKey(vals))))
	}
	return out.NewArray(), nil
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
