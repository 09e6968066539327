package sql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/table"
)

// TestProcessList: every session of a DB is listed with its user, host,
// database and command; a closed session leaves; KillQuery cancels the
// statement a process runs and nothing else.
func TestProcessList(t *testing.T) {
	db, err := table.OpenDB(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	a, b := NewSession(db), NewSession(db)
	b.SetClient("app", "10.0.0.7:5123")
	if _, err := b.Exec(ctx, "CREATE DATABASE d"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Exec(ctx, "USE d"); err != nil {
		t.Fatal(err)
	}
	res, err := a.Exec(ctx, "SHOW PROCESSLIST")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Rows {
		got = append(got, strings.Join(append(r[1:5:5], r[6:]...), " "))
	}
	want := []string{"root localhost default Query executing SHOW PROCESSLIST", "app 10.0.0.7:5123 d Sleep  NULL"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("processlist:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.Rows[1][0] != "2" || b.Process().ID() != 2 {
		t.Fatalf("ids: %v, b is %d", res.Rows, b.Process().ID())
	}

	l := ProcessListOf(db)
	sctx, done := b.Process().Begin(ctx, "SELECT slow", time.Now())
	if !l.KillQuery(b.Process().ID()) {
		t.Fatal("KillQuery found no process")
	}
	select {
	case <-sctx.Done():
	default:
		t.Fatal("KillQuery did not cancel the statement")
	}
	done(time.Now())
	if l.KillQuery(99) {
		t.Fatal("KillQuery found process 99")
	}
	b.Close()
	if n := len(l.Snapshot(time.Now())); n != 1 {
		t.Fatalf("%d processes after Close, want 1", n)
	}
	a.Close()
}

// TestShowDataBytes: SHOW DATA gives a table's bytes on disk and the
// bytes of its expired rows as its statistics count them, and the total
// adds the tables up.
func TestShowDataBytes(t *testing.T) {
	db, err := table.OpenDB(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	s := NewSession(db)
	defer s.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.FreezeNow(now)
	for _, q := range []string{
		`CREATE TABLE a (id BIGINT, ts DATETIME(6)) DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true",
		 "function_column.ttl_col" = "ts", "function_column.ttl" = "1 day", "function_column.ttl_time_zone" = "UTC",
		 "disable_auto_compaction" = "true")`,
		"INSERT INTO a VALUES (1, '2020-01-01 00:00:00'), (2, NOW(6)), (3, '2020-01-01 00:00:00')",
		"CREATE TABLE b (id INT) DUPLICATE KEY(id)",
		"INSERT INTO b VALUES (1), (2)",
	} {
		if _, err := s.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.Exec(ctx, "SHOW DATA")
	if err != nil {
		t.Fatal(err)
	}
	var sum [4]int64
	for i, name := range []string{"a", "b"} {
		tbl, err := db.Table("default", name)
		if err != nil {
			t.Fatal(err)
		}
		st, err := tbl.Stats(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{name, fmt.Sprint(st.VisibleRows), fmt.Sprint(st.BytesOnDisk), fmt.Sprint(st.ExpiredRowsOnDisk), fmt.Sprint(st.ExpiredBytesOnDisk)}
		if got := res.Rows[i]; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("row %d: %v, want %v", i, got, want)
		}
		for j, v := range []int64{st.VisibleRows, st.BytesOnDisk, st.ExpiredRowsOnDisk, st.ExpiredBytesOnDisk} {
			sum[j] += v
		}
	}
	if sum[1] == 0 || sum[2] != 2 || sum[3] == 0 {
		t.Fatalf("statistics: %v", sum)
	}
	if got, want := strings.Join(res.Rows[2], " "), fmt.Sprintf("Total %d %d %d %d", sum[0], sum[1], sum[2], sum[3]); got != want {
		t.Errorf("total %q, want %q", got, want)
	}
}

// TestProcessSetID: a process takes the id a front end announced, keeps
// it in SHOW PROCESSLIST and connection_id(), and later registrations do
// not reuse it; an id in use is refused and changes nothing.
func TestProcessSetID(t *testing.T) {
	db, err := table.OpenDB(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	a, b := NewSession(db), NewSession(db)
	if err := a.Process().SetID(7); err != nil {
		t.Fatal(err)
	}
	if err := b.Process().SetID(7); !errors.Is(err, rowttl.ErrExists) || b.Process().ID() != 2 {
		t.Fatalf("SetID to a used id: %v, id %d", err, b.Process().ID())
	}
	if err := b.Process().SetID(0); err == nil {
		t.Fatal("SetID(0) succeeded")
	}
	c := NewSession(db)
	if c.Process().ID() != 8 {
		t.Fatalf("a later session got id %d, want 8", c.Process().ID())
	}
	res, err := a.Exec(ctx, "SELECT connection_id()")
	if err != nil || res.Rows[0][0] != "7" {
		t.Fatalf("connection_id(): %v %v", res, err)
	}
	res, err = b.Exec(ctx, "SHOW PROCESSLIST")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range res.Rows {
		ids = append(ids, r[0])
	}
	if fmt.Sprint(ids) != "[2 7 8]" {
		t.Fatalf("ids %v", ids)
	}
	a.Close()
	if ProcessListOf(db).KillQuery(7) {
		t.Fatal("a closed process is still listed under its new id")
	}
}
