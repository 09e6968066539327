package parser

import (
	"strconv"
	"strings"

	"github.com/rowttl/rowttl/schema"
)

// FormatExpr renders an expression as canonical SQL: keywords in upper case,
// function names in lower case, strings in single quotes, names backquoted
// only when they need it, and parentheses only where precedence requires
// them. ParseExpr(FormatExpr(e)) yields an expression that formats identically.
// A nil expression formats as the empty string.
func FormatExpr(e Expr) string {
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
	precBitOr   = 6
	precBitAnd  = 7
	precShift   = 8
	precAdd     = 9
	precMul     = 10
	precBitXor  = 11
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
		case e.Op == OpBitOr:
			return precBitOr
		case e.Op == OpBitAnd:
			return precBitAnd
		case e.Op == OpShl || e.Op == OpShr:
			return precShift
		case e.Op == OpBitXor:
			return precBitXor
		}
		return precMul
	case *UnaryExpr:
		if e.Op == OpNot {
			return precNot
		}
		return precNeg
	case *IsExpr, *InExpr, *BetweenExpr, *LikeExpr, *RegexpExpr, *InSubquery, *QuantifiedCmp:
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
	case *SysVar:
		b.WriteString("@@")
		b.WriteString(e.Name)
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
		if e.Op == OpBitNot {
			b.WriteByte('~')
		} else {
			b.WriteByte('-')
		}
		// Never write "--", which starts a comment.
		s := FormatExpr(e.X)
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
			right = precBitOr
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
		formatPredicate(b, e.X, e.Not, " IN (")
		formatList(b, e.List)
		b.WriteByte(')')
	case *BetweenExpr:
		formatPredicate(b, e.X, e.Not, " BETWEEN ")
		formatExpr(b, e.Lo, precAdd)
		b.WriteString(" AND ")
		formatExpr(b, e.Hi, precAdd)
	case *LikeExpr:
		formatPredicate(b, e.X, e.Not, " LIKE ")
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
		if e.Type.Kind == schema.Char {
			// CAST AS CHAR without a length is STRING, so CHAR(0) keeps
			// its length.
			b.WriteString("CHAR(" + strconv.Itoa(e.Type.Length) + ")")
		} else {
			b.WriteString(e.Type.String())
		}
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
	case *SubqueryExpr:
		b.WriteByte('(')
		formatQuery(b, e.Query)
		b.WriteByte(')')
	case *InSubquery:
		formatPredicate(b, e.X, e.Not, " IN (")
		formatQuery(b, e.Query)
		b.WriteByte(')')
	case *RowExpr:
		b.WriteByte('(')
		for i, x := range e.Items {
			if i > 0 {
				b.WriteString(", ")
			}
			formatExpr(b, x, 0)
		}
		b.WriteByte(')')
	case *QuantifiedCmp:
		formatExpr(b, e.X, precCompare)
		b.WriteByte(' ')
		b.WriteString(e.Op.String())
		if e.All {
			b.WriteString(" ALL (")
		} else {
			b.WriteString(" ANY (")
		}
		formatQuery(b, e.Query)
		b.WriteByte(')')
	case *ExistsExpr:
		b.WriteString("EXISTS (")
		formatQuery(b, e.Query)
		b.WriteByte(')')
	case *RegexpExpr:
		formatPredicate(b, e.X, e.Not, " REGEXP ")
		formatExpr(b, e.Pattern, precAdd)
	case *TimestampDiff:
		b.WriteString("timestampdiff(")
		b.WriteString(e.Unit.String())
		b.WriteString(", ")
		formatExpr(b, e.From, 0)
		b.WriteString(", ")
		formatExpr(b, e.To, 0)
		b.WriteByte(')')
	case *ExtractExpr:
		b.WriteString("EXTRACT(")
		b.WriteString(e.Unit.String())
		b.WriteString(" FROM ")
		formatExpr(b, e.X, 0)
		b.WriteByte(')')
	case *WindowFunc:
		b.WriteString(e.Name)
		b.WriteByte('(')
		if e.Star {
			b.WriteByte('*')
		} else {
			formatList(b, e.Args)
		}
		b.WriteString(") OVER ")
		if w := e.Over; w.Ref != "" && w.PartitionBy == nil && w.OrderBy == nil && w.Frame == nil {
			b.WriteString(QuoteIdent(w.Ref))
			return
		}
		b.WriteByte('(')
		formatWindowSpec(b, e.Over)
		b.WriteByte(')')
	default:
		b.WriteString("?")
	}
}

