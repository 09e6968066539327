package parser

import "strings"

// SelectInto is `query INTO OUTFILE "file:///dir/prefix" FORMAT AS
// PARQUET|CSV [PROPERTIES (...)]`.
type SelectInto struct {
	Query      QueryExpr
	Path       string
	Format     string
	Properties Properties
}

func (*SelectInto) stmtNode() {}

// parseInto wraps a query in a SelectInto when INTO OUTFILE follows it.
func (p *parser) parseInto(q Stmt) Stmt {
	qe, ok := q.(QueryExpr)
	if !ok || !p.acceptKw("INTO", "OUTFILE") {
		return q
	}
	s := &SelectInto{Query: qe, Path: p.stringLit("the OUTFILE path, a string")}
	p.expectKw("FORMAT", "AS")
	t := p.peek()
	if t.kind != tokIdent {
		p.fail("expected PARQUET or CSV")
	}
	p.i++
	s.Format = strings.ToUpper(t.val)
	if p.acceptKw("PROPERTIES") {
		s.Properties = p.propertyList()
	}
	return s
}
