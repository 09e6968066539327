package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// Like is x [NOT] LIKE pattern with a constant pattern, compiled once: %
// is any run of characters, _ one character, the escape character makes
// the next one literal. Patterns of the forms 'abc', 'abc%', '%abc' and
// '%abc%' (no _ and no escape) match with byte comparisons; others with a
// backtracking matcher over runes.
type Like struct {
	X       Expr
	Pattern string
	Escape  rune
	Not     bool

	kind   likeKind
	needle string
	pat    []rune
}

type likeKind uint8

const (
	likeGeneral likeKind = iota
	likeEqual
	likePrefix
	likeSuffix
	likeContains
	likeAny
)

// NewLike compiles the pattern.
func NewLike(x Expr, pattern string, esc rune, not bool) (*Like, error) {
	if !x.Type().IsString() {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: LIKE over %s values", x.Type())
	}
	g := &Like{X: x, Pattern: pattern, Escape: esc, Not: not, pat: []rune(pattern)}
	simple := !strings.ContainsRune(pattern, '_') && !strings.ContainsRune(pattern, esc)
	core := strings.Trim(pattern, "%")
	lead := strings.HasPrefix(pattern, "%")
	trail := strings.HasSuffix(pattern, "%")
	switch {
	case !simple || strings.Contains(core, "%"):
		g.kind = likeGeneral
	case core == "" && (lead || trail):
		g.kind = likeAny
	case !lead && !trail:
		g.kind, g.needle = likeEqual, core
	case !lead:
		g.kind, g.needle = likePrefix, core
	case !trail:
		g.kind, g.needle = likeSuffix, core
	default:
		g.kind, g.needle = likeContains, core
	}
	return g, nil
}

// Type implements Expr.
func (g *Like) Type() schema.Type { return schema.BooleanType }

func (g *Like) String() string {
	not := ""
	if g.Not {
		not = "NOT "
	}
	return fmt.Sprintf("(%s %sLIKE '%s')", g.X, not, strings.ReplaceAll(g.Pattern, "'", "''"))
}

func (g *Like) match(s string) bool {
	switch g.kind {
	case likeAny:
		return true
	case likeEqual:
		return s == g.needle
	case likePrefix:
		return strings.HasPrefix(s, g.needle)
	case likeSuffix:
		return strings.HasSuffix(s, g.needle)
	case likeContains:
		return strings.Contains(s, g.needle)
	}
	return LikeMatch([]rune(s), g.pat, g.Escape)
}

// Eval implements Expr.
func (g *Like) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := g.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	n := x.Len()
	c, ok := x.(*array.String)
	if !ok {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: LIKE over %s values", x.DataType())
	}
	vals := newBuffer(env.Mem, int(bitutil.BytesForBits(int64(n))))
	out := vals.Bytes()
	for i := range n {
		if g.match(c.Value(i)) != g.Not {
			out[i>>3] |= 1 << (i & 7)
		}
	}
	valid, nulls := andValidity(env.Mem, n, x)
	return newBools(n, vals, valid, nulls), nil
}

// LikeMatch matches s against a LIKE pattern: % is any run, _ one
// character, esc makes the next character literal. The row engine and the
// SHOW … LIKE filters match with it too, so that every LIKE agrees.
func LikeMatch(s, p []rune, esc rune) bool {
	si, pi := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(p) {
			switch {
			case p[pi] == '%':
				starP, starS = pi, si
				pi++
				continue
			case p[pi] == esc && pi+1 < len(p):
				if p[pi+1] == s[si] {
					si++
					pi += 2
					continue
				}
			case p[pi] == '_' || p[pi] == s[si]:
				si++
				pi++
				continue
			}
		}
		if starP < 0 {
			return false
		}
		starS++
		si, pi = starS, starP+1
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	return pi == len(p)
}

// LikeRows is X LIKE P with a pattern that varies by row: each row's
// pattern is compiled as a constant one would be (NewLike), reusing the
// previous row's when it is the same text, so a column of few patterns
// costs what a constant does. NULL on either side is NULL.
type LikeRows struct {
	X, P   Expr
	Escape rune
	Not    bool
}

// NewLikeRows checks that both sides are strings.
func NewLikeRows(x, p Expr, esc rune, not bool) (*LikeRows, error) {
	if !x.Type().IsString() || !p.Type().IsString() {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: LIKE over %s values with a %s pattern", x.Type(), p.Type())
	}
	return &LikeRows{X: x, P: p, Escape: esc, Not: not}, nil
}

// Type implements Expr.
func (g *LikeRows) Type() schema.Type { return schema.BooleanType }

func (g *LikeRows) String() string {
	not := ""
	if g.Not {
		not = "NOT "
	}
	return fmt.Sprintf("(%s %sLIKE %s)", g.X, not, g.P)
}

// Eval implements Expr.
func (g *LikeRows) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	x, err := g.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	p, err := g.P.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer p.Release()
	xs, ok1 := x.(*array.String)
	ps, ok2 := p.(*array.String)
	if !ok1 || !ok2 {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: LIKE over %s values with a %s pattern", x.DataType(), p.DataType())
	}
	n := x.Len()
	valid, nulls := andValidity(env.Mem, n, x, p)
	vb := []byte(nil)
	if valid != nil {
		vb = valid.Bytes()
	}
	vals := newBuffer(env.Mem, int(bitutil.BytesForBits(int64(n))))
	out := vals.Bytes()
	var cur *Like
	for i := range n {
		if !isValid(vb, 0, i) {
			continue
		}
		if pat := ps.Value(i); cur == nil || cur.Pattern != pat {
			cur, _ = NewLike(g.X, pat, g.Escape, false)
		}
		if cur.match(xs.Value(i)) != g.Not {
			out[i>>3] |= 1 << (i & 7)
		}
	}
	return newBools(n, vals, valid, nulls), nil
}
