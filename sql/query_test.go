package sql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
)

// checkedSession is a session whose tables and queries allocate from a
// checked allocator that must be empty when the test ends.
func checkedSession(t *testing.T, pageRows int) (*Session, func(q string)) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	clock := func() time.Time { return testNow }
	db, err := table.OpenDB(t.TempDir(), &table.Options{PageRows: pageRows, DisableAutoCompaction: true, Allocator: mem, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
		mem.AssertSize(t, 0)
	})
	s := NewSession(db)
	s.mem, s.Clock = mem, clock
	return s, func(q string) {
		t.Helper()
		if _, err := s.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestQueryTypesAndZone(t *testing.T) {
	s, exec := checkedSession(t, 0)
	exec("CREATE TABLE t (id INT, d DECIMAL(10,2), ts TIMESTAMPTZ(3), v VARCHAR(20), b BOOLEAN) DUPLICATE KEY(id)")
	exec("INSERT INTO t VALUES (1, 1.5, '2026-01-01 00:00:00.5', 'x\\ty', true), (2, NULL, NULL, NULL, NULL)")
	exec("SET time_zone = '+08:00'")
	for _, q := range []string{"SELECT id, d, ts, v, b, id + 1 AS n FROM t", "SELECT id, d, ts, v, b, id + 1 AS n FROM t ORDER BY id"} {
		r, err := s.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range r.Schema().Fields() {
			got = append(got, f.Name+" "+FieldType(f).String())
		}
		if want := "id INT,d DECIMAL(10,2),ts TIMESTAMPTZ(3),v VARCHAR(20),b BOOLEAN,n BIGINT"; strings.Join(got, ",") != want {
			t.Fatalf("%s: columns %s, want %s", q, strings.Join(got, ","), want)
		}
		if z := ResultZone(r.Schema()).String(); z != "+08:00" {
			t.Fatalf("zone %s", z)
		}
		res, err := ReadResult(r)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprint(res.Rows), "[[1 1.50 2026-01-01 08:00:00.500+08:00 x\\ty true 2] [2 NULL NULL NULL NULL 3]]"; got != want {
			t.Fatalf("%s: rows %s, want %s", q, got, want)
		}
	}
	if _, err := s.Query(context.Background(), "INSERT INTO t VALUES (3, 1, NULL, NULL, NULL)"); !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Fatalf("Query of an INSERT: %v", err)
	}
}

// TestQueryStreams: the reader yields the first batch of a multi-page scan
// before the scan ends, and releasing it early stops the scan and frees
// everything (the checked allocator is empty at the end).
func TestQueryStreams(t *testing.T) {
	s, exec := checkedSession(t, 100)
	exec("CREATE TABLE t (id BIGINT, v STRING) DUPLICATE KEY(id)")
	for i := 0; i < 10; i++ {
		var vals []string
		for j := 0; j < 100; j++ {
			vals = append(vals, fmt.Sprintf("(%d, 'v%d')", i*100+j, i*100+j))
		}
		exec("INSERT INTO t VALUES " + strings.Join(vals, ","))
	}
	r, err := s.Query(context.Background(), "SELECT id, v FROM t WHERE id % 2 = 0")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Next() {
		t.Fatal(r.Err())
	}
	if n := r.RecordBatch().NumRows(); n == 0 || n >= 500 {
		t.Fatalf("first batch of %d rows; want a page's worth", n)
	}
	r.Release()

	// Cancelling the context stops the query with the context's error.
	ctx, cancel := context.WithCancel(context.Background())
	r, err = s.Query(ctx, "SELECT id FROM t")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Next() {
		t.Fatal(r.Err())
	}
	cancel()
	for r.Next() {
	}
	if !errors.Is(r.Err(), context.Canceled) {
		t.Fatalf("after cancel: %v", r.Err())
	}
	r.Release()
}

// blockingReader yields one batch, then blocks in Next until released.
type blockingReader struct {
	refs    atomic.Int64
	schema  *arrow.Schema
	first   arrow.RecordBatch
	cur     arrow.RecordBatch
	calls   int
	unblock chan struct{}
}

func (r *blockingReader) Schema() *arrow.Schema          { return r.schema }
func (r *blockingReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *blockingReader) Record() arrow.RecordBatch      { return r.cur }
func (r *blockingReader) Err() error                     { return nil }
func (r *blockingReader) Retain()                        { r.refs.Add(1) }
func (r *blockingReader) Release() {
	if r.refs.Add(-1) == 0 && r.first != nil {
		r.first.Release()
	}
}
func (r *blockingReader) Next() bool {
	r.calls++
	switch r.calls {
	case 1:
		r.cur = r.first
		return true
	case 2:
		<-r.unblock
	}
	r.cur = nil
	return false
}

