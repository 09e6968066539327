package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	gomysql "github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rowttl/rowttl/load"
	rsql "github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/table"
)

// bigTable makes table big of about 20 MB of result text (163,840 rows):
// more than the sockets buffer, so a statement reading it is still
// running while its client waits.
func bigTable(t testing.TB, db *sql.DB) int {
	t.Helper()
	mustExec(t, db, "CREATE TABLE big (id BIGINT, s STRING) DUPLICATE KEY(id)")
	mustExec(t, db, "INSERT INTO big VALUES (0, 'the quick brown fox jumps over the lazy dog, again and again the quick brown fox jumps over the lazy dog, again and again '), (1, 'x'), (2, 'y'), (3, 'z'), (4, 'w'), (5, 'v'), (6, 'u'), (7, 't'), (8, 's'), (9, 'r')")
	n := 10
	for n < 150000 {
		mustExec(t, db, fmt.Sprintf("INSERT INTO big SELECT id + %d, s FROM big", n))
		n *= 2
	}
	return n
}

func count(t testing.TB, db *sql.DB, q string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func TestKillQueryKeepsTheConnection(t *testing.T) {
	ts := startServer(t, Options{})
	db := ts.open(t, "")
	total := bigTable(t, db)
	ctx := context.Background()
	victim, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	var id int
	if err := victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	// Its result (some 30 MB) outgrows what the sockets' buffers hold,
	// so that the statement still runs when the client has read one row.
	rows, err := victim.QueryContext(ctx, "SELECT id, s, s, s, s, s, s, s, s FROM big")
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	// The statement runs (it waits for the client to read): the process
	// list shows it.
	pl := fmt.Sprint(rowsOf(t)(db.Query("SHOW PROCESSLIST")))
	if !strings.Contains(pl, fmt.Sprintf("[%d root", id)) || !strings.Contains(pl, "Query") || !strings.Contains(pl, "SELECT id, s, s, s, s, s, s, s, s FROM big") {
		t.Errorf("process list does not show the query:\n%s", pl)
	}
	mustExec(t, db, fmt.Sprintf("KILL QUERY %d", id))
	n := 1
	for rows.Next() {
		n++
	}
	mysqlErr(t, rows.Err(), 1317)
	rows.Close()
	if n >= total {
		t.Errorf("all %d rows arrived after KILL QUERY", n)
	}
	// The connection goes on.
	var one int
	if err := victim.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after KILL QUERY: %v", err)
	}
	if got := count(t, db, "SELECT count(*) FROM big"); got != total {
		t.Errorf("count %d, want %d", got, total)
	}
	if got := testutil.ToFloat64(ts.srv.metrics.queries.WithLabelValues("cancelled")); got != 1 {
		t.Errorf("cancelled queries = %v", got)
	}
	// KILL closes the connection; an unknown id is error 1094.
	mustExec(t, db, fmt.Sprintf("KILL %d", id))
	if err := victim.QueryRowContext(ctx, "SELECT 1").Scan(&one); err == nil {
		t.Error("a killed connection still answers")
	}
	_, err = db.Exec("KILL QUERY 999999")
	mysqlErr(t, err, 1094)
}

