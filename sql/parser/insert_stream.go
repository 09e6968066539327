package parser

// ParseStream parses one statement like Parse, except that the rows of an
// INSERT ... VALUES are left unparsed: the returned stream reads them one
// at a time, so that a statement of millions of rows never holds them all
// (nor their tokens). vs is nil for any other statement.
func ParseStream(src string) (stmt Stmt, vs *ValuesStream, err error) {
	p, err := newParser(src)
	if err != nil {
		return nil, nil, err
	}
	defer p.recover(&err)
	p.stream = true
	if p.atEnd() {
		p.fail("empty statement")
	}
	s := p.parseStatement()
	if p.streamRows {
		return s, &ValuesStream{p: p}, nil
	}
	p.finish()
	return s, nil, nil
}

// ValuesStream reads the rows of an INSERT ... VALUES from its parser.
type ValuesStream struct {
	p    *parser
	rows int
	done bool
}

// Next returns the next row, or nil at the end of the statement (which
// must then end: trailing tokens are a syntax error, as with Parse).
func (vs *ValuesStream) Next() (row []Expr, err error) {
	if vs.done {
		return nil, nil
	}
	p := vs.p
	defer p.recover(&err)
	if vs.rows > 0 && !p.acceptOp(",") {
		vs.done = true
		p.finish()
		return nil, nil
	}
	vs.rows++
	return p.valuesRow(), nil
}
