package segment

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
)

// TestDump runs the golden files of testdata/dump: each builds a segment and
// prints its Dump, the pages read back and a hex dump of the file, so any
// change of the bytes on disk shows. Regenerate with
// `go test ./segment -run TestDump -rewrite`.
//
//	build [page-rows=N] [zstd=L] [batch=N] cols=(name:type[!],...)
//	<one row per line: values separated by spaces, null for NULL, '' for an empty string>
//
// types: bool int8 int16 int32 int64 float32 float64 string binary date32
// ts_s ts_us ts_us_utc ts_ns dec12_3; a trailing ! makes the column NOT NULL.
//
//	flip at=N [mask=M]     flip a byte of the last built file and read it all
//	cut at=N               read the last built file cut to N bytes
func TestDump(t *testing.T) {
	datadriven.Walk(t, "testdata/dump", func(t *testing.T, path string) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		var last []byte
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "build":
				b, err := buildFromText(t, mem, d)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				last = b
				return describe(t, mem, b)
			case "flip", "cut":
				var at int
				d.ScanArgs(t, "at", &at)
				b := bytes.Clone(last)
				if d.Cmd == "flip" {
					mask := 0xff
					if d.HasArg("mask") {
						d.ScanArgs(t, "mask", &mask)
					}
					b[at] ^= byte(mask)
				} else {
					b = b[:at]
				}
				cols, err := readAll(mem, b, "golden.seg")
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				releaseAll(cols)
				return "ok\n"
			}
			t.Fatalf("unknown command %s", d.Cmd)
			return ""
		})
	})
}

var textTypes = map[string]arrow.DataType{
	"bool":      arrow.FixedWidthTypes.Boolean,
	"int8":      arrow.PrimitiveTypes.Int8,
	"int16":     arrow.PrimitiveTypes.Int16,
	"int32":     arrow.PrimitiveTypes.Int32,
	"int64":     arrow.PrimitiveTypes.Int64,
	"float32":   arrow.PrimitiveTypes.Float32,
	"float64":   arrow.PrimitiveTypes.Float64,
	"string":    arrow.BinaryTypes.String,
	"binary":    arrow.BinaryTypes.Binary,
	"date32":    arrow.FixedWidthTypes.Date32,
	"ts_s":      &arrow.TimestampType{Unit: arrow.Second},
	"ts_us":     &arrow.TimestampType{Unit: arrow.Microsecond},
	"ts_us_utc": &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
	"ts_ns":     &arrow.TimestampType{Unit: arrow.Nanosecond},
	"dec12_3":   &arrow.Decimal128Type{Precision: 12, Scale: 3},
}

func buildFromText(t *testing.T, mem memory.Allocator, d *datadriven.TestData) ([]byte, error) {
	opts := WriterOptions{}
	batch := 0
	var cols []string
	for _, arg := range d.CmdArgs {
		switch arg.Key {
		case "page-rows":
			d.ScanArgs(t, "page-rows", &opts.PageRows)
		case "zstd":
			d.ScanArgs(t, "zstd", &opts.ZstdLevel)
		case "batch":
			d.ScanArgs(t, "batch", &batch)
		case "cols":
			cols = arg.Vals
		default:
			t.Fatalf("unknown argument %s", arg.Key)
		}
	}
	var fields []arrow.Field
	for _, c := range cols {
		name, typ, ok := strings.Cut(c, ":")
		if !ok {
			t.Fatalf("column %q: want name:type", c)
		}
		notNull := strings.HasSuffix(typ, "!")
		dt, ok := textTypes[strings.TrimSuffix(typ, "!")]
		if !ok {
			t.Fatalf("unknown type %q", typ)
		}
		fields = append(fields, arrow.Field{Name: name, Type: dt, Nullable: !notNull})
	}
	sc := arrow.NewSchema(fields, nil)
	rb := array.NewRecordBuilder(mem, sc)
	defer rb.Release()
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		if line == "" {
			continue
		}
		vals := strings.Fields(line)
		if len(vals) != len(fields) {
			t.Fatalf("row %q: %d values for %d columns", line, len(vals), len(fields))
		}
		for i, v := range vals {
			appendText(t, rb.Field(i), v)
		}
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, sc, opts)
	if err != nil {
		return nil, err
	}
	n := int(rec.NumRows())
	if batch <= 0 {
		batch = max(n, 1)
	}
	for off := 0; off < n; off += batch {
		s := rec.NewSlice(int64(off), int64(min(off+batch, n)))
		err := w.Write(s)
		s.Release()
		if err != nil {
			return nil, err
		}
	}
	if _, err := w.Finish(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func appendText(t *testing.T, b array.Builder, v string) {
	if v == "null" {
		b.AppendNull()
		return
	}
	if v == "''" {
		v = ""
	}
	num := func() int64 {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		bb.Append(v == "true")
	case *array.Int8Builder:
		bb.Append(int8(num()))
	case *array.Int16Builder:
		bb.Append(int16(num()))
	case *array.Int32Builder:
		bb.Append(int32(num()))
	case *array.Int64Builder:
		bb.Append(num())
	case *array.Float32Builder, *array.Float64Builder:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatal(err)
		}
		if fb, ok := bb.(*array.Float32Builder); ok {
			fb.Append(float32(f))
		} else {
			bb.(*array.Float64Builder).Append(f)
		}
	case *array.StringBuilder:
		bb.Append(v)
	case *array.BinaryBuilder:
		bb.Append([]byte(v))
	case *array.Date32Builder:
		bb.Append(arrow.Date32(num()))
	case *array.TimestampBuilder:
		bb.Append(arrow.Timestamp(num()))
	case *array.Decimal128Builder:
		bb.Append(decimal128FromInt(num()))
	default:
		t.Fatalf("appendText: %T", b)
	}
}

// describe prints the Dump of b, its pages read back and a hex dump.
func describe(t *testing.T, mem memory.Allocator, b []byte) string {
	r := openBytes(t, b, "golden.seg")
	var sb strings.Builder
	if err := r.Dump(&sb); err != nil {
		t.Fatal(err)
	}
	sb.WriteString("read:\n")
	for p := 0; p < r.NumPages(); p++ {
		fmt.Fprintf(&sb, "  page %d:", p)
		for c := range r.Schema().Fields() {
			a, err := r.ReadPage(mem, c, p)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&sb, " %v", a)
			a.Release()
		}
		sb.WriteString("\n")
	}
	sb.WriteString("bytes:\n")
	sb.WriteString(hex.Dump(b))
	return sb.String()
}
