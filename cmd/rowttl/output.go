package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql"
)

// The result formats of `rowttl sql --format`.
const (
	formatTable    = "table"
	formatTSV      = "tsv"
	formatCSV      = "csv"
	formatJSON     = "json"
	formatVertical = "vertical"
)

var formats = []string{formatTable, formatTSV, formatCSV, formatJSON, formatVertical}

func checkFormat(f string) error {
	for _, g := range formats {
		if f == g {
			return nil
		}
	}
	return rowttl.Errorf(rowttl.ErrInvalidArgument, "--format %q: want one of %s", f, strings.Join(formats, ", "))
}

// printer writes result sets in one format. Table and vertical are for
// people: they show at most maxRows rows (0: all) and count the rest, and
// only they buffer (a table needs its column widths; it holds no more than
// the rows it shows). TSV, CSV and JSON are for programs: they stream every
// row, batch by batch.
type printer struct {
	format  string
	maxRows int64
}

// resultSet is the formatter state of one result set.
type resultSet struct {
	names   []string
	types   []schema.Type
	numeric []bool
	loc     *time.Location
}

// rows writes the result set of r in p's format (vertical when asked, or
// when the format is) and returns the number of rows it had; r is
// released. shown is how many of them were written.
func (p printer) rows(w io.Writer, r array.RecordReader, vertical bool) (total, shown int64, err error) {
	defer r.Release()
	format := p.format
	if vertical {
		format = formatVertical
	}
	sch := r.Schema()
	rs := resultSet{loc: sql.ResultZone(sch)}
	for _, f := range sch.Fields() {
		t := sql.FieldType(f)
		rs.names = append(rs.names, f.Name)
		rs.types = append(rs.types, t)
		rs.numeric = append(rs.numeric, isNumeric(t.Kind))
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	defer func() {
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
	}()
	switch format {
	case formatTSV:
		return streamRows(bw, r, rs, true, newTSV(bw, rs))
	case formatCSV:
		return streamRows(bw, r, rs, false, newCSV(bw, rs))
	case formatJSON:
		return streamRows(bw, r, rs, false, newJSON(bw, rs))
	}
	// table and vertical: keep the rows shown, count the others.
	limit := p.maxRows
	var kept [][]string
	escape := format == formatTable
	for r.Next() {
		b := r.RecordBatch()
		n := int64(b.NumRows())
		take := n
		if limit > 0 && total+n > limit {
			take = max(0, limit-total)
		}
		if take > 0 {
			fs := formatters(b, rs, escape)
			for i := range int(take) {
				row := make([]string, len(fs))
				for j, f := range fs {
					row[j] = string(f(nil, i))
				}
				kept = append(kept, row)
			}
		}
		total += n
	}
	if err := r.Err(); err != nil {
		return total, int64(len(kept)), err
	}
	if format == formatVertical {
		writeVertical(bw, rs, kept)
	} else if len(kept) > 0 {
		writeTable(bw, rs, kept)
	}
	return total, int64(len(kept)), nil
}

func formatters(b arrow.RecordBatch, rs resultSet, escape bool) []func([]byte, int) []byte {
	fs := make([]func([]byte, int) []byte, b.NumCols())
	for j := range fs {
		fs[j] = exec.ColumnFormatter(b.Column(j), rs.types[j], rs.loc, escape)
	}
	return fs
}

// rowSink receives the rows of a streaming format.
type rowSink interface {
	header() error
	row(b arrow.RecordBatch, i int, fs []func([]byte, int) []byte) error
	end(rows int64) error
}

func streamRows(bw *bufio.Writer, r array.RecordReader, rs resultSet, escape bool, sink rowSink) (int64, int64, error) {
	var n int64
	started := false
	for r.Next() {
		if !started {
			if err := sink.header(); err != nil {
				return n, n, err
			}
			started = true
		}
		b := r.RecordBatch()
		fs := formatters(b, rs, escape)
		for i := range int(b.NumRows()) {
			if err := sink.row(b, i, fs); err != nil {
				return n, n, err
			}
			n++
		}
		// The first rows reach the reader before the last are computed.
		if err := bw.Flush(); err != nil {
			return n, n, err
		}
	}
	if err := r.Err(); err != nil {
		return n, n, err
	}
	if !started {
		if err := sink.header(); err != nil {
			return n, n, err
		}
	}
	return n, n, sink.end(n)
}

// tsvSink writes SPEC §4's script format.
type tsvSink struct {
	w    *bufio.Writer
	rs   resultSet
	line []byte
}

func newTSV(w *bufio.Writer, rs resultSet) *tsvSink { return &tsvSink{w: w, rs: rs} }

func (s *tsvSink) header() error {
	_, err := s.w.WriteString(strings.Join(s.rs.names, "\t") + "\n")
	return err
}

func (s *tsvSink) row(_ arrow.RecordBatch, i int, fs []func([]byte, int) []byte) error {
	s.line = s.line[:0]
	for j, f := range fs {
		if j > 0 {
			s.line = append(s.line, '\t')
		}
		s.line = f(s.line, i)
	}
	s.line = append(s.line, '\n')
	_, err := s.w.Write(s.line)
	return err
}

func (s *tsvSink) end(int64) error { return nil }

// csvSink writes RFC 4180 CSV with a header; NULL is an empty field, as
// DuckDB writes it.
type csvSink struct {
	w   *csv.Writer
	rs  resultSet
	rec []string
}

func newCSV(w *bufio.Writer, rs resultSet) *csvSink {
	return &csvSink{w: csv.NewWriter(w), rs: rs, rec: make([]string, len(rs.names))}
}

func (s *csvSink) header() error {
	s.w.Write(s.rs.names)
	return s.w.Error()
}

func (s *csvSink) row(b arrow.RecordBatch, i int, fs []func([]byte, int) []byte) error {
	for j, f := range fs {
		if b.Column(j).IsNull(i) {
			s.rec[j] = ""
			continue
		}
		s.rec[j] = string(f(nil, i))
	}
	s.w.Write(s.rec)
	return s.w.Error()
}

func (s *csvSink) end(int64) error {
	s.w.Flush()
	return s.w.Error()
}

// jsonSink writes a result set as one JSON array of objects, one object a
// line, keys in column order: numbers and booleans as JSON numbers and
// booleans (a NaN or infinite DOUBLE, which JSON cannot hold, as a string),
// NULL as null, everything else as a string.
type jsonSink struct {
	w    *bufio.Writer
	rs   resultSet
	keys [][]byte
	line []byte
	rows int64
}

func newJSON(w *bufio.Writer, rs resultSet) *jsonSink {
	s := &jsonSink{w: w, rs: rs}
	for _, n := range rs.names {
		s.keys = append(s.keys, appendJSONString(nil, n))
	}
	return s
}

func (s *jsonSink) header() error {
	_, err := s.w.WriteString("[")
	return err
}

func (s *jsonSink) row(b arrow.RecordBatch, i int, fs []func([]byte, int) []byte) error {
	s.line = s.line[:0]
	if s.rows > 0 {
		s.line = append(s.line, ',')
	}
	s.line = append(s.line, "\n{"...)
	for j, f := range fs {
		if j > 0 {
			s.line = append(s.line, ',')
		}
		s.line = append(s.line, s.keys[j]...)
		s.line = append(s.line, ':')
		col := b.Column(j)
		switch {
		case col.IsNull(i):
			s.line = append(s.line, "null"...)
		case s.rs.numeric[j] || s.rs.types[j].Kind == schema.Boolean:
			start := len(s.line)
			s.line = f(s.line, i)
			if v := string(s.line[start:]); v == "NaN" || strings.HasSuffix(v, "Infinity") {
				s.line = appendJSONString(s.line[:start], v)
			}
		default:
			v := f(nil, i)
			s.line = appendJSONString(s.line, string(v))
		}
	}
	s.line = append(s.line, '}')
	s.rows++
	_, err := s.w.Write(s.line)
	return err
}

func (s *jsonSink) end(rows int64) error {
	end := "]\n"
	if rows > 0 {
		end = "\n]\n"
	}
	_, err := s.w.WriteString(end)
	return err
}

// appendJSONString appends v as a JSON string; only what JSON requires is
// escaped (not <, > and &, which encoding/json escapes for HTML).
func appendJSONString(dst []byte, v string) []byte {
	dst = append(dst, '"')
	for _, r := range v {
		switch {
		case r == '"':
			dst = append(dst, '\\', '"')
		case r == '\\':
			dst = append(dst, '\\', '\\')
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r < 0x20 || r == 0x2028 || r == 0x2029:
			dst = append(dst, fmt.Sprintf(`\u%04x`, r)...)
		case r == utf8.RuneError:
			dst = append(dst, `\ufffd`...)
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}

func isNumeric(k schema.Kind) bool {
	switch k {
	case schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt, schema.Float, schema.Double, schema.Decimal:
		return true
	}
	return false
}

// writeTable writes rows in a MySQL-style box, numbers right-aligned.
func writeTable(w *bufio.Writer, rs resultSet, rows [][]string) {
	widths := make([]int, len(rs.names))
	for j, n := range rs.names {
		widths[j] = displayWidth(n)
	}
	for _, row := range rows {
		for j, v := range row {
			widths[j] = max(widths[j], displayWidth(v))
		}
	}
	rule := func() {
		w.WriteByte('+')
		for _, n := range widths {
			w.WriteString(strings.Repeat("-", n+2))
			w.WriteByte('+')
		}
		w.WriteByte('\n')
	}
	line := func(vals []string, right func(j int) bool) {
		w.WriteByte('|')
		for j, v := range vals {
			pad := strings.Repeat(" ", widths[j]-displayWidth(v))
			w.WriteByte(' ')
			if right(j) {
				w.WriteString(pad + v)
			} else {
				w.WriteString(v + pad)
			}
			w.WriteString(" |")
		}
		w.WriteByte('\n')
	}
	rule()
	line(rs.names, func(int) bool { return false })
	rule()
	for _, row := range rows {
		line(row, func(j int) bool { return rs.numeric[j] })
	}
	rule()
}

// writeVertical writes each row as `name: value` lines under a row
// header, as mysql's \G does; values are written as they are.
func writeVertical(w *bufio.Writer, rs resultSet, rows [][]string) {
	width := 0
	for _, n := range rs.names {
		width = max(width, displayWidth(n))
	}
	stars := strings.Repeat("*", 27)
	for i, row := range rows {
		fmt.Fprintf(w, "%s %d. row %s\n", stars, i+1, stars)
		for j, v := range row {
			n := rs.names[j]
			w.WriteString(strings.Repeat(" ", width-displayWidth(n)) + n + ": " + v + "\n")
		}
	}
}

// displayWidth is the number of terminal cells s takes: East Asian wide
// and fullwidth characters take two, combining marks and other zero-width
// characters none.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
		case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		case isWide(r):
			n += 2
		default:
			n++
		}
	}
	return n
}

// isWide reports the East Asian Wide (W) and Fullwidth (F) ranges that
// matter in practice: Hangul Jamo, CJK, Hangul syllables, fullwidth forms
// and the emoji planes.
func isWide(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r <= 0x115f, r >= 0x2e80 && r <= 0x303e, r >= 0x3041 && r <= 0x33ff,
		r >= 0x3400 && r <= 0x4dbf, r >= 0x4e00 && r <= 0x9fff, r >= 0xa000 && r <= 0xa4cf,
		r >= 0xac00 && r <= 0xd7a3, r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6, r >= 0x1f300 && r <= 0x1f64f,
		r >= 0x1f900 && r <= 0x1f9ff, r >= 0x20000 && r <= 0x3fffd:
		return true
	}
	return false
}

// elapsed formats a statement's time as mysql does: seconds with two
// decimals.
func elapsed(sec float64) string { return strconv.FormatFloat(sec, 'f', 2, 64) + " sec" }
