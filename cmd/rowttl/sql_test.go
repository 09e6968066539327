package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// dorisScript is the row TTL example of the Doris documentation, verbatim
// in style: a source-mode table whose rows live one day after event_time.
const dorisScript = `-- Row TTL, as the Doris documentation shows it.
SET time_zone = '+08:00';
DROP TABLE IF EXISTS t;
CREATE TABLE t (
    id BIGINT NOT NULL,
    event_time DATETIME(6) NOT NULL COMMENT 'event time',
    msg VARCHAR(100) NULL
)
DUPLICATE KEY(id)
DISTRIBUTED BY HASH(id) BUCKETS 1
PROPERTIES (
    "replication_num" = "1",
    "function_column.enable_row_ttl" = "true",
    "function_column.ttl_col" = "event_time",
    "function_column.ttl" = "1 day",
    "function_column.ttl_time_zone" = "+08:00"
);
INSERT INTO t VALUES (1, NOW(6) - INTERVAL 2 DAY, 'old'), (2, NOW(6), 'new');
SELECT id, msg FROM t ORDER BY id;
`

// runIn runs a command in process with args and stdin, and returns its
// standard output and standard error.
func runIn(cmd *cobra.Command, stdin string, args ...string) (stdout, stderr string, err error) {
	cmd.SetArgs(args)
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SilenceUsage = true
	cmd.SilenceErrors = true
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

// runCmd runs `rowttl sql args...` in process and returns its standard
// output and error.
func runCmd(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	out, _, err := runIn(sqlCommand(), stdin, args...)
	return out, err
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSQLDorisScript(t *testing.T) {
	dir := t.TempDir()
	out, err := runCmd(t, "", "--dir", dir, "-f", writeFile(t, "doris.sql", dorisScript))
	if err != nil {
		t.Fatalf("script failed: %v\n%s", err, out)
	}
	if want := "id\tmsg\n2\tnew\n"; out != want {
		t.Fatalf("output:\n%q\nwant:\n%q", out, want)
	}
	// The data persists: a second run sees the same table (the script
	// drops and re-creates it).
	out, err = runCmd(t, "", "--dir", dir, "-e", "SELECT count(*) FROM t; SHOW TABLES;")
	if err != nil {
		t.Fatal(err)
	}
	if want := "count(*)\n1\nTables_in_default\nt\n"; out != want {
		t.Fatalf("output:\n%q\nwant:\n%q", out, want)
	}
}

func TestSQLErrorsAndBail(t *testing.T) {
	dir := t.TempDir()
	script := "SELECT 1; SELECT nope; CREATE TABLE x (id INT) DUPLICATE KEY(id); SELECT 2;"
	out, err := runCmd(t, "", "--dir", dir, "-e", script)
	var failed *statementsFailed
	if !errors.As(err, &failed) || failed.n != 1 {
		t.Fatalf("err = %v, want 1 failed statement", err)
	}
	want := "1\n1\nERROR: Unknown column 'nope' in 'field list'\n2\n2\n"
	if out != want {
		t.Fatalf("output:\n%q\nwant:\n%q", out, want)
	}
	out, err = runCmd(t, "", "--dir", dir, "--bail", "-e", "SELECT nope; DROP TABLE x;")
	if err == nil {
		t.Fatal("bail: no error")
	}
	if want := "ERROR: Unknown column 'nope' in 'field list'\n"; out != want {
		t.Fatalf("bail output:\n%q\nwant:\n%q", out, want)
	}
	// --bail stopped before DROP TABLE x: the table is still there.
	out, err = runCmd(t, "", "--dir", dir, "-e", "SHOW TABLES")
	if err != nil || out != "Tables_in_default\nx\n" {
		t.Fatalf("after bail: %v %q", err, out)
	}
}

func TestSQLStdinAndNow(t *testing.T) {
	dir := t.TempDir()
	out, err := runCmd(t, "SELECT NOW(6); SET time_zone = '+08:00'; SELECT NOW();", "--dir", dir, "--now", "2026-01-01 00:00:00")
	if err != nil {
		t.Fatal(err)
	}
	want := "NOW(6)\n2026-01-01 00:00:00.000000\nNOW()\n2026-01-01 08:00:00\n"
	if out != want {
		t.Fatalf("output:\n%q\nwant:\n%q", out, want)
	}
	if _, err := runCmd(t, "", "--dir", dir, "--now", "yesterday", "-e", "SELECT 1"); err == nil {
		t.Fatal("bad --now accepted")
	}
}

// TestSQLBinaryExitStatus runs the real binary: exit status 1 when a
// statement failed, 0 otherwise.
func TestSQLBinaryExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "rowttl")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	run := func(script string) (string, int) {
		cmd := exec.Command(bin, "sql", "--dir", dir, "-e", script)
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	if out, code := run("SELECT 1 AS one"); code != 0 || out != "one\n1\n" {
		t.Fatalf("ok script: %d %q", code, out)
	}
	if out, code := run("SELECT 1 AS one; SELECT * FROM missing; SELECT 2 AS two"); code != 1 ||
		out != "one\n1\nERROR: Unknown table 'default.missing'\ntwo\n2\n" {
		t.Fatalf("failing script: %d %q", code, out)
	}
}
