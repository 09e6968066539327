package parser

import "fmt"

// Limits on one expression. Compiling, formatting and evaluating an
// expression recurse over its tree, so its height bounds the stack they
// use: a chain `a + a + ...` is parsed by a loop but is as tall as it is
// long; each level costs compiling and evaluating about 1.3 KB of stack, so
// the height limit keeps them within tens of megabytes while a sum of
// 20,000 terms still runs. The parser's own recursion is bounded by
// maxDepth (nesting of parentheses, calls, unary operators). The node
// count bounds the memory and time of compiling one expression; an IN list
// counts each value. Variables, so that tests can lower them.
var (
	MaxExprHeight = 32 << 10
	MaxExprSize   = 4 << 20
)

// children calls fn on each direct subexpression of e, in source order.
func children(e Expr, fn func(Expr)) {
	visit := func(x Expr) {
		if x != nil {
			fn(x)
		}
	}
	switch e := e.(type) {
	case *UnaryExpr:
		visit(e.X)
	case *BinaryExpr:
		visit(e.L)
		visit(e.R)
	case *IsExpr:
		visit(e.X)
	case *InExpr:
		visit(e.X)
		for _, x := range e.List {
			visit(x)
		}
	case *BetweenExpr:
		visit(e.X)
		visit(e.Lo)
		visit(e.Hi)
	case *LikeExpr:
		visit(e.X)
		visit(e.Pattern)
		visit(e.Escape)
	case *FuncCall:
		for _, x := range e.Args {
			visit(x)
		}
	case *CastExpr:
		visit(e.X)
	case *CaseExpr:
		visit(e.Operand)
		for _, w := range e.Whens {
			visit(w.Cond)
			visit(w.Result)
		}
		visit(e.Else)
	case *DateArith:
		visit(e.X)
		visit(e.N)
	}
}

// checkExprSize returns an error when e is taller than MaxExprHeight or
// has more than MaxExprSize nodes. It walks with a stack of its own, so
// that the check itself cannot exhaust the goroutine's.
func checkExprSize(e Expr) error {
	type item struct {
		e      Expr
		height int
	}
	stack := []item{{e, 1}}
	nodes := 0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if nodes++; nodes > MaxExprSize {
			return fmt.Errorf("expression too large: more than %d terms", MaxExprSize)
		}
		if it.height > MaxExprHeight {
			return fmt.Errorf("expression too large: more than %d operators deep", MaxExprHeight)
		}
		children(it.e, func(x Expr) {
			if isLeaf(x) {
				// Counted here rather than stacked: an IN list of
				// millions of literals needs no stack of millions.
				nodes++
				if it.height+1 > MaxExprHeight {
					stack = append(stack, item{x, it.height + 1})
				}
				return
			}
			stack = append(stack, item{x, it.height + 1})
		})
		if nodes > MaxExprSize {
			return fmt.Errorf("expression too large: more than %d terms", MaxExprSize)
		}
	}
	return nil
}

// isLeaf reports expressions without subexpressions.
func isLeaf(e Expr) bool {
	switch e.(type) {
	case *NullLit, *BoolLit, *IntLit, *DecimalLit, *FloatLit, *StringLit, *DefaultExpr, *ColumnRef:
		return true
	}
	return false
}

// ExprSizes remembers the node count of expressions, so that asking it of
// every node of a tree costs time linear in the tree.
type ExprSizes map[Expr]int

func (m ExprSizes) Of(e Expr) int {
	if n, ok := m[e]; ok {
		return n
	}
	n := 1
	children(e, func(x Expr) { n += m.Of(x) })
	m[e] = n
	return n
}
