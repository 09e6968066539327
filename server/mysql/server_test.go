package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	rsql "github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/table"
)

type testServer struct {
	srv  *Server
	addr string
	reg  *prometheus.Registry
	db   *table.DB
	logs *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServer serves a fresh data directory with user root/secret unless
// o says otherwise.
func startServer(t testing.TB, o Options) *testServer {
	t.Helper()
	db, err := table.OpenDB(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.User == "" && o.Password == "" {
		o.User, o.Password = "root", "secret"
	}
	if o.User == "-" {
		o.User = ""
	}
	ts := &testServer{reg: prometheus.NewRegistry(), db: db, logs: &syncBuffer{}}
	o.Registerer = ts.reg
	o.Log = newLogger(ts.logs)
	ts.srv, err = New(db, o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ts.srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return ts
}

func (ts *testServer) dsn(user, pass, params string) string {
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, pass, "tcp", ts.addr
	dsn := cfg.FormatDSN()
	if params != "" {
		if strings.Contains(dsn, "?") {
			dsn += "&" + params
		} else {
			dsn += "?" + params
		}
	}
	return dsn
}

func (ts *testServer) open(t testing.TB, params string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", ts.dsn("root", "secret", params))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t testing.TB, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, q string, args ...any) sql.Result {
	t.Helper()
	r, err := db.ExecContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}

// rowsOf reads a result as text, NULL for nulls.
func rowsOf(t testing.TB) func(rows *sql.Rows, err error) [][]string {
	return func(rows *sql.Rows, err error) [][]string { return readRows(t, rows, err) }
}

func readRows(t testing.TB, rows *sql.Rows, err error) [][]string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func mysqlErr(t testing.TB, err error, code uint16) *gomysql.MySQLError {
	t.Helper()
	var me *gomysql.MySQLError
	if !errors.As(err, &me) {
		t.Fatalf("want MySQL error %d, got %v", code, err)
	}
	if me.Number != code {
		t.Fatalf("want MySQL error %d, got %d: %s", code, me.Number, me.Message)
	}
	return me
}

func TestAuthentication(t *testing.T) {
	ts := startServer(t, Options{})
	for _, c := range []struct {
		user, pass string
		ok         bool
	}{
		{"root", "secret", true},
		{"root", "wrong", false},
		{"root", "", false},
		{"other", "secret", false},
	} {
		db, err := sql.Open("mysql", ts.dsn(c.user, c.pass, ""))
		if err != nil {
			t.Fatal(err)
		}
		err = db.Ping()
		db.Close()
		if c.ok {
			if err != nil {
				t.Errorf("%s/%s: %v", c.user, c.pass, err)
			}
			continue
		}
		me := mysqlErr(t, err, 1045)
		if me.SQLState != [5]byte{'2', '8', '0', '0', '0'} || !strings.Contains(me.Message, "Access denied for user '"+c.user+"'") {
			t.Errorf("%s/%s: %+v", c.user, c.pass, me)
		}
	}
	if got := testutil.ToFloat64(ts.srv.metrics.loginFailures); got != 3 {
		t.Errorf("login failures = %v, want 3", got)
	}
	if !strings.Contains(ts.logs.String(), "mysql login failed for user 'other'") {
		t.Errorf("no log line for the failed login:\n%s", ts.logs.String())
	}
}

// TestHandshakeDatabase connects with a database, which the library
// selects before the connection is ready.
func TestHandshakeDatabase(t *testing.T) {
	ts := startServer(t, Options{})
	mustExec(t, ts.open(t, ""), "CREATE DATABASE d1")
	db, err := sql.Open("mysql", strings.Replace(ts.dsn("root", "secret", ""), ")/", ")/d1", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := fmt.Sprint(rowsOf(t)(db.Query("SELECT DATABASE()"))); got != "[[d1]]" {
		t.Errorf("database %s", got)
	}
	db2, _ := sql.Open("mysql", strings.Replace(ts.dsn("root", "secret", ""), ")/", ")/nope", 1))
	defer db2.Close()
	mysqlErr(t, db2.Ping(), 1049)
}

// TestCachingSha2Password logs in with caching_sha2_password's fast path
// (no TLS needed: only scrambles travel).
func TestCachingSha2Password(t *testing.T) {
	ts := startServer(t, Options{})
	ts.srv.greetSha2.Store(true)
	for _, c := range []struct {
		pass string
		ok   bool
	}{{"secret", true}, {"wrong", false}, {"", false}} {
		db, _ := sql.Open("mysql", ts.dsn("root", c.pass, ""))
		err := db.Ping()
		db.Close()
		if c.ok && err != nil {
			t.Errorf("%q: %v", c.pass, err)
		}
		if !c.ok {
			mysqlErr(t, err, 1045)
		}
	}
}

// TestEmptyPassword: a user configured with an empty password (serve
// --allow-empty-password) logs in without one, and not with one.
func TestEmptyPassword(t *testing.T) {
	ts := startServer(t, Options{User: "root"})
	for _, greetSha2 := range []bool{false, true} {
		ts.srv.greetSha2.Store(greetSha2)
		for _, c := range []struct {
			pass string
			ok   bool
		}{{"", true}, {"x", false}} {
			db, _ := sql.Open("mysql", ts.dsn("root", c.pass, ""))
			err := db.Ping()
			db.Close()
			if c.ok && err != nil {
				t.Errorf("sha2 %v, %q: %v", greetSha2, c.pass, err)
			}
			if !c.ok {
				mysqlErr(t, err, 1045)
			}
		}
	}
}

func TestOpenServerAcceptsAnyUser(t *testing.T) {
	ts := startServer(t, Options{User: "-"})
	db, err := sql.Open("mysql", ts.dsn("anyone", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
}

func TestStatementsAndTypes(t *testing.T) {
	ts := startServer(t, Options{})
	db := ts.open(t, "multiStatements=true")
	mustExec(t, db, `CREATE TABLE t (id BIGINT NOT NULL, d DOUBLE, m DECIMAL(10,2), day DATE, at DATETIME(3), s VARCHAR(20), b BOOLEAN, txt STRING)
		DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1`)
	r := mustExec(t, db, `INSERT INTO t VALUES (1, 1.5e0, 12.30, '2026-01-02', '2026-01-02 03:04:05.678', 'a	b', true, 'x'), (2, NULL, NULL, NULL, NULL, NULL, false, NULL)`)
	if n, _ := r.RowsAffected(); n != 2 {
		t.Errorf("rows affected = %d", n)
	}
	rows, err := db.Query("SELECT * FROM t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	cts, _ := rows.ColumnTypes()
	var names []string
	for _, c := range cts {
		names = append(names, c.DatabaseTypeName())
	}
	if got, want := strings.Join(names, ","), "BIGINT,DOUBLE,DECIMAL,DATE,DATETIME,VARCHAR,TINYINT,VARCHAR"; got != want {
		t.Errorf("types %s, want %s", got, want)
	}
	if p, s, ok := cts[2].DecimalSize(); !ok || p != 10 || s != 2 {
		t.Errorf("decimal size %d,%d,%v", p, s, ok)
	}
	got := rowsOf(t)(rows, nil)
	want := [][]string{
		{"1", "1.5", "12.30", "2026-01-02", "2026-01-02 03:04:05.678", "a\tb", "1", "x"},
		{"2", "NULL", "NULL", "NULL", "NULL", "NULL", "0", "NULL"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows\n%q\nwant\n%q", got, want)
	}
	// Typed scans through the binary protocol (a prepared statement).
	var (
		id  int64
		d   float64
		m   string
		at  time.Time
		b   bool
		day time.Time
	)
	db2 := ts.open(t, "parseTime=true")
	if err := db2.QueryRow("SELECT id, d, m, at, b, day FROM t WHERE id = ?", 1).Scan(&id, &d, &m, &at, &b, &day); err != nil {
		t.Fatal(err)
	}
	if id != 1 || d != 1.5 || m != "12.30" || !at.Equal(time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC)) || !b || day.Format(time.DateOnly) != "2026-01-02" {
		t.Errorf("scanned %v %v %v %v %v %v", id, d, m, at, b, day)
	}
	// Multi-statements: each result in turn.
	rows, err = db.Query("SET time_zone = '+08:00'; SELECT count(*) FROM t; SELECT @@time_zone")
	if err != nil {
		t.Fatal(err)
	}
	var sets [][][]string
	for {
		var rs [][]string
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			rs = append(rs, []string{v})
		}
		sets = append(sets, rs)
		if !rows.NextResultSet() {
			break
		}
	}
	rows.Close()
	if fmt.Sprint(sets) != "[[[2]] [[+08:00]]]" {
		t.Errorf("multi-statement results %v", sets)
	}
}

func TestPreparedArguments(t *testing.T) {
	ts := startServer(t, Options{})
	db := ts.open(t, "parseTime=true")
	mustExec(t, db, `CREATE TABLE p (id BIGINT, at DATETIME(6), s STRING, d DOUBLE, ok BOOLEAN) DUPLICATE KEY(id)`)
	at := time.Date(2026, 3, 4, 5, 6, 7, 891000, time.UTC)
	mustExec(t, db, "INSERT INTO p VALUES (?, ?, ?, ?, ?)", 7, at, "it's a \\ 'test' ?", 2.25, true)
	mustExec(t, db, "INSERT INTO p VALUES (?, ?, ?, ?, ?)", 8, nil, []byte("bytes"), nil, false)
	got := rowsOf(t)(db.Query("SELECT id, at, s, d, ok FROM p WHERE id >= ? AND s <> '?' ORDER BY id", 7))
	want := [][]string{{"7", "2026-03-04T05:06:07.000891Z", "it's a \\ 'test' ?", "2.25", "1"}, {"8", "NULL", "bytes", "NULL", "0"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	_, err := db.Exec("INSERT INTO p VALUES (?, ?)", 1, 2)
	if err == nil {
		t.Error("a wrong argument count succeeded")
	}
}

func TestErrors(t *testing.T) {
	ts := startServer(t, Options{})
	db := ts.open(t, "")
	for _, c := range []struct {
		q     string
		code  uint16
		state string
		text  string
	}{
		{"SELECT * FROM nope", 1146, "42S02", "Unknown table 'default.nope'"},
		{"SELEC 1", 1064, "42000", "syntax error at line 1, column 1 near 'SELEC'"},
		{"USE nope", 1049, "42000", "Unknown database 'nope'"},
		{`CREATE TABLE e (id INT) PROPERTIES ("function_column.ttl" = "1 day")`, 1105, "HY000",
			"function_column.enable_row_ttl must be true when row ttl properties are specified"},
		{"SELECT @@no_such_variable", 1193, "HY000", "Unknown system variable 'no_such_variable'"},
		{"BEGIN", 1235, "42000", "transactions are not supported"},
	} {
		_, err := db.Exec(c.q)
		me := mysqlErr(t, err, c.code)
		if string(me.SQLState[:]) != c.state || !strings.Contains(me.Message, c.text) {
			t.Errorf("%s: %d %s %q", c.q, me.Number, me.SQLState, me.Message)
		}
	}
	mustExec(t, db, "SELECT 1")
	m := ts.srv.metrics
	if e, ok := testutil.ToFloat64(m.queries.WithLabelValues("error")), testutil.ToFloat64(m.queries.WithLabelValues("ok")); e != 6 || ok != 1 {
		t.Errorf("queries: %v failed, %v ok; want 6 and 1", e, ok)
	}
	if n := testutil.CollectAndCount(m.duration); n != 1 {
		t.Errorf("duration histogram: %d series", n)
	}
	if got := testutil.ToFloat64(m.connections); got < 1 {
		t.Errorf("connections = %v", got)
	}
	// The registry serves them as /metrics does.
	if _, err := ts.reg.Gather(); err != nil {
		t.Error(err)
	}
	if !strings.Contains(ts.logs.String(), "mysql connection 1 from 127.0.0.1:") {
		t.Errorf("no connection log line:\n%s", ts.logs.String())
	}
}

func TestClientStatements(t *testing.T) {
	ts := startServer(t, Options{MaxConnections: 77})
	db := ts.open(t, "")
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"SET NAMES utf8mb4", "SET autocommit = 1", "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
		"SET time_zone = 'Asia/Shanghai'", "CREATE DATABASE d2", "USE d2", "CREATE TABLE x (id INT)", "COMMIT", "ROLLBACK"} {
		mustExec(t, conn, q)
	}
	for _, c := range []struct{ q, want string }{
		{"SELECT @@version_comment LIMIT 1", "[[rowttl]]"},
		{"select @@version, version() = @@version", "[[" + rsql.VersionString() + " 1]]"},
		{"SELECT current_user(), connection_id() > 0", "[[root@localhost 1]]"},
		{"SELECT @@max_connections, @@session.wait_timeout", "[[77 28800]]"},
		{"SHOW VARIABLES LIKE 'max_conn%'", "[[max_connections 77]]"},
		{"SELECT DATABASE()", "[[d2]]"},
		{"SELECT @@session.transaction_isolation, @@tx_isolation AS iso", "[[REPEATABLE-READ REPEATABLE-READ]]"},
		{"SHOW VARIABLES LIKE 'time_zone'", "[[time_zone Asia/Shanghai]]"},
		{"SHOW VARIABLES WHERE Variable_name = 'autocommit' OR Variable_name = 'max_allowed_packet'", "[[autocommit 1] [max_allowed_packet 67108864]]"},
		{"SHOW WARNINGS", "[]"},
		{"SHOW DATABASES", "[[d2] [default]]"},
		{"SHOW FULL TABLES", "[[x BASE TABLE]]"},
		{"SHOW COLUMNS FROM x", "[[id INT No true NULL ]]"},
	} {
		got := fmt.Sprint(rowsOf(t)(conn.QueryContext(context.Background(), c.q)))
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.q, got, c.want)
		}
	}
}

// TestLocalFiles: a connection's local() reads no file unless the server
// names a directory (Options.LocalFiles), then only files under it.
func TestLocalFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.csv"), []byte("1\tone\n2\ttwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	q := func(path string) string {
		return fmt.Sprintf("SELECT count(*) FROM local(\"file_path\" = '%s', \"format\" = \"csv\")", path)
	}
	closed := startServer(t, Options{}).open(t, "")
	_, err := closed.Exec(q(filepath.Join(dir, "x.csv")))
	if me := mysqlErr(t, err, 1235); !strings.Contains(me.Message, "local() is not allowed on this server") {
		t.Errorf("without a directory: %q", me.Message)
	}
	open := startServer(t, Options{LocalFiles: dir}).open(t, "")
	for _, p := range []string{"x.csv", filepath.Join(dir, "x.csv")} {
		if got := count(t, open, q(p)); got != 2 {
			t.Errorf("%s: count %d", p, got)
		}
	}
	_, err = open.Exec(q("/etc/passwd"))
	if me := mysqlErr(t, err, 1235); !strings.Contains(me.Message, "is outside the directory local() may read") {
		t.Errorf("a file outside: %q", me.Message)
	}
	_, err = open.Exec(q("nosuch.csv"))
	if me := mysqlErr(t, err, 1105); !strings.Contains(me.Message, "no such file") {
		t.Errorf("a missing file: %d %q", me.Number, me.Message)
	}
}

// TestReturnsRowsRemembered: the kind a connection remembers for its last
// statement text answers only that text; other texts, failing ones and
// long ones are parsed each time.
func TestReturnsRowsRemembered(t *testing.T) {
	st := &connState{}
	long := "SELECT 1 " + strings.Repeat(" ", maxRememberedText)
	for i, c := range []struct {
		text string
		rows bool
		err  bool
		kept string
	}{
		{text: "SELECT count(*) FROM t", rows: true, kept: "SELECT count(*) FROM t"},
		{text: "SELECT count(*) FROM t", rows: true, kept: "SELECT count(*) FROM t"},
		{text: "INSERT INTO t VALUES (1)", kept: "INSERT INTO t VALUES (1)"},
		{text: "INSERT INTO t VALUES (1)", kept: "INSERT INTO t VALUES (1)"},
		{text: "SHOW TABLES", rows: true, kept: "SHOW TABLES"},
		{text: "SELEC 1", err: true, kept: "SHOW TABLES"},
		{text: "SELEC 1", err: true, kept: "SHOW TABLES"},
		{text: long, rows: true, kept: "SHOW TABLES"},
		{text: "CREATE TABLE u (id INT) DUPLICATE KEY(id)", kept: "CREATE TABLE u (id INT) DUPLICATE KEY(id)"},
		{text: "", err: true, kept: "CREATE TABLE u (id INT) DUPLICATE KEY(id)"},
	} {
		rows, err := st.returnsRows(c.text)
		if rows != c.rows || (err != nil) != c.err || st.rowsText != c.kept {
			t.Errorf("%d %.30q: rows %v err %v, kept %q; want rows %v err %v, kept %q", i, c.text, rows, err, st.rowsText, c.rows, c.err, c.kept)
		}
	}
}
