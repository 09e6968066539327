package load

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/fileformat"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/table"
	"github.com/rowttl/rowttl/ttlcol"
)

// This file is the Parquet source of a load: the file's columns are bound
// to the column list by name, each converted from its file type to its
// field's type, and from there the rows go through the same column
// mapping, checks and batches as CSV records.

// FormatParquet is the Options.Format (and `format` header) of a Parquet
// load.
const FormatParquet = "parquet"

// isParquet reads Options.Format.
func (o *Options) isParquet() (bool, error) {
	switch strings.ToLower(o.Format) {
	case "", "csv":
		return false, nil
	case FormatParquet:
		return true, nil
	}
	return false, rowttl.Errorf(rowttl.ErrNotSupported, "format %q: only csv and parquet are supported", o.Format)
}

// parquetInput is an open Parquet file: the input itself when it is a
// regular file, else a copy of the stream in a temporary file (Parquet is
// read from its footer backwards, so a stream must land somewhere first).
type parquetInput struct {
	name  string
	f     *os.File
	tmp   string // removed on close
	size  int64
	pr    *fileformat.ParquetReader
	index map[string]int // lower-case column name -> column
}

func openParquetInput(ctx context.Context, r io.Reader, o Options, mem memory.Allocator) (*parquetInput, error) {
	in := &parquetInput{name: "the Parquet input"}
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			in.f, in.size, in.name = f, st.Size(), f.Name()
		}
	}
	if in.f == nil {
		tmp, err := os.CreateTemp(o.TempDir, "rowttl-load-*.parquet")
		if err != nil {
			return nil, fmt.Errorf("spool the Parquet input: %w", err)
		}
		in.f, in.tmp = tmp, tmp.Name()
		n, err := io.Copy(tmp, ctxReader{ctx, r})
		in.size = n
		if err != nil {
			in.close()
			return nil, fmt.Errorf("read input: %w", err)
		}
	}
	pr, err := fileformat.OpenParquet(in.name, in.f, in.size, mem)
	if err != nil {
		in.close()
		return nil, err
	}
	in.pr = pr
	in.index = map[string]int{}
	for i, f := range pr.Schema().Fields() {
		k := strings.ToLower(f.Name)
		if _, dup := in.index[k]; !dup {
			in.index[k] = i
		}
	}
	return in, nil
}

