package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chzyer/readline"
	"github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/sql/parser"
)

// runner runs statements and prints their outcome, in script mode or for
// the interactive shell (which adds the summary lines with timings).
type runner struct {
	sess    *sql.Session
	out     io.Writer
	pr      printer
	summary bool
	// progress, when not nil, is the terminal long statements a person
	// started (ADMIN COMPACT) show they are still running on.
	progress io.Writer
	// now is the clock the timings read; tests replace it.
	now func() time.Time
}

// outputError is a failure to write the output, not of the statement: it
// ends the script.
type outputError struct{ err error }

func (e *outputError) Error() string { return e.err.Error() }
func (e *outputError) Unwrap() error { return e.err }

// statement runs one statement of a script and prints its result set (or,
// with the summary, what it did). A failed statement prints its ERROR line
// and returns its error; an *outputError means the output failed.
func (r *runner) statement(ctx context.Context, p parser.Piece, vertical bool) error {
	err := r.run(ctx, p, vertical)
	var oe *outputError
	if err == nil || errors.As(err, &oe) {
		return err
	}
	err = parser.InScript(err, p)
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		msg = "Query execution was interrupted"
	}
	line := "ERROR: " + msg + "\n"
	if r.summary {
		line += "\n"
	}
	if _, werr := io.WriteString(r.out, line); werr != nil {
		return &outputError{werr}
	}
	return err
}

func (r *runner) run(ctx context.Context, p parser.Piece, vertical bool) error {
	stmt, err := parser.Parse(p.Text)
	if err != nil {
		return err
	}
	start := r.now()
	if !sql.ReturnsRows(stmt) {
		stop := func() {}
		if ac, ok := stmt.(*parser.AdminCompact); ok {
			stop = elapsedTicker(r.progress, "compacting "+ac.Table.String())
		}
		res, err := r.sess.Exec(ctx, p.Text)
		stop()
		if err != nil {
			return err
		}
		if r.summary {
			if _, err := fmt.Fprintf(r.out, "Query OK, %s affected (%s)\n\n", plural(res.RowsAffected, "row"), r.since(start)); err != nil {
				return &outputError{err}
			}
		}
		return nil
	}
	rd, err := r.sess.Query(ctx, p.Text)
	if err != nil {
		return err
	}
	ow := &errWriter{w: r.out}
	total, shown, err := r.pr.rows(ow, rd, vertical)
	if ow.err != nil {
		return &outputError{ow.err}
	}
	if err != nil {
		return err
	}
	capped := shown < total && (r.pr.format == formatTable || r.pr.format == formatVertical || vertical)
	if !r.summary && !capped {
		return nil
	}
	var line string
	switch {
	case !r.summary:
		// A capped display says so in script mode too.
		line = fmt.Sprintf("%d of %s shown; --max-rows 0 shows every row\n", shown, plural(total, "row"))
	case total == 0:
		line = fmt.Sprintf("Empty set (%s)\n", r.since(start))
	case capped:
		line = fmt.Sprintf("%s in set, %d shown (%s); --max-rows %d caps the display, --max-rows 0 shows every row\n",
			plural(total, "row"), shown, r.since(start), r.pr.maxRows)
	default:
		line = fmt.Sprintf("%s in set (%s)\n", plural(total, "row"), r.since(start))
	}
	if r.summary {
		line += "\n"
	}
	if _, err := io.WriteString(r.out, line); err != nil {
		return &outputError{err}
	}
	return nil
}

func (r *runner) since(start time.Time) string { return elapsed(r.now().Sub(start).Seconds()) }

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
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

// lineEditor is what the shell needs of readline; tests drive the shell
// through a fake one.
type lineEditor interface {
	Readline() (string, error)
	SetPrompt(string)
	SaveHistory(string) error
}

const (
	prompt     = "rowttl> "
	contPrompt = "     -> "
	leaveHint  = `(to leave, type \q, exit or quit, or press Ctrl-D)`
)

// shell is the interactive mode. A statement runs as soon as the ';' (or
// \G) ending it is typed, several on one line one after the other; the
// lines of a statement make one history entry. Ctrl-C while a statement
// runs cancels it (its context) and keeps the session; at the prompt it
// discards the unfinished statement, and pressed again at an empty prompt
// it says how to leave.
type shell struct {
	r          *runner
	ed         lineEditor
	interrupts <-chan os.Signal

	pending    string   // the unfinished statement's text
	entry      []string // lines typed since the last history entry
	lastCtrlC  bool     // the last key at an empty prompt was Ctrl-C
	cancelled  atomic.Int64
	statements int64
}

func (sh *shell) printf(format string, args ...any) { fmt.Fprintf(sh.r.out, format, args...) }

