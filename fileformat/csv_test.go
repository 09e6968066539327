package fileformat

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
	"github.com/rowttl/rowttl/schema"
)

// TestCSVGolden writes CSV text and compares it with testdata/csv:
//
//	sample rows=N [sep=S] [header]     N rows of every type (sampleRow)
//	strings [sep=S] [enclose=C]        one string column, a Go-quoted
//	                                   value per input line
//
// Errors print as "error: ...". Regenerate with:
// go test ./fileformat -run TestCSVGolden -rewrite
func TestCSVGolden(t *testing.T) {
	datadriven.RunTest(t, "testdata/csv", func(t *testing.T, d *datadriven.TestData) string {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		var o CSVOptions
		if d.HasArg("sep") {
			var s string
			d.ScanArgs(t, "sep", &s)
			o.ColumnSeparator = []byte(s)
		}
		if d.HasArg("enclose") {
			var s string
			d.ScanArgs(t, "enclose", &s)
			o.Enclose = s[0]
		}
		o.Header = d.HasArg("header")
		var rec arrow.RecordBatch
		switch d.Cmd {
		case "sample":
			var n int
			d.ScanArgs(t, "rows", &n)
			rec = sampleBatch(mem, FileSchema(allColumns, false), 0, n)
		case "strings":
			sc := FileSchema([]schema.Column{{Name: "s", Type: schema.StringType, Nullable: true}}, false)
			b := array.NewStringBuilder(mem)
			for _, line := range strings.Split(d.Input, "\n") {
				if line == "NULL" {
					b.AppendNull()
					continue
				}
				s, err := strconv.Unquote(line)
				if err != nil {
					d.Fatalf(t, "%s: %v", line, err)
				}
				b.Append(s)
			}
			arr := b.NewArray()
			b.Release()
			rec = array.NewRecordBatch(sc, []arrow.Array{arr}, int64(arr.Len()))
			arr.Release()
		default:
			d.Fatalf(t, "unknown command %s", d.Cmd)
		}
		defer rec.Release()
		var buf bytes.Buffer
		w, err := NewCSVWriter(&buf, rec.Schema(), o)
		if err == nil {
			err = w.Write(rec)
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		return buf.String()
	})
}
