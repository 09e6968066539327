package sql

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "time/tzdata" // IANA zone names work on every machine

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
)

// Result is what a statement returns. A statement that yields a result set
// (SELECT, SHOW, DESC) has non-nil Columns, even when no row follows; other
// statements have nil Columns and report RowsAffected where it means
// something (INSERT, UPDATE, DELETE).
type Result struct {
	Columns []string
	// Rows are already formatted per SPEC §4: NULL, true/false, dates and
	// date-times with their precision, doubles in their shortest form.
	Rows         [][]string
	RowsAffected int64
}

// HasResultSet reports whether the statement yielded a result set.
func (r *Result) HasResultSet() bool { return r != nil && r.Columns != nil }

// WriteTSV writes a result set as the shell's script mode prints it: a
// header line of column names, then one line per row, fields separated by
// one TAB. A result without a result set writes nothing.
func (r *Result) WriteTSV(w io.Writer) error {
	if !r.HasResultSet() {
		return nil
	}
	var b strings.Builder
	b.WriteString(strings.Join(r.Columns, "\t"))
	b.WriteByte('\n')
	for _, row := range r.Rows {
		b.WriteString(strings.Join(row, "\t"))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Session is one connection's state: the current database and the session
// variables. Exec runs one statement at a time (calls are serialised); use
// one Session per concurrent client.
type Session struct {
	db  *table.DB
	mem memory.Allocator

	mu            sync.Mutex
	curDB         string
	loc           *time.Location
	zoneName      string
	showHidden    bool
	partialUpdate bool
	// frozen is the instant SET session_now froze the clock at, nil when
	// the wall clock runs.
	frozen *time.Time
	// memLimit is exec_mem_limit: the bytes one query's blocking
	// operators may hold (exec.Budget).
	memLimit int64
	// rowExprs makes the row compiler evaluate the expressions that have
	// kernels too: the golden tests run every SELECT both ways and compare,
	// so that kernels and the row compiler cannot drift apart.
	rowExprs bool
	// vars keeps other variables set by SET, as text.
	vars map[string]string
	// server holds the variables a front end set (SetServerVariables).
	server map[string]string
	// localRestricted and localRoot are where local() may read
	// (RestrictLocalFiles).
	localRestricted bool
	localRoot       string

	// proc is the session's entry in its DB's process list.
	proc *Process
	user string
	host string

	// Clock is the wall clock; tests may replace it before the first Exec.
	Clock func() time.Time
}

// NewSession returns a session on db, in database "default", time zone
// UTC, hidden columns not shown.
// It registers in the process list of db (SHOW PROCESSLIST) as user root
// on localhost until Close, or until it is garbage.
func NewSession(db *table.DB) *Session {
	s := &Session{
		db: db, mem: memory.DefaultAllocator,
		curDB: table.DefaultDatabase, loc: time.UTC, zoneName: "UTC",
		vars: map[string]string{}, Clock: time.Now, memLimit: defaultMemLimit(),
		user: "root", host: "localhost",
	}
	s.proc = ProcessListOf(db).Register(s.user, s.host, s.curDB, time.Now())
	runtime.AddCleanup(s, func(p *Process) { p.Close() }, s.proc)
	return s
}

// SetClient names the user and client host the session runs for, as
// current_user() and SHOW PROCESSLIST show them (a server sets its
// connection's).
func (s *Session) SetClient(user, host string) {
	s.mu.Lock()
	s.user, s.host = user, host
	s.mu.Unlock()
	s.proc.mu.Lock()
	s.proc.user, s.proc.host = user, host
	s.proc.mu.Unlock()
}

// Process returns the session's entry in the process list: its ID is what
// SHOW PROCESSLIST shows and KILL QUERY takes.
func (s *Session) Process() *Process { return s.proc }

// Close removes the session from the process list. The session must not
// be used after.
func (s *Session) Close() { s.proc.Close() }

// begin marks the session's process as running text and returns the
// statement's context (ProcessList.KillQuery cancels it) and the function
// that marks it done.
func (s *Session) begin(ctx context.Context, text string) (context.Context, func()) {
	ctx, done := s.proc.Begin(ctx, text, s.Clock())
	return ctx, func() {
		s.proc.SetDB(s.CurrentDatabase())
		done(s.Clock())
	}
}

// CurrentDatabase returns the database unqualified names refer to.
func (s *Session) CurrentDatabase() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.curDB
}

// FreezeNow freezes the session clock at t, as SET session_now does.
func (s *Session) FreezeNow(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frozen = &t
}

// ParseSessionNow reads a session_now text in the session's time zone.
func (s *Session) ParseSessionNow(text string) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return parseNowIn(text, s.loc)
}

// ParseNow reads a session_now text as a new session does (in UTC unless
// it names a zone): what the commands' --now flags take.
func ParseNow(text string) (time.Time, error) { return parseNowIn(text, time.UTC) }

