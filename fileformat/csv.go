package fileformat

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// CSVOptions shape a CSV file in the Stream Load dialect.
type CSVOptions struct {
	// ColumnSeparator separates fields (default TAB); LineDelimiter ends
	// records (default "\n").
	ColumnSeparator []byte
	LineDelimiter   []byte
	// Enclose, when not 0, quotes the string fields that need it (see the
	// package documentation), doubling the byte inside them, as load reads
	// them with the same enclose byte.
	Enclose byte
	// Header writes the column names as a first record (Stream Load's
	// csv_with_names).
	Header bool
}

// nullText is how a field says NULL.
var nullText = []byte(`\N`)

// CSVWriter writes record batches as CSV text.
type CSVWriter struct {
	w     *bufio.Writer
	o     CSVOptions
	sc    *arrow.Schema
	types []schema.Type
	rows  int64
	line  []byte
	crlf  bool // a '\r' ending a record would be dropped on reading
}

// NewCSVWriter returns a writer of batches of schema sc to w.
func NewCSVWriter(w io.Writer, sc *arrow.Schema, o CSVOptions) (*CSVWriter, error) {
	if len(o.ColumnSeparator) == 0 {
		o.ColumnSeparator = []byte{'\t'}
	}
	if len(o.LineDelimiter) == 0 {
		o.LineDelimiter = []byte{'\n'}
	}
	if e := o.Enclose; e != 0 && (e == '\\' || e == '\r' || bytes.IndexByte(o.ColumnSeparator, e) >= 0 || bytes.IndexByte(o.LineDelimiter, e) >= 0) {
		// \N starts with a backslash: as the enclose byte it would quote
		// NULLs; a '\r' ending a record is dropped on reading.
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "csv: enclose %q must be neither a backslash, a CR, nor a byte of the separator or the delimiter", e)
	}
	if bytes.ContainsAny(o.ColumnSeparator, `\N`) || bytes.ContainsAny(o.LineDelimiter, `\N`) {
		// A separator starting inside \N would cut NULL fields.
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, `csv: the separator %q and the delimiter %q must not hold a backslash or N, the bytes of \N (NULL)`, o.ColumnSeparator, o.LineDelimiter)
	}
	cw := &CSVWriter{w: bufio.NewWriterSize(w, 1<<20), o: o, sc: sc,
		crlf: bytes.Equal(o.LineDelimiter, []byte{'\n'})}
	for _, f := range sc.Fields() {
		t, err := FileType(f)
		if err != nil {
			return nil, err
		}
		cw.types = append(cw.types, t)
	}
	if o.Header {
		for i, f := range sc.Fields() {
			if i > 0 {
				cw.line = append(cw.line, o.ColumnSeparator...)
			}
			var err error
			if cw.line, err = cw.appendString(cw.line, []byte(f.Name), i, -1); err != nil {
				return nil, err
			}
		}
		cw.line = append(cw.line, o.LineDelimiter...)
		if _, err := cw.w.Write(cw.line); err != nil {
			return nil, err
		}
	}
	return cw, nil
}

// Rows returns the rows written so far.
func (cw *CSVWriter) Rows() int64 { return cw.rows }

// Write appends the rows of rec, which must have the writer's schema.
func (cw *CSVWriter) Write(rec arrow.RecordBatch) error {
	if !rec.Schema().Equal(cw.sc) {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "csv: batch schema %s is not the file's %s", rec.Schema(), cw.sc)
	}
	cols := rec.Columns()
	for r := 0; r < int(rec.NumRows()); r++ {
		cw.line = cw.line[:0]
		for c, col := range cols {
			if c > 0 {
				cw.line = append(cw.line, cw.o.ColumnSeparator...)
			}
			var err error
			if cw.line, err = cw.appendField(cw.line, col, r, c); err != nil {
				return err
			}
		}
		cw.line = append(cw.line, cw.o.LineDelimiter...)
		if _, err := cw.w.Write(cw.line); err != nil {
			return err
		}
		cw.rows++
	}
	return nil
}

// Flush writes out what the writer buffers.
func (cw *CSVWriter) Flush() error { return cw.w.Flush() }

func (cw *CSVWriter) appendField(b []byte, col arrow.Array, r, c int) ([]byte, error) {
	if col.IsNull(r) {
		return append(b, nullText...), nil
	}
	t := cw.types[c]
	switch a := col.(type) {
	case *array.String:
		return cw.appendString(b, stringBytes(a.Value(r)), c, cw.rows+1)
	case *array.Int64:
		return strconv.AppendInt(b, a.Value(r), 10), nil
	case *array.Int32:
		return strconv.AppendInt(b, int64(a.Value(r)), 10), nil
	case *array.Timestamp:
		if t.Kind == schema.Datetime {
			return appendDatetime(b, int64(a.Value(r)), t.Precision), nil
		}
	case *array.Decimal128:
		return appendDecimal(b, a.Value(r), t.Scale), nil
	}
	raw := rawReader(col)
	v, err := raw(r)
	if err != nil {
		return b, err
	}
	if v.Kind == schema.BytesValue {
		return cw.appendString(b, v.Bytes, c, cw.rows+1)
	}
	return appendText(b, v, t), nil
}

// appendString appends a string field, quoted when it must be; row is
// the record's number for messages (-1 for the header).
func (cw *CSVWriter) appendString(b, s []byte, c int, row int64) ([]byte, error) {
	o := &cw.o
	if bytes.Equal(s, nullText) {
		return b, cw.unwritable(c, row, `it is the text \N, which the dialect reads as NULL`)
	}
	last := c == len(cw.types)-1
	// A reader finds the leftmost separator, so a value ending with the
	// start of the separator (or, last, of the delimiter) would be cut
	// early too.
	end := o.ColumnSeparator
	if last {
		end = o.LineDelimiter
	}
	need := bytes.Contains(s, o.ColumnSeparator) || bytes.Contains(s, o.LineDelimiter) ||
		(o.Enclose != 0 && len(s) > 0 && s[0] == o.Enclose) ||
		(cw.crlf && last && len(s) > 0 && s[len(s)-1] == '\r') ||
		endsWithPrefix(s, end)
	if !need {
		return append(b, s...), nil
	}
	if o.Enclose == 0 {
		return b, cw.unwritable(c, row, "it holds the column separator or the line delimiter; give an enclose byte to quote such fields")
	}
	b = append(b, o.Enclose)
	for _, ch := range s {
		if ch == o.Enclose {
			b = append(b, ch)
		}
		b = append(b, ch)
	}
	return append(b, o.Enclose), nil
}

func (cw *CSVWriter) unwritable(c int, row int64, why string) error {
	where := fmt.Sprintf("row %d", row)
	if row < 0 {
		where = "the header"
	}
	return rowttl.Errorf(rowttl.ErrInvalidArgument, "csv: %s, column %s: the value cannot be written: %s", where, cw.sc.Field(c).Name, why)
}

// endsWithPrefix reports whether s ends with a proper prefix of sep.
func endsWithPrefix(s, sep []byte) bool {
	for n := min(len(sep)-1, len(s)); n > 0; n-- {
		if bytes.Equal(s[len(s)-n:], sep[:n]) {
			return true
		}
	}
	return false
}
