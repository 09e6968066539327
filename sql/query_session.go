package sql

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// Query parses and runs one statement that yields a result set (SELECT,
// EXPLAIN, SHOW, DESC) and returns its rows as Arrow record batches; the
// caller releases the reader. A SELECT streams from its plan: rows are
// read as the caller pulls batches, and releasing the reader early stops
// the scan. Other statements build their result before Query returns. Column types are in the field metadata (FieldType), the session
// time zone in the schema's (ResultZone).
//
// The reader holds no session lock: the session may run other statements
// while it is open; it keeps reading the snapshot its scan took, at the
// statement's now. A statement without a result set is refused (use Exec).
func (s *Session) Query(ctx context.Context, text string) (array.RecordReader, error) {
	stmt, err := parser.Parse(text)
	if err != nil {
		return nil, err
	}
	if !yieldsResultSet(stmt) {
		return nil, invalidf("Query runs statements that yield a result set; use Exec for %s", stmtName(stmt))
	}
	ctx, done := s.begin(ctx, text)
	r, err := s.queryStmt(ctx, stmt)
	if err != nil {
		done()
		return nil, err
	}
	return &trackedReader{RecordReader: r, refs: 1, done: done}, nil
}

// streams reports the statements Exec runs through Query.
func streams(stmt parser.Stmt) bool {
	switch stmt.(type) {
	case *parser.Select, *parser.SetOp, *parser.Explain:
		return true
	}
	return false
}

// ReturnsRows reports whether a statement yields a result set, so that
// Query (not Exec) runs it.
func ReturnsRows(stmt parser.Stmt) bool { return yieldsResultSet(stmt) }

// yieldsResultSet reports the statements that return rows.
func yieldsResultSet(stmt parser.Stmt) bool {
	switch stmt.(type) {
	case *parser.Select, *parser.SetOp, *parser.Explain, *parser.ShowDatabases, *parser.ShowCreateTable, *parser.ShowTables, *parser.ShowColumns, *parser.Describe,
		*parser.ShowTableStats, *parser.ShowRowsets, *parser.SelectInto, *parser.ShowVariables, *parser.ShowProcesslist, *parser.ShowData:
		return true
	}
	return false
}

func stmtName(stmt parser.Stmt) string {
	switch stmt.(type) {
	case *parser.Insert:
		return "INSERT"
	case *parser.Update:
		return "UPDATE"
	case *parser.Delete:
		return "DELETE"
	case *parser.Set:
		return "SET"
	}
	return "this statement"
}

// execEnv is the exec environment of a statement.
func (s *Session) execEnv(env *stmtEnv) *exec.Env {
	return &exec.Env{Mem: s.mem, Now: env.now, Loc: env.loc, Budget: exec.NewBudget(s.memLimit)}
}

func (s *Session) queryStmt(ctx context.Context, stmt parser.Stmt) (array.RecordReader, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	env := s.envLocked()
	r, err := s.queryLocked(ctx, env, stmt)
	if err != nil {
		return nil, s.cleanError(err)
	}
	return r, nil
}

func (s *Session) queryLocked(ctx context.Context, env *stmtEnv, stmt parser.Stmt) (array.RecordReader, error) {
	switch st := stmt.(type) {
	case *parser.Select:
		p, err := s.planSelect(env, st)
		if err != nil {
			return nil, err
		}
		op, err := p.build(s.execEnv(env))
		if err != nil {
			return nil, err
		}
		return newOpReader(ctx, op, env.loc, s.cleanError), nil
	case *parser.SetOp:
		p, err := (&relPlanner{s: s, env: env}).planQuery(st)
		if err != nil {
			return nil, err
		}
		op, err := p.build(s.execEnv(env))
		if err != nil {
			return nil, err
		}
		return newOpReader(ctx, op, env.loc, s.cleanError), nil
	case *parser.Explain:
		res, err := s.explain(ctx, env, st)
		if err != nil {
			return nil, err
		}
		return textReader(s.mem, res, env.loc), nil
	}
	res, err := s.execLocked(ctx, env, stmt)
	if err != nil {
		return nil, err
	}
	return textReader(s.mem, res, env.loc), nil
}