func parseNowIn(text string, loc *time.Location) (time.Time, error) {
	us, err := parseInstant(text, loc)
	if err != nil {
		return time.Time{}, invalidf("session_now: %w", err)
	}
	return time.UnixMicro(us).UTC(), nil
}

// envLocked is the environment of a statement starting now (s.mu held).
func (s *Session) envLocked() *stmtEnv {
	return &stmtEnv{now: s.nowLocked(), loc: s.loc, db: s.curDB, user: s.user + "@" + s.host,
		connID: s.proc.ID(), sysvar: s.variableLocked, rowExprs: s.rowExprs}
}

// now is the instant a statement starting now runs at.
func (s *Session) nowLocked() time.Time {
	if s.frozen != nil {
		return *s.frozen
	}
	return s.Clock()
}

// Exec parses and runs one statement. The statement takes one now when it
// starts and uses it throughout: NOW(), CURRENT_TIMESTAMP, defaults and the
// TTL check of every row it reads.
func (s *Session) Exec(ctx context.Context, text string) (*Result, error) {
	stmt, values, err := parser.ParseStream(text)
	if err != nil {
		return nil, err
	}
	ctx, done := s.begin(ctx, text)
	defer done()
	return s.execStmt(ctx, stmt, values)
}

// execStmt runs a parsed statement; values streams the rows of an INSERT
// ... VALUES parsed by parseStream (nil otherwise).
func (s *Session) execStmt(ctx context.Context, stmt parser.Stmt, values *parser.ValuesStream) (*Result, error) {
	if streams(stmt) {
		r, err := s.queryStmt(ctx, stmt)
		if err != nil {
			return nil, err
		}
		return ReadResult(r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	env := s.envLocked()
	env.values = values
	res, err := s.execLocked(ctx, env, stmt)
	if err != nil {
		return nil, s.cleanError(err)
	}
	if res == nil {
		res = &Result{}
	}
	return res, nil
}

// ScriptError reports a failed statement of a script.
type ScriptError struct {
	Piece parser.Piece
	Err   error
}

func (e *ScriptError) Error() string { return e.Err.Error() }
func (e *ScriptError) Unwrap() error { return e.Err }

// ExecScript splits src into statements and runs them in order, calling fn
// (when not nil) after each with its result or error. It goes on after a
// failed statement unless bail is set, and returns the errors of the
// failed statements.
func (s *Session) ExecScript(ctx context.Context, src string, bail bool, fn func(p parser.Piece, res *Result, err error)) []*ScriptError {
	var failed []*ScriptError
	for _, p := range parser.SplitStatements(src) {
		if err := ctx.Err(); err != nil {
			failed = append(failed, &ScriptError{Piece: p, Err: err})
			break
		}
		res, err := s.Exec(ctx, p.Text)
		if fn != nil {
			fn(p, res, err)
		}
		if err != nil {
			failed = append(failed, &ScriptError{Piece: p, Err: err})
			if bail {
				break
			}
		}
	}
	return failed
}

// cleanError replaces the paths under the data directory in engine
// messages with the names users know (db.table for a table's directory,
// <data dir> for the rest), keeping the error chain for errors.Is.
func (s *Session) cleanError(err error) error {
	msg := err.Error()
	if clean := cleanMessage(s.db.Dir(), msg); clean != msg {
		return &cleanedError{msg: clean, err: err}
	}
	return err
}

// cleanMessage rewrites the paths under root in msg. Only whole path
// prefixes count: root followed by a separator, starting msg or after a
// character that cannot be part of a path, so that no other text (a SPEC §5
// message, a table name, DATE/DATETIME) changes whatever root is called
// ("e", "ttl", "/", ".", "DATE"). root/db/table becomes db.table; the rest
// of a path under root becomes <data dir>/... only when root has a
// separator of its own, since a bare name followed by a separator may be
// plain words. For "." paths have no prefix at all: a db/table pair counts
// only when a file of the table follows it.
func cleanMessage(root, msg string) string {
	root = filepath.Clean(root)
	sep := string(filepath.Separator)
	prefix := root + sep
	switch {
	case root == ".":
		prefix = ""
	case strings.HasSuffix(root, sep):
		prefix = root
	}
	var b strings.Builder
	i := 0
	for i < len(msg) {
		if !pathStarts(msg, i) || !strings.HasPrefix(msg[i:], prefix) {
			b.WriteByte(msg[i])
			i++
			continue
		}
		rest := msg[i+len(prefix):]
		if db, tbl, n, ok := tablePath(rest); ok && (prefix != "" || strings.HasPrefix(rest[n:], sep)) {
			b.WriteString(db + "." + tbl)
			i += len(prefix) + n
			continue
		}
		if !strings.Contains(strings.TrimSuffix(prefix, sep), sep) {
			// A bare name ("DATE", "e", or "." and "/"): only a table's
			// path is surely one; "DATE/DATETIME" is not.
			b.WriteByte(msg[i])
			i++
			continue
		}
		b.WriteString("<data dir>" + sep)
		i += len(prefix)
	}
	return b.String()
}

// pathStarts reports whether a path may start at msg[i]: at the start, or
// after a space, a quote, an opening bracket or a separator of a list.
func pathStarts(msg string, i int) bool {
	return i == 0 || strings.IndexByte(" \t\n'\"`([{=,:", msg[i-1]) >= 0
}

// tablePath matches "db/table" (valid names) at the start of s, ending at
// a separator, the end, or a character no name holds; n is its length.
func tablePath(s string) (db, tbl string, n int, ok bool) {
	name := func(s string) int {
		j := 0
		for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || j > 0 && s[j] >= '0' && s[j] <= '9') {
			j++
		}
		return j
	}
	a := name(s)
	if a == 0 || a >= len(s) || s[a] != filepath.Separator {
		return "", "", 0, false
	}
	c := name(s[a+1:])
	if c == 0 {
		return "", "", 0, false
	}
	n = a + 1 + c
	if n < len(s) && (s[n] == '.' || s[n] == '-') {
		// A longer name ("t.tmp", "t-1"): not a table directory.
		return "", "", 0, false
	}
	return s[:a], s[a+1 : n], n, true
}

type cleanedError struct {
	msg string
	err error
}

func (e *cleanedError) Error() string { return e.msg }
func (e *cleanedError) Unwrap() error { return e.err }

func (s *Session) execLocked(ctx context.Context, env *stmtEnv, stmt parser.Stmt) (*Result, error) {
	switch st := stmt.(type) {
	case *parser.SelectInto:
		return s.selectInto(ctx, env, st)
	case *parser.CreateDatabase:
		return nil, s.db.CreateDatabase(st.Name, st.IfNotExists)
	case *parser.DropDatabase:
		if err := s.db.DropDatabase(st.Name, st.IfExists); err != nil {
			return nil, err
		}
		if st.Name == s.curDB && st.Name != table.DefaultDatabase {
			s.curDB = table.DefaultDatabase
		}
		return nil, nil
	case *parser.Use:
		ok, err := s.db.HasDatabase(st.DB)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, notFoundf("Unknown database '%s'", st.DB)
		}
		s.curDB = st.DB
		return nil, nil
	case *parser.ShowDatabases:
		names, err := s.db.Databases()
		if err != nil {
			return nil, err
		}
		res := &Result{Columns: []string{"Database"}, Rows: [][]string{}}
		for _, n := range names {
			res.Rows = append(res.Rows, []string{n})
		}
		return res, nil
	case *parser.CreateTable:
		return nil, s.createTable(ctx, st)
	case *parser.CreateTableLike:
		return nil, s.createTableLike(st)
	case *parser.DropTable:
		db, name := s.qualify(st.Table)
		return nil, s.db.DropTable(db, name, st.IfExists)
	case *parser.TruncateTable:
		return s.truncate(ctx, env, st)
	case *parser.AlterTable:
		return nil, s.alterTable(ctx, st)
	case *parser.Insert:
		return s.insert(ctx, env, st)
	case *parser.SetOp:
		return nil, refuseQuery(st)
	case *parser.Update:
		return s.update(ctx, env, st)
	case *parser.Delete:
		return s.delete(ctx, env, st)
	case *parser.ShowCreateTable:
		return s.showCreateTable(st)
	case *parser.ShowTables:
		return s.showTables(st)
	case *parser.ShowColumns:
		return s.describe(st.Table)
	case *parser.Describe:
		return s.describe(st.Table)
	case *parser.ShowTableStats:
		return s.showTableStats(ctx, env, st)
	case *parser.ShowRowsets:
		return s.showRowsets(ctx, env, st)
	case *parser.ShowVariables:
		return s.showVariables(env, st)
	case *parser.ShowProcesslist:
		return s.showProcesslist(st), nil
	case *parser.ShowData:
		return s.showData(ctx, env, st)
	case *parser.Set:
		return nil, s.set(st)
	case *parser.AdminCompact:
		return nil, s.adminCompact(ctx, env, st)
	}
	return nil, unsupportedf("statement %T is not supported", stmt)
}

