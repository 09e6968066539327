package sql

import (
	"strconv"
	"strings"
)

// Format renders an expression as canonical SQL: keywords in upper case,
// function names in lower case, strings in single quotes, names backquoted
// only when they need it, and parentheses only where precedence requires
// them. ParseExpr(Format(e)) yields an expression that formats identically.
// A nil expression formats as the empty string.
func Format(e Expr) string {
	var b strings.Builder
	formatExpr(&b, e, 0)
	return b.String()
}

// Precedence levels, lowest first; an operand whose level is below what its
// position requires is parenthesised.
const (
	precOr      = 1
	precAnd     = 3
	precNot     = 4
	precCompare = 5
	precAdd     = 9
	precMul     = 10
	precNeg     = 12
	precPrimary = 20
)

func precedence(e Expr) int {
	switch e := e.(type) {
	case *BinaryExpr:
		switch {
		case e.Op == OpOr:
			return precOr
		case e.Op == OpAnd:
			return precAnd
		case e.Op.IsComparison():
			return precCompare
		case e.Op == OpAdd || e.Op == OpSub:
			return precAdd
		}
		return precMul
	case *UnaryExpr:
		if e.Op == OpNot {
			return precNot
		}
		return precNeg
	case *IsExpr, *InExpr, *BetweenExpr, *LikeExpr:
		return precCompare
	case *DateArith:
		return precAdd
	}
	return precPrimary
}

// formatExpr writes e, parenthesised when its precedence is below min.
func formatExpr(b *strings.Builder, e Expr, min int) {
	if e == nil {
		return
	}
	if precedence(e) < min {
		b.WriteByte('(')
		formatExpr(b, e, 0)
		b.WriteByte(')')
		return
	}
	switch e := e.(type) {
	case *NullLit:
		b.WriteString("NULL")
	case *BoolLit:
		if e.Val {
			b.WriteString("TRUE")
		} else {
			b.WriteString("FALSE")
		}
	case *IntLit:
		b.WriteString(strconv.FormatInt(e.Val, 10))
	case *DecimalLit:
		b.WriteString(e.Text)
	case *FloatLit:
		b.WriteString(e.Text)
	case *StringLit:
		b.WriteString(QuoteString(e.Val))
	case *DefaultExpr:
		b.WriteString("DEFAULT")
	case *ColumnRef:
		if e.DB != "" {
			b.WriteString(QuoteIdent(e.DB))
			b.WriteByte('.')
		}
		if e.Table != "" || e.DB != "" {
			b.WriteString(QuoteIdent(e.Table))
			b.WriteByte('.')
		}
		b.WriteString(QuoteIdent(e.Name))
	case *UnaryExpr:
		if e.Op == OpNot {
			b.WriteString("NOT ")
			formatExpr(b, e.X, precNot)
			return
		}
		b.WriteByte('-')
		// Never write "--", which starts a comment.
		s := Format(e.X)
		if precedence(e.X) < precNeg || strings.HasPrefix(s, "-") {
			s = "(" + s + ")"
		}
		b.WriteString(s)
	case *BinaryExpr:
		p := precedence(e)
		right := p + 1
		switch p {
		case precOr:
			right = precAnd
		case precAnd:
			right = precNot
		case precCompare:
			right = precAdd
		case precMul:
			right = precNeg
		}
		formatExpr(b, e.L, p)
		b.WriteByte(' ')
		b.WriteString(e.Op.String())
		b.WriteByte(' ')
		formatExpr(b, e.R, right)
	case *IsExpr:
		formatExpr(b, e.X, precCompare)
		b.WriteString(" IS ")
		if e.Not {
			b.WriteString("NOT ")
		}
		b.WriteString(e.Test.String())
	case *InExpr:
		formatExpr(b, e.X, precCompare)
		if e.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" IN (")
		formatList(b, e.List)
		b.WriteByte(')')
	case *BetweenExpr:
		formatExpr(b, e.X, precCompare)
		if e.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" BETWEEN ")
		formatExpr(b, e.Lo, precAdd)
		b.WriteString(" AND ")
		formatExpr(b, e.Hi, precAdd)
	case *LikeExpr:
		formatExpr(b, e.X, precCompare)
		if e.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" LIKE ")
		formatExpr(b, e.Pattern, precAdd)
		if e.Escape != nil {
			b.WriteString(" ESCAPE ")
			formatExpr(b, e.Escape, precAdd)
		}
	case *FuncCall:
		b.WriteString(e.Name)
		b.WriteByte('(')
		switch {
		case e.Star:
			b.WriteByte('*')
		case e.Distinct:
			b.WriteString("DISTINCT ")
			fallthrough
		default:
			formatList(b, e.Args)
		}
		b.WriteByte(')')
	case *CastExpr:
		b.WriteString("CAST(")
		formatExpr(b, e.X, 0)
		b.WriteString(" AS ")
		b.WriteString(e.Type.String())
		b.WriteByte(')')
	case *CaseExpr:
		b.WriteString("CASE")
		if e.Operand != nil {
			b.WriteByte(' ')
			formatExpr(b, e.Operand, 0)
		}
		for _, w := range e.Whens {
			b.WriteString(" WHEN ")
			formatExpr(b, w.Cond, 0)
			b.WriteString(" THEN ")
			formatExpr(b, w.Result, 0)
		}
		if e.Else != nil {
			b.WriteString(" ELSE ")
			formatExpr(b, e.Else, 0)
		}
		b.WriteString(" END")
	case *DateArith:
		formatExpr(b, e.X, precAdd)
		if e.Sub {
			b.WriteString(" - INTERVAL ")
		} else {
			b.WriteString(" + INTERVAL ")
		}
		formatExpr(b, e.N, precAdd)
		b.WriteByte(' ')
		b.WriteString(e.Unit.String())
	default:
		b.WriteString("?")
	}
}

func formatList(b *strings.Builder, list []Expr) {
	for i, x := range list {
		if i > 0 {
			b.WriteString(", ")
		}
		formatExpr(b, x, 0)
	}
}

// QuoteString renders s as a single-quoted SQL string literal.
func QuoteString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'':
			b.WriteString("''")
		case '\\':
			b.WriteString(`\\`)
		case 0:
			b.WriteString(`\0`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// QuoteIdent renders a name, `backquoted` when it is not a plain
// identifier or is a reserved word.
func QuoteIdent(name string) string {
	plain := name != "" && !isDigit(name[0]) && !reserved[strings.ToUpper(name)]
	for i := 0; plain && i < len(name); i++ {
		plain = isIdentByte(name[i])
	}
	if plain {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}
