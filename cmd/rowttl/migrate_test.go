package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/load"
	"github.com/rowttl/rowttl/schema"
	mysqlserver "github.com/rowttl/rowttl/server/mysql"
	"github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
)

// migrateTarget serves a fresh data directory over both of Doris's
// protocols, as rowttl serve does, and returns the addresses and the
// directory.
func migrateTarget(t *testing.T) (mysqlAddr, httpAddr string, db *table.DB) {
	t.Helper()
	db, err := table.OpenDB(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hs := load.NewServer(db, load.ServerOptions{User: "root", Password: "secret"})
	ms, err := mysqlserver.New(db, mysqlserver.Options{User: "root", Password: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	herr, merr := make(chan error, 1), make(chan error, 1)
	go func() { herr <- hs.Serve(ctx, ln) }()
	go func() { merr <- ms.Serve(ctx, mln) }()
	t.Cleanup(func() {
		cancel()
		<-herr
		<-merr
		db.Close()
	})
	return mln.Addr().String(), ln.Addr().String(), db
}

// migrateSource makes a data directory of tables of every TTL mode and
// model, in two databases, written at now.
func migrateSource(t *testing.T, now time.Time) string {
	t.Helper()
	dir := t.TempDir()
	db, err := table.OpenDB(dir, &table.Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	s := sql.NewSession(db)
	s.Clock = func() time.Time { return now }
	var vals []string
	for i := 0; i < 50; i++ {
		vals = append(vals, fmt.Sprintf("(%d, NOW(6) - INTERVAL %d HOUR, 'm%d\\t%d', %d.5)", i, i, i%4, i, i))
	}
	script := `
CREATE TABLE src_ttl (id BIGINT NOT NULL, at DATETIME(6) NOT NULL, msg STRING, amount DOUBLE)
DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 3
PROPERTIES ("function_column.enable_row_ttl" = "true", "function_column.ttl_col" = "at", "function_column.ttl" = "1 day", "function_column.ttl_time_zone" = "+00:00");
INSERT INTO src_ttl VALUES ` + strings.Join(vals, ", ") + `;
CREATE TABLE direct (id INT NOT NULL, v VARCHAR(20)) DUPLICATE KEY(id)
PROPERTIES ("function_column.enable_row_ttl" = "true");
INSERT INTO direct (id, v, __DORIS_TTL_COL__) VALUES (1, 'forever', NULL), (2, 'soon', UNIX_TIMESTAMP(NOW()) * 1000000 + 3600000000), (3, 'gone', 0), (4, 'later', 4102444800000000);
CREATE DATABASE app;
CREATE TABLE app.users (id BIGINT NOT NULL, name VARCHAR(30), score DECIMAL(10,2), born DATE) UNIQUE KEY(id)
DISTRIBUTED BY HASH(id) BUCKETS 2 PROPERTIES ("enable_unique_key_merge_on_write" = "true");
INSERT INTO app.users VALUES (1, 'ann', 1.25, '1990-01-02'), (2, 'bob', NULL, NULL), (3, 'cy', -3.5, '2000-12-31');
INSERT INTO app.users VALUES (2, 'bob2', 7.00, '1985-05-05');
`
	if failed := s.ExecScript(context.Background(), script, true, func(parser.Piece, *sql.Result, error) {}); len(failed) > 0 {
		t.Fatalf("source: %v", failed[0])
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// dump is every table's DDL and rows (hidden columns shown) at now.
func dump(t *testing.T, s *sql.Session, now time.Time) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	s.FreezeNow(now)
	for _, q := range []string{"SET show_hidden_columns = true",
		"SHOW CREATE TABLE default.src_ttl", "SELECT * FROM default.src_ttl ORDER BY id",
		"SHOW CREATE TABLE default.direct", "SELECT * FROM default.direct ORDER BY id",
		"SHOW CREATE TABLE app.users", "SELECT * FROM app.users ORDER BY id"} {
		res, err := s.Exec(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if err := res.WriteTSV(&b); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestMigrate copies a data directory to a rowttl serve standing in for a
// Doris cluster: tables, TTL properties and rows are identical afterwards
// (direct-mode expirations included), also when the first run stops
// halfway and a second one finishes; a third run sends nothing new.
func TestMigrate(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	dir := migrateSource(t, now)
	mysqlAddr, httpAddr, target := migrateTarget(t)
	state := filepath.Join(t.TempDir(), "state.json")
	f := migrateFlags{dir: dir, to: mysqlAddr, httpAddr: httpAddr, user: "root", state: state, chunkRows: 7, noProgress: true, stopAfter: 5}
	var out bytes.Buffer
	if err := runMigrate(context.Background(), f, "secret", &out, &out); !errors.Is(err, errStopped) {
		t.Fatalf("the first run: %v\n%s", err, out.String())
	}
	f.stopAfter = 0
	out.Reset()
	if err := runMigrate(context.Background(), f, "secret", &out, &out); err != nil {
		t.Fatalf("the rerun: %v\n%s", err, out.String())
	}
	// The first run sent 5 chunks: app.users', default.direct's and three
	// of default.src_ttl's four (24 of its 50 rows alive, in chunks of 7);
	// the rerun skipped them and sent the last.
	if !strings.Contains(out.String(), "app.users\t3\t1\t1\t3\t") || !strings.Contains(out.String(), "default.direct\t3\t1\t1\t3\t") ||
		!strings.Contains(out.String(), "default.src_ttl\t24\t4\t3\t24\t") {
		t.Errorf("the rerun's report:\n%s", out.String())
	}
	src, err := table.OpenDB(dir, &table.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, at := range []time.Time{now, now.Add(2 * time.Hour), now.Add(400 * 24 * time.Hour)} {
		want, got := dump(t, sql.NewSession(src), at), dump(t, sql.NewSession(target), at)
		if got != want {
			t.Fatalf("at %s the target differs\ntarget:\n%s\nsource:\n%s", at, got, want)
		}
	}
	out.Reset()
	if err := runMigrate(context.Background(), f, "secret", &out, &out); err != nil || !strings.Contains(out.String(), "default.src_ttl\t24\t4\t4\t24\t") {
		t.Fatalf("a third run: %v\n%s", err, out.String())
	}
	// A row altered on the target, a value or a direct-mode expiration,
	// fails the run though the counts agree; the tables before it pass.
	ts := sql.NewSession(target)
	exec := func(qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := ts.Exec(context.Background(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	for _, c := range []struct {
		alter, restore []string
		table          string
	}{
		{[]string{"UPDATE app.users SET name = 'eve' WHERE id = 1"}, []string{"UPDATE app.users SET name = 'ann' WHERE id = 1"}, "app.users"},
		{[]string{"UPDATE app.users SET score = 1.26 WHERE id = 1"}, []string{"UPDATE app.users SET score = 1.25 WHERE id = 1"}, "app.users"},
		{[]string{"DELETE FROM default.direct WHERE id = 4", "INSERT INTO default.direct (id, v, __DORIS_TTL_COL__) VALUES (4, 'later', 4102444800000001)"},
			[]string{"DELETE FROM default.direct WHERE id = 4", "INSERT INTO default.direct (id, v, __DORIS_TTL_COL__) VALUES (4, 'later', 4102444800000000)"}, "default.direct"},
	} {
		exec(c.alter...)
		out.Reset()
		err := runMigrate(context.Background(), f, "secret", &out, &out)
		if !errors.Is(err, rowttl.ErrCorruption) || !strings.Contains(err.Error(), c.table+": the rows differ: the target's checksum") {
			t.Errorf("%s: %v\n%s", c.alter, err, out.String())
		}
		t.Log(err)
		exec(c.restore...)
	}
	out.Reset()
	if err := runMigrate(context.Background(), f, "secret", &out, &out); err != nil {
		t.Fatalf("after the rows were put back: %v\n%s", err, out.String())
	}
	// What fails: a wrong password, a table that does not exist.
	if err := runMigrate(context.Background(), f, "wrong", &out, &out); err == nil || !strings.Contains(err.Error(), "1045") {
		t.Errorf("a wrong password: %v", err)
	}
	f.tables = "default.nosuch"
	if err := runMigrate(context.Background(), f, "secret", &out, &out); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("a missing table: %v", err)
	}
	if _, err := os.Stat(state); err != nil {
		t.Errorf("no state file: %v", err)
	}
}

// The digest reads a value the same from the source's scan and from the
// target's text, however the target prints it; values that differ do
// not read the same.
func TestRowDigestForms(t *testing.T) {
	dec, _ := schema.ParseLiteral(schema.DecimalType(10, 2), "1.5")
	for _, c := range []struct {
		typ  schema.Type
		v    schema.Value
		text string
		same bool
	}{
		{schema.DecimalType(10, 2), dec, "1.50", true},
		{schema.DecimalType(10, 2), dec, "1.51", false},
		{schema.DatetimeType(3), schema.IntVal(1_767_225_600_120_000), "2026-01-01 00:00:00.120", true},
		{schema.DatetimeType(6), schema.IntVal(1_767_225_600_120_000), "2026-01-01 00:00:00.120001", false},
		{schema.DoubleType, schema.FloatVal(0.1 + 0.2), "0.300000000000000", true}, // printed with 15 digits
		{schema.DoubleType, schema.FloatVal(0.1 + 0.2), "0.30000000000001", false},
		{schema.FloatType, schema.FloatVal(float64(float32(1.1))), "1.1", true},
		{schema.StringType, schema.BytesVal([]byte("a\tb")), "a\tb", true},
		{schema.StringType, schema.BytesVal([]byte("a")), "a ", false},
		{schema.DateType, schema.IntVal(20454), "2026-01-01", true},
		{schema.BooleanType, schema.IntVal(1), "1", true},
		{schema.BigIntType, schema.Null, "0", false},
		{schema.BigIntType, schema.IntVal(-42), "-42", true},
		{schema.BigIntType, schema.IntVal(math.MaxInt64), "9223372036854775807", true}, // past parseInt's 18 digits
		{schema.BigIntType, schema.IntVal(math.MinInt64), "-9223372036854775808", true},
		{schema.IntType, schema.IntVal(5), "6", false},
	} {
		var src, dst rowDigest
		src.addValue(c.typ, c.v)
		src.endRow()
		v, err := parseText(c.typ, []byte(c.text))
		if err != nil {
			t.Fatalf("%s %q: %v", c.typ, c.text, err)
		}
		dst.addValue(c.typ, v)
		dst.endRow()
		if same := src.sum == dst.sum; same != c.same {
			t.Errorf("%s: %v and %q read the same: %v, want %v", c.typ, c.v, c.text, same, c.same)
		}
	}
	for _, c := range []struct {
		typ  schema.Type
		text string
	}{{schema.IntType, "1x"}, {schema.IntType, "-"}, {schema.IntType, "99999999999"}, {schema.DateType, "yesterday"}} {
		if v, err := parseText(c.typ, []byte(c.text)); err == nil {
			t.Errorf("%s %q: read as %v", c.typ, c.text, v)
		}
	}
	if v, err := parseText(schema.IntType, nil); err != nil || !v.IsNull() {
		t.Errorf("NULL: %v %v", v, err)
	}
}

// FuzzParseText: the digest's fast reading of integers agrees with the
// literal parser on any text, and no text panics it.
func FuzzParseText(f *testing.F) {
	for _, s := range []string{"0", "-1", "42", "007", "-", "", " 1", "1 ", "+5", "9223372036854775807", "-9223372036854775808", "99999999999999999999", "1e3", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, typ := range []schema.Type{schema.BigIntType, schema.IntType, schema.TinyIntType} {
			got, gerr := parseText(typ, []byte(s))
			want, werr := schema.ParseLiteral(typ, s)
			if (gerr == nil) != (werr == nil) || (gerr == nil && (got.Kind != want.Kind || got.Int != want.Int)) {
				t.Fatalf("%s %q: %v %v, the literal parser %v %v", typ, s, got, gerr, want, werr)
			}
		}
	})
}
