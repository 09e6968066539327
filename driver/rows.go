package driver

import (
	"context"
	"database/sql/driver"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	rsql "github.com/rowttl/rowttl/sql"
)

// rows reads a result's batches row by row, converting each value to its
// Go type.
type rows struct {
	ctx   context.Context
	r     array.RecordReader
	names []string
	types []schema.Type
	loc   *time.Location
	cur   arrow.RecordBatch
	i     int
	conv  []func(i int) driver.Value
	buf   []byte
}

func newRows(ctx context.Context, r array.RecordReader) *rows {
	sch := r.Schema()
	rs := &rows{ctx: ctx, r: r, loc: rsql.ResultZone(sch)}
	for _, f := range sch.Fields() {
		rs.names = append(rs.names, f.Name)
		rs.types = append(rs.types, rsql.FieldType(f))
	}
	return rs
}

func (r *rows) Columns() []string { return r.names }

func (r *rows) Close() error {
	if r.r != nil {
		r.r.Release()
		r.r = nil
	}
	return nil
}

func (r *rows) Next(dest []driver.Value) error {
	if r.r == nil {
		return io.EOF
	}
	for r.cur == nil || r.i >= int(r.cur.NumRows()) {
		if !r.r.Next() {
			if err := r.r.Err(); err != nil {
				return err
			}
			if err := r.ctx.Err(); err != nil {
				return err
			}
			return io.EOF
		}
		r.cur, r.i = r.r.RecordBatch(), 0
		r.conv = r.conv[:0]
		for j := range r.names {
			r.conv = append(r.conv, r.converter(r.cur.Column(j), r.types[j]))
		}
	}
	for j, f := range r.conv {
		if r.cur.Column(j).IsNull(r.i) {
			dest[j] = nil
			continue
		}
		dest[j] = f(r.i)
	}
	r.i++
	return nil
}

// converter returns the Go value of row i of a column of type t.
func (r *rows) converter(a arrow.Array, t schema.Type) func(int) driver.Value {
	switch c := a.(type) {
	case *array.Boolean:
		return func(i int) driver.Value { return c.Value(i) }
	case *array.Int8:
		return func(i int) driver.Value { return int64(c.Value(i)) }
	case *array.Int16:
		return func(i int) driver.Value { return int64(c.Value(i)) }
	case *array.Int32:
		return func(i int) driver.Value { return int64(c.Value(i)) }
	case *array.Int64:
		return func(i int) driver.Value { return c.Value(i) }
	case *array.Float32:
		return func(i int) driver.Value { return float64(c.Value(i)) }
	case *array.Float64:
		return func(i int) driver.Value { return c.Value(i) }
	case *array.String:
		// A copy: the batch's buffers are recycled once it is released,
		// and database/sql hands strings to the caller as they are.
		return func(i int) driver.Value { return strings.Clone(c.Value(i)) }
	case *array.Date32:
		return func(i int) driver.Value {
			d := time.Unix(int64(c.Value(i))*86400, 0).UTC()
			return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, r.loc)
		}
	case *array.Timestamp:
		unit := c.DataType().(*arrow.TimestampType).Unit
		return func(i int) driver.Value {
			v := int64(c.Value(i))
			var tm time.Time
			if unit == arrow.Nanosecond {
				tm = time.Unix(0, v).UTC()
			} else {
				tm = time.UnixMicro(v).UTC()
			}
			if t.Kind == schema.TimestampTZ {
				return tm.In(r.loc)
			}
			// DATETIME is a wall clock: the same clock in the session zone.
			return time.Date(tm.Year(), tm.Month(), tm.Day(), tm.Hour(), tm.Minute(), tm.Second(), tm.Nanosecond(), r.loc)
		}
	}
	// DECIMAL (exactly, as text) and anything else: the shell's text.
	f := exec.ColumnFormatter(a, t, r.loc, false)
	return func(i int) driver.Value {
		r.buf = f(r.buf[:0], i)
		return string(r.buf)
	}
}

// ColumnTypeDatabaseTypeName is the SQL type's name without its
// parameters: BIGINT, DECIMAL, DATETIME, VARCHAR, ...
func (r *rows) ColumnTypeDatabaseTypeName(i int) string {
	if r.types[i].Kind == schema.Invalid {
		return "NULL"
	}
	return r.types[i].Kind.String()
}

func (r *rows) ColumnTypeScanType(i int) reflect.Type {
	switch r.types[i].Kind {
	case schema.Boolean:
		return reflect.TypeFor[bool]()
	case schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt:
		return reflect.TypeFor[int64]()
	case schema.Float, schema.Double:
		return reflect.TypeFor[float64]()
	case schema.Date, schema.Datetime, schema.TimestampTZ, schema.TimestampNS:
		return reflect.TypeFor[time.Time]()
	}
	return reflect.TypeFor[string]()
}

func (r *rows) ColumnTypeNullable(int) (nullable, ok bool) { return true, false }

func (r *rows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	t := r.types[i]
	switch t.Kind {
	case schema.Decimal:
		return int64(t.Precision), int64(t.Scale), true
	case schema.Datetime, schema.TimestampTZ:
		return int64(t.Precision), 0, true
	}
	return 0, 0, false
}

func (r *rows) ColumnTypeLength(i int) (int64, bool) {
	t := r.types[i]
	switch t.Kind {
	case schema.Varchar, schema.Char:
		return int64(t.Length), true
	case schema.String:
		return 2147483647, true
	}
	return 0, false
}

var (
	_ driver.RowsColumnTypeDatabaseTypeName = (*rows)(nil)
	_ driver.RowsColumnTypeScanType         = (*rows)(nil)
	_ driver.RowsColumnTypePrecisionScale   = (*rows)(nil)
	_ driver.RowsColumnTypeLength           = (*rows)(nil)
	_ driver.RowsColumnTypeNullable         = (*rows)(nil)
)
