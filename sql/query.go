package sql

import (
	"bufio"
	"context"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
)

// Result sets travel as Arrow record batches up to the edge (the shell,
// Exec's Result, a front end). Each field carries its SQL type in its
// metadata and the schema carries the session time zone of the statement,
// so that a front end formats values exactly as the shell does.
const (
	// MetaKind, MetaPrecision, MetaScale and MetaLength are the field
	// metadata keys of a column's schema.Type (see FieldType).
	MetaKind      = "rowttl.kind"
	MetaPrecision = "rowttl.precision"
	MetaScale     = "rowttl.scale"
	MetaLength    = "rowttl.length"
	// MetaTimeZone is the schema metadata key of the time zone TIMESTAMPTZ
	// values are shown in (see ResultZone).
	MetaTimeZone = "rowttl.time_zone"
)

// resultSchema is the Arrow schema of a result set with the SQL types and
// the time zone in its metadata.
func resultSchema(names []string, types []schema.Type, loc *time.Location) *arrow.Schema {
	fields := make([]arrow.Field, len(names))
	for i, n := range names {
		t := types[i]
		fields[i] = arrow.Field{Name: n, Type: t.Arrow(), Nullable: true, Metadata: typeMetadata(t)}
	}
	md := arrow.NewMetadata([]string{MetaTimeZone}, []string{loc.String()})
	return arrow.NewSchema(fields, &md)
}

// fieldMetadata holds the result columns' metadata by type: the same for
// every statement (and never modified: fields share it), where building
// it took a tenth of a short statement's allocations. Types are few: the
// columns' and their expressions'.
var fieldMetadata sync.Map // schema.Type -> arrow.Metadata

func typeMetadata(t schema.Type) arrow.Metadata {
	if md, ok := fieldMetadata.Load(t); ok {
		return md.(arrow.Metadata)
	}
	md := arrow.NewMetadata(
		[]string{MetaKind, MetaPrecision, MetaScale, MetaLength},
		[]string{t.Kind.String(), strconv.Itoa(t.Precision), strconv.Itoa(t.Scale), strconv.Itoa(t.Length)})
	fieldMetadata.Store(t, md)
	return md
}

var kindByName = func() map[string]schema.Kind {
	m := map[string]schema.Kind{}
	for k := schema.Invalid; k <= schema.TimestampNS; k++ {
		m[k.String()] = k
	}
	return m
}()

// FieldType returns the SQL type of a result column. A field without the
// metadata (not made by this package) gives the zero Type.
func FieldType(f arrow.Field) schema.Type {
	get := func(key string) string {
		if i := f.Metadata.FindKey(key); i >= 0 {
			return f.Metadata.Values()[i]
		}
		return ""
	}
	num := func(key string) int {
		n, _ := strconv.Atoi(get(key))
		return n
	}
	return schema.Type{Kind: kindByName[get(MetaKind)], Precision: num(MetaPrecision), Scale: num(MetaScale), Length: num(MetaLength)}
}

// ResultZone returns the time zone a result set's TIMESTAMPTZ values are
// shown in; UTC when the schema does not say.
func ResultZone(s *arrow.Schema) *time.Location {
	md := s.Metadata()
	if i := md.FindKey(MetaTimeZone); i >= 0 {
		if loc, err := loadZone(md.Values()[i]); err == nil {
			return loc
		}
	}
	return time.UTC
}

// opReader streams the batches of an operator tree as an
// array.RecordReader, relabelled with the result schema.
type opReader struct {
	refs   atomic.Int64
	ctx    context.Context
	op     exec.Operator
	schema *arrow.Schema
	cur    arrow.RecordBatch
	err    error
	done   bool
	clean  func(error) error
}

func newOpReader(ctx context.Context, op exec.Operator, loc *time.Location, clean func(error) error) *opReader {
	s := op.Schema()
	names := make([]string, len(s))
	types := make([]schema.Type, len(s))
	for i, c := range s {
		names[i], types[i] = c.Name, c.Type
	}
	r := &opReader{ctx: ctx, op: op, schema: resultSchema(names, types, loc), clean: clean}
	r.refs.Store(1)
	return r
}

func (r *opReader) Schema() *arrow.Schema          { return r.schema }
func (r *opReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *opReader) Record() arrow.RecordBatch      { return r.cur }
func (r *opReader) Err() error                     { return r.err }
func (r *opReader) Retain()                        { r.refs.Add(1) }

func (r *opReader) Release() {
	if r.refs.Add(-1) == 0 {
		r.finish()
	}
}

func (r *opReader) finish() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if !r.done {
		r.done = true
		r.op.Close()
	}
}

func (r *opReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.done {
		return false
	}
	b, err := r.op.Next(r.ctx)
	if err != nil {
		r.err = r.clean(err)
		r.finish()
		return false
	}
	if b == nil {
		r.finish()
		return false
	}
	// The operator's batches have the result's columns; only the schema
	// (names and metadata) is the result's own.
	r.cur = array.NewRecordBatch(r.schema, b.Columns(), b.NumRows())
	b.Release()
	return true
}