func (in *parquetInput) close() {
	if in.pr != nil {
		in.pr.Close()
	}
	if in.tmp != "" {
		in.f.Close()
		os.Remove(in.tmp)
	}
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// columnNames lists the file's columns for messages.
func (in *parquetInput) columnNames() string {
	var ns []string
	for _, f := range in.pr.Schema().Fields() {
		ns = append(ns, f.Name)
	}
	return strings.Join(ns, ", ")
}

// columnList returns the column list of the load: spec when given, else
// the file's columns that name a column of the table (or __TTL__ /
// __DORIS_TTL_COL__ in a direct-mode table), in the file's order. Other
// columns of the file are not read; a table column the file lacks takes
// its default.
func (in *parquetInput) columnList(spec string, def *table.Definition, pol ttlcol.Policy) (string, error) {
	if strings.TrimSpace(spec) != "" {
		return spec, nil
	}
	var names []string
	for _, f := range in.pr.Schema().Fields() {
		if def.Schema.Index(f.Name) >= 0 || (schema.IsTTLName(f.Name) && pol.Mode == ttlcol.DirectMode) {
			names = append(names, "`"+strings.ReplaceAll(f.Name, "`", "``")+"`")
		}
	}
	if len(names) == 0 {
		return "", rowttl.Errorf(rowttl.ErrInvalidArgument, "%s: none of its columns (%s) is a column of the table; name them with a column list",
			in.name, in.columnNames())
	}
	return strings.Join(names, ", "), nil
}

// varType types a variable of the column list as its file column.
func (in *parquetInput) varType(name string) (schema.Type, bool) {
	i, ok := in.index[strings.ToLower(name)]
	if !ok {
		return schema.Type{}, false
	}
	t, err := fileformat.FileType(in.pr.Schema().Field(i))
	return t, err == nil
}

// parquetField reads one field of the column list from its file column.
type parquetField struct {
	col  int                    // the column in the file
	pos  int                    // the column in the batches read
	conv *fileformat.Conversion // nil: text read by text
	text converter              // for a text column into a typed field
	// pass marks a file column whose array holds the field's values as
	// they are: the same rowttl and Arrow type, of a type every value of
	// which is valid (booleans, integers, floats, strings without a
	// length, dates and times), so nothing converts or fails.
	pass bool
}

// passKind reports a type whose Arrow array holds only valid values of
// it: the conversion of the type into itself is the identity (see
// fileformat's mapping) and checks nothing. A DECIMAL is not one (an
// Arrow decimal128 may hold more digits than its precision), nor a
// string with a length (the row path checks it).
func passKind(t schema.Type) bool {
	switch t.Kind {
	case schema.Boolean, schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt, schema.Float, schema.Double,
		schema.Date, schema.Datetime, schema.TimestampTZ:
		return true
	case schema.String, schema.Varchar, schema.Char:
		return t.Length == 0
	}
	return false
}

// bindParquet binds every field of the column list to its file column and
// checks their types, before any row is read: a field the file lacks, or
// whose file type does not convert, fails the load.
func (l *loader) bindParquet(in *parquetInput, loc *time.Location) error {
	sc := in.pr.Schema()
	l.pq = make([]parquetField, len(l.fields))
	var cols []int
	for k, f := range l.fields {
		i, ok := in.index[strings.ToLower(f.Name)]
		if !ok {
			return rowttl.Errorf(rowttl.ErrInvalidArgument, "columns: %s is not a column of %s (its columns: %s)", f.Name, in.name, in.columnNames())
		}
		field := sc.Field(i)
		pf := parquetField{col: i}
		to := f.Type
		text := fileformat.IsText(field.Type)
		switch {
		case f.TTL:
			from, err := fileformat.FileType(field)
			if err != nil {
				return err
			}
			switch {
			case from.IsInteger():
				to = schema.BigIntType
			case from.Kind == schema.Date || from.Kind == schema.Datetime || from.Kind == schema.TimestampTZ:
				// DATE and DATETIME read in the load's zone, TIMESTAMPTZ
				// as its instant (SPEC §2).
				to = schema.TimestampTZType(6)
			case from.IsString():
				return rowttl.Errorf(rowttl.ErrInvalidArgument, "columns: column %s of %s is text, which cannot be written into %s; CAST it explicitly to DATETIME or BIGINT, e.g. %s=cast(%s as datetime(6))",
					field.Name, in.name, schema.TTLColumn, schema.TTLAlias, f.Name)
			default:
				return rowttl.Errorf(rowttl.ErrInvalidArgument, "columns: column %s of %s is %s; %s takes integer epoch microseconds or a date/time",
					field.Name, in.name, from, schema.TTLColumn)
			}
		case text && !f.Type.IsString():
			if pf.text = l.convs[k]; pf.text == nil {
				return rowttl.Errorf(rowttl.ErrInvalidArgument, "%s: column %s: the file's text cannot be loaded into %s", in.name, field.Name, f.Type)
			}
		}
		if pf.text == nil {
			conv, err := fileformat.NewConversion(field, to, loc)
			if err != nil {
				return fmt.Errorf("%s: %w", in.name, err)
			}
			pf.conv = conv
			pf.pass = passKind(to) && conv.From() == to && arrow.TypeEqual(field.Type, to.Arrow())
		}
		l.pq[k] = pf
		cols = append(cols, i)
	}
	// The file's columns are read once each, in file order.
	sort.Ints(cols)
	l.pqCols = cols
	for k := range l.pq {
		l.pq[k].pos = sort.SearchInts(cols, l.pq[k].col)
	}
	return nil
}

// readParquet converts every row of the file and hands full batches to
// the load writer.
func (l *loader) readParquet(ctx context.Context, in *parquetInput) error {
	rr, err := in.pr.Records(ctx, l.pqCols)
	if err != nil {
		return err
	}
	defer rr.Release()
	fns := make([]func(int) (schema.Value, error), len(l.pq))
	rowBytes := 0
	if n := in.pr.NumRows(); n > 0 {
		rowBytes = int(in.size / n)
	}
	for rr.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := l.slot.yield(); err != nil {
			return err
		}
		rec := rr.RecordBatch()
		if int(rec.NumCols()) != len(l.pqCols) {
			return rowttl.Errorf(rowttl.ErrCorruption, "%s: read %d columns, asked for %d", in.name, rec.NumCols(), len(l.pqCols))
		}
		for k, pf := range l.pq {
			arr := rec.Column(pf.pos)
			if pf.conv != nil {
				fns[k] = pf.conv.Bind(arr)
				continue
			}
			raw := fileformat.TextValues(arr)
			conv := pf.text
			fns[k] = func(i int) (schema.Value, error) {
				if arr.IsNull(i) {
					return schema.Null, nil
				}
				return conv(raw(i))
			}
		}
		if done, err := l.wholeBatch(rec, fns); err != nil {
			return err
		} else if done {
			if p := l.o.Progress; p != nil {
				p.rows.Store(l.res.NumberTotalRows)
				p.bytes.Store(int64(rowBytes) * l.res.NumberTotalRows)
			}
			continue
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			l.res.NumberTotalRows++
			if reason := l.convertParquet(fns, i); reason != "" {
				l.filter(fmt.Sprintf("row %d", l.res.NumberTotalRows), reason)
				continue
			}
			if err := l.add(rowBytes); err != nil {
				return err
			}
		}
		if p := l.o.Progress; p != nil {
			p.rows.Store(l.res.NumberTotalRows)
			p.bytes.Store(int64(rowBytes) * l.res.NumberTotalRows)
		}
	}
	if err := rr.Err(); err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	if p := l.o.Progress; p != nil {
		p.bytes.Store(in.size)
	}
	if l.lw == nil {
		return nil
	}
	if err := l.flush(); err != nil {
		return err
	}
	return l.stopWriter()
}

