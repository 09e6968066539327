package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/fileformat"
	"github.com/rowttl/rowttl/schema"
)

// allTypesDDL is a direct-mode table with a column of every type.
const allTypesDDL = `(id BIGINT NOT NULL, b BOOLEAN, ti TINYINT, si SMALLINT, i INT, f FLOAT, d DOUBLE,
	dec DECIMAL(12,3), big DECIMAL(38,6), s STRING, v VARCHAR(8), c CHAR(4), dt DATE, ts DATETIME(3), tz TIMESTAMPTZ(6))
	DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true")`

// randomRows builds n random rows of the table's columns plus __TTL__,
// NULLs included, as one batch of the export schema.
func randomRows(t *testing.T, e *env, tbl string, n int, seed int64) arrow.RecordBatch {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	cols := e.table(tbl).Definition().Schema.Columns
	sc := fileformat.FileSchema(cols, true)
	b := array.NewRecordBuilder(e.mem, sc)
	defer b.Release()
	for r := 0; r < n; r++ {
		for c, col := range cols {
			fb := b.Field(c)
			if c > 0 && rng.Intn(5) == 0 {
				fb.AppendNull()
				continue
			}
			var v schema.Value
			switch col.Type.Kind {
			case schema.BigInt:
				v = schema.IntVal(int64(r))
				if c > 0 {
					v = schema.IntVal(rng.Int63() - rng.Int63())
				}
			case schema.Boolean:
				v = schema.IntVal(int64(rng.Intn(2)))
			case schema.TinyInt:
				v = schema.IntVal(int64(rng.Intn(256) - 128))
			case schema.SmallInt:
				v = schema.IntVal(int64(rng.Intn(65536) - 32768))
			case schema.Int:
				v = schema.IntVal(int64(rng.Int31()) - int64(rng.Int31()))
			case schema.Float:
				v = schema.FloatVal(float64(float32(rng.NormFloat64() * 1e3)))
			case schema.Double:
				v = schema.FloatVal(rng.NormFloat64() * 1e10)
			case schema.Decimal:
				v = schema.IntVal(rng.Int63n(1e12) - 5e11)
				if col.Type.Precision > 18 {
					// Up to 38 digits: beyond 64 bits.
					n := new(big.Int).Mul(big.NewInt(rng.Int63()), big.NewInt(rng.Int63n(1e12)))
					if rng.Intn(2) == 0 {
						n.Neg(n)
					}
					v = schema.DecimalVal(decimal128.FromBigInt(n))
				}
			case schema.String, schema.Varchar, schema.Char:
				w := []byte("ab,é\\x ")
				s := make([]byte, 0, 4)
				for len(s) < 4 && rng.Intn(5) > 0 {
					s = append(s, w[rng.Intn(len(w))])
				}
				v = schema.BytesVal(s)
			case schema.Date:
				v = schema.IntVal(int64(rng.Intn(40000) - 10000))
			case schema.Datetime:
				v = schema.IntVal(schema.TruncateMicros(rng.Int63n(4e15)-1e15, col.Type.Precision))
			case schema.TimestampTZ:
				v = schema.IntVal(rng.Int63n(4e15) - 1e15)
			}
			schema.AppendValue(fb, v)
		}
		ttl := b.Field(len(cols)).(*array.Int64Builder)
		switch rng.Intn(3) {
		case 0:
			ttl.AppendNull()
		default:
			ttl.Append(testNow.UnixMicro() + rng.Int63n(1e12))
		}
	}
	return b.NewRecordBatch()
}

func parquetFile(t *testing.T, mem memory.Allocator, o fileformat.ParquetOptions, recs ...arrow.RecordBatch) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := fileformat.NewParquetWriter(&buf, recs[0].Schema(), o, mem)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func csvText(t *testing.T, rec arrow.RecordBatch) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := fileformat.NewCSVWriter(&buf, rec.Schema(), fileformat.CSVOptions{ColumnSeparator: []byte("|"), Enclose: '"'})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return buf.String()
}