func (sh *shell) loop(ctx context.Context) error {
	sh.printf("rowttl %s SQL shell. End statements with ';' (or \\G for vertical rows).\n", version())
	sh.printf("Type help or \\h for help, \\q to quit.\n\n")
	for {
		if sh.pending == "" {
			sh.ed.SetPrompt(prompt)
		} else {
			sh.ed.SetPrompt(contPrompt)
		}
		line, err := sh.ed.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			if sh.pending != "" || strings.TrimSpace(line) != "" {
				sh.pending, sh.entry, sh.lastCtrlC = "", nil, false
				continue
			}
			if sh.lastCtrlC {
				sh.printf("%s\n", leaveHint)
			}
			sh.lastCtrlC = true
			continue
		case errors.Is(err, io.EOF):
			if strings.TrimSpace(sh.pending) != "" {
				sh.printf("unfinished statement discarded (it needs a ';'): %s\n", oneLine(sh.pending, 60))
			}
			sh.printf("Bye\n")
			return nil
		case err != nil:
			return err
		}
		sh.lastCtrlC = false
		quit, err := sh.line(ctx, line)
		if err != nil || quit {
			return err
		}
	}
}

// line handles one line typed at the prompt and reports whether the user
// asked to leave.
func (sh *shell) line(ctx context.Context, line string) (quit bool, err error) {
	if sh.pending == "" {
		word := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(line), ";"))
		switch word {
		case "":
			return false, nil
		case "exit", "quit", `\q`:
			return true, nil
		case "help", `\h`, `\?`, "?", `\help`:
			sh.save(line)
			sh.printf("%s", shellHelp)
			return false, nil
		}
	}
	sh.entry = append(sh.entry, strings.TrimSpace(line))
	src := sh.pending + line + "\n"
	vertical := false
	if t := strings.TrimRight(src, " \t\r\n"); strings.HasSuffix(t, `\G`) || strings.HasSuffix(t, `\g`) {
		// \G ends a statement like ';' but shows its rows vertically, unless
		// it is inside a quote (then the ';' put in its place ends nothing).
		cand := t[:len(t)-2] + ";"
		if done, rest := parser.CompleteStatements(cand); len(done) > 0 && rest == "" {
			src, vertical = cand, strings.HasSuffix(t, `\G`)
		}
	}
	done, rest := parser.CompleteStatements(src)
	sh.pending = rest
	if len(done) == 0 {
		return false, nil
	}
	sh.save(strings.Join(sh.entry, " "))
	sh.entry = nil
	if rest != "" {
		sh.entry = []string{strings.TrimSpace(rest)}
	}
	for i, p := range done {
		if err := sh.exec(ctx, p, vertical && i == len(done)-1); err != nil {
			return false, err
		}
	}
	return false, nil
}

func (sh *shell) save(entry string) {
	if entry = strings.TrimSpace(entry); entry != "" {
		_ = sh.ed.SaveHistory(entry) // a history file that cannot be written does not stop the shell
	}
}

// exec runs one statement; Ctrl-C cancels its context. Only a failure to
// write the output is returned.
func (sh *shell) exec(ctx context.Context, p parser.Piece, vertical bool) error {
	// A Ctrl-C that came while nothing ran is not for this statement.
	for drained := false; !drained; {
		select {
		case <-sh.interrupts:
		default:
			drained = true
		}
	}
	sctx, cancel := context.WithCancel(ctx)
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-sh.interrupts:
			sh.cancelled.Add(1)
			cancel()
		case <-stop:
		}
	}()
	sh.statements++
	err := sh.r.statement(sctx, p, vertical)
	close(stop)
	<-watched
	cancel()
	var oe *outputError
	if errors.As(err, &oe) {
		return oe.err
	}
	return nil
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "..."
	}
	return s
}

const shellHelp = `Statements (end each with ';', or with \G to show rows vertically):
  SELECT ... [FROM [db.]t] [WHERE ...] [GROUP BY ...] [ORDER BY ...] [LIMIT n]
  INSERT INTO t [(cols)] VALUES (...) | SELECT ...    UPDATE t SET ... WHERE ...
  DELETE FROM t WHERE ...                             EXPLAIN SELECT ...
  CREATE TABLE / DROP TABLE / ALTER TABLE / TRUNCATE TABLE
  CREATE DATABASE / DROP DATABASE / USE db
  SHOW DATABASES | TABLES | CREATE TABLE t | COLUMNS FROM t | TABLE STATS t | ROWSETS FROM t
  SHOW VARIABLES [LIKE 'pattern'] | PROCESSLIST | DATA [FROM db]
  DESC t                                   ADMIN COMPACT TABLE t WHERE type = 'full'
  SET time_zone = '+08:00' | session_now = '2026-01-01 00:00:00' | DEFAULT
  SET show_hidden_columns = true | exec_mem_limit = bytes
Shell commands:
  help, \h, \?   this help
  \G             end a statement and show its rows vertically
  \q, exit, quit leave (or Ctrl-D)
  Ctrl-C         cancel the running statement, or discard the one being typed
Flags of rowttl sql: --format table|tsv|csv|json|vertical, --max-rows N (0: all).
`
