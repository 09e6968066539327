package fileformat

import (
	"bytes"
	"context"
	"math/big"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
)

// allColumns has one column of every rowttl type.
var allColumns = []schema.Column{
	{Name: "id", Type: schema.BigIntType},
	{Name: "b", Type: schema.BooleanType, Nullable: true},
	{Name: "ti", Type: schema.TinyIntType, Nullable: true},
	{Name: "si", Type: schema.SmallIntType, Nullable: true},
	{Name: "i", Type: schema.IntType, Nullable: true},
	{Name: "f", Type: schema.FloatType, Nullable: true},
	{Name: "d", Type: schema.DoubleType, Nullable: true},
	{Name: "dec", Type: schema.Type{Kind: schema.Decimal, Precision: 12, Scale: 3}, Nullable: true},
	{Name: "s", Type: schema.StringType, Nullable: true},
	{Name: "v", Type: schema.VarcharType(20), Nullable: true},
	{Name: "c", Type: schema.Type{Kind: schema.Char, Length: 4}, Nullable: true},
	{Name: "dt", Type: schema.DateType, Nullable: true},
	{Name: "ts", Type: schema.DatetimeType(3), Nullable: true},
	{Name: "tz", Type: schema.TimestampTZType(6), Nullable: true},
	{Name: "ns", Type: schema.Type{Kind: schema.TimestampNS}, Nullable: true},
	{Name: "big", Type: schema.Type{Kind: schema.Decimal, Precision: 38, Scale: 6}, Nullable: true},
}

// sampleRow returns row i of the sample data: every type, NULLs in every
// third row (but id), extremes in the first rows.
func sampleRow(i int) []schema.Value {
	if i%3 == 2 {
		row := make([]schema.Value, len(allColumns))
		row[0] = schema.IntVal(int64(i))
		return row
	}
	n := int64(i)
	sign := int64(1 - 2*(i%2))
	return []schema.Value{
		schema.IntVal(n),
		schema.IntVal(n % 2),
		schema.IntVal(sign * (n % 128)),
		schema.IntVal(sign * (n * 7 % 32768)),
		schema.IntVal(sign * n * 1000003 % (1 << 31)),
		schema.FloatVal(float64(float32(float64(sign*n) / 3))),
		schema.FloatVal(float64(sign*n) / 7),
		schema.DecimalVal(decimal128.FromI64(sign * n * 1234567 % 999999999999)),
		schema.BytesVal([]byte("s\t" + string(rune('a'+i%26)) + "é")),
		schema.BytesVal([]byte("v" + string(rune('a'+i%26)))),
		schema.BytesVal([]byte("c")),
		schema.IntVal(sign * n * 37 % 100000),
		schema.IntVal((sign*n*86_400_123 + 1_700_000_000_000) * 1000),
		schema.IntVal(sign*n*3_600_000_001 + 1_767_225_600_000_000),
		schema.IntVal(sign*n*1_000_000_007 + 1_767_225_600_000_000_123),
		// Beyond 64 bits: 10^37 - n.
		schema.DecimalVal(decimal128.FromBigInt(new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(37), nil), big.NewInt(n*sign)))),
	}
}

// sampleBatch builds rows [from, from+n) of the sample data in schema sc.
func sampleBatch(mem memory.Allocator, sc *arrow.Schema, from, n int) arrow.RecordBatch {
	var cols []int
	for i := 0; i < sc.NumFields(); i++ {
		cols = append(cols, i)
	}
	return sampleBatchOf(mem, sc, cols, from, n)
}

// sampleBatchOf builds the sample columns cols of rows [from, from+n).
func sampleBatchOf(mem memory.Allocator, sc *arrow.Schema, cols []int, from, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := from; i < from+n; i++ {
		row := sampleRow(i)
		for c, k := range cols {
			schema.AppendValue(b.Field(c), row[k])
		}
	}
	return b.NewRecordBatch()
}

// writeParquet writes the batches into a Parquet file in memory.
func writeParquet(t testing.TB, mem memory.Allocator, sc *arrow.Schema, o ParquetOptions, recs ...arrow.RecordBatch) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewParquetWriter(&buf, sc, o, mem)
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

// readValues reads every row of a Parquet file as values of the given
// types, converting each column with a Conversion.
func readValues(t testing.TB, mem memory.Allocator, data []byte, to []schema.Type) ([][]schema.Value, error) {
	t.Helper()
	pr, err := OpenParquet("test.parquet", bytes.NewReader(data), int64(len(data)), mem)
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	convs := make([]*Conversion, len(to))
	for i, f := range pr.Schema().Fields() {
		if i >= len(to) {
			break
		}
		if convs[i], err = NewConversion(f, to[i], nil); err != nil {
			return nil, err
		}
	}
	rr, err := pr.Records(context.Background(), nil)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	var rows [][]schema.Value
	for rr.Next() {
		rec := rr.RecordBatch()
		fns := make([]ValueFunc, len(to))
		for i := range to {
			fns[i] = convs[i].Bind(rec.Column(i))
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			row := make([]schema.Value, len(to))
			for i, fn := range fns {
				v, err := fn(r)
				if err != nil {
					return rows, err
				}
				if v.Kind == schema.BytesValue {
					v.Bytes = bytes.Clone(v.Bytes)
				}
				row[i] = v
			}
			rows = append(rows, row)
		}
	}
	return rows, rr.Err()
}

func columnTypes(cols []schema.Column) []schema.Type {
	ts := make([]schema.Type, len(cols))
	for i, c := range cols {
		ts[i] = c.Type
	}
	return ts
}

func equalRows(a, b []schema.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].IsNull() != b[i].IsNull() {
			return false
		}
		if !a[i].IsNull() && a[i].Compare(b[i]) != 0 {
			return false
		}
	}
	return true
}
