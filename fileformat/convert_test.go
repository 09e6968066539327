package fileformat

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// TestConversions: each value of a file type read into a column type, as
// its text, or the error that filters its row.
func TestConversions(t *testing.T) {
	plus8 := time.FixedZone("+08:00", 8*3600)
	dec := func(p, s int) schema.Type { return schema.Type{Kind: schema.Decimal, Precision: p, Scale: s} }
	tsNoZone := &arrow.TimestampType{Unit: arrow.Microsecond}
	tsUTC := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	tsMillis := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	tsNanos := &arrow.TimestampType{Unit: arrow.Nanosecond}
	cases := []struct {
		from arrow.DataType
		in   any // appended with the builder's Append
		to   schema.Type
		loc  *time.Location
		want string // text of the value, or "error: ..." (a substring)
	}{
		{arrow.PrimitiveTypes.Int32, int32(-7), schema.BigIntType, nil, "-7"},
		{arrow.PrimitiveTypes.Int64, int64(300), schema.TinyIntType, nil, "error: out of range for TINYINT"},
		{arrow.PrimitiveTypes.Int64, int64(-128), schema.TinyIntType, nil, "-128"},
		{arrow.PrimitiveTypes.Uint64, uint64(1 << 63), schema.BigIntType, nil, "error: out of range for BIGINT"},
		{arrow.PrimitiveTypes.Uint32, uint32(4000000000), schema.BigIntType, nil, "4000000000"},
		{arrow.PrimitiveTypes.Uint16, uint16(65535), schema.SmallIntType, nil, "error: out of range"},
		{arrow.PrimitiveTypes.Int16, int16(12), schema.DoubleType, nil, "12"},
		{arrow.PrimitiveTypes.Float64, 0.1, schema.FloatType, nil, "0.1"},
		{arrow.PrimitiveTypes.Float32, float32(2.5), schema.DoubleType, nil, "2.5"},
		{arrow.PrimitiveTypes.Int64, int64(123), dec(5, 2), nil, "123.00"},
		{arrow.PrimitiveTypes.Int64, int64(1234), dec(5, 2), nil, "error: out of range for DECIMAL(5,2)"},
		{arrow.PrimitiveTypes.Float64, 1.005, dec(6, 1), nil, "1.0"},
		{arrow.PrimitiveTypes.Float64, -2.25, dec(6, 1), nil, "-2.3"},
		{&arrow.Decimal128Type{Precision: 10, Scale: 3}, decimal128.FromI64(-12345), dec(8, 2), nil, "-12.35"},
		{&arrow.Decimal128Type{Precision: 10, Scale: 3}, decimal128.FromI64(12344), dec(8, 2), nil, "12.34"},
		{&arrow.Decimal128Type{Precision: 10, Scale: 3}, decimal128.FromI64(12345), dec(10, 5), nil, "12.34500"},
		{&arrow.Decimal128Type{Precision: 10, Scale: 3}, decimal128.FromI64(9999999), dec(5, 3), nil, "error: out of range for DECIMAL(5,3)"},
		{&arrow.Decimal128Type{Precision: 38, Scale: 0}, decimal128.FromU64(1<<63 + 5).Mul(decimal128.FromI64(10)), dec(38, 0), nil, "92233720368547758130"},
		{&arrow.Decimal128Type{Precision: 38, Scale: 0}, decimal128.FromU64(1<<63 + 5).Mul(decimal128.FromI64(10)), dec(19, 0), nil, "error: out of range for DECIMAL(19,0)"},
		{&arrow.Decimal128Type{Precision: 38, Scale: 2}, decimal128.FromI64(-5), dec(10, 1), nil, "-0.1"},
		{&arrow.Decimal128Type{Precision: 10, Scale: 2}, decimal128.FromI64(150), schema.DoubleType, nil, "1.5"},
		{arrow.FixedWidthTypes.Boolean, true, schema.BooleanType, nil, "true"},
		{arrow.BinaryTypes.String, "x", schema.VarcharType(3), nil, "x"},
		{arrow.BinaryTypes.Binary, []byte("raw"), schema.StringType, nil, "raw"},
		{arrow.FixedWidthTypes.Date32, arrow.Date32(20454), schema.DateType, nil, "2026-01-01"},
		{arrow.FixedWidthTypes.Date32, arrow.Date32(20454), schema.DatetimeType(0), nil, "2026-01-01 00:00:00"},
		{arrow.FixedWidthTypes.Date32, arrow.Date32(20454), schema.TimestampTZType(0), plus8, "2025-12-31 16:00:00+00:00"},
		{arrow.FixedWidthTypes.Date64, arrow.Date64(1767225600123), schema.DatetimeType(3), nil, "2026-01-01 00:00:00.123"},
		{tsNoZone, arrow.Timestamp(1767225600123456), schema.DatetimeType(3), nil, "2026-01-01 00:00:00.123"},
		{tsNoZone, arrow.Timestamp(1767225600123456), schema.TimestampTZType(6), plus8, "2025-12-31 16:00:00.123456+00:00"},
		{tsNoZone, arrow.Timestamp(1767225600123456), schema.DateType, nil, "2026-01-01"},
		{tsUTC, arrow.Timestamp(1767225600000000), schema.DatetimeType(0), plus8, "2026-01-01 08:00:00"},
		{tsUTC, arrow.Timestamp(1767225600000000), schema.DateType, time.FixedZone("-1", -3600), "2025-12-31"},
		{tsMillis, arrow.Timestamp(1767225600001), schema.TimestampTZType(6), nil, "2026-01-01 00:00:00.001000+00:00"},
		{tsNanos, arrow.Timestamp(-1), schema.DatetimeType(6), nil, "1969-12-31 23:59:59.999999"},
		{tsNanos, arrow.Timestamp(1767225600000000123), schema.Type{Kind: schema.TimestampNS}, nil, "2026-01-01 00:00:00.000000123"},
	}
	for _, c := range cases {
		name := c.from.String() + "->" + c.to.String()
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			b := array.NewBuilder(mem, c.from)
			defer b.Release()
			b.AppendNull()
			appendAny(t, b, c.in)
			arr := b.NewArray()
			defer arr.Release()
			conv, err := NewConversion(arrow.Field{Name: "x", Type: c.from}, c.to, c.loc)
			if err != nil {
				t.Fatal(err)
			}
			fn := conv.Bind(arr)
			if v, err := fn(0); err != nil || !v.IsNull() {
				t.Fatalf("NULL reads as %v, %v", v, err)
			}
			v, err := fn(1)
			got := ""
			if err != nil {
				got = "error: " + err.Error()
			} else {
				got = render(v, c.to)
			}
			if strings.HasPrefix(c.want, "error: ") && strings.HasPrefix(got, "error: ") {
				if !strings.Contains(got, strings.TrimPrefix(c.want, "error: ")) {
					t.Fatalf("got %q, want an error with %q", got, c.want)
				}
				return
			}
			if got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func appendAny(t *testing.T, b array.Builder, v any) {
	switch bb := b.(type) {
	case *array.Int16Builder:
		bb.Append(v.(int16))
	case *array.Int32Builder:
		bb.Append(v.(int32))
	case *array.Int64Builder:
		bb.Append(v.(int64))
	case *array.Uint16Builder:
		bb.Append(v.(uint16))
	case *array.Uint32Builder:
		bb.Append(v.(uint32))
	case *array.Uint64Builder:
		bb.Append(v.(uint64))
	case *array.Float32Builder:
		bb.Append(v.(float32))
	case *array.Float64Builder:
		bb.Append(v.(float64))
	case *array.Decimal128Builder:
		bb.Append(v.(decimal128.Num))
	case *array.BooleanBuilder:
		bb.Append(v.(bool))
	case *array.StringBuilder:
		bb.Append(v.(string))
	case *array.BinaryBuilder:
		bb.Append(v.([]byte))
	case *array.Date32Builder:
		bb.Append(v.(arrow.Date32))
	case *array.Date64Builder:
		bb.Append(v.(arrow.Date64))
	case *array.TimestampBuilder:
		bb.Append(v.(arrow.Timestamp))
	default:
		t.Fatalf("no append for %T", b)
	}
}

// TestMismatch: types that do not convert are refused before any row is
// read, with the column and both types named.
func TestMismatch(t *testing.T) {
	cases := []struct {
		from arrow.DataType
		to   schema.Type
	}{
		{arrow.PrimitiveTypes.Float64, schema.IntType},
		{arrow.FixedWidthTypes.Boolean, schema.IntType},
		{arrow.PrimitiveTypes.Int64, schema.StringType},
		{arrow.FixedWidthTypes.Date32, schema.BigIntType},
		{&arrow.TimestampType{Unit: arrow.Microsecond}, schema.BigIntType},
		{arrow.BinaryTypes.String, schema.DateType},
		{arrow.PrimitiveTypes.Int32, schema.DateType},
	}
	for _, c := range cases {
		_, err := NewConversion(arrow.Field{Name: "col_x", Type: c.from}, c.to, nil)
		if err == nil || !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Fatalf("%s -> %s: %v", c.from, c.to, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, "col_x") || !strings.Contains(msg, c.from.String()) || !strings.Contains(msg, c.to.String()) {
			t.Fatalf("message %q does not name the column and both types", msg)
		}
	}
	_, err := NewConversion(arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)}, schema.IntType, nil)
	if !errors.Is(err, rowttl.ErrNotSupported) || !strings.Contains(err.Error(), "column l") {
		t.Fatalf("list column: %v", err)
	}
}

func TestParseType(t *testing.T) {
	for _, s := range []string{"BIGINT", "VARCHAR(20)", "CHAR(4)", "DECIMAL(12,3)", "DATETIME(0)", "TIMESTAMPTZ(6)", "DATE", "STRING", "TIMESTAMP_NS", "VARCHAR"} {
		typ, err := ParseType(s)
		if err != nil || typ.String() != s {
			t.Fatalf("%s: %v %v", s, typ, err)
		}
	}
	for _, s := range []string{"", "INT(3)", "DECIMAL", "DECIMAL(40,2)", "DATETIME(7)", "VARCHAR(x)", "FOO", "DECIMAL(3,2"} {
		if _, err := ParseType(s); err == nil {
			t.Fatalf("%q parsed", s)
		}
	}
}
