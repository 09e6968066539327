package sql

import (
	"context"
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
