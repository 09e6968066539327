package sql

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/table"
)

// passRowsSession is a session over a table a of every type, filled with
// rows rows (NULLs in every seventh), on a checked allocator.
func passRowsSession(t *testing.T, rows int) func(q string) (*Result, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	db, err := table.OpenDB(t.TempDir(), &table.Options{Allocator: mem, DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := NewSession(db)
	s.SetAllocator(mem)
	run := func(q string) (*Result, error) { return s.Exec(context.Background(), q) }
	cols := "id INT NOT NULL, b BOOLEAN, ti TINYINT, si SMALLINT, bi BIGINT, f FLOAT, d DOUBLE, dec DECIMAL(27,9), dt DATE, ts DATETIME(6), ts3 DATETIME(3), vc VARCHAR(20), st STRING, ch CHAR(3)"
	for _, q := range []string{
		"SET show_hidden_columns = true",
		"CREATE TABLE a (" + cols + ") DUPLICATE KEY(id) PROPERTIES (\"function_column.enable_row_ttl\" = \"true\")",
		"CREATE TABLE b (" + cols + ") DUPLICATE KEY(id) PROPERTIES (\"function_column.enable_row_ttl\" = \"true\")",
	} {
		if _, err := run(q); err != nil {
			t.Fatal(err)
		}
	}
	var vals []string
	for i := 0; i < rows; i++ {
		if i%7 == 3 {
			vals = append(vals, fmt.Sprintf("(%d, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)", i))
			continue
		}
		vals = append(vals, fmt.Sprintf("(%d, %v, %d, %d, %d, %d.25, %d.125e10, %d.000000001, '2026-01-%02d', '2026-02-03 04:05:%02d.%06d', '2026-02-03 04:05:06.%03d', 'v%d', 's\\t%d', 'c%d', %d)",
			i, i%2 == 0, i%128-64, i*7, int64(i)*1_000_000_007, i, i, i, i%28+1, i%60, i*37%1000000, i%1000, i, i, i%10, 4_000_000_000_000_000+int64(i)))
	}
	if _, err := run("INSERT INTO a (id, b, ti, si, bi, f, d, dec, dt, ts, ts3, vc, st, ch, __TTL__) VALUES " + strings.Join(vals, ", ")); err != nil {
		t.Fatal(err)
	}
	return run
}

// INSERT ... SELECT writes a batch of the query whole when no column
// converts; the table it writes holds what the row-by-row path writes,
// and a batch breaking a rule of the table fails as the row path does.
func TestInsertSelectWholeBatches(t *testing.T) {
	for _, rowPath := range []bool{false, true} {
		t.Run(fmt.Sprintf("rowPath=%v", rowPath), func(t *testing.T) {
			if !rowPath {
				old := insertBatchRows
				insertBatchRows = 64 // below the scan's batches
				t.Cleanup(func() { insertBatchRows = old })
			}
			run := passRowsSession(t, 3000)
			must := func(q string) *Result {
				t.Helper()
				r, err := run(q)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return r
			}
			const all = "id, b, ti, si, bi, f, d, dec, dt, ts, ts3, vc, st, ch, __TTL__"
			if r := must("INSERT INTO b (" + all + ") SELECT " + all + " FROM a"); r.RowsAffected != 3000 {
				t.Fatalf("rows affected %d", r.RowsAffected)
			}
			want := must("SELECT " + all + " FROM a ORDER BY id")
			got := must("SELECT " + all + " FROM b ORDER BY id")
			if fmt.Sprint(got.Rows) != fmt.Sprint(want.Rows) || len(got.Rows) != 3000 {
				t.Fatalf("%d rows, first %v, want %v", len(got.Rows), got.Rows[:2], want.Rows[:2])
			}
			must("CREATE TABLE c (id INT NOT NULL, v VARCHAR(3) NOT NULL) DUPLICATE KEY(id)")
			for _, c := range []struct{ q, want string }{
				{"INSERT INTO c SELECT id, vc FROM a WHERE id % 7 <> 3", "VARCHAR(3)"},
				{"INSERT INTO c SELECT id, st FROM a", "NULL"},
			} {
				_, err := run(c.q)
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: %v, want an error about %s", c.q, err, c.want)
				}
			}
			if r := must("SELECT count(*) FROM c"); r.Rows[0][0] != "0" {
				t.Errorf("the failed INSERTs wrote %s rows", r.Rows[0][0])
			}
		})
	}
}

// passBatch shares the arrays of a batch only where the row path would
// rebuild them unchanged.
func TestPassBatchRules(t *testing.T) {
	old := insertBatchRows
	insertBatchRows = 1
	defer func() { insertBatchRows = old }()
	col := func(typ schema.Type) writeTarget {
		return writeTarget{name: "c", col: &schema.Column{Name: "c", Type: typ}}
	}
	ttl := writeTarget{name: schema.TTLColumn}
	for _, c := range []struct {
		from schema.Type
		to   writeTarget
		pass bool
	}{
		{schema.BigIntType, col(schema.BigIntType), true},
		{schema.IntType, col(schema.BigIntType), false}, // widened value by value
		{schema.StringType, col(schema.VarcharType(10)), true},
		{schema.DatetimeType(6), col(schema.DatetimeType(6)), true},
		{schema.DatetimeType(3), col(schema.DatetimeType(6)), true},
		{schema.DatetimeType(6), col(schema.DatetimeType(3)), false}, // rounded
		{schema.DecimalType(27, 9), col(schema.DecimalType(27, 9)), true},
		{schema.DecimalType(18, 9), col(schema.DecimalType(27, 9)), false}, // another Arrow type
		{schema.DoubleType, col(schema.FloatType), false},
		{schema.DateType, col(schema.DatetimeType(6)), false},
		{schema.BigIntType, ttl, true},
		{schema.DatetimeType(6), ttl, true},
		{schema.IntType, ttl, false}, // ttlArray widens it
		{schema.StringType, ttl, false},
		{nullType, col(schema.BigIntType), false},
	} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		b := array.NewBuilder(mem, c.from.Arrow())
		b.AppendNull()
		arr := b.NewArray()
		b.Release()
		rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arr.DataType(), Nullable: true}}, nil), []arrow.Array{arr}, 1)
		arr.Release()
		out, ok := passBatch([]writeTarget{c.to}, exec.Schema{{Name: "x", Type: c.from, Nullable: true}}, rec)
		if ok != c.pass {
			t.Errorf("%s into %s: pass %v, want %v", c.from, c.to.name, ok, c.pass)
		}
		if ok {
			if out.Column(0) != rec.Column(0) || out.Schema().Field(0).Name != c.to.name {
				t.Errorf("%s: not the batch's array under the target's name", c.from)
			}
			out.Release()
		}
		rec.Release()
		mem.AssertSize(t, 0)
	}
}