// formatPredicate writes x [NOT] op, the head of a predicate that takes
// its NOT before its keyword op (IN, BETWEEN, LIKE, REGEXP).
func formatPredicate(b *strings.Builder, x Expr, not bool, op string) {
	formatExpr(b, x, precCompare)
	if not {
		b.WriteString(" NOT")
	}
	b.WriteString(op)
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

// FormatQuery renders a query as canonical SQL on one line, with the
// expression conventions of FormatExpr; parentheses appear around set
// operation operands only where precedence or an operand's own WITH,
// ORDER BY or LIMIT requires them. Parse(FormatQuery(q)) yields a query
// that formats identically.
func FormatQuery(q QueryExpr) string {
	var b strings.Builder
	formatQuery(&b, q)
	return b.String()
}

func formatQuery(b *strings.Builder, q QueryExpr) {
	switch q := q.(type) {
	case *Select:
		formatWith(b, q.With)
		formatSelect(b, q)
		formatTail(b, q.OrderBy, q.Limit)
	case *SetOp:
		formatWith(b, q.With)
		formatOperand(b, q.L, q.Op, false)
		b.WriteByte(' ')
		b.WriteString(q.Op.String())
		if q.All {
			b.WriteString(" ALL")
		}
		b.WriteByte(' ')
		formatOperand(b, q.R, q.Op, true)
		formatTail(b, q.OrderBy, q.Limit)
	default:
		b.WriteString("?")
	}
}

// setOpPrec is the binding strength of a set operator.
func setOpPrec(k SetOpKind) int {
	if k == SetIntersect {
		return 2
	}
	return 1
}

// formatOperand writes an operand of a set operation op, parenthesised
// when it carries clauses of its own or binds more loosely (on the right:
// no tighter, as set operations associate to the left).
func formatOperand(b *strings.Builder, q QueryExpr, op SetOpKind, right bool) {
	order, limit, with := queryTail(q)
	paren := *order != nil || *limit != nil || *with != nil
	if s, ok := q.(*SetOp); ok {
		if right {
			paren = paren || setOpPrec(s.Op) <= setOpPrec(op)
		} else {
			paren = paren || setOpPrec(s.Op) < setOpPrec(op)
		}
	}
	if paren {
		b.WriteByte('(')
	}
	formatQuery(b, q)
	if paren {
		b.WriteByte(')')
	}
}

func formatWith(b *strings.Builder, with []*CTE) {
	if with == nil {
		return
	}
	b.WriteString("WITH ")
	for i, c := range with {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(QuoteIdent(c.Name))
		if c.Columns != nil {
			b.WriteString(" (")
			formatNames(b, c.Columns)
			b.WriteByte(')')
		}
		b.WriteString(" AS (")
		formatQuery(b, c.Query)
		b.WriteByte(')')
	}
	b.WriteByte(' ')
}

func formatNames(b *strings.Builder, names []string) {
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(QuoteIdent(n))
	}
}