// TestParquetAgainstCSV loads the same random rows, every type with
// NULLs and expirations, once as Parquet and once as the CSV text the
// CSV writer makes of them: both tables hold the same rows, expirations
// included.
func TestParquetAgainstCSV(t *testing.T) {
	e := newEnv(t)
	e.exec("CREATE TABLE p "+allTypesDDL, "CREATE TABLE c "+allTypesDDL)
	seed := int64(19)
	t.Logf("seed %d", seed)
	rec := randomRows(t, e, "p", 3000, seed)
	defer rec.Release()
	data := parquetFile(t, e.mem, fileformat.ParquetOptions{RowGroupRows: 1000}, rec)
	res := e.mustLoad("p", string(data), Options{Format: FormatParquet, Label: "pq"})
	if res.NumberLoadedRows != 3000 || res.LoadBytes != int64(len(data)) {
		t.Fatalf("parquet load: %+v", res)
	}
	cols := "id, b, ti, si, i, f, d, dec, big, s, v, c, dt, ts, tz, __TTL__"
	e.mustLoad("c", csvText(t, rec), Options{ColumnSeparator: "|", Enclose: `"`, Columns: cols})
	q := "SELECT * FROM %s ORDER BY id"
	e.exec("SET show_hidden_columns = true")
	p, c := e.exec(fmt.Sprintf(q, "p")), e.exec(fmt.Sprintf(q, "c"))
	if p != c {
		t.Fatalf("parquet and csv loads differ:\n%s\n---\n%s", head(p), head(c))
	}
	if strings.Count(p, "\n") != 3001-countExpired(rec) {
		t.Fatalf("%d lines", strings.Count(p, "\n"))
	}
	// The label is used now.
	if res := e.load("p", string(data), Options{Format: FormatParquet, Label: "pq"}); res.Status != StatusLabelExists {
		t.Fatalf("reused label: %+v", res)
	}
}

func head(s string) string {
	if len(s) > 2000 {
		return s[:2000]
	}
	return s
}

func countExpired(rec arrow.RecordBatch) int {
	ttl := rec.Column(int(rec.NumCols()) - 1).(*array.Int64)
	n := 0
	for i := 0; i < ttl.Len(); i++ {
		if !ttl.IsNull(i) && ttl.Value(i) <= testNow.UnixMicro() {
			n++
		}
	}
	return n
}

// TestParquetColumnList: a column list binds file columns by name, types
// variables as their file columns, and maps them with expressions; the
// default list takes the file's columns that the table has.
func TestParquetColumnList(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT NOT NULL, note VARCHAR(10), n BIGINT DEFAULT "7") DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true")`)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "ID", Type: arrow.PrimitiveTypes.Int64},
		{Name: "extra", Type: arrow.PrimitiveTypes.Float64},
		{Name: "exp", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(e.mem, sc)
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	b.Field(1).(*array.Float64Builder).AppendValues([]float64{1.5, 2.5}, nil)
	b.Field(2).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{4102444800000, 0}, []bool{true, false})
	b.Field(3).(*array.StringBuilder).AppendValues([]string{"one", "two"}, nil)
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	data := string(parquetFile(t, e.mem, fileformat.ParquetOptions{}, rec))

	// Default: id and note by name (case-insensitively); n takes its
	// default, extra and exp are not read.
	e.mustLoad("t", data, Options{Format: FormatParquet})
	// A list: exp is a DATETIME variable read in the load's zone.
	e.mustLoad("t", data, Options{Format: FormatParquet, TimeZone: "+08:00",
		Columns: "id, extra, exp, note, n = cast(extra * 10 as bigint) + id * 100, __DORIS_TTL_COL__ = exp, note = concat(note, '!')"})
	out := e.exec("SET show_hidden_columns = true", "SELECT id, note, n, __TTL__ FROM t ORDER BY id, n")
	want := "id\tnote\tn\t__TTL__\n1\tone\t7\tNULL\n1\tone!\t115\t4102416000000000\n2\ttwo\t7\tNULL\n2\ttwo!\t225\tNULL\n"
	if out != want {
		t.Fatalf("rows:\n%s\nwant:\n%s", out, want)
	}
}

