package table

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
)

// base is the fixed instant the tests' data revolve around.
var base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func eventsSchema() schema.Schema {
	return schema.Schema{KeyCount: 1, Columns: []schema.Column{
		{Name: "id", Type: schema.BigIntType},
		{Name: "event_time", Type: schema.DatetimeType(6), Nullable: true},
		{Name: "user_id", Type: schema.BigIntType, Nullable: true},
		{Name: "amount", Type: schema.DoubleType, Nullable: true},
		{Name: "message", Type: schema.StringType, Nullable: true},
	}}
}

func directDef() *Definition {
	return &Definition{Schema: eventsSchema(), Model: schema.Duplicate,
		Properties: map[string]string{PropEnableRowTTL: "true"}}
}

func sourceDef(retention, zone string) *Definition {
	p := map[string]string{PropEnableRowTTL: "true", PropTTLCol: "event_time", PropTTL: retention}
	if zone != "" {
		p[PropTTLTimeZone] = zone
	}
	return &Definition{Schema: eventsSchema(), Model: schema.Duplicate, Properties: p}
}

// eventRow is one row of the events shape; ttl is direct-mode µs.
type eventRow struct {
	id        int64
	eventTime int64 // DATETIME µs (wall clock, UTC)
	userID    int64
	amount    float64
	message   string
	ttl       *int64
}

// genEvents makes n rows: event times spread over 10 days before base,
// expirations over ±5 days around base with 10% NULL.
func genEvents(rng *rand.Rand, startID int64, n int) []eventRow {
	rows := make([]eventRow, n)
	b := base.UnixMicro()
	for i := range rows {
		r := &rows[i]
		r.id = startID + int64(i)
		r.eventTime = b - rng.Int64N(10*86400e6)
		r.userID = rng.Int64N(1000)
		r.amount = float64(rng.IntN(10000)) / 100
		r.message = []string{"login", "logout", "purchase", "view", "click"}[rng.IntN(5)]
		if rng.IntN(10) != 0 {
			v := b + rng.Int64N(10*86400e6) - 5*86400e6
			r.ttl = &v
		}
	}
	return rows
}

func eventBatch(mem memory.Allocator, rows []eventRow, withTTL bool) arrow.RecordBatch {
	fields := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "event_time", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "user_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "message", Type: arrow.BinaryTypes.String, Nullable: true},
	}
	if withTTL {
		fields = append(fields, arrow.Field{Name: "__TTL__", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.id)
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(r.eventTime))
		b.Field(2).(*array.Int64Builder).Append(r.userID)
		b.Field(3).(*array.Float64Builder).Append(r.amount)
		b.Field(4).(*array.StringBuilder).Append(r.message)
		if withTTL {
			if r.ttl == nil {
				b.Field(5).AppendNull()
			} else {
				b.Field(5).(*array.Int64Builder).Append(*r.ttl)
			}
		}
	}
	return b.NewRecordBatch()
}

func mustCreate(t testing.TB, dir string, def *Definition, opts *Options) *Table {
	t.Helper()
	tbl, err := Create(dir, def, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func mustWrite(t testing.TB, tbl *Table, rec arrow.RecordBatch) {
	t.Helper()
	if err := tbl.Write(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
}

func mustCount(t testing.TB, tbl *Table, now time.Time, f query.Expr) int64 {
	t.Helper()
	n, err := tbl.Count(context.Background(), now, f)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkClose runs the consistency check and closes the table.
func checkClose(t testing.TB, tbl *Table) {
	t.Helper()
	if err := tbl.Check(); err != nil {
		t.Fatalf("check: %v", err)
	}
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
}

// scanAll returns every returned row as a slice of values per column.
func scanAll(t testing.TB, tbl *Table, req query.Request) [][]schema.Value {
	t.Helper()
	r, err := tbl.Scan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var out [][]schema.Value
	for r.Next() {
		rec := r.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			row := make([]schema.Value, rec.NumCols())
			for c := range row {
				row[c] = schema.ValueAt(rec.Column(c), i)
			}
			out = append(out, row)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// quiet returns options without background compaction: tests that read at
// nows in the past must not race with reclamation at the wall clock. Its
// writes make rowsets directly, for the tests that look at them; the
// tests of the write-ahead log and memtables ask for them (logged).
func quiet() *Options { return &Options{DisableAutoCompaction: true, SmallWriteRows: -1} }

// logged returns quiet options whose small writes go through the
// write-ahead log into memtables.
func logged() *Options { return &Options{DisableAutoCompaction: true} }
