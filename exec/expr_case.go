package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// When is one WHEN cond THEN result of a Case.
type When struct {
	Cond, Result Expr
}

// Case is CASE WHEN ... THEN ... [ELSE ...] END (and IF, NULLIF): each
// condition is evaluated only on the rows no earlier condition took, each
// result only on the rows its condition took, as a row-at-a-time evaluator
// would, so an error a branch would raise on rows it does not take is never
// raised. Every result has type Typ (the planner converts them).
type Case struct {
	Whens []When
	Else  Expr // nil: NULL
	Typ   schema.Type
}

// Type implements Expr.
func (c *Case) Type() schema.Type { return c.Typ }

func (c *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, w := range c.Whens {
		fmt.Fprintf(&b, " WHEN %s THEN %s", w.Cond, w.Result)
	}
	if c.Else != nil {
		fmt.Fprintf(&b, " ELSE %s", c.Else)
	}
	b.WriteString(" END")
	return b.String()
}

// Eval implements Expr.
func (c *Case) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	br := newBranches(env, b)
	defer br.release()
	n := br.n
	nbytes := int(bitutil.BytesForBits(int64(n)))
	for _, w := range c.Whens {
		if br.left == 0 {
			break
		}
		cond, err := evalOnBool(env, w.Cond, b, br.rest, br.left)
		if err != nil {
			return nil, err
		}
		// Map the condition's TRUE rows back to batch rows.
		hit := newBuffer(env.Mem, nbytes)
		hb := hit.Bytes()
		hits, j := 0, 0
		for i := range n {
			if !bitutil.BitIsSet(br.rest, i) {
				continue
			}
			if cond.IsValid(j) && cond.Value(j) {
				bitutil.SetBit(hb, i)
				bitutil.ClearBit(br.rest, i)
				hits++
			}
			j++
		}
		cond.Release()
		if hits > 0 {
			br.left -= hits
			if err := br.take(w.Result, hb, hits); err != nil {
				hit.Release()
				return nil, err
			}
		}
		hit.Release()
	}
	if c.Else != nil && br.left > 0 {
		if err := br.take(c.Else, br.rest, br.left); err != nil {
			return nil, err
		}
	}
	return br.merge(c.Typ.Arrow())
}

// evalOnBool evaluates a condition on the rows mask selects.
func evalOnBool(env *Env, e Expr, b arrow.RecordBatch, mask []byte, sel int) (*array.Boolean, error) {
	sub, err := subBatch(env, b, mask, sel)
	if err != nil {
		return nil, err
	}
	defer sub.Release()
	return evalBool(env, e, sub)
}

// Coalesce is the first non-NULL argument (COALESCE, IFNULL): each argument
// is evaluated only on the rows every earlier one left NULL.
type Coalesce struct {
	Args []Expr
	Typ  schema.Type
}

// Type implements Expr.
func (c *Coalesce) Type() schema.Type { return c.Typ }

func (c *Coalesce) String() string {
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		parts[i] = a.String()
	}
	return "coalesce(" + strings.Join(parts, ", ") + ")"
}

// Eval implements Expr.
func (c *Coalesce) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	br := newBranches(env, b)
	defer br.release()
	for _, e := range c.Args {
		if br.left == 0 {
			break
		}
		a, err := evalOn(env, e, b, br.rest, br.left)
		if err != nil {
			return nil, err
		}
		k := int32(len(br.parts))
		br.parts = append(br.parts, a)
		j := int32(0)
		for i := range br.n {
			if !bitutil.BitIsSet(br.rest, i) {
				continue
			}
			if a.IsValid(int(j)) {
				br.refs[i] = rowRef{batch: k, row: j}
				bitutil.ClearBit(br.rest, i)
				br.left--
			}
			j++
		}
	}
	return br.merge(c.Typ.Arrow())
}

// branches is what Case and Coalesce build their result from: the arrays
// their branches computed (parts), each on the rows it took, and, for
// each row of the batch, which row of which part holds its value (refs,
// NULL for a row no branch took).
type branches struct {
	env   *Env
	b     arrow.RecordBatch
	n     int
	buf   *memory.Buffer
	rest  []byte // the rows no branch took yet
	left  int    // how many they are
	parts []arrow.Array
	refs  []rowRef
}

func newBranches(env *Env, b arrow.RecordBatch) *branches {
	n := int(b.NumRows())
	buf := newBuffer(env.Mem, int(bitutil.BytesForBits(int64(n))))
	rest := buf.Bytes()
	bitutil.SetBitsTo(rest, 0, int64(n), true)
	refs := make([]rowRef, n)
	for i := range refs {
		refs[i] = nullRef
	}
	return &branches{env: env, b: b, n: n, buf: buf, rest: rest, left: n, refs: refs}
}

func (br *branches) release() {
	br.buf.Release()
	for _, p := range br.parts {
		p.Release()
	}
}

// take evaluates e on the sel rows mask selects, as the rows' values.
func (br *branches) take(e Expr, mask []byte, sel int) error {
	a, err := evalOn(br.env, e, br.b, mask, sel)
	if err != nil {
		return err
	}
	k := int32(len(br.parts))
	br.parts = append(br.parts, a)
	j := int32(0)
	for i := range br.n {
		if bitutil.BitIsSet(mask, i) {
			br.refs[i] = rowRef{batch: k, row: j}
			j++
		}
	}
	return nil
}

// merge gathers the rows' values into one array of type t. A part of
// type NULL (a NULL branch) holds only NULLs: its rows are NULL refs.
func (br *branches) merge(t arrow.DataType) (arrow.Array, error) {
	srcs := make([]arrow.Array, 0, len(br.parts))
	renum := make([]int32, len(br.parts))
	for k, p := range br.parts {
		if p.DataType().ID() == arrow.NULL {
			renum[k] = -1
			continue
		}
		if !arrow.TypeEqual(p.DataType(), t) {
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: a branch of type %s where %s is expected", p.DataType(), t)
		}
		renum[k] = int32(len(srcs))
		srcs = append(srcs, p)
	}
	if t.ID() == arrow.NULL {
		return array.MakeArrayOfNull(br.env.Mem, t, br.n), nil
	}
	for i, r := range br.refs {
		if r.batch >= 0 {
			br.refs[i].batch = renum[r.batch]
		}
	}
	return gatherColumn(br.env.Mem, t, srcs, br.refs), nil
}