// TestParquetFailures: bad files and mismatched columns fail the load
// with a clear error, and nothing is written.
func TestParquetFailures(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT NOT NULL, small TINYINT, flag BOOLEAN) DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true")`)
	mk := func(fields []arrow.Field, fill func(b *array.RecordBuilder)) string {
		b := array.NewRecordBuilder(e.mem, arrow.NewSchema(fields, nil))
		defer b.Release()
		fill(b)
		rec := b.NewRecordBatch()
		defer rec.Release()
		return string(parquetFile(t, e.mem, fileformat.ParquetOptions{}, rec))
	}
	good := mk([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}, {Name: "small", Type: arrow.PrimitiveTypes.Int64}},
		func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int32Builder).AppendValues([]int32{1, 2, 3, 4}, nil)
			b.Field(1).(*array.Int64Builder).AppendValues([]int64{1, 300, 2, 3}, nil)
		})
	wrongType := mk([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}, {Name: "flag", Type: arrow.PrimitiveTypes.Float64}},
		func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int32Builder).Append(1)
			b.Field(1).(*array.Float64Builder).Append(1)
		})
	textTTL := mk([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}, {Name: "__TTL__", Type: arrow.BinaryTypes.String}},
		func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int32Builder).Append(1)
			b.Field(1).(*array.StringBuilder).Append("2030-01-01")
		})
	none := mk([]arrow.Field{{Name: "other", Type: arrow.PrimitiveTypes.Int32}},
		func(b *array.RecordBuilder) { b.Field(0).(*array.Int32Builder).Append(1) })
	cases := []struct {
		name, data, columns string
		sentinel            error
		msg                 string
	}{
		{"truncated", good[:len(good)-10], "", rowttl.ErrCorruption, "truncated"},
		{"magic", "PAR2" + good[4:], "", rowttl.ErrCorruption, "not a Parquet file"},
		{"csv", "1\t2\n", "", rowttl.ErrCorruption, "not a Parquet file"},
		{"empty", "", "", rowttl.ErrCorruption, "not a Parquet file"},
		{"type", wrongType, "", rowttl.ErrInvalidArgument, "column flag: the file's type float64 (DOUBLE) cannot be loaded into BOOLEAN"},
		{"missing", good, "id, nope", rowttl.ErrInvalidArgument, "nope is not a column of the Parquet input (its columns: id, small)"},
		{"text-ttl", textTTL, "id, __TTL__", rowttl.ErrInvalidArgument, "CAST it explicitly"},
		{"no-column", none, "", rowttl.ErrInvalidArgument, "none of its columns (other) is a column of the table"},
		{"value", good, "", rowttl.ErrInvalidArgument, "row 2: field small: value 300 is out of range for TINYINT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := e.load("t", c.data, Options{Format: FormatParquet, Columns: c.columns})
			if res.Status != StatusFail || !errors.Is(res.Err, c.sentinel) || !strings.Contains(res.Message, c.msg) {
				t.Fatalf("%s: %v\nwant %v with %q", res.Status, res.Message, c.sentinel, c.msg)
			}
			if n := e.exec("SELECT count(*) FROM t"); n != "count(*)\n0\n" {
				t.Fatalf("rows written: %s", n)
			}
		})
	}
	// Under max_filter_ratio the bad value is filtered and the rest loads.
	res := e.mustLoad("t", good, Options{Format: FormatParquet, MaxFilterRatio: 0.25})
	if res.NumberLoadedRows != 3 || res.NumberFilteredRows != 1 || res.FirstErrorMsg != "row 2: field small: value 300 is out of range for TINYINT" {
		t.Fatalf("filtered load: %+v", res)
	}
	// Non-strict: the value becomes NULL.
	strict := false
	e.mustLoad("t", good, Options{Format: FormatParquet, StrictMode: &strict})
	if out := e.exec("SELECT count(*) FROM t WHERE small IS NULL"); out != "count(*)\n1\n" {
		t.Fatalf("non-strict: %s", out)
	}
}

// TestParquetFromFile loads from a regular file (read in place) and from a
// pipe (copied to a temporary file, removed afterwards).
func TestParquetFromFile(t *testing.T) {
	e := newEnv(t)
	e.exec("CREATE TABLE t " + allTypesDDL)
	rec := randomRows(t, e, "t", 100, 5)
	defer rec.Release()
	data := parquetFile(t, e.mem, fileformat.ParquetOptions{Compression: "snappy"}, rec)
	path := filepath.Join(t.TempDir(), "x.parquet")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if res := Run(context.Background(), e.table("t"), f, Options{Format: FormatParquet, Now: testNow}, e.mem); !res.OK() {
		t.Fatalf("from a file: %+v", res)
	}
	tmp := t.TempDir()
	pr, pw, _ := os.Pipe()
	go func() { pw.Write(data); pw.Close() }()
	res := Run(context.Background(), e.table("t"), pr, Options{Format: FormatParquet, Now: testNow, TempDir: tmp}, e.mem)
	pr.Close()
	if !res.OK() || res.NumberLoadedRows != 100 {
		t.Fatalf("from a pipe: %+v", res)
	}
	if names, _ := os.ReadDir(tmp); len(names) != 0 {
		t.Fatalf("%d files left in the temporary directory", len(names))
	}
}

