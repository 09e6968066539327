package sql

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
)

// localQuery is a SELECT of everything local() reads from path.
func localQuery(path, format string) string {
	return fmt.Sprintf("SELECT * FROM local(\"file_path\" = %s, \"format\" = %q)", parser.QuoteString(path), format)
}

// TestLocalFilesPolicy: a restricted session reads only under its
// directory (file_path relative to it; an absolute path inside it; no
// '..', no absolute path or symbolic link leading out), and none at all
// without a directory; an unrestricted one reads any path.
func TestLocalFilesPolicy(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	for _, d := range []string{root, outside} {
		if err := os.WriteFile(filepath.Join(d, "x.csv"), []byte("1\tin\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "sub", "y.csv"), []byte("2\tsub\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "x.csv"), filepath.Join(root, "link.csv")); err != nil {
		t.Fatal(err)
	}
	db, err := table.OpenDB(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	s := NewSession(db)
	if _, err := s.Exec(ctx, localQuery(filepath.Join(outside, "x.csv"), "csv")); err != nil {
		t.Fatalf("an unrestricted session: %v", err)
	}
	s.RestrictLocalFiles(root)
	for _, c := range []struct {
		path string
		ok   bool
	}{
		{"x.csv", true},
		{"sub/y.csv", true},
		{filepath.Join(root, "sub", "y.csv"), true},
		{"sub/../x.csv", false},
		{"../" + filepath.Base(outside) + "/x.csv", false},
		{filepath.Join(outside, "x.csv"), false},
		{"link.csv", false},
	} {
		_, err := s.Exec(ctx, localQuery(c.path, "csv"))
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: %v", c.path, err)
		case !c.ok && (!errors.Is(err, rowttl.ErrNotSupported) || !strings.Contains(err.Error(), "local(): file_path")):
			t.Errorf("%s: %v, want the path refused", c.path, err)
		}
	}
	s.RestrictLocalFiles("")
	if _, err := s.Exec(ctx, localQuery("x.csv", "csv")); !errors.Is(err, rowttl.ErrNotSupported) || !strings.Contains(err.Error(), "local() is not allowed") {
		t.Errorf("local() without a directory: %v", err)
	}
}

// TestLocalRoundTrip: a table of every column type, NULLs included,
// written by INTO OUTFILE and read back by INSERT ... SELECT FROM local()
// gives the same rows; every batch is released (a checked allocator).
func TestLocalRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db, err := table.OpenDB(t.TempDir(), &table.Options{Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := NewSession(db)
	s.SetAllocator(mem)
	run := func(q string) *Result {
		t.Helper()
		r, err := s.Exec(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return r
	}
	cols := "id INT NOT NULL, b BOOLEAN, ti TINYINT, si SMALLINT, bi BIGINT, f FLOAT, d DOUBLE, dec DECIMAL(27,9), dt DATE, ts DATETIME(6), ts3 DATETIME(3), vc VARCHAR(20), st STRING, ch CHAR(3)"
	run("CREATE TABLE a (" + cols + ") DUPLICATE KEY(id)")
	run("CREATE TABLE b (" + cols + ") DUPLICATE KEY(id)")
	var vals []string
	for i := 0; i < 3000; i++ {
		if i%7 == 3 {
			vals = append(vals, fmt.Sprintf("(%d, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)", i))
			continue
		}
		vals = append(vals, fmt.Sprintf("(%d, %v, %d, %d, %d, %d.25, %d.125e10, %d.000000001, '2026-01-%02d', '2026-02-03 04:05:%02d.%06d', '2026-02-03 04:05:06.%03d', 'v%d', 's\\t%d', 'c%d')",
			i, i%2 == 0, i%128-64, i*7, int64(i)*1_000_000_007, i, i, i, i%28+1, i%60, i*37%1000000, i%1000, i, i, i%10))
	}
	run("INSERT INTO a VALUES " + strings.Join(vals, ", "))
	dir := t.TempDir()
	run(fmt.Sprintf("SELECT * FROM a INTO OUTFILE 'file://%s/a_' FORMAT AS PARQUET", dir))
	files, _ := filepath.Glob(filepath.Join(dir, "a_*.parquet"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	run("INSERT INTO b SELECT * FROM local(\"file_path\" = " + parser.QuoteString(files[0]) + ", \"format\" = \"parquet\")")
	want := run("SELECT * FROM a ORDER BY id")
	got := run("SELECT * FROM b ORDER BY id")
	if fmt.Sprint(got.Rows) != fmt.Sprint(want.Rows) || len(got.Rows) != 3000 {
		t.Fatalf("round trip: %d rows, first %v, want %v", len(got.Rows), got.Rows[:2], want.Rows[:2])
	}
	direct := run(localQuery(files[0], "parquet") + " ORDER BY id")
	if fmt.Sprint(direct.Rows) != fmt.Sprint(want.Rows) {
		t.Fatalf("SELECT FROM local(): first %v, want %v", direct.Rows[:2], want.Rows[:2])
	}
}

// TestLocalForeignParquet: a file written by arrow-go's own writer with
// other settings (dictionary or plain encoding, several row groups,
// millisecond timestamps, unsigned and large-string columns) reads as
// the natural rowttl types, values converted.
func TestLocalForeignParquet(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "u", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "ms", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	for _, dict := range []bool{true, false} {
		t.Run(fmt.Sprintf("dictionary=%v", dict), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.parquet")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(dict), parquet.WithMaxRowGroupLength(1000))
			w, err := pqarrow.NewFileWriter(sc, f, props, pqarrow.DefaultWriterProps())
			if err != nil {
				t.Fatal(err)
			}
			bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
			for i := 0; i < 2500; i++ {
				if i%10 == 9 {
					bld.Field(0).AppendNull()
					bld.Field(1).AppendNull()
					bld.Field(2).AppendNull()
				} else {
					bld.Field(0).(*array.Uint32Builder).Append(uint32(4_000_000_000 + i))
					bld.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(1_767_225_600_000 + int64(i)))
					bld.Field(2).(*array.LargeStringBuilder).Append(fmt.Sprintf("s%d", i%3))
				}
				bld.Field(3).(*array.Int64Builder).Append(int64(i))
			}
			rec := bld.NewRecordBatch()
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
			bld.Release()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			db, err := table.OpenDB(t.TempDir(), &table.Options{Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			s := NewSession(db)
			s.SetAllocator(mem)
			q := "SELECT i, u, ms, ls FROM local(\"file_path\" = " + parser.QuoteString(path) + ", \"format\" = \"parquet\") WHERE i IN (0, 9, 1998, 2498) ORDER BY i"
			res, err := s.Exec(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			want := "[[0 4000000000 2026-01-01 00:00:00.000000 s0] [9 NULL NULL NULL] [1998 4000001998 2026-01-01 00:00:01.998000 s0] [2498 4000002498 2026-01-01 00:00:02.498000 s2]]"
			if got := fmt.Sprint(res.Rows); got != want {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
			res, err = s.Exec(context.Background(), "SELECT count(*), sum(u) FROM local(\"file_path\" = "+parser.QuoteString(path)+", \"format\" = \"parquet\")")
			if err != nil || fmt.Sprint(res.Rows) != "[[2500 9000002810250]]" {
				t.Fatalf("count and sum: %v %v", res, err)
			}
		})
	}
}

// FuzzLocalCSV: any bytes as a CSV file give rows or an error, never a
// panic, and never more rows than lines.
func FuzzLocalCSV(f *testing.F) {
	f.Add([]byte("1\ta\n2\tb\n"))
	f.Add([]byte("x\n\\N\n"))
	f.Add([]byte("a\tb\n1\n"))
	f.Add([]byte(""))
	f.Add([]byte("\n\n\t\t"))
	db, err := table.OpenDB(f.TempDir(), nil)
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "f.csv")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s := NewSession(db)
		defer s.Close()
		for _, format := range []string{"csv", "csv_with_names"} {
			res, err := s.Exec(context.Background(), localQuery(path, format))
			if err == nil && len(res.Rows) > strings.Count(string(data), "\n")+1 {
				t.Fatalf("%d rows from %d lines", len(res.Rows), strings.Count(string(data), "\n")+1)
			}
		}
	})
}