// rowSet is a typed result set, before formatting.
type rowSet struct {
	names []string
	types []schema.Type
	rows  [][]schema.Value
}

// rowsReader streams typed rows as one batch.
func rowsReader(mem memory.Allocator, rs *rowSet, loc *time.Location) array.RecordReader {
	sch := resultSchema(rs.names, rs.types, loc)
	builders := make([]array.Builder, len(rs.types))
	for i, t := range rs.types {
		builders[i] = array.NewBuilder(mem, t.Arrow())
		builders[i].Reserve(len(rs.rows))
	}
	for _, row := range rs.rows {
		for i, v := range row {
			schema.AppendValue(builders[i], v)
		}
	}
	cols := make([]arrow.Array, len(builders))
	for i, b := range builders {
		cols[i] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecordBatch(sch, cols, int64(len(rs.rows)))
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	r, _ := array.NewRecordReader(sch, []arrow.RecordBatch{rec})
	return r
}

// textReader streams a formatted Result (SHOW, DESC) as VARCHAR columns.
func textReader(mem memory.Allocator, res *Result, loc *time.Location) array.RecordReader {
	rs := &rowSet{names: res.Columns}
	for range res.Columns {
		rs.types = append(rs.types, stringType)
	}
	for _, row := range res.Rows {
		vals := make([]schema.Value, len(row))
		for i, f := range row {
			if f == "NULL" {
				vals[i] = schema.Null
			} else {
				vals[i] = schema.BytesVal([]byte(f))
			}
		}
		rs.rows = append(rs.rows, vals)
	}
	return rowsReader(mem, rs, loc)
}

// ReadResult drains a result-set reader into a Result, each value
// formatted per SPEC §4 (strings escaped as `mysql -B` does); it releases
// the reader.
func ReadResult(r array.RecordReader) (*Result, error) {
	defer r.Release()
	sch := r.Schema()
	res := &Result{Columns: make([]string, sch.NumFields()), Rows: [][]string{}}
	types := make([]schema.Type, sch.NumFields())
	for i, f := range sch.Fields() {
		res.Columns[i] = f.Name
		types[i] = FieldType(f)
	}
	loc := ResultZone(sch)
	var buf []byte
	for r.Next() {
		b := r.RecordBatch()
		fs := make([]func([]byte, int) []byte, b.NumCols())
		for j := range fs {
			fs[j] = exec.ColumnFormatter(b.Column(j), types[j], loc, true)
		}
		for i := 0; i < int(b.NumRows()); i++ {
			row := make([]string, len(fs))
			for j, f := range fs {
				buf = f(buf[:0], i)
				row[j] = string(buf)
			}
			res.Rows = append(res.Rows, row)
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// WriteTSVStream writes a result set as script mode prints it (a header
// line, then one TAB-separated line per row) batch by batch as the reader
// yields them, flushing after each batch so that the first rows reach w
// before the last are computed. The header is written with the first
// batch, so a query that fails before yielding a row writes nothing. It releases the reader and returns the
// number of rows written; an error after some rows were written is
// returned after them.
func WriteTSVStream(w io.Writer, r array.RecordReader) (int64, error) {
	defer r.Release()
	bw := bufio.NewWriterSize(w, 64<<10)
	sch := r.Schema()
	types := make([]schema.Type, sch.NumFields())
	line := make([]byte, 0, 256)
	for i, f := range sch.Fields() {
		if i > 0 {
			line = append(line, '\t')
		}
		line = append(line, f.Name...)
		types[i] = FieldType(f)
	}
	line = append(line, '\n')
	// The header waits for the first batch (or the end), so that a query
	// failing before its first row prints only its error.
	header := append([]byte(nil), line...)
	var rows int64
	loc := ResultZone(sch)
	for r.Next() {
		if header != nil {
			if _, err := bw.Write(header); err != nil {
				return 0, err
			}
			header = nil
		}
		b := r.RecordBatch()
		fs := make([]func([]byte, int) []byte, b.NumCols())
		for j := range fs {
			fs[j] = exec.ColumnFormatter(b.Column(j), types[j], loc, true)
		}
		for i := 0; i < int(b.NumRows()); i++ {
			line = line[:0]
			for j, f := range fs {
				if j > 0 {
					line = append(line, '\t')
				}
				line = f(line, i)
			}
			line = append(line, '\n')
			if _, err := bw.Write(line); err != nil {
				return rows, err
			}
			rows++
		}
		if err := bw.Flush(); err != nil {
			return rows, err
		}
	}
	if err := r.Err(); err != nil {
		return rows, err
	}
	if header != nil {
		if _, err := bw.Write(header); err != nil {
			return 0, err
		}
	}
	return rows, bw.Flush()
}
