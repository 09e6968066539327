package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/load"
	"github.com/rowttl/rowttl/table"
)

// exportCols are the columns of the export tests' tables, every type.
const exportCols = `id BIGINT NOT NULL, b BOOLEAN, ti TINYINT, si SMALLINT, i INT, f FLOAT, d DOUBLE,
	dec DECIMAL(12,3), bd DECIMAL(38,4), s STRING, v VARCHAR(8), c CHAR(4), dt DATE, ts DATETIME(3), tz TIMESTAMPTZ(6)`

const exportRows = `(1, true, -128, 32767, -2147483648, 1.5, -2.5e300, -123456789.123, 1234567890123456789012345678901234.5678, 'tab	and ''quote''', 'héllo', 'c', '2026-01-01', '2025-12-31 23:59:59.999', '2026-01-01 00:00:00.5'),
	(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
	(3, false, 0, 0, 0, 0, 0, 0.001, -0.0001, '', '', '', '1970-01-01', '2026-01-01 12:00:00', '1999-12-31 23:00:00'),
	(4, true, 1, 2, 3, -0.25, 1e-300, 999999999.999, -9999999999999999999999999999999999.9999, 'x', 'y', 'z', '2999-12-31', '2026-01-05 00:00:00', '2030-01-01 00:00:00')`

func runExportCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	return runIn(exportCommand(), "", args...)
}

// TestExportRoundTrip: a direct-mode table and a source-mode table, every
// type with NULLs, exported to Parquet with --with-ttl and loaded back
// into direct-mode tables: the same rows, and the same rows alive at
// every later now (the expirations travel).
func TestExportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	out := t.TempDir()
	const now = "2026-01-01 00:00:00"
	sqlIn(t, dir, `CREATE TABLE direct (`+exportCols+`) DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true");
CREATE TABLE source (`+exportCols+`) DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true",
	"function_column.ttl_col" = "ts", "function_column.ttl" = "2 days", "function_column.ttl_time_zone" = "+08:00");
CREATE TABLE back_direct (`+exportCols+`) DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true", "disable_auto_compaction" = "true");
CREATE TABLE back_source (`+exportCols+`) DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true", "disable_auto_compaction" = "true");
SET session_now = '`+now+`';
INSERT INTO source VALUES `+exportRows+`;
INSERT INTO direct (id, b, ti, si, i, f, d, dec, bd, s, v, c, dt, ts, tz, __TTL__) SELECT *, tz FROM source;`)
	// The loads below run at the wall clock, past most of these
	// expirations: the tables they fill keep auto compaction off, or a
	// background compaction may reclaim rows that the reads at earlier nows
	// below must still see (reads do not travel back in time).
	// The direct table's expirations: tz as epoch µs, NULL in row 2.
	for _, name := range []string{"direct", "source"} {
		file := filepath.Join(out, name+".parquet")
		stdout, _, err := runExportCmd(t, "--dir", dir, "--table", name, "--out", file, "--with-ttl", "--now", now, "--row-group-rows", "2")
		if err != nil {
			t.Fatalf("export %s: %v", name, err)
		}
		if !strings.HasPrefix(stdout, "FileNumber\tTotalRows\tFileSize\tURL\n1\t") || !strings.Contains(stdout, "file://"+file) {
			t.Fatalf("answer %q", stdout)
		}
		res, _, err := runLoadCmd(t, "", "--dir", dir, "--table", "back_"+name, "--format", "parquet", file)
		if err != nil || res.Status != load.StatusSuccess {
			t.Fatalf("load %s: %v %+v", name, err, res)
		}
	}
	for _, at := range []string{now, "2026-01-02 16:00:00", "2026-01-04 00:00:00", "2026-01-06 15:59:59.999", "2026-01-06 16:00:00", "2029-12-31 23:59:59.999999", "2030-01-01 00:00:00"} {
		for _, name := range []string{"direct", "source"} {
			q := fmt.Sprintf("SET session_now = '%s'; SELECT * FROM %%s ORDER BY id;", at)
			src, back := sqlIn(t, dir, fmt.Sprintf(q, name)), sqlIn(t, dir, fmt.Sprintf(q, "back_"+name))
			if src != back {
				t.Fatalf("%s at %s:\n%s\nloaded back:\n%s", name, at, src, back)
			}
		}
	}
	// Direct mode keeps the stored expirations exactly.
	q := "SET show_hidden_columns = true; SET session_now = '" + now + "'; SELECT * FROM %s ORDER BY id;"
	if src, back := sqlIn(t, dir, fmt.Sprintf(q, "direct")), sqlIn(t, dir, fmt.Sprintf(q, "back_direct")); src != back {
		t.Fatalf("hidden columns:\n%s\nloaded back:\n%s", src, back)
	}
	// The source table's expirations: ts read at +08:00, plus two days
	// (row 1: 2025-12-31 23:59:59.999+08:00 is 2026-01-02 15:59:59.999 UTC).
	got := sqlIn(t, dir, "SET show_hidden_columns = true; SET session_now = '"+now+"'; SELECT id, __TTL__ FROM back_source ORDER BY id;")
	want := "id\t__TTL__\n1\t1767369599999000\n2\tNULL\n3\t1767412800000000\n4\t1767715200000000\n"
	if got != want {
		t.Fatalf("source expirations:\n%s\nwant:\n%s", got, want)
	}
	checkDir(t, dir)
}

