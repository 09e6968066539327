package table

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
)

// TestDecimalGoAPI: values past 64 bits survive Write and Scan, filters
// compare with constants of any scale exactly, and Update rounds and
// range-checks as SQL does.
func TestDecimalGoAPI(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	typ := schema.DecimalType(38, 10)
	def := &Definition{Model: schema.UniqueMOW, Schema: schema.Schema{KeyCount: 1, Columns: []schema.Column{
		{Name: "id", Type: schema.BigIntType},
		{Name: "d", Type: typ, Nullable: true},
	}}}
	o := quiet()
	o.Allocator = mem
	tbl := mustCreate(t, t.TempDir(), def, o)
	defer checkClose(t, tbl)

	texts := []string{"9999999999999999999999999999.9999999999", "1.0050000000", "-0.0000000001", "1000000000"}
	b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{def.Schema.Columns[0].Field(), def.Schema.Columns[1].Field()}, nil))
	for i, s := range texts {
		n, err := decimal.Parse(s, typ.Decimal())
		if err != nil {
			t.Fatal(err)
		}
		b.Field(0).(*array.Int64Builder).Append(int64(i + 1))
		b.Field(1).(*array.Decimal128Builder).Append(n)
	}
	b.Field(0).(*array.Int64Builder).Append(5)
	b.Field(1).AppendNull()
	rec := b.NewRecordBatch()
	b.Release()
	mustWrite(t, tbl, rec)
	rec.Release()

	rows := scanAll(t, tbl, query.Request{Now: base})
	if len(rows) != 5 {
		t.Fatalf("%d rows", len(rows))
	}
	for i, s := range texts {
		if got := decimal.Format(rows[i][1].Decimal(), typ.Scale); got != s && got != s+".0000000000" {
			t.Errorf("row %d: %s, want %s", i+1, got, s)
		}
	}

	for _, c := range []struct {
		f    query.Expr
		want int64
	}{
		{query.Cmp{Column: "d", Op: query.Gt, Value: "9999999999999999999999999999.9999999998"}, 1},
		{query.Cmp{Column: "d", Op: query.Eq, Value: 1.005}, 1},
		{query.Cmp{Column: "d", Op: query.Eq, Value: "1.00500000001"}, 0},
		{query.Cmp{Column: "d", Op: query.Lt, Value: 0}, 1},
		{query.Cmp{Column: "d", Op: query.Ge, Value: int64(1000000000)}, 2},
		{query.Cmp{Column: "d", Op: query.NullSafeEq, Value: nil}, 1},
		{query.In{Column: "d", Values: []any{"1.005", 1000000000}}, 2},
	} {
		if got := mustCount(t, tbl, base, c.f); got != c.want {
			t.Errorf("count(%v) = %d, want %d", c.f, got, c.want)
		}
	}
	if _, err := tbl.Count(context.Background(), base, query.Cmp{Column: "d", Op: query.Eq, Value: "x"}); !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Errorf("comparison with a text that is not a number: %v", err)
	}

	ctx := context.Background()
	if _, err := tbl.Update(ctx, map[string]any{"d": "2.00000000005"}, query.Cmp{Column: "id", Op: query.Eq, Value: 2}); err != nil {
		t.Fatal(err)
	}
	if got := mustCount(t, tbl, base, query.Cmp{Column: "d", Op: query.Eq, Value: "2.0000000001"}); got != 1 {
		t.Errorf("Update did not round half away from zero: %d rows at 2.0000000001", got)
	}
	if _, err := tbl.Update(ctx, map[string]any{"d": "1e28"}, query.Cmp{Column: "id", Op: query.Eq, Value: 2}); !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Errorf("Update beyond DECIMAL(38,10): %v", err)
	}
}

// TestTypeLimits: Doris's lengths bound the character types of a new
// table; a VARCHAR without a length (Length 0) is unbounded.
func TestTypeLimits(t *testing.T) {
	for _, c := range []struct {
		typ schema.Type
		ok  bool
	}{
		{schema.VarcharType(0), true},
		{schema.VarcharType(schema.MaxVarcharLength), true},
		{schema.VarcharType(schema.MaxVarcharLength + 1), false},
		{schema.Type{Kind: schema.Char, Length: schema.MaxCharLength}, true},
		{schema.Type{Kind: schema.Char, Length: schema.MaxCharLength + 1}, false},
		{schema.Type{Kind: schema.Char, Length: 1000000}, false},
		{schema.DecimalType(38, 38), true},
		{schema.DecimalType(39, 0), false},
		{schema.DecimalType(0, 0), false},
	} {
		def := &Definition{Model: schema.Duplicate, Schema: schema.Schema{KeyCount: 1, Columns: []schema.Column{
			{Name: "id", Type: schema.BigIntType},
			{Name: "v", Type: c.typ, Nullable: true},
		}}}
		tbl, err := Create(t.TempDir(), def, quiet())
		if c.ok != (err == nil) || (err != nil && !errors.Is(err, rowttl.ErrInvalidSchema)) {
			t.Errorf("%s: %v", c.typ, err)
		}
		if err == nil {
			checkClose(t, tbl)
		}
	}
}

// TestDecimalWriteChecksPrecision: an Arrow decimal array of the column's
// type holding a value wider than its precision is refused, naming the row
// and the column.
func TestDecimalWriteChecksPrecision(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	typ := schema.DecimalType(5, 2)
	def := &Definition{Model: schema.Duplicate, Schema: schema.Schema{KeyCount: 1, Columns: []schema.Column{
		{Name: "id", Type: schema.BigIntType},
		{Name: "d", Type: typ, Nullable: true},
	}}}
	o := quiet()
	o.Allocator = mem
	tbl := mustCreate(t, t.TempDir(), def, o)
	defer checkClose(t, tbl)
	b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{def.Schema.Columns[0].Field(), def.Schema.Columns[1].Field()}, nil))
	defer b.Release()
	for i, v := range []int64{99999, 100000} {
		b.Field(0).(*array.Int64Builder).Append(int64(i + 1))
		b.Field(1).(*array.Decimal128Builder).Append(decimalFromInt(v))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	err := tbl.Write(context.Background(), rec)
	if !errors.Is(err, rowttl.ErrInvalidArgument) || err.Error() != "row 2: column d: value 1000.00 is out of range for DECIMAL(5,2)" {
		t.Fatalf("write: %v", err)
	}
	if n := mustCount(t, tbl, base, nil); n != 0 {
		t.Fatalf("%d rows written", n)
	}
}

func decimalFromInt(v int64) decimal.Num {
	n, _ := decimal.FromInt64(v, decimal.Type{Precision: 38})
	return n
}
