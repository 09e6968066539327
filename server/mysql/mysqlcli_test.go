package mysql

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/datadriven"
	"github.com/prometheus/client_golang/prometheus/testutil"
	rexec "github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	rsql "github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
)

// mysqlClient returns the path of Debian's mariadb-client `mysql`, or
// skips the test when it is missing outside CI (CI installs it: .ci/run).
func mysqlClient(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("mysql")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the mysql client (mariadb-client) is missing; .ci/run installs it")
		}
		t.Skip("no mysql client (apt-get install mariadb-client) to test the server with")
	}
	return path
}

// goldenNow is the clock of sql's golden files (sql/exec_test.go).
var goldenNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// TestGoldenScriptsThroughMySQLClient runs the golden scripts of
// sql/testdata/exec through `mysql -B` against a server and compares each
// statement's output with what `rowttl sql -f` prints for it (an
// in-process session on another data directory, both on the golden
// files' clock). The intended differences, applied to the local side
// before comparing:
//
//   - BOOLEAN values are 1 and 0 (TINYINT(1) on the wire);
//   - a result set without rows prints nothing, not even its header;
//   - the lines of a multi-line value (SHOW CREATE TABLE) are escaped as
//     \n, as mysql -B escapes every value;
//   - mysql -B writes a carriage return as it is, where the shell writes
//     \r (the server sends the value unchanged);
//   - an error prints as mysql prints it, "ERROR 1146 (42S02) at line N:
//     <message>", with the same message.
//
// Statements about the connection itself (SHOW VARIABLES, SHOW PROCESSLIST,
// SELECT @@name, current_user(), version()) are compared too: the session
// answers them on both sides, the server's connection being the only
// process of its data directory, at localhost.
func TestGoldenScriptsThroughMySQLClient(t *testing.T) {
	client := mysqlClient(t)
	paths, err := filepath.Glob("../../sql/testdata/exec/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) { compareGolden(t, client, path) })
	}
}

type goldenPiece struct {
	text  string
	want  string
	mask  []string
	line  int
	label string
}

func goldenDB(t *testing.T) *table.DB {
	t.Helper()
	// Background compaction is off on both sides, so that both run the
	// same compactions (the scripts' ADMIN COMPACT) whatever the timing.
	db, err := table.OpenDB(t.TempDir(), &table.Options{Clock: func() time.Time { return goldenNow }, DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func goldenSession(db *table.DB) *rsql.Session {
	s := rsql.NewSession(db)
	s.Clock = func() time.Time { return goldenNow }
	return s
}

func compareGolden(t *testing.T, client, path string) {
	ctx := context.Background()
	local := goldenSession(goldenDB(t))
	local.RestrictLocalFiles(goldenLocalFiles(t))
	var pieces []goldenPiece
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		var mask []string
		for _, a := range d.CmdArgs {
			if a.Key == "mask" {
				mask = a.Vals
			}
		}
		for _, p := range parser.SplitStatements(d.Input) {
			pieces = append(pieces, goldenPiece{text: p.Text, want: localOutput(t, ctx, local, p), mask: mask, line: p.Line})
		}
		return d.Expected // the golden output itself is sql's TestExec's to check
	})

	// The server side: one mysql process for the whole file (one session,
	// as the golden driver has), a marker statement after each statement
	// to cut its output.
	srv := startGoldenServer(t)
	var in strings.Builder
	for i := range pieces {
		pieces[i].label = fmt.Sprintf("@@piece %d@@", i)
		fmt.Fprintf(&in, "%s;\nSELECT '%s' AS `~marker`;\n", pieces[i].text, pieces[i].label)
	}
	host, port, _ := net.SplitHostPort(srv)
	cmd := exec.Command(client, "-h", host, "-P", port, "-uroot", "-psecret", "--batch", "--quick", "--unbuffered", "--force", "--default-character-set=utf8mb4")
	cmd.Stdin = strings.NewReader(in.String())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil && !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("mysql: %v\n%s", err, out.String())
	}
	chunks := splitMarked(out.String())
	for i, p := range pieces {
		got, ok := chunks[p.label]
		if !ok {
			t.Fatalf("line %d: no output for %s\n%s", p.line, p.text, out.String())
		}
		// With --force, mysql echoes a failed statement after its error.
		got = reEcho.ReplaceAllString(got, "")
		got = reMySQLError.ReplaceAllString(got, "ERROR: $1")
		got = strings.ReplaceAll(got, "\r", `\r`)
		want := applyMask(p.want, p.mask)
		got = applyMask(got, p.mask)
		if got != want && !(got == "" && isBareHeader(want)) {
			t.Errorf("line %d (statement %d): %s\nrowttl sql -f:\n%s\nmysql -B:\n%s", p.line, i, p.text, want, got)
		}
	}
}

