package load

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/table"
	"github.com/rowttl/rowttl/table/tabletest"
)

// testNow is the clock of the tests' tables and sessions.
var testNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// env is a data directory with a SQL session, checked and closed when the
// test ends.
type env struct {
	t   testing.TB
	dir string
	mem *memory.CheckedAllocator
	db  *table.DB
	s   *sql.Session
}

func newEnv(t testing.TB) *env {
	e := &env{t: t, dir: t.TempDir(), mem: memory.NewCheckedAllocator(memory.NewGoAllocator())}
	e.open()
	t.Cleanup(func() {
		e.close()
		e.mem.AssertSize(t, 0)
	})
	return e
}

func (e *env) open() {
	e.t.Helper()
	clock := func() time.Time { return testNow }
	db, err := table.OpenDB(e.dir, &table.Options{Clock: clock, Allocator: e.mem, DisableAutoCompaction: true})
	if err != nil {
		e.t.Fatal(err)
	}
	e.db = db
	e.s = sql.NewSession(db)
	e.s.Clock = clock
}

// close checks every table and closes the data directory.
func (e *env) close() {
	e.t.Helper()
	if e.db == nil {
		return
	}
	tabletest.CheckAll(e.t, e.db)
	if err := e.db.Close(); err != nil {
		e.t.Error(err)
	}
	e.db = nil
}

func (e *env) reopen() {
	e.close()
	e.open()
}

// exec runs statements and returns the TSV of the last result set.
func (e *env) exec(stmts ...string) string {
	e.t.Helper()
	var out strings.Builder
	for _, st := range stmts {
		res, err := e.s.Exec(context.Background(), st)
		if err != nil {
			e.t.Fatalf("%s: %v", st, err)
		}
		out.Reset()
		if err := res.WriteTSV(&out); err != nil {
			e.t.Fatal(err)
		}
	}
	return out.String()
}

func (e *env) table(name string) *table.Table {
	e.t.Helper()
	tbl, err := e.db.Table(table.DefaultDatabase, name)
	if err != nil {
		e.t.Fatal(err)
	}
	return tbl
}

// load runs a load of data into table name.
func (e *env) load(name, data string, o Options) *Result {
	e.t.Helper()
	if o.Now.IsZero() {
		o.Now = testNow
	}
	return Run(context.Background(), e.table(name), strings.NewReader(data), o, e.mem)
}

// mustLoad runs a load that must succeed.
func (e *env) mustLoad(name, data string, o Options) *Result {
	e.t.Helper()
	res := e.load(name, data, o)
	if !res.OK() {
		e.t.Fatalf("load: %s: %s (%v)", res.Status, res.Message, res.ErrorRows)
	}
	return res
}
