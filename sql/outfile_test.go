package sql

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/fileformat"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// TestSelectIntoOutfile: the rows of a query written to
// Parquet and CSV files named as Doris names them, the answer row, the
// success file, and the types kept in the Parquet file.
func TestSelectIntoOutfile(t *testing.T) {
	s, run := modelSession(t, 64)
	out := t.TempDir()
	run(`CREATE TABLE t (id INT NOT NULL, s VARCHAR(10), d DECIMAL(20,2), ts DATETIME(3)) DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true")`)
	run(`SET session_now = '2026-01-01 00:00:00'`)
	run(`INSERT INTO t (id, s, d, ts, __TTL__) VALUES (1, 'a', 123456789012345678.25, '2026-01-01 00:00:00.123', NULL), (2, NULL, NULL, NULL, NULL), (3, 'gone', 1, NULL, 0)`)
	res := run(`SELECT id, s, d, ts, id * 2 AS twice FROM t WHERE id > 0 INTO OUTFILE "file://` + out + `/result_" FORMAT AS PARQUET PROPERTIES ("success_file_name" = "SUCCESS")`)
	if strings.Join(res.Columns, ",") != "FileNumber,TotalRows,FileSize,URL" || len(res.Rows) != 1 {
		t.Fatalf("answer %v %v", res.Columns, res.Rows)
	}
	row := res.Rows[0]
	url := row[3]
	if row[0] != "1" || row[1] != "2" || !strings.HasPrefix(url, "file://"+out+"/result_") || !strings.HasSuffix(url, "_") {
		t.Fatalf("answer %v", row)
	}
	file := strings.TrimPrefix(url, "file://") + "0.parquet"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(filepath.Join(out, "SUCCESS")); st == nil {
		t.Fatal("no success file")
	}
	if row[2] != strconvItoa(len(data)) {
		t.Fatalf("FileSize %s, file %d bytes", row[2], len(data))
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f, _ := os.Open(file)
	defer f.Close()
	pr, err := fileformat.OpenParquet(file, f, int64(len(data)), mem)
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	var types []string
	for _, fld := range pr.Schema().Fields() {
		typ, err := fileformat.FileType(fld)
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, fld.Name+" "+typ.String())
	}
	if got := strings.Join(types, ", "); got != "id INT, s VARCHAR(10), d DECIMAL(20,2), ts DATETIME(3), twice BIGINT" {
		t.Fatalf("file columns: %s", got)
	}
	if pr.NumRows() != 2 {
		t.Fatalf("%d rows in the file", pr.NumRows())
	}
	// CSV with a separator, sorted (ORDER BY).
	res = run(`SELECT id, s, d, ts FROM t ORDER BY id DESC INTO OUTFILE "file://` + out + `/csv_" FORMAT AS CSV PROPERTIES ("column_separator" = ",")`)
	text, err := os.ReadFile(strings.TrimPrefix(res.Rows[0][3], "file://") + "0.csv")
	if err != nil {
		t.Fatal(err)
	}
	if want := "2,\\N,\\N,\\N\n1,a,123456789012345678.25,2026-01-01 00:00:00.123\n"; string(text) != want {
		t.Fatalf("csv %q, want %q", text, want)
	}
	// No rows: one empty file.
	res = run(`SELECT id FROM t WHERE id > 100 INTO OUTFILE "file://` + out + `/none_" FORMAT AS CSV`)
	if res.Rows[0][0] != "1" || res.Rows[0][1] != "0" || res.Rows[0][2] != "0" {
		t.Fatalf("empty answer %v", res.Rows[0])
	}
	_ = s
}

func strconvItoa(n int) string { return schema.IntVal(int64(n)).String() }

// TestSelectIntoOutfileRefused: what INTO OUTFILE refuses, writing nothing.
func TestSelectIntoOutfileRefused(t *testing.T) {
	s, run := modelSession(t, 64)
	out := t.TempDir()
	run(`CREATE TABLE t (id INT) DUPLICATE KEY(id)`)
	run(`INSERT INTO t VALUES (1)`)
	cases := []struct {
		tail     string
		sentinel error
		msg      string
	}{
		{`"s3://bucket/x_" FORMAT AS CSV`, rowttl.ErrNotSupported, "only local paths"},
		{`"file://rel/x_" FORMAT AS CSV`, rowttl.ErrInvalidArgument, "must be absolute"},
		{`"file://` + out + `/missing/x_" FORMAT AS CSV`, rowttl.ErrInvalidArgument, "does not exist"},
		{`"file://` + out + `/x_" FORMAT AS ORC`, rowttl.ErrNotSupported, "only PARQUET, CSV"},
		{`"file://` + out + `/x_" FORMAT AS CSV PROPERTIES ("broker.name" = "b")`, rowttl.ErrNotSupported, `"broker.name"`},
		{`"file://` + out + `/x_" FORMAT AS CSV PROPERTIES ("max_file_size" = "1MB")`, rowttl.ErrInvalidArgument, "5MB to 2GB"},
		{`"file://` + out + `/x_" FORMAT AS PARQUET PROPERTIES ("compression" = "lzo")`, rowttl.ErrInvalidArgument, "compression"},
	}
	for _, c := range cases {
		_, err := s.Exec(context.Background(), "SELECT * FROM t INTO OUTFILE "+c.tail)
		if !errors.Is(err, c.sentinel) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %v with %q", c.tail, err, c.sentinel, c.msg)
		}
	}
	if _, err := parser.Parse(`SELECT 1 INTO OUTFILE 'file:///x' FORMAT PARQUET`); err == nil {
		t.Error("FORMAT without AS parsed")
	}
	if names, _ := os.ReadDir(out); len(names) != 0 {
		t.Fatalf("%d files written", len(names))
	}
}
