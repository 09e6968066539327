package load

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/fileformat"
	"github.com/rowttl/rowttl/schema"
)

// readAll returns the records of data as "field|field" strings, "<empty>"
// for empty records and "!" after a malformed one.
func readAll(t testing.TB, data string, f Format, chunked bool) []string {
	t.Helper()
	var src io.Reader = strings.NewReader(data)
	if chunked {
		src = iotest.OneByteReader(src)
	}
	r := NewReader(src, f)
	var out []string
	for {
		fields, err := r.Next()
		if err == io.EOF {
			break
		}
		s := "<empty>"
		if fields != nil {
			parts := make([]string, len(fields))
			for i, x := range fields {
				parts[i] = string(x)
			}
			s = strings.Join(parts, "|")
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("%q: %v", data, err)
			}
			s += "!"
		}
		out = append(out, s)
	}
	if r.BytesRead() != int64(len(data)) {
		t.Fatalf("%q: read %d bytes of %d", data, r.BytesRead(), len(data))
	}
	return out
}

func TestReader(t *testing.T) {
	comma := Format{ColumnSeparator: []byte(",")}
	quoted := Format{ColumnSeparator: []byte(","), Enclose: '"'}
	for _, c := range []struct {
		name string
		data string
		f    Format
		want []string
	}{
		{"tabs", "a\tb\tc\nd\te\tf\n", Format{}, []string{"a|b|c", "d|e|f"}},
		{"no final delimiter", "a\tb\nc\td", Format{}, []string{"a|b", "c|d"}},
		{"crlf", "a,b\r\nc,d\r\n", comma, []string{"a|b", "c|d"}},
		{"empty lines", "\n\na\n\r\n", comma, []string{"<empty>", "<empty>", "a", "<empty>"}},
		{"empty fields", ",a,,\n", comma, []string{"|a||"}},
		{"multi-byte separator", "a||b|c||\n", Format{ColumnSeparator: []byte("||")}, []string{"a|b|c|"}},
		{"multi-byte delimiter", "a,b<EOL>c<EOL>", Format{ColumnSeparator: []byte(","), LineDelimiter: []byte("<EOL>")}, []string{"a|b", "c"}},
		{"quotes are text without enclose", `"a,b",c` + "\n", comma, []string{`"a|b"|c`}},
		{"enclosed separator", `"a,b",c` + "\n", quoted, []string{"a,b|c"}},
		{"enclosed delimiter", "\"a\nb\",c\nd,e\n", quoted, []string{"a\nb|c", "d|e"}},
		{"doubled quote", `"say ""hi""",x` + "\n", quoted, []string{`say "hi"|x`}},
		{"empty enclosed", `"",""` + "\n", quoted, []string{"|"}},
		{"quote inside a field", `a"b,c` + "\n", quoted, []string{`a"b|c`}},
		{"text after the closing quote", `"a"b,c` + "\n", quoted, []string{"ab|c"}},
		{"escape", `"a\"b",c` + "\n", Format{ColumnSeparator: []byte(","), Enclose: '"', Escape: '\\'}, []string{`a"b|c`}},
		{"unclosed at the end", "a,\"bc\n", quoted, []string{"a|bc\n!"}},
		{"enclose with multi-byte separator", `"x::y"::z` + "\n", Format{ColumnSeparator: []byte("::"), Enclose: '"'}, []string{"x::y|z"}},
	} {
		for _, chunked := range []bool{false, true} {
			got := readAll(t, c.data, c.f, chunked)
			if strings.Join(got, "\x00") != strings.Join(c.want, "\x00") {
				t.Errorf("%s (chunked %v): got %q, want %q", c.name, chunked, got, c.want)
			}
		}
	}
}

func TestReaderLongRecords(t *testing.T) {
	long := strings.Repeat("x", 3*readChunk+17)
	got := readAll(t, "a\t"+long+"\nb\n", Format{}, false)
	if len(got) != 2 || got[0] != "a|"+long || got[1] != "b" {
		t.Fatalf("long record lost")
	}
	r := NewReader(strings.NewReader(strings.Repeat("y", 5000)), Format{})
	r.maxRec = 1000
	r.buf = make([]byte, 512)
	if _, err := r.Next(); !errors.Is(err, ErrRecordTooLong) {
		t.Fatalf("record over the bound: %v", err)
	}
}