// explain returns the plan of a SELECT: which engine runs it and, for the
// vectorised one, its operator tree. A SELECT that cannot run fails to
// explain with its own error.
func (s *Session) explain(ctx context.Context, env *stmtEnv, st *parser.Explain) (*Result, error) {
	res := &Result{Columns: []string{"Explain String"}, Rows: [][]string{}}
	sel, ok := st.Stmt.(*parser.Select)
	if !ok {
		p, err := (&relPlanner{s: s, env: env}).planQuery(st.Stmt.(parser.QueryExpr))
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, []string{"engine: vectorised"})
		p.explainTree(func(depth int, format string, args ...any) {
			res.Rows = append(res.Rows, []string{strings.Repeat("  ", depth) + fmt.Sprintf(format, args...)})
		}, 0)
		return res, nil
	}
	p, err := s.planSelect(env, sel)
	if err != nil {
		return nil, err
	}
	res.Rows = append(res.Rows, []string{"engine: vectorised"})
	for _, l := range p.explain() {
		res.Rows = append(res.Rows, []string{l})
	}
	return res, nil
}

// ScriptOptions says how RunScript runs a script.
type ScriptOptions struct {
	// Bail stops at the first failed statement.
	Bail bool
	// Summary adds the interactive shell's lines after each statement:
	// "N row(s) in set" after a result set, "Query OK, N row(s) affected"
	// after other statements.
	Summary bool
}

// RunScript runs a script as `rowttl sql` does and writes what it prints
// to w: each result set as TSV, streamed batch by batch (the first rows
// are written before the last are read), each failure as one line
// "ERROR: <message>" (after the rows already written, when a query fails
// midway). It goes on after a failed statement unless o.Bail is set, and
// returns the failures. A failure to write w stops the script and is
// returned as werr.
func (s *Session) RunScript(ctx context.Context, src string, o ScriptOptions, w io.Writer) (failed []*ScriptError, werr error) {
	for _, p := range parser.SplitStatements(src) {
		if err := ctx.Err(); err != nil {
			failed = append(failed, &ScriptError{Piece: p, Err: err})
			break
		}
		err := s.runPiece(ctx, p, o, w)
		if err == nil {
			continue
		}
		err = parser.InScript(err, p)
		if we, ok := err.(*writeError); ok {
			return failed, we.err
		}
		failed = append(failed, &ScriptError{Piece: p, Err: err})
		if perr := PrintScriptResult(w, nil, err); perr != nil {
			return failed, perr
		}
		if o.Bail {
			break
		}
	}
	return failed, nil
}

// writeError is a failure to write the output, not of the statement.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }

func (s *Session) runPiece(ctx context.Context, p parser.Piece, o ScriptOptions, w io.Writer) error {
	stmt, values, err := parser.ParseStream(p.Text)
	if err != nil {
		return err
	}
	ctx, done := s.begin(ctx, p.Text)
	defer done()
	ew := &errWriter{w: w}
	if !streams(stmt) {
		// SHOW and DESC print their already formatted text: SHOW CREATE
		// TABLE keeps its statement on several lines (SPEC §4).
		res, err := s.execStmt(ctx, stmt, values)
		switch {
		case err != nil:
		case res.HasResultSet():
			if werr := res.WriteTSV(ew); werr == nil && o.Summary {
				fmt.Fprintf(ew, "%d row(s) in set\n", len(res.Rows))
			}
		case o.Summary:
			fmt.Fprintf(ew, "Query OK, %d row(s) affected\n", res.RowsAffected)
		}
		if ew.err != nil {
			return &writeError{err: ew.err}
		}
		return err
	}
	r, err := s.queryStmt(ctx, stmt)
	if err != nil {
		return err
	}
	n, err := WriteTSVStream(ew, r)
	if err == nil && o.Summary {
		fmt.Fprintf(ew, "%d row(s) in set\n", n)
	}
	if ew.err != nil {
		return &writeError{err: ew.err}
	}
	return err
}

// errWriter remembers the first error of w.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	if err != nil {
		e.err = err
	}
	return n, err
}

var (
	_ = time.UTC
	_ = schema.Null
)