// TestExportCSV: the CSV export reads back through rowttl load, with a
// separator, quoting for the value holding it, and a header line.
func TestExportCSV(t *testing.T) {
	dir := t.TempDir()
	sqlIn(t, dir, `CREATE TABLE t (`+exportCols+`) DUPLICATE KEY(id); CREATE TABLE back (`+exportCols+`) DUPLICATE KEY(id);
INSERT INTO t VALUES `+exportRows+`;`)
	file := filepath.Join(t.TempDir(), "t.csv")
	// The TAB inside row 1's string cannot go unquoted.
	_, _, err := runExportCmd(t, "--dir", dir, "--table", "t", "--format", "csv", "--out", file, "--no-progress")
	if !errors.Is(err, rowttl.ErrInvalidArgument) || !strings.Contains(err.Error(), "column s") {
		t.Fatalf("unquotable value: %v", err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("a refused export left %s: %v", file, err)
	}
	if _, _, err := runExportCmd(t, "--dir", dir, "--table", "t", "--format", "csv_with_names", "--out", file,
		"--column-separator", `\x01`, "--enclose", `"`); err != nil {
		t.Fatal(err)
	}
	res, _, err := runLoadCmd(t, "", "--dir", dir, "--table", "back", "--format", "csv_with_names", "--column-separator", `\x01`, "--enclose", `"`, file)
	if err != nil || res.NumberLoadedRows != 4 {
		t.Fatalf("load: %v %+v", err, res)
	}
	if src, back := sqlIn(t, dir, "SELECT * FROM t ORDER BY id"), sqlIn(t, dir, "SELECT * FROM back ORDER BY id"); src != back {
		t.Fatalf("csv round trip:\n%s\n---\n%s", src, back)
	}
	text, _ := os.ReadFile(file)
	if !strings.HasPrefix(string(text), "id\x01b\x01ti") {
		t.Fatalf("no header: %q", text[:40])
	}
}

// TestExportRefused: bad flags and paths are refused and write nothing.
func TestExportRefused(t *testing.T) {
	dir := t.TempDir()
	sqlIn(t, dir, `CREATE TABLE t (id INT) DUPLICATE KEY(id); INSERT INTO t VALUES (1);`)
	out := t.TempDir()
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"--out", filepath.Join(out, "missing", "t.parquet")}, "the directory " + filepath.Join(out, "missing") + " does not exist"},
		{[]string{"--out", out}, "is a directory"},
		{[]string{"--out", filepath.Join(out, "t.x"), "--format", "orc"}, `format "orc"`},
		{[]string{"--out", filepath.Join(out, "t.x"), "--compression", "lzo"}, `compression "lzo"`},
		{[]string{"--out", filepath.Join(out, "t.x"), "--table", "nope"}, "nope"},
		{[]string{"--out", filepath.Join(out, "t.x"), "--now", "yesterday"}, "--now"},
	}
	for _, c := range cases {
		args := append([]string{"--dir", dir, "--table", "t"}, c.args...)
		if _, _, err := runExportCmd(t, args...); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Fatalf("%v: %v, want %q", c.args, err, c.msg)
		}
	}
	if names, _ := os.ReadDir(out); len(names) != 0 {
		t.Fatalf("%d files written", len(names))
	}
	// Without row TTL, --with-ttl gives NULL expirations.
	file := filepath.Join(out, "t.csv")
	if _, _, err := runExportCmd(t, "--dir", dir, "--table", "t", "--format", "csv", "--with-ttl", "--out", file); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != "1\t\\N\n" {
		t.Fatalf("csv %q", b)
	}
}