func TestMaxConnections(t *testing.T) {
	ts := startServer(t, Options{MaxConnections: 2})
	db := ts.open(t, "")
	ctx := context.Background()
	c1, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other := ts.open(t, "")
	mysqlErr(t, other.Ping(), 1040)
	if got := testutil.ToFloat64(ts.srv.metrics.refused); got != 1 {
		t.Errorf("refused = %v", got)
	}
	c1.Close()
	c2.Close()
	db.Close()
	deadline := time.Now().Add(5 * time.Second)
	for other.Ping() != nil {
		if time.Now().After(deadline) {
			t.Fatal("closed connections were never given back")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var cut struct {
	sync.Mutex
	conns []net.Conn
}

func init() {
	gomysql.RegisterDialContext("tcpcut", func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			cut.Lock()
			cut.conns = append(cut.conns, c)
			cut.Unlock()
		}
		return c, err
	})
}

func TestClientVanishesMidResult(t *testing.T) {
	ts := startServer(t, Options{})
	db := ts.open(t, "")
	total := bigTable(t, db)
	dsn := strings.Replace(ts.dsn("root", "secret", ""), "tcp(", "tcpcut(", 1)
	gone, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer gone.Close()
	rows, err := gone.Query("SELECT id, s FROM big")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10 && rows.Next(); i++ {
	}
	cut.Lock()
	for _, c := range cut.conns {
		c.Close()
	}
	cut.Unlock()
	for rows.Next() {
	}
	if rows.Err() == nil {
		t.Error("the cut connection read all its rows")
	}
	// The server lets go of the connection and its statement, serves on,
	// and the table is as it was.
	deadline := time.Now().Add(10 * time.Second)
	for {
		pl := fmt.Sprint(rowsOf(t)(db.Query("SHOW PROCESSLIST")))
		if strings.Count(pl, " root ") == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the vanished client's connection is still served:\n%s", pl)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := count(t, db, "SELECT count(*) FROM big"); got != total {
		t.Errorf("count %d, want %d", got, total)
	}
}

func TestLargeStatements(t *testing.T) {
	ts := startServer(t, Options{})
	// 17 MiB: a command of two packets (the run without the race
	// detector covers it; with it, lexing takes half a minute).
	db := ts.open(t, "maxAllowedPacket=33554432")
	if !raceEnabled {
		mid := strings.Repeat("a", 17<<20)
		if got := count(t, db, "SELECT length('"+mid+"')"); got != len(mid) {
			t.Errorf("length %d, want %d", got, len(mid))
		}
	}
	// 100 MB: past max_allowed_packet (64 MiB). The server refuses it with
	// 1153 and closes that connection; the client may see the error or
	// only the closed connection.
	huge := ts.open(t, "maxAllowedPacket=209715200")
	huge.SetMaxIdleConns(0)
	_, err := huge.Exec("INSERT INTO nope VALUES ('" + strings.Repeat("b", 100_000_000) + "')")
	var me *gomysql.MySQLError
	if err == nil || errors.As(err, &me) && me.Number != 1153 {
		t.Fatalf("a 100 MB statement: %v", err)
	}
	if n := count(t, db, "SELECT 1"); n != 1 {
		t.Error("the server stopped answering")
	}
}

func TestIdleTimeout(t *testing.T) {
	ts := startServer(t, Options{IdleTimeout: 200 * time.Millisecond})
	db := ts.open(t, "")
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.PingContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	if err := conn.PingContext(context.Background()); err == nil {
		t.Error("an idle connection outlived the idle timeout")
	}
}

func TestFieldList(t *testing.T) {
	ts := startServer(t, Options{User: "-"})
	db, err := sql.Open("mysql", ts.dsn("x", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec(t, db, "CREATE TABLE f (id BIGINT, at DATETIME(6), s VARCHAR(10))")
	for _, caps := range []uint32{0, capDeprecateEOF} {
		r := dialRaw(t, ts.addr)
		r.login(t, caps)
		if err := r.write(0, append([]byte{comFieldList}, "f\x00"...)); err != nil {
			t.Fatal(err)
		}
		var names []string
		for {
			_, p, err := r.readPacket()
			if err != nil {
				t.Fatal(err)
			}
			if p[0] == eofPacketByte && len(p) < 9 {
				break
			}
			// catalog, schema, table, org_table, name: the fifth string.
			pos := 0
			var name string
			for i := 0; i < 5; i++ {
				n := int(p[pos])
				name = string(p[pos+1 : pos+1+n])
				pos += 1 + n
			}
			names = append(names, name)
		}
		if fmt.Sprint(names) != "[id at s]" {
			t.Errorf("caps %x: fields %v", caps, names)
		}
		// An unknown table is one ERR packet; the connection goes on.
		if err := r.write(0, append([]byte{comFieldList}, "nope\x00"...)); err != nil {
			t.Fatal(err)
		}
		if _, p, err := r.readPacket(); err != nil || p[0] != errPacketByte || int(p[1])|int(p[2])<<8 != 1146 {
			t.Errorf("unknown table: %q %v", p, err)
		}
		if err := r.write(0, []byte{0x0e}); err != nil { // COM_PING
			t.Fatal(err)
		}
		if _, p, err := r.readPacket(); err != nil || p[0] != 0 {
			t.Errorf("ping after COM_FIELD_LIST: %q %v", p, err)
		}
		r.c.Close()
	}
}

// TestShutdownClosesHandshakes: a client that connects and never answers
// the greeting does not hold up the server's shutdown.
func TestShutdownClosesHandshakes(t *testing.T) {
	db, err := table.OpenDB(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv, err := New(db, Options{User: "root", Password: "x", ReadTimeout: time.Hour})
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
	silent := dialRaw(t, ln.Addr().String())
	defer silent.c.Close()
	if _, _, err := silent.readPacket(); err != nil { // the greeting, then nothing
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve waits for a client in its handshake")
	}
}

// TestBatchesReleased: every batch a statement makes is released, whether
// its rows all reach the client, the client vanishes, the statement is
// killed or fails midway (a checked allocator for the table and the
// sessions), by the time Serve returns.
func TestBatchesReleased(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	db, err := table.OpenDB(t.TempDir(), &table.Options{Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(db, Options{User: "root", Password: "secret", NewSession: func(db *table.DB) *rsql.Session {
		s := rsql.NewSession(db)
		s.SetAllocator(mem)
		return s
	}})
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
	ts := &testServer{srv: srv, addr: ln.Addr().String()}
	c := ts.open(t, "")
	total := bigTable(t, c)
	if got := count(t, c, "SELECT count(*) FROM big"); got != total {
		t.Fatalf("count %d", got)
	}
	// A client that reads a few rows and goes.
	gone, _ := sql.Open("mysql", strings.Replace(ts.dsn("root", "secret", ""), "tcp(", "tcpcut(", 1))
	rows, err := gone.Query("SELECT id, s FROM big")
	if err != nil {
		t.Fatal(err)
	}
	rows.Next()
	cut.Lock()
	for _, cn := range cut.conns {
		cn.Close()
	}
	cut.conns = nil
	cut.Unlock()
	rows.Close()
	gone.Close()
	// A statement that fails midway.
	if _, err := c.Exec("SELECT CAST(s AS INT) FROM big"); err == nil {
		t.Error("a failing cast succeeded")
	}
	// A statement still running when the server stops (a join whose
	// output is quadratic in the table): Serve cancels it and returns
	// once it has unwound.
	slow := ts.open(t, "")
	running := make(chan error, 1)
	go func() {
		_, err := slow.Exec("SELECT count(*) FROM big a JOIN big b ON a.s = b.s")
		running <- err
	}()
	for !strings.Contains(fmt.Sprint(rowsOf(t)(c.Query("SHOW PROCESSLIST"))), "JOIN big b") {
		time.Sleep(5 * time.Millisecond)
	}
	c.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Serve returned: every connection's statement has unwound, the one
	// the client cut and the one cancelled included.
	mem.AssertSize(t, 0)
	if err := <-running; err == nil {
		t.Error("the statement running when the server stopped succeeded")
	}
	slow.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReadTimeout: a command that stops arriving midway, or a handshake
// never answered, closes its connection after the read timeout, though
// the idle timeout is far off.
func TestReadTimeout(t *testing.T) {
	ts := startServer(t, Options{User: "-", ReadTimeout: 200 * time.Millisecond, IdleTimeout: time.Hour})
	closedWithin := func(r *rawClient, d time.Duration) bool {
		_ = r.c.SetReadDeadline(time.Now().Add(d))
		_, err := io.Copy(io.Discard, r.c)
		return err == nil // EOF: the server closed it
	}
	half := dialRaw(t, ts.addr)
	half.login(t, 0)
	_, _ = half.c.Write([]byte{100, 0, 0, 0, 3, 'S', 'E', 'L'}) // 100 bytes announced, 4 sent
	if !closedWithin(half, 3*time.Second) {
		t.Error("a half-sent command kept its connection")
	}
	mute := dialRaw(t, ts.addr)
	if _, _, err := mute.readPacket(); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(mute, 3*time.Second) {
		t.Error("an unanswered greeting kept its connection")
	}
	// An idle connection that logged in stays.
	idle := dialRaw(t, ts.addr)
	idle.login(t, 0)
	if closedWithin(idle, time.Second) {
		t.Error("an idle connection was closed by the read timeout")
	}
	idle.c.Close()
}

// TestScanParallelism: statements run their scans on one goroutine once
// more of them run than there are processors.
func TestScanParallelism(t *testing.T) {
	for _, c := range []struct{ running, procs, want int }{
		{1, 2, 0}, {2, 2, 0}, {3, 2, 1}, {64, 2, 1}, {1, 1, 0}, {2, 1, 1},
	} {
		if got := scanParallelism(c.running, c.procs); got != c.want {
			t.Errorf("%d statements on %d processors: %d", c.running, c.procs, got)
		}
	}
}

// TestScanWorkersUnderLoads: a load holding a slot of the server's pool
// counts as a statement running, so a lone statement beside loads that
// keep every processor busy scans on one goroutine.
func TestScanWorkersUnderLoads(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	w := load.NewWorkers(procs)
	s := &Server{o: Options{LoadWorkers: w}}
	if got := s.scanWorkers(1); got != 0 {
		t.Fatalf("no load: %d", got)
	}
	var release []func()
	for range procs {
		r, err := w.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		release = append(release, r)
	}
	if got := s.scanWorkers(1); got != 1 {
		t.Fatalf("%d loads computing on %d processors: %d", procs, procs, got)
	}
	for _, r := range release {
		r()
	}
	if got := s.scanWorkers(1); got != 0 {
		t.Fatalf("loads done: %d", got)
	}
}