var reEcho = regexp.MustCompile(`(?s)--------------\n.*?\n--------------\n\n`)

var reMySQLError = regexp.MustCompile(`(?m)^ERROR \d+ \([0-9A-Z]{5}\) at line \d+: (.*)$`)

// splitMarked cuts mysql's output at the marker results: the output of a
// statement is what precedes its marker.
func splitMarked(out string) map[string]string {
	chunks := map[string]string{}
	var cur strings.Builder
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "~marker" {
			continue
		}
		if strings.HasPrefix(l, "@@piece ") && strings.HasSuffix(l, "@@") {
			chunks[l] = cur.String()
			cur.Reset()
			continue
		}
		cur.WriteString(l)
		cur.WriteByte('\n')
	}
	return chunks
}

func isBareHeader(s string) bool {
	return strings.Count(s, "\n") == 1 && !strings.HasPrefix(s, "ERROR: ")
}

// applyMask replaces the fields of the named columns by * in TSV output.
func applyMask(s string, mask []string) string {
	if len(mask) == 0 || s == "" {
		return s
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	var idx []int
	for i, c := range strings.Split(lines[0], "\t") {
		for _, m := range mask {
			if c == m {
				idx = append(idx, i)
			}
		}
	}
	for k := 1; k < len(lines); k++ {
		f := strings.Split(lines[k], "\t")
		for _, i := range idx {
			if i < len(f) {
				f[i] = "*"
			}
		}
		lines[k] = strings.Join(f, "\t")
	}
	return strings.Join(lines, "\n") + "\n"
}

// localOutput is what `rowttl sql -f` prints for one statement, with the
// intended differences of the protocol applied.
func localOutput(t *testing.T, ctx context.Context, s *rsql.Session, p parser.Piece) string {
	var b bytes.Buffer
	stmt, perr := parser.Parse(p.Text)
	isSelect := false
	switch stmt.(type) {
	case *parser.Select, *parser.SetOp:
		isSelect = true
	}
	if perr == nil && isSelect {
		r, err := s.Query(ctx, p.Text)
		if err != nil {
			rsql.PrintScriptResult(&b, nil, err)
			return b.String()
		}
		writeProtocolTSV(&b, r)
		return b.String()
	}
	if _, err := s.RunScript(ctx, p.Text, rsql.ScriptOptions{}, &b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if _, ok := stmt.(*parser.ShowCreateTable); ok && perr == nil && !strings.HasPrefix(out, "ERROR: ") {
		if i := strings.IndexByte(out, '\n'); i >= 0 {
			body := strings.TrimSuffix(out[i+1:], "\n")
			out = out[:i+1] + strings.ReplaceAll(body, "\n", `\n`) + "\n"
		}
	}
	return out
}

// writeProtocolTSV writes a result as WriteTSVStream does (the header
// with the first batch, the error after the rows), BOOLEAN as 1/0.
func writeProtocolTSV(b *bytes.Buffer, r array.RecordReader) {
	defer r.Release()
	sch := r.Schema()
	var header []string
	types := make([]schema.Type, sch.NumFields())
	for i, f := range sch.Fields() {
		header = append(header, f.Name)
		types[i] = rsql.FieldType(f)
	}
	loc := rsql.ResultZone(sch)
	b.WriteString(strings.Join(header, "\t") + "\n")
	var line []byte
	for r.Next() {
		rec := r.RecordBatch()
		fs := make([]func([]byte, int) []byte, rec.NumCols())
		for j := range fs {
			if types[j].Kind == schema.Boolean {
				c := rec.Column(j).(*array.Boolean)
				fs[j] = func(dst []byte, i int) []byte {
					switch {
					case c.IsNull(i):
						return append(dst, "NULL"...)
					case c.Value(i):
						return append(dst, '1')
					}
					return append(dst, '0')
				}
				continue
			}
			fs[j] = rexec.ColumnFormatter(rec.Column(j), types[j], loc, true)
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			line = line[:0]
			for j, f := range fs {
				if j > 0 {
					line = append(line, '\t')
				}
				line = f(line, i)
			}
			b.Write(append(line, '\n'))
		}
	}
	if err := r.Err(); err != nil {
		if strings.Count(b.String(), "\n") == 1 {
			b.Reset() // the header waits for a row
		}
		rsql.PrintScriptResult(b, nil, err)
	}
}

// startGoldenServer serves a fresh data directory on the golden clock.
// goldenLocalFiles is where local() reads on both sides: the golden files'
// paths are relative to sql's package directory, the working directory of
// its tests.
func goldenLocalFiles(t *testing.T) string {
	dir, err := filepath.Abs("../../sql")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func startGoldenServer(t *testing.T) string {
	db := goldenDB(t)
	srv, err := New(db, Options{User: "root", Password: "secret", NewSession: goldenSession, LocalFiles: goldenLocalFiles(t)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return ln.Addr().String()
}

// TestMySQLClientCtrlC interrupts `mysql --quick` while it streams a large
// result, as Ctrl-C does: the client sends KILL QUERY on a connection of
// its own, the statement stops, and the server serves on.
func TestMySQLClientCtrlC(t *testing.T) {
	client := mysqlClient(t)
	ts := startServer(t, Options{})
	db := ts.open(t, "")
	n := bigTable(t, db)
	// 40 MB: more than loopback's socket buffers hold.
	mustExec(t, db, fmt.Sprintf("INSERT INTO big SELECT id + %d, s FROM big", n))
	host, port, _ := net.SplitHostPort(ts.addr)
	cmd := exec.Command(client, "-h", host, "-P", port, "-uroot", "--quick", "--batch", "-e", "SELECT id, s FROM big")
	cmd.Env = append(os.Environ(), "MYSQL_PWD=secret")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// Read the header and a row, then stop reading: the statement waits
	// for the client, running.
	br := bufio.NewReader(out)
	for i := 0; i < 2; i++ {
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	running := func() bool {
		return strings.Contains(fmt.Sprint(rowsOf(t)(db.Query("SHOW PROCESSLIST"))), "Query 0 executing SELECT id, s FROM big")
	}
	waitFor := func(what string, cond func() bool) {
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Running, and still running a moment later: blocked on the client.
	waitFor("the statement to wait for the client", func() bool {
		if !running() {
			return false
		}
		time.Sleep(200 * time.Millisecond)
		return running()
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitFor("the statement to stop", func() bool { return !running() })
	go io.Copy(io.Discard, br)
	_ = cmd.Wait()
	if got := testutil.ToFloat64(ts.srv.metrics.queries.WithLabelValues("cancelled")); got != 1 {
		t.Errorf("cancelled statements: %v\n%s", got, ts.logs.String())
	}
	if n := count(t, db, "SELECT 1"); n != 1 {
		t.Error("the server stopped answering")
	}
}
