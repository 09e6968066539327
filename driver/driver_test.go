package driver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
)

func openTest(t testing.TB, params string) (*sql.DB, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	db, err := sql.Open("rowttl", "file:"+dir+params)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, dir
}

func mustExec(t testing.TB, db *sql.DB, q string, args ...any) sql.Result {
	t.Helper()
	r, err := db.Exec(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}

func TestTypedValuesAndArguments(t *testing.T) {
	db, _ := openTest(t, "?time_zone=%2B08:00")
	mustExec(t, db, `CREATE TABLE v (id BIGINT, f DOUBLE, m DECIMAL(12,3), s VARCHAR(20), b BOOLEAN, day DATE, at DATETIME(6), tz TIMESTAMPTZ(3), raw STRING)
		DUPLICATE KEY(id)`)
	sh := time.FixedZone("+08:00", 8*3600)
	at := time.Date(2026, 5, 6, 7, 8, 9, 123456000, time.UTC) // 15:08:09.123456 in +08:00
	r := mustExec(t, db, "INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", int64(1), 2.5, "1234.567", "it's", true, "2026-05-06", at, at, []byte("raw\tbytes"))
	if n, _ := r.RowsAffected(); n != 1 {
		t.Errorf("rows affected %d", n)
	}
	mustExec(t, db, "INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", 2, nil, nil, nil, false, nil, nil, nil, nil)
	rows, err := db.Query("SELECT * FROM v WHERE id = ?", 1)
	if err != nil {
		t.Fatal(err)
	}
	cts, _ := rows.ColumnTypes()
	var names []string
	for _, c := range cts {
		names = append(names, c.DatabaseTypeName())
	}
	if got := strings.Join(names, ","); got != "BIGINT,DOUBLE,DECIMAL,VARCHAR,BOOLEAN,DATE,DATETIME,TIMESTAMPTZ,STRING" {
		t.Errorf("type names %s", got)
	}
	if p, s, ok := cts[2].DecimalSize(); !ok || p != 12 || s != 3 {
		t.Errorf("decimal size %d %d %v", p, s, ok)
	}
	if n, ok := cts[3].Length(); !ok || n != 20 {
		t.Errorf("varchar length %d %v", n, ok)
	}
	var (
		id       int64
		f        float64
		m, s     string
		b        bool
		day, dt  time.Time
		tz       time.Time
		rawBytes []byte
	)
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	if err := rows.Scan(&id, &f, &m, &s, &b, &day, &dt, &tz, &rawBytes); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if id != 1 || f != 2.5 || m != "1234.567" || s != "it's" || !b || string(rawBytes) != "raw\tbytes" {
		t.Errorf("values %v %v %v %v %v %q", id, f, m, s, b, rawBytes)
	}
	if want := time.Date(2026, 5, 6, 0, 0, 0, 0, sh); !day.Equal(want) {
		t.Errorf("date %v, want %v", day, want)
	}
	// A time.Time argument is written as its wall clock in the session
	// zone and read back as that clock in that zone: the same instant.
	if !dt.Equal(at) || dt.Format("15:04:05.000000 -07:00") != "15:08:09.123456 +08:00" {
		t.Errorf("datetime %v, want %v", dt, at)
	}
	if !tz.Equal(at.Truncate(time.Millisecond)) {
		t.Errorf("timestamptz %v, want %v", tz, at)
	}
	var nf sql.NullFloat64
	var nm sql.NullString
	var nb bool
	if err := db.QueryRow("SELECT f, m, b FROM v WHERE id = 2").Scan(&nf, &nm, &nb); err != nil || nf.Valid || nm.Valid || nb {
		t.Errorf("nulls: %v %v %v %v", nf, nm, nb, err)
	}
}

func TestErrorsKeepTheirSentinels(t *testing.T) {
	db, _ := openTest(t, "")
	_, err := db.Exec("SELECT * FROM nope")
	if !errors.Is(err, rowttl.ErrNotFound) || !strings.Contains(err.Error(), "Unknown table 'default.nope'") {
		t.Errorf("unknown table: %v", err)
	}
	if _, err := db.Exec("SELECT ?", 1, 2); !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Errorf("argument count: %v", err)
	}
	if _, err := db.Begin(); !errors.Is(err, rowttl.ErrNotSupported) {
		t.Errorf("begin: %v", err)
	}
	if _, err := sql.Open("rowttl", "file:?time_zone=UTC"); err == nil {
		// sql.Open defers to the first connection for some drivers; this
		// one parses at Open.
		t.Error("a DSN without a path opened")
	}
	bad, _ := sql.Open("rowttl", "file:"+t.TempDir()+"?time_zone=Mars/Olympus")
	defer bad.Close()
	if err := bad.Ping(); err == nil || !strings.Contains(err.Error(), "unknown or incorrect time zone") {
		t.Errorf("bad time zone: %v", err)
	}
}