// signalWriter reports on got when it has seen want.
type signalWriter struct {
	b    strings.Builder
	want string
	got  chan struct{}
	sent bool
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.b.Write(p)
	if !w.sent && strings.Contains(w.b.String(), w.want) {
		w.sent = true
		close(w.got)
	}
	return len(p), nil
}

// TestWriteTSVStreamsBatches: the first batch reaches the writer while the
// reader is still blocked producing the second.
func TestWriteTSVStreamsBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sch := resultSchema([]string{"id", "s"}, []schema.Type{schema.BigIntType, schema.StringType}, time.UTC)
	ib := array.NewInt64Builder(mem)
	ib.AppendValues([]int64{1, 2}, nil)
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"a\tb", "c\\d\n"}, nil)
	cols := []arrow.Array{ib.NewArray(), sb.NewArray()}
	ib.Release()
	sb.Release()
	r := &blockingReader{schema: sch, first: array.NewRecordBatch(sch, cols, 2), unblock: make(chan struct{})}
	cols[0].Release()
	cols[1].Release()
	r.refs.Store(1)
	w := &signalWriter{want: "2\tc\\\\d\\n\n", got: make(chan struct{})}
	done := make(chan error)
	go func() {
		_, err := WriteTSVStream(w, r)
		done <- err
	}()
	select {
	case <-w.got:
	case <-time.After(10 * time.Second):
		t.Fatal("the first batch did not reach the writer while the second was pending")
	}
	close(r.unblock)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, want := w.b.String(), "id\ts\n1\ta\\tb\n2\tc\\\\d\\n\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestExecMemLimit(t *testing.T) {
	s, exec := checkedSession(t, 0)
	env := &stmtEnv{now: testNow, loc: time.UTC}
	if got, want := s.execEnv(env).Budget.Limit(), machineMemory()/4; got != want || got <= 0 {
		t.Fatalf("default limit %d, want %d", got, want)
	}
	exec("SET exec_mem_limit = 1048576")
	if got := s.execEnv(env).Budget.Limit(); got != 1<<20 {
		t.Fatalf("limit %d after SET", got)
	}
	for _, bad := range []string{"'lots'", "0", "-5"} {
		_, err := s.Exec(context.Background(), "SET exec_mem_limit = "+bad)
		if !errors.Is(err, rowttl.ErrInvalidArgument) || !strings.Contains(err.Error(), "exec_mem_limit") {
			t.Fatalf("SET exec_mem_limit = %s: %v", bad, err)
		}
	}
	exec("SET exec_mem_limit = DEFAULT")
	if got := s.execEnv(env).Budget.Limit(); got != machineMemory()/4 {
		t.Fatalf("limit %d after DEFAULT", got)
	}
}

// TestExprLimits: the vectorised compiler takes deep and large expressions
// in time linear in their size, and refuses past its limits with a clear
// error.
func TestExprLimits(t *testing.T) {
	s, exec := checkedSession(t, 0)
	exec("CREATE TABLE t (a BIGINT) DUPLICATE KEY(a)")
	exec("INSERT INTO t VALUES (1), (2)")
	chain := func(n int) string { return "a" + strings.Repeat(" + a", n) }
	res, err := s.Exec(context.Background(), "SELECT "+chain(900)+" FROM t")
	if err != nil || res.Rows[1][0] != "1802" {
		t.Fatalf("chain of 900: %v %v", err, res)
	}
	// Past the kernels' limits the row compiler evaluates the expression
	// inside the vectorised plan; past the parser's, the statement fails.
	res, err = s.Exec(context.Background(), "SELECT "+chain(1100)+" FROM t")
	if err != nil || res.Rows[1][0] != "2202" {
		t.Fatalf("chain of 1100: %v %v", err, res)
	}
	if plan, err := s.Exec(context.Background(), "EXPLAIN SELECT "+chain(1100)+" FROM t"); err != nil || !strings.Contains(fmt.Sprint(plan.Rows), "engine: vectorised") || !strings.Contains(fmt.Sprint(plan.Rows), "Project: row(a + a") {
		t.Fatalf("EXPLAIN of a chain of 1100: %v %v", err, plan)
	}
	_, err = s.Exec(context.Background(), "SELECT "+chain(parser.MaxExprHeight)+" FROM t")
	if !errors.Is(err, rowttl.ErrInvalidArgument) || !strings.Contains(err.Error(), "expression too large") {
		t.Fatalf("chain of %d: %v", parser.MaxExprHeight, err)
	}
	// A wide, shallow expression of more than 10000 nodes.
	var terms []string
	for range 4000 {
		terms = append(terms, "(a + 1)")
	}
	wide := "SELECT coalesce(" + strings.Join(terms, ", ") + ") FROM t"
	start := time.Now()
	res, err = s.Exec(context.Background(), wide)
	if err != nil || res.Rows[1][0] != "3" {
		t.Fatalf("wide expression: %v %v", err, res)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("%d nodes took %v", 12001, d)
	}
}

