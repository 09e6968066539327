package main

import (
	"strings"
	"testing"
)

// TestCLIArguments: every command reads --table as [DB.]TABLE, numeric
// flags are validated, a missing file argument is named with the usage
// line, and -f runs before -e.
func TestCLIArguments(t *testing.T) {
	dir := t.TempDir()
	if _, err := runCmd(t, "", "--dir", dir, "-e", "CREATE TABLE t (id INT) DUPLICATE KEY(id); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	script := writeFile(t, "a.sql", "SELECT 'file' AS f")
	for _, tc := range []struct {
		args []string
		out  string // in standard output
		err  string // in the error; empty: success
	}{
		{args: []string{"check", "--dir", dir, "--table", "t"}, out: "default.t"},
		{args: []string{"check", "--dir", dir, "--table", "default.t"}, out: "default.t"},
		{args: []string{"check", "--dir", dir, "--table", "a.b.c"}, err: `--table "a.b.c": want [DB.]TABLE`},
		{args: []string{"check", "--dir", dir, "--table", "nope"}, out: "FAIL default.nope: no such table", err: "not found"},
		{args: []string{"inspect", "--dir", dir, "--table", "t"}, out: "table default.t"},
		{args: []string{"inspect", "--dir", dir, "--table", ".t"}, err: `--table ".t": want [DB.]TABLE`},
		{args: []string{"inspect", "--dir", dir}, err: "--table is required\nUsage: rowttl inspect --table [DB.]TABLE"},
		{args: []string{"load", "--dir", dir, "--table", "t"}, err: "missing the FILE (a CSV or Parquet file, or - for standard input) argument\nUsage: rowttl load --table [DB.]TABLE [flags] FILE|-"},
		{args: []string{"load", "--dir", dir, "--table", "t", "a", "b"}, err: "one FILE (a CSV or Parquet file, or - for standard input) argument expected, got 2: a b"},
		{args: []string{"demo", "--dir", t.TempDir(), "--days", "0"}, err: "--days 0: must be at least 1"},
		{args: []string{"demo", "--dir", t.TempDir(), "--days", "-1"}, err: "--days -1: must be at least 1"},
		{args: []string{"demo", "--dir", t.TempDir(), "--events-per-day", "0"}, err: "--events-per-day 0: must be at least 1"},
		{args: []string{"demo", "--dir", t.TempDir(), "--retention", "0 days"}, err: `--retention "0 days"`},
		{args: []string{"demo", "--dir", t.TempDir(), "--retention", "soon"}, err: `--retention "soon"`},
		{args: []string{"bench", "--dir", t.TempDir(), "--rows", "0"}, err: "--rows 0: must be at least 1"},
		{args: []string{"bench", "--dir", t.TempDir(), "--warmup", "-1"}, err: "--warmup -1: must be at least 0"},
		{args: []string{"sql", "--dir", dir, "-f", script, "-e", "SELECT 'e' AS e"}, out: "f\nfile\ne\ne\n"},
	} {
		out, _, err := runIn(rootCommand(), "", tc.args...)
		if tc.out != "" && !strings.Contains(out, tc.out) {
			t.Errorf("%v: output %q lacks %q", tc.args, out, tc.out)
		}
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.err)
		}
	}
}