// wholeBatch writes the rows of a batch as one, when every field is
// written as it is into one column or more: the arrays of the fields
// that pass (parquetField.pass) as they are, the others converted column
// by column. It reports false, having written and counted nothing, when
// the batch must go row by row: a value that does not convert or does not
// fit its column (the rows path filters its row), or a load that writes
// nothing.
func (l *loader) wholeBatch(rec arrow.RecordBatch, fns []func(int) (schema.Value, error)) (bool, error) {
	if l.lw == nil {
		return false, nil
	}
	used := make([]bool, len(l.fields))
	for _, tg := range l.targets {
		if tg.Field < 0 {
			return false, nil
		}
		used[tg.Field] = true
	}
	for _, u := range used {
		if !u {
			return false, nil // a field read only to be checked
		}
	}
	n := int(rec.NumRows())
	cols := make([]arrow.Array, len(l.targets))
	release := func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}
	for i := range l.targets {
		tg := &l.targets[i]
		c, want := tg.Column, l.sc.Field(i).Type
		if pf := l.pq[tg.Field]; pf.pass {
			arr := rec.Column(pf.pos)
			if !arrow.TypeEqual(arr.DataType(), want) || (c != nil && !c.Nullable && arr.NullN() > 0) {
				release()
				return false, nil
			}
			arr.Retain()
			cols[i] = arr
			continue
		}
		b := array.NewBuilder(l.mem, want)
		b.Reserve(n)
		app, fn := appenderFor(b), fns[tg.Field]
		for r := 0; r < n; r++ {
			v, err := fn(r)
			fits := err == nil
			if fits && c != nil {
				fits = !(v.IsNull() && !c.Nullable) &&
					!(c.Type.Length > 0 && (c.Type.Kind == schema.Varchar || c.Type.Kind == schema.Char) && len(v.Bytes) > c.Type.Length)
			}
			if !fits {
				b.Release()
				release()
				return false, nil
			}
			app(v)
		}
		cols[i] = b.NewArray()
		b.Release()
	}
	// The rows converted before go first.
	if err := l.flush(); err != nil {
		release()
		return false, err
	}
	out := array.NewRecordBatch(l.sc, cols, int64(n))
	release()
	l.res.NumberTotalRows += int64(n)
	return true, l.send(out)
}

// convertParquet fills l.vals from row i of a batch, or says why the row
// is filtered.
func (l *loader) convertParquet(fns []func(int) (schema.Value, error), i int) string {
	for k, fn := range fns {
		v, err := fn(i)
		if err != nil {
			if l.o.strict() || l.fields[k].Column == nil {
				return fmt.Sprintf("field %s: %v", l.fields[k].Name, err)
			}
			v = schema.Null
		}
		l.row[k] = v
	}
	return l.targetValues()
}