// qualify returns the database and name a table name refers to.
func (s *Session) qualify(t parser.TableName) (string, string) {
	if t.DB != "" {
		return t.DB, t.Name
	}
	return s.curDB, t.Name
}

func (s *Session) openTable(t parser.TableName) (*table.Table, string, string, error) {
	db, name := s.qualify(t)
	tbl, err := s.db.Table(db, name)
	if err != nil {
		return nil, db, name, err
	}
	return tbl, db, name, nil
}

// ---------------------------------------------------------------------------
// SET

func (s *Session) set(st *parser.Set) error {
	for _, v := range st.Vars {
		if err := s.setVar(v); err != nil {
			return err
		}
	}
	return nil
}

// setText returns the value of a SET as text; def reports DEFAULT.
func setText(v *parser.SetVar) (text string, def bool, err error) {
	switch x := v.Value.(type) {
	case *parser.DefaultExpr:
		return "", true, nil
	case *parser.StringLit:
		return x.Val, false, nil
	case *parser.IntLit:
		return fmt.Sprint(x.Val), false, nil
	case *parser.BoolLit:
		if x.Val {
			return "true", false, nil
		}
		return "false", false, nil
	case *parser.DecimalLit:
		return x.Text, false, nil
	case *parser.FloatLit:
		return x.Text, false, nil
	case *parser.NullLit:
		return "", true, nil
	}
	return "", false, invalidf("SET %s takes a literal value, not %s", v.Name, parser.FormatExpr(v.Value))
}