// FuzzReader checks that any input splits without panicking, consumes
// every byte, and, without enclose, that joining each record's fields
// with the separator gives back the record.
func FuzzReader(f *testing.F) {
	f.Add([]byte("a\tb\nc\td\n"), []byte("\t"), []byte("\n"), byte(0))
	f.Add([]byte("a||b\r\n||\n\n"), []byte("||"), []byte("\n"), byte(0))
	f.Add([]byte("\"a,\"\"b\"\"\",c\n\"x\ny\""), []byte(","), []byte("\n"), byte('"'))
	f.Add([]byte("\"unclosed,a\nb"), []byte(","), []byte("\n"), byte('"'))
	f.Add([]byte("a;b<>c;d<><>"), []byte(";"), []byte("<>"), byte(0))
	f.Add([]byte("''''"), []byte("'"), []byte("'"), byte('\''))
	f.Fuzz(func(t *testing.T, data, sep, delim []byte, enclose byte) {
		if len(sep) == 0 || len(delim) == 0 || len(sep) > 4 || len(delim) > 4 {
			return
		}
		fm := Format{ColumnSeparator: sep, LineDelimiter: delim, Enclose: enclose}
		r := NewReader(bytes.NewReader(data), fm)
		r.buf = make([]byte, 16) // exercise refills
		var rebuilt [][]byte
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatalf("more records than bytes")
			}
			fields, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatal(err)
			}
			if enclose == 0 {
				rebuilt = append(rebuilt, bytes.Join(fields, sep))
			}
		}
		if r.BytesRead() != int64(len(data)) {
			t.Fatalf("read %d of %d bytes", r.BytesRead(), len(data))
		}
		if enclose != 0 {
			return
		}
		// The records, joined by the delimiter, are the input, perhaps less
		// a final delimiter (CRs before a \n delimiter are dropped, so that
		// case is not compared).
		if bytes.Equal(delim, []byte("\n")) {
			return
		}
		got := bytes.Join(rebuilt, delim)
		if !bytes.Equal(got, data) && !bytes.Equal(append(got, delim...), data) {
			t.Fatalf("rebuilt %q from %q", got, data)
		}
	})
}

// FuzzCSVWriterRoundTrip writes arbitrary strings with the CSV writer of
// package fileformat and reads them back with Reader: every value the
// writer accepts comes back as it was (NULLs as \N), and what it refuses
// is refused with a clear error, never written ambiguously.
func FuzzCSVWriterRoundTrip(f *testing.F) {
	f.Add("plain", "a\tb", []byte(","), byte('"'))
	f.Add("x\"y", "\"q\"", []byte("\t"), byte('"'))
	f.Add("line\nbreak", "cr\r", []byte("||"), byte('\''))
	f.Add(`\N`, "", []byte("\t"), byte(0))
	f.Add("x|", "|y", []byte("||"), byte(0))
	f.Fuzz(func(t *testing.T, a, b string, sep []byte, enclose byte) {
		if len(sep) == 0 || len(sep) > 3 || bytes.IndexByte(sep, '\n') >= 0 || (enclose != 0 && bytes.IndexByte(sep, enclose) >= 0) || enclose == '\n' {
			return
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		sc := fileformat.FileSchema([]schema.Column{{Name: "a", Type: schema.StringType, Nullable: true}, {Name: "b", Type: schema.StringType, Nullable: true}}, false)
		bld := array.NewRecordBuilder(mem, sc)
		bld.Field(0).(*array.StringBuilder).Append(a)
		bld.Field(1).(*array.StringBuilder).Append(b)
		bld.Field(0).AppendNull()
		bld.Field(1).(*array.StringBuilder).Append(a)
		rec := bld.NewRecordBatch()
		bld.Release()
		defer rec.Release()
		var buf bytes.Buffer
		w, err := fileformat.NewCSVWriter(&buf, sc, fileformat.CSVOptions{ColumnSeparator: sep, Enclose: enclose})
		if err != nil {
			if !errors.Is(err, rowttl.ErrInvalidArgument) || (enclose != '\\' && enclose != '\r' && !bytes.ContainsAny(sep, `\N`)) {
				t.Fatal(err)
			}
			return
		}
		if err := w.Write(rec); err != nil {
			if !errors.Is(err, rowttl.ErrInvalidArgument) || !strings.Contains(err.Error(), "cannot be written") {
				t.Fatalf("refusal %v", err)
			}
			return
		}
		w.Close()
		r := NewReader(bytes.NewReader(buf.Bytes()), Format{ColumnSeparator: sep, Enclose: enclose})
		want := [][]string{{a, b}, {`\N`, a}}
		for i, row := range want {
			fields, err := r.Next()
			if err != nil {
				t.Fatalf("record %d of %q: %v", i, buf.Bytes(), err)
			}
			if len(fields) != 2 || string(fields[0]) != row[0] || string(fields[1]) != row[1] {
				t.Fatalf("record %d of %q: %q, want %q", i, buf.Bytes(), fields, row)
			}
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("more records in %q: %v", buf.Bytes(), err)
		}
	})
}
