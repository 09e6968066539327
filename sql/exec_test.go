package sql

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
	"github.com/rowttl/rowttl/table/tabletest"
)

// testNow is the wall clock of the golden tests' sessions and tables.
var testNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// TestExec runs the golden files of testdata/exec. Each file runs in one
// session over a fresh data directory. Commands:
//
//	exec [bail] [mask=(col,...)] run the input as a script; print exactly
//	                            what `rowttl sql -f` prints (result sets as
//	                            TSV, "ERROR: ..." lines), with the values of
//	                            the named result columns replaced by *
//	                            (sizes in bytes, which depend on encoding)
//
// Regenerate with: go test ./sql -run TestExec -rewrite
func TestExec(t *testing.T) {
	paths, err := filepath.Glob("testdata/exec/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			runExecFile(t, path)
		})
	}
}

func runExecFile(t *testing.T, path string) {
	dir := t.TempDir()
	clock := func() time.Time { return testNow }
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	db, err := table.OpenDB(dir, &table.Options{Clock: clock, Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		tabletest.CheckAll(t, db)
		if err := db.Close(); err != nil {
			t.Error(err)
		}
		mem.AssertSize(t, 0)
	}()
	s := NewSession(db)
	s.Clock = clock
	s.mem = mem
	ctx := context.Background()
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "exec":
			bail := d.HasArg("bail")
			var mask []string
			for _, a := range d.CmdArgs {
				if a.Key == "mask" {
					mask = a.Vals
				}
			}
			var b strings.Builder
			for _, p := range parser.SplitStatements(d.Input) {
				compareCompilers(t, s, p)
			}
			if len(mask) == 0 {
				// Exactly what `rowttl sql -f` prints, streamed.
				if _, err := s.RunScript(ctx, d.Input, ScriptOptions{Bail: bail}, &b); err != nil {
					t.Fatal(err)
				}
				return b.String()
			}
			s.ExecScript(ctx, d.Input, bail, func(_ parser.Piece, res *Result, err error) {
				if err == nil && res.HasResultSet() {
					res = maskColumns(res, mask)
				}
				if perr := PrintScriptResult(&b, res, err); perr != nil {
					t.Fatal(perr)
				}
			})
			return b.String()
		}
		d.Fatalf(t, "unknown command %q", d.Cmd)
		return ""
	})
}

func maskColumns(res *Result, mask []string) *Result {
	if len(mask) == 0 {
		return res
	}
	out := &Result{Columns: res.Columns}
	for _, row := range res.Rows {
		r := append([]string(nil), row...)
		for i, c := range res.Columns {
			for _, m := range mask {
				if c == m {
					r[i] = "*"
				}
			}
		}
		out.Rows = append(out.Rows, r)
	}
	return out
}

// compareCompilers runs a SELECT with its expressions compiled into
// kernels and again with the row compiler evaluating every one of them,
// and fails the test when the rows or errors differ: the golden files are
// the oracle of both.
func compareCompilers(t *testing.T, s *Session, p parser.Piece) {
	t.Helper()
	stmt, err := parser.Parse(p.Text)
	if err != nil {
		return
	}
	if _, ok := stmt.(parser.QueryExpr); !ok {
		return
	}
	ctx := context.Background()
	s.rowExprs = true
	rowRes, rowErr := s.Exec(ctx, p.Text)
	s.rowExprs = false
	vecRes, vecErr := s.Exec(ctx, p.Text)
	show := func(r *Result, err error) string {
		if err != nil {
			return "ERROR: " + err.Error()
		}
		var b strings.Builder
		r.WriteTSV(&b)
		return b.String()
	}
	if a, b := show(rowRes, rowErr), show(vecRes, vecErr); a != b {
		t.Errorf("line %d: %s\nrow compiler:\n%s\nkernels:\n%s", p.Line, p.Text, a, b)
	}
}

// TestRowExprsCompare: the switch compareCompilers uses does send every
// expression to the row compiler (EXPLAIN shows row(...)), and the answers
// agree.
func TestRowExprsCompare(t *testing.T) {
	s, exec := modelSession(t, 0)
	exec("CREATE TABLE t (id INT, s VARCHAR(5)) DUPLICATE KEY(id)")
	exec("INSERT INTO t VALUES (1, 'a'), (2, NULL)")
	s.rowExprs = true
	plan := exec("EXPLAIN SELECT id + 1, upper(s) FROM t WHERE id > 1")
	if got := fmt.Sprint(plan.Rows); !strings.Contains(got, "row(id + 1)") || !strings.Contains(got, "row(upper(s))") || !strings.Contains(got, "Filter: row(id > 1)") {
		t.Fatalf("with rowExprs: %s", got)
	}
	compareCompilers(t, s, parser.Piece{Text: "SELECT id + 1, upper(s), count(*) OVER () FROM t WHERE id > 1 OR s IS NULL"})
}