// TestParquetOverHTTP: the `format: parquet` header loads a Parquet body
// as one version, with the usual JSON answer.
func TestParquetOverHTTP(t *testing.T) {
	e := newEnv(t)
	e.exec("CREATE TABLE t " + allTypesDDL)
	rec := randomRows(t, e, "t", 500, 7)
	defer rec.Release()
	data := string(parquetFile(t, e.mem, fileformat.ParquetOptions{RowGroupRows: 100}, rec))
	url := startServer(t, e, ServerOptions{}) + "/api/default/t/_stream_load"
	code, res := put(t, url, "", "", map[string]string{"format": "parquet", "label": "web-1"}, data)
	if code != 200 || res.Status != StatusSuccess || res.NumberLoadedRows != 500 || res.LoadBytes != int64(len(data)) {
		t.Fatalf("%d %+v", code, res)
	}
	_, res = put(t, url, "", "", map[string]string{"format": "parquet"}, data[:len(data)/2])
	if res.Status != StatusFail || !strings.Contains(res.Message, "truncated") {
		t.Fatalf("half a file: %+v", res)
	}
	if out := e.exec("SELECT count(*) FROM t"); out != fmt.Sprintf("count(*)\n%d\n", 500-countExpired(rec)) {
		t.Fatalf("count: %s", out)
	}
}

// TestParquetWholeAndRowBatches: batches whose every value fits go to the
// table whole (integer columns as the file holds them), a batch with a
// value that does not fit goes row by row, filtering just that row; the
// table holds every other row as the file has it, and without a filter
// ratio the first bad row fails the load, writing nothing.
func TestParquetWholeAndRowBatches(t *testing.T) {
	e := newEnv(t)
	e.exec("CREATE TABLE w (id BIGINT NOT NULL, n INT NOT NULL, s VARCHAR(3)) DUPLICATE KEY(id)")
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(e.mem, sc)
	defer b.Release()
	const rows = 3*fileformat.DefaultBatchRows + 100
	bad := map[int]bool{70000: true, 70001: true, 140000: true}
	for i := 0; i < rows; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		switch {
		case i == 70000 || i == 140000:
			b.Field(1).AppendNull() // NOT NULL
			b.Field(2).(*array.StringBuilder).Append("ok")
		case i == 70001:
			b.Field(1).(*array.Int32Builder).Append(1)
			b.Field(2).(*array.StringBuilder).Append("long") // past VARCHAR(3)
		default:
			b.Field(1).(*array.Int32Builder).Append(int32(i % 1000))
			if i%5 == 0 {
				b.Field(2).AppendNull()
			} else {
				b.Field(2).(*array.StringBuilder).Append(fmt.Sprint(i % 100))
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	data := parquetFile(t, e.mem, fileformat.ParquetOptions{RowGroupRows: 50000}, rec)
	if res := e.load("w", string(data), Options{Format: FormatParquet}); res.OK() || res.NumberLoadedRows != 0 || !strings.Contains(res.Message, "NOT NULL") {
		t.Fatalf("strict load: %s %s", res.Status, res.Message)
	}
	if got := e.exec("SELECT count(*) FROM w"); got != "count(*)\n0\n" {
		t.Fatalf("a failed load wrote rows: %s", got)
	}
	res := e.mustLoad("w", string(data), Options{Format: FormatParquet, MaxFilterRatio: 0.01})
	if res.NumberTotalRows != rows || res.NumberLoadedRows != rows-3 || res.NumberFilteredRows != 3 {
		t.Fatalf("load: %+v", res)
	}
	var want strings.Builder
	want.WriteString("id\tn\ts\n")
	for i := 0; i < rows; i++ {
		if bad[i] {
			continue
		}
		s := fmt.Sprint(i % 100)
		if i%5 == 0 {
			s = "NULL"
		}
		fmt.Fprintf(&want, "%d\t%d\t%s\n", i, i%1000, s)
	}
	if got := e.exec("SELECT * FROM w"); got != want.String() {
		t.Fatalf("rows differ from the file's: %s", head(got))
	}
}