// TestExportBesideOwner: export opens the data directory read-only, so it
// runs while another process (here a DB handle) owns it for writing.
func TestExportBesideOwner(t *testing.T) {
	dir := t.TempDir()
	sqlIn(t, dir, `CREATE TABLE t (id INT) DUPLICATE KEY(id); INSERT INTO t VALUES (1), (2);`)
	owner, err := table.OpenDB(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	file := filepath.Join(t.TempDir(), "t.csv")
	if _, _, err := runExportCmd(t, "--dir", dir, "--table", "t", "--format", "csv", "--out", file); err != nil {
		t.Fatalf("export beside the owner: %v", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "1\n2\n" {
		t.Fatalf("csv %q", b)
	}
}

// TestExportCodecs: by default number, date and time columns are zstd
// and the others snappy; --compression names one codec for every column.
func TestExportCodecs(t *testing.T) {
	dir := t.TempDir()
	sqlIn(t, dir, `CREATE TABLE t (`+exportCols+`) DUPLICATE KEY(id); INSERT INTO t VALUES `+exportRows+`;`)
	for _, tc := range []struct {
		args         []string
		number, rest compress.Compression
	}{
		{nil, compress.Codecs.Zstd, compress.Codecs.Snappy},
		{[]string{"--compression", "snappy"}, compress.Codecs.Snappy, compress.Codecs.Snappy},
		{[]string{"--compression", "zstd"}, compress.Codecs.Zstd, compress.Codecs.Zstd},
		{[]string{"--compression", "none"}, compress.Codecs.Uncompressed, compress.Codecs.Uncompressed},
	} {
		path := filepath.Join(t.TempDir(), "t.parquet")
		args := append([]string{"--dir", dir, "--table", "t", "--out", path, "--no-progress"}, tc.args...)
		if _, _, err := runExportCmd(t, args...); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		pf, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		md := pf.MetaData()
		rg := md.RowGroup(0)
		for i := range md.Schema.NumColumns() {
			cc, err := rg.ColumnChunk(i)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.rest
			if phys := md.Schema.Column(i).PhysicalType(); phys == parquet.Types.Float || phys == parquet.Types.Double ||
				phys == parquet.Types.Int32 || phys == parquet.Types.Int64 {
				want = tc.number
			}
			if cc.Compression() != want {
				t.Errorf("%v: column %s compressed %s, want %s", tc.args, md.Schema.Column(i).Name(), cc.Compression(), want)
			}
		}
		pf.Close()
	}
}

// TestExportProgress: the progress line counts the live rows of the table
// (counted when the first line is due, not before the export) beside the
// rows written, and the last line says all of them are out.
func TestExportProgress(t *testing.T) {
	dir := t.TempDir()
	sqlIn(t, dir, `CREATE TABLE t (`+exportCols+`) DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true");
SET session_now = '2026-01-01 00:00:00';
INSERT INTO t VALUES `+exportRows+`;
INSERT INTO t (id, __TTL__) VALUES (5, CAST('2026-01-02 00:00:00' AS DATETIME)), (6, CAST('2026-01-03 00:00:00' AS DATETIME)), (7, CAST('2026-01-05 00:00:00' AS DATETIME));`)
	defer func(d time.Duration) { progressDelay = d }(progressDelay)
	progressDelay = 0
	// At 2026-01-04 rows 5 and 6 have expired: 5 of the 7 are live.
	file := filepath.Join(t.TempDir(), "t.parquet")
	_, stderr, err := runExportCmd(t, "--dir", dir, "--table", "t", "--out", file, "--now", "2026-01-04 00:00:00")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "export: 5 of 5 rows (100%)") {
		t.Fatalf("last progress line %q, want 5 of 5 rows; stderr:\n%s", last, stderr)
	}
}