// TestPoolingSharesOneDB: many connections, and a second sql.DB on the
// same directory, share one table.DB (a second open would be refused by
// the directory lock); each connection keeps its own session.
func TestPoolingSharesOneDB(t *testing.T) {
	db, dir := openTest(t, "")
	mustExec(t, db, "CREATE TABLE p (id BIGINT) DUPLICATE KEY(id)")
	db.SetMaxOpenConns(4)
	other, err := sql.Open("rowttl", dir)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				d := db
				if w%2 == 1 {
					d = other
				}
				if _, err := d.Exec("INSERT INTO p VALUES (?)", w*100+i); err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n int
	if err := other.QueryRow("SELECT count(*) FROM p").Scan(&n); err != nil || n != 40 {
		t.Errorf("count %d %v", n, err)
	}
	other.Close()
	// Sessions are per connection.
	ctx := context.Background()
	c1, _ := db.Conn(ctx)
	c2, _ := db.Conn(ctx)
	defer c1.Close()
	defer c2.Close()
	if _, err := c1.ExecContext(ctx, "SET time_zone = 'Asia/Shanghai'"); err != nil {
		t.Fatal(err)
	}
	raw := func(c *sql.Conn) string {
		var z string
		c.Raw(func(dc any) error {
			z, _ = dc.(*Conn).Session().Variable("time_zone")
			return nil
		})
		return z
	}
	z1, z2 := raw(c1), raw(c2)
	if z1 != "Asia/Shanghai" || z2 != "UTC" {
		t.Errorf("time zones %q %q", z1, z2)
	}
}

func TestQueryContextCancels(t *testing.T) {
	db, _ := openTest(t, "")
	mustExec(t, db, "CREATE TABLE c (id BIGINT) DUPLICATE KEY(id)")
	mustExec(t, db, "INSERT INTO c VALUES (1), (2), (3), (4), (5), (6), (7), (8)")
	for i := 0; i < 15; i++ {
		mustExec(t, db, fmt.Sprintf("INSERT INTO c SELECT id + %d FROM c", 8<<i))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rows, err := db.QueryContext(ctx, "SELECT id FROM c")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
		if n == 10 {
			cancel()
		}
	}
	if !errors.Is(rows.Err(), context.Canceled) {
		t.Errorf("after cancel: %v (%d rows)", rows.Err(), n)
	}
	if n >= 8<<15 {
		t.Errorf("all %d rows arrived", n)
	}
}

func TestRawArrow(t *testing.T) {
	db, _ := openTest(t, "")
	mustExec(t, db, "CREATE TABLE a (id BIGINT, s STRING) DUPLICATE KEY(id)")
	mustExec(t, db, "INSERT INTO a VALUES (1, 'x'), (2, 'y')")
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		r, err := dc.(*Conn).QueryArrow(context.Background(), "SELECT id, s FROM a WHERE id > ?", 0)
		if err != nil {
			return err
		}
		defer r.Release()
		rows := 0
		for r.Next() {
			rows += int(r.RecordBatch().NumRows())
		}
		if rows != 2 || r.Schema().Field(1).Name != "s" {
			return fmt.Errorf("%d rows, schema %v", rows, r.Schema())
		}
		return r.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBatchesReleased: rows read to the end, closed early, cancelled, or
// failing midway release every batch (a checked allocator in the
// connection's session).
func TestBatchesReleased(t *testing.T) {
	db, _ := openTest(t, "")
	mustExec(t, db, "CREATE TABLE r (id BIGINT, s STRING) DUPLICATE KEY(id)")
	mustExec(t, db, "INSERT INTO r VALUES (1, 'a'), (2, 'b'), (3, 'x'), (4, 'y')")
	for i := 0; i < 14; i++ {
		mustExec(t, db, fmt.Sprintf("INSERT INTO r SELECT id + %d, s FROM r", 4<<i))
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn.Raw(func(dc any) error {
		dc.(*Conn).Session().SetAllocator(mem)
		return nil
	})
	// To the end; closed after a row; cancelled; failing midway. The
	// values are computed, so that the batches come from mem.
	rows, _ := conn.QueryContext(ctx, "SELECT id + 1, concat(s, 'x') FROM r WHERE id > 0")
	for rows.Next() {
	}
	rows.Close()
	rows, _ = conn.QueryContext(ctx, "SELECT id + 1, concat(s, 'x') FROM r")
	rows.Next()
	rows.Close()
	cctx, cancel := context.WithCancel(ctx)
	rows, _ = conn.QueryContext(cctx, "SELECT id * 2 FROM r")
	rows.Next()
	cancel()
	for rows.Next() {
	}
	rows.Close()
	if _, err := conn.ExecContext(ctx, "SELECT CAST(s AS INT) FROM r"); err == nil {
		t.Error("a failing cast succeeded")
	}
	conn.Close()
	mem.AssertSize(t, 0)
}
