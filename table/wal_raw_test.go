package table

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
)

// rawTypesBatch is a batch of every column type a physical schema has,
// nullable and not, with rows rows (some null where nullable).
func rawTypesBatch(mem memory.Allocator, rows int) arrow.RecordBatch {
	types := []arrow.DataType{
		arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16,
		arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float32,
		arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Date32,
		&arrow.TimestampType{Unit: arrow.Microsecond}, &arrow.TimestampType{Unit: arrow.Nanosecond},
		&arrow.Decimal128Type{Precision: 20, Scale: 4}, arrow.BinaryTypes.String, arrow.BinaryTypes.Binary,
	}
	var fields []arrow.Field
	for i, dt := range types {
		for _, nullable := range []bool{false, true} {
			name := dt.String() + "_" + string(rune('a'+i))
			if nullable {
				name += "_null"
			}
			fields = append(fields, arrow.Field{Name: name, Type: dt, Nullable: nullable})
		}
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	for c, f := range fields {
		fb := b.Field(c)
		for r := range rows {
			if f.Nullable && r%3 == 1 {
				fb.AppendNull()
				continue
			}
			v := int64(r*7 + c)
			switch fb := fb.(type) {
			case *array.BooleanBuilder:
				fb.Append(v%2 == 0)
			case *array.Int8Builder:
				fb.Append(int8(v))
			case *array.Int16Builder:
				fb.Append(int16(v))
			case *array.Int32Builder:
				fb.Append(int32(v))
			case *array.Int64Builder:
				fb.Append(v << 33)
			case *array.Float32Builder:
				fb.Append(float32(v) / 3)
			case *array.Float64Builder:
				fb.Append(float64(v) / 3)
			case *array.Date32Builder:
				fb.Append(arrow.Date32(v))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(v * 1e6))
			case *array.Decimal128Builder:
				fb.Append(decimal128.FromI64(-v * 12345))
			case *array.StringBuilder:
				fb.Append(strings.Repeat("é", r%4))
			case *array.BinaryBuilder:
				fb.Append([]byte(strings.Repeat("\x00b", r%3)))
			default:
				panic(f.Type)
			}
		}
	}
	return b.NewRecordBatch()
}

// TestWALRowsRaw: rows of every physical column type, nulls and empty
// strings included, and a batch of no rows, round-trip through the
// walRowsRaw shape; a batch the shape cannot carry (a slice) goes as
// walRowsBatch and round-trips too.
func TestWALRowsRaw(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	for _, rows := range []int{0, 1, 3, 100} {
		rec := rawTypesBatch(alloc, rows)
		body, err := encodeRows(alloc, rec, "lab")
		if err != nil {
			t.Fatal(err)
		}
		if body[4] != walRowsRaw {
			t.Fatalf("%d rows: shape %#x, want walRowsRaw", rows, body[4])
		}
		physMsg, err := schemaMessage(alloc, rec.Schema())
		if err != nil {
			t.Fatal(err)
		}
		r := walRecord{seq: 1, body: append([]byte{9}, body...)}
		ver, label, got, err := decodeRecord(alloc, "x", r, rec.Schema(), physMsg)
		if err != nil {
			t.Fatalf("%d rows: %v", rows, err)
		}
		if ver != 9 || label != "lab" || !array.RecordEqual(got, rec) {
			t.Fatalf("%d rows: decoded version %d label %q rows\n%v\nwant\n%v", rows, ver, label, got, rec)
		}
		got.Release()

		if rows > 2 {
			sl := rec.NewSlice(1, int64(rows))
			body, err := encodeRows(alloc, sl, "")
			if err != nil {
				t.Fatal(err)
			}
			if body[1] != walRowsBatch {
				t.Fatalf("a slice went as shape %#x, want walRowsBatch", body[1])
			}
			_, _, got, err := decodeRecord(alloc, "x", walRecord{seq: 1, body: append([]byte{9}, body...)}, rec.Schema(), physMsg)
			if err != nil {
				t.Fatal(err)
			}
			if !array.RecordEqual(got, sl) {
				t.Fatalf("slice decoded as %v, want %v", got, sl)
			}
			got.Release()
			sl.Release()
		}
		rec.Release()
	}
}

// TestWALRowsRawRefusesDamage: a raw record whose lengths, offsets or
// validity disagree with its rows is corruption, before Arrow sees it.
func TestWALRowsRawRefusesDamage(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	rec := rawTypesBatch(alloc, 5)
	defer rec.Release()
	body, ok := encodeRowsRaw(rec, "")
	if !ok {
		t.Fatal("not encodable raw")
	}
	physMsg, err := schemaMessage(alloc, rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	decode := func(b []byte) error {
		_, _, got, err := decodeRecord(alloc, "x", walRecord{seq: 1, body: append([]byte{9}, b...)}, rec.Schema(), physMsg)
		if err == nil {
			got.Release()
		}
		return err
	}
	if err := decode(body); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		mut  func([]byte) []byte
	}{
		{"more rows", func(b []byte) []byte { b[2] = 6; return b }},
		{"fewer rows", func(b []byte) []byte { b[2] = 4; return b }},
		{"more columns", func(b []byte) []byte { b[3]++; return b }},
		{"cut short", func(b []byte) []byte { return b[:len(b)-1] }},
		{"bytes after", func(b []byte) []byte { return append(b, 0) }},
		{"null count", func(b []byte) []byte { b[4] = 1; return b }},
	} {
		if err := decode(c.mut(append([]byte(nil), body...))); !errors.Is(err, rowttl.ErrCorruption) {
			t.Errorf("%s: %v, want corruption", c.name, err)
		}
	}
}
