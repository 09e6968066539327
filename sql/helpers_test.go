package sql

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/rowttl/rowttl/table"
)

// modelSession opens a data directory of small pages without background
// compaction, for the randomized model tests, and returns a session on it
// and a function running a statement that must succeed. The directory is
// closed when the test ends.
func modelSession(t *testing.T, pageRows int) (*Session, func(q string) *Result) {
	t.Helper()
	db, err := table.OpenDB(t.TempDir(), &table.Options{PageRows: pageRows, DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := NewSession(db)
	return s, func(q string) *Result {
		t.Helper()
		r, err := s.Exec(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return r
	}
}

// statementLog keeps the statements a model test ran, to print with a
// failure so that it can be replayed in the shell.
type statementLog []string

func (l statementLog) String() string { return strings.Join(l, ";\n") + ";" }

// loggedSession is modelSession whose statement runner also records every
// statement in the returned log, and prints the log when one fails.
func loggedSession(t *testing.T, pageRows int) (func(q string) *Result, *statementLog) {
	t.Helper()
	s, _ := modelSession(t, pageRows)
	log := new(statementLog)
	return func(q string) *Result {
		t.Helper()
		*log = append(*log, q)
		r, err := s.Exec(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v\nstatements:\n%s", q, err, log)
		}
		return r
	}, log
}

// modelSeeds is how many seeds a model test runs: a few, or soak when
// ROWTTL_SOAK is set.
func modelSeeds(quick, soak int) uint64 {
	if os.Getenv("ROWTTL_SOAK") != "" {
		return uint64(soak)
	}
	return uint64(quick)
}