func parseBoolVar(name, text string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(text)) {
	case "true", "1", "on":
		return true, nil
	case "false", "0", "off":
		return false, nil
	}
	return false, invalidf("Variable '%s' can't be set to the value of '%s'", name, text)
}

func (s *Session) setVar(v *parser.SetVar) error {
	if v.Scope == "GLOBAL" {
		return unsupportedf("SET GLOBAL is not supported; variables belong to the session")
	}
	text, def, err := setText(v)
	if err != nil {
		return err
	}
	switch v.Name {
	case "time_zone":
		if def {
			s.loc, s.zoneName = time.UTC, "UTC"
			return nil
		}
		loc, err := loadZone(text)
		if err != nil {
			return err
		}
		s.loc, s.zoneName = loc, text
	case "show_hidden_columns":
		b := false
		if !def {
			if b, err = parseBoolVar(v.Name, text); err != nil {
				return err
			}
		}
		s.showHidden = b
	case "enable_unique_key_partial_update":
		b := false
		if !def {
			if b, err = parseBoolVar(v.Name, text); err != nil {
				return err
			}
		}
		s.partialUpdate = b
	case "exec_mem_limit":
		if def {
			s.memLimit = defaultMemLimit()
			return nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil || n <= 0 {
			return invalidf("Variable 'exec_mem_limit' can't be set to the value of '%s'; it takes a number of bytes", text)
		}
		s.memLimit = n
	case "session_now":
		if def {
			s.frozen = nil
			return nil
		}
		us, err := parseInstant(text, s.loc)
		if err != nil {
			return invalidf("session_now: %w", err)
		}
		t := time.UnixMicro(us).UTC()
		s.frozen = &t
	default:
		// Other variables (Doris scripts set many) are kept as text and
		// have no effect.
		if def {
			delete(s.vars, v.Name)
		} else {
			s.vars[v.Name] = text
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// helpers shared by the statements

// ttlType is the type __TTL__ is shown with: the source column's type in
// source mode, BIGINT in direct mode.
func ttlType(def *table.Definition, pol ttlPolicy) schema.Type {
	if pol.source != "" {
		if c, ok := def.Schema.Column(pol.source); ok {
			return c.Type
		}
	}
	return bigintType
}

// ttlPolicy is the part of a table's TTL policy the executor needs.
type ttlPolicy struct {
	on     bool
	source string // source column in source mode, "" in direct mode
}

func policyOf(t *table.Table) ttlPolicy {
	p := t.Policy()
	return ttlPolicy{on: p.Mode != 0, source: p.SourceColumn}
}

// tableScope is the scope of a table's visible columns: the user columns,
// then __TTL__ for a row TTL table (resolvable only with hidden columns
// shown).
func (s *Session) tableScope(def *table.Definition, pol ttlPolicy, db, name, alias string) *scope {
	sc := &scope{db: db, tableName: name, qualifiers: []string{name}, showHidden: s.showHidden}
	if alias != "" {
		sc.qualifiers[0] = alias
	}
	sc.cols = make([]column, 0, len(def.Schema.Columns)+1)
	for _, c := range def.Schema.Columns {
		sc.cols = append(sc.cols, column{name: c.Name, typ: c.Type})
	}
	if pol.on {
		sc.cols = append(sc.cols, column{name: schema.TTLColumn, typ: ttlType(def, pol), ttl: true})
	}
	return sc
}

// PrintScriptResult prints the outcome of one statement as the shell's
// script mode does: a result set as TSV (WriteTSV), a failure as one line
// "ERROR: <message>", anything else as nothing.
func PrintScriptResult(w io.Writer, res *Result, err error) error {
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), "\n", " ")
		_, werr := io.WriteString(w, "ERROR: "+msg+"\n")
		return werr
	}
	return res.WriteTSV(w)
}
