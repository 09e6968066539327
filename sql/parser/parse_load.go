package parser

// LoadItem is one entry of a Stream Load column list.
type LoadItem struct {
	Name string
	Expr Expr // nil for a plain name
}

// ParseLoadColumns parses a Stream Load column list, `name [= expr] [, ...]`. Plain names may be
// reserved words (a column called date needs no quotes here).
func ParseLoadColumns(spec string) (items []LoadItem, err error) {
	p, err := newParser(spec)
	if err != nil {
		return nil, err
	}
	defer p.recover(&err)
	for {
		t := p.peek()
		if t.kind != tokIdent && t.kind != tokQuotedIdent {
			p.fail("expected a column name")
		}
		p.i++
		it := LoadItem{Name: t.val}
		if p.acceptOp("=") {
			it.Expr = p.parseExpr()
		}
		items = append(items, it)
		if !p.acceptOp(",") {
			break
		}
	}
	if !p.at(tokEOF) {
		p.fail("expected ',' or the end of the column list")
	}
	return items, nil
}