// failingWriter fails every write after the first, as a closed pipe does
// once `head -1` has its line.
type failingWriter struct{ writes int }

var errClosedPipe = errors.New("closed pipe")

func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes > 1 {
		return 0, errClosedPipe
	}
	return len(p), nil
}

// TestRunScriptStopsWhenOutputCloses: when the output fails (a reader like
// head went away), the running query stops at once: RunScript returns the
// write error, runs no further statement, and the scan is released.
func TestRunScriptStopsWhenOutputCloses(t *testing.T) {
	s, exec := checkedSession(t, 100)
	exec("CREATE TABLE t (id BIGINT, v STRING) DUPLICATE KEY(id)")
	for i := 0; i < 10; i++ {
		var vals []string
		for j := 0; j < 100; j++ {
			vals = append(vals, fmt.Sprintf("(%d, 'v%d')", i*100+j, j))
		}
		exec("INSERT INTO t VALUES " + strings.Join(vals, ","))
	}
	w := &failingWriter{}
	failed, err := s.RunScript(context.Background(), "SELECT * FROM t; INSERT INTO t VALUES (5000, 'late')", ScriptOptions{}, w)
	if !errors.Is(err, errClosedPipe) || len(failed) != 0 {
		t.Fatalf("RunScript: %v, failed %v", err, failed)
	}
	if w.writes != 2 {
		t.Fatalf("%d writes; want the first batch, then the failing one", w.writes)
	}
	res, err := s.Exec(context.Background(), "SELECT count(*) FROM t WHERE id = 5000")
	if err != nil || res.Rows[0][0] != "0" {
		t.Fatalf("the statement after the failed output ran: %v %v", res, err)
	}
}

// TestMemLimitAndCancelOfBlockingQueries: a sort or an aggregation past
// exec_mem_limit fails with ErrMemLimit naming its operator, and a
// cancelled one stops with the context's error; both release everything
// (the checked allocator is empty at the end).
func TestMemLimitAndCancelOfBlockingQueries(t *testing.T) {
	s, exec := checkedSession(t, 200)
	exec("CREATE TABLE t (id BIGINT, v STRING) DUPLICATE KEY(id)")
	for i := 0; i < 5; i++ {
		var vals []string
		for j := 0; j < 400; j++ {
			vals = append(vals, fmt.Sprintf("(%d, 'value %d')", i*400+j, i*400+j))
		}
		exec("INSERT INTO t VALUES " + strings.Join(vals, ","))
	}
	ctx := context.Background()
	for q, op := range map[string]string{
		"SELECT id, v FROM t ORDER BY v DESC":          "Sort",
		"SELECT v, count(*) FROM t GROUP BY v":         "HashAggregate",
		"SELECT DISTINCT v FROM t":                     "Distinct",
		"SELECT id, v FROM t ORDER BY v LIMIT 1500":    "TopN",
		"SELECT count(DISTINCT v), sum(id) FROM t":     "HashAggregate",
		"SELECT v, count(*) FROM t GROUP BY v LIMIT 5": "HashAggregate",
	} {
		exec("SET exec_mem_limit = 4096")
		_, err := s.Exec(ctx, q)
		if !errors.Is(err, rowttl.ErrMemLimit) || !strings.Contains(err.Error(), op) {
			t.Errorf("%s under a 4096-byte limit: %v; want ErrMemLimit naming %s", q, err, op)
		}
		exec("SET exec_mem_limit = DEFAULT")
		if _, err := s.Exec(ctx, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.Exec(cctx, q); !errors.Is(err, context.Canceled) {
			t.Errorf("%s cancelled: %v", q, err)
		}
	}
}