func formatSelect(b *strings.Builder, s *Select) {
	b.WriteString("SELECT ")
	if s.Distinct {
		b.WriteString("DISTINCT ")
	}
	for i, it := range s.Items {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case it.Star && it.StarTable != "":
			b.WriteString(QuoteIdent(it.StarTable))
			b.WriteString(".*")
		case it.Star:
			b.WriteByte('*')
		default:
			formatExpr(b, it.Expr, 0)
			if it.Alias != "" {
				b.WriteString(" AS ")
				b.WriteString(QuoteIdent(it.Alias))
			}
		}
	}
	if s.From != nil {
		b.WriteString(" FROM ")
		formatTableRef(b, s.From)
	}
	if s.Where != nil {
		b.WriteString(" WHERE ")
		formatExpr(b, s.Where, 0)
	}
	if s.GroupBy != nil {
		b.WriteString(" GROUP BY ")
		formatList(b, s.GroupBy)
	}
	if s.Having != nil {
		b.WriteString(" HAVING ")
		formatExpr(b, s.Having, 0)
	}
	for i, w := range s.Windows {
		if i == 0 {
			b.WriteString(" WINDOW ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(QuoteIdent(w.Name))
		b.WriteString(" AS (")
		formatWindowSpec(b, w.Spec)
		b.WriteByte(')')
	}
}

// formatTableRef writes a FROM reference. Joins associate to the left and
// a comma binds more loosely than JOIN, so a join on the right of a join,
// a comma join on the left of a JOIN and a comma join on the right of a
// comma are parenthesised.
func formatTableRef(b *strings.Builder, r *TableRef) {
	switch {
	case r.Join != nil:
		j := r.Join
		formatJoinOperand(b, j.Left, j.Kind != JoinComma && j.Left.IsJoin() && j.Left.Join.Kind == JoinComma)
		if j.Kind == JoinComma {
			b.WriteString(", ")
		} else {
			b.WriteByte(' ')
			b.WriteString(j.Kind.String())
			b.WriteByte(' ')
		}
		formatJoinOperand(b, j.Right, j.Right.IsJoin() && (j.Kind != JoinComma || j.Right.Join.Kind == JoinComma))
		if j.On != nil {
			b.WriteString(" ON ")
			formatExpr(b, j.On, 0)
		}
		if j.Using != nil {
			b.WriteString(" USING (")
			formatNames(b, j.Using)
			b.WriteByte(')')
		}
	case r.Subquery != nil:
		b.WriteByte('(')
		formatQuery(b, r.Subquery)
		b.WriteString(") AS ")
		b.WriteString(QuoteIdent(r.Alias))
	case r.Func != nil:
		b.WriteString(r.Func.Name)
		b.WriteByte('(')
		for i, pr := range r.Func.Props {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(QuoteString(pr.Key))
			b.WriteString(" = ")
			b.WriteString(QuoteString(pr.Value))
		}
		b.WriteByte(')')
		if r.Alias != "" {
			b.WriteString(" AS ")
			b.WriteString(QuoteIdent(r.Alias))
		}
	default:
		if r.Table.DB != "" {
			b.WriteString(QuoteIdent(r.Table.DB))
			b.WriteByte('.')
		}
		b.WriteString(QuoteIdent(r.Table.Name))
		if r.Alias != "" {
			b.WriteString(" AS ")
			b.WriteString(QuoteIdent(r.Alias))
		}
	}
}

func formatJoinOperand(b *strings.Builder, r *TableRef, paren bool) {
	if paren {
		b.WriteByte('(')
	}
	formatTableRef(b, r)
	if paren {
		b.WriteByte(')')
	}
}

func formatTail(b *strings.Builder, order []*OrderItem, limit *Limit) {
	if order != nil {
		b.WriteString(" ORDER BY ")
		formatOrderItems(b, order)
	}
	if limit != nil {
		b.WriteString(" LIMIT ")
		b.WriteString(strconv.FormatInt(limit.Count, 10))
		if limit.Offset != 0 {
			b.WriteString(" OFFSET ")
			b.WriteString(strconv.FormatInt(limit.Offset, 10))
		}
	}
}

func formatOrderItems(b *strings.Builder, items []*OrderItem) {
	for i, o := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		formatExpr(b, o.Expr, 0)
		if o.Desc {
			b.WriteString(" DESC")
		}
		if o.Nulls != NullsDefault {
			b.WriteByte(' ')
			b.WriteString(o.Nulls.String())
		}
	}
}

// formatWindowSpec writes the inside of OVER (...).
func formatWindowSpec(b *strings.Builder, w *WindowSpec) {
	sep := ""
	if w.Ref != "" {
		b.WriteString(QuoteIdent(w.Ref))
		sep = " "
	}
	if w.PartitionBy != nil {
		b.WriteString(sep + "PARTITION BY ")
		formatList(b, w.PartitionBy)
		sep = " "
	}
	if w.OrderBy != nil {
		b.WriteString(sep + "ORDER BY ")
		formatOrderItems(b, w.OrderBy)
		sep = " "
	}
	if f := w.Frame; f != nil {
		b.WriteString(sep)
		b.WriteString(f.Unit.String())
		b.WriteString(" BETWEEN ")
		formatBound(b, f.Start)
		b.WriteString(" AND ")
		formatBound(b, f.End)
	}
}

func formatBound(b *strings.Builder, fb FrameBound) {
	if fb.Kind == FramePreceding || fb.Kind == FrameFollowing {
		b.WriteString(strconv.FormatInt(fb.N, 10))
		b.WriteByte(' ')
	}
	b.WriteString(fb.Kind.String())
}
