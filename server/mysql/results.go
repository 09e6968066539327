package mysql

import (
	"context"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	rsql "github.com/rowttl/rowttl/sql"
	"vitess.io/vitess/go/sqltypes"
	querypb "vitess.io/vitess/go/vt/proto/query"
)

// Collation ids of the column definitions: binary for numbers and dates,
// utf8mb4_general_ci for text.
const (
	collationBinary  = 63
	collationUTF8MB4 = 45
)

// columnType is how a column of SQL type t travels: its MySQL type, the
// display length and decimals of its column definition, and its flags.
func columnType(t schema.Type) (typ querypb.Type, length uint32, decimals uint32, flags uint32) {
	num := uint32(querypb.MySqlFlag_NUM_FLAG | querypb.MySqlFlag_BINARY_FLAG)
	switch t.Kind {
	case schema.Boolean:
		return querypb.Type_INT8, 1, 0, num
	case schema.TinyInt:
		return querypb.Type_INT8, 4, 0, num
	case schema.SmallInt:
		return querypb.Type_INT16, 6, 0, num
	case schema.Int:
		return querypb.Type_INT32, 11, 0, num
	case schema.BigInt:
		return querypb.Type_INT64, 20, 0, num
	case schema.Float:
		return querypb.Type_FLOAT32, 12, 31, num
	case schema.Double:
		return querypb.Type_FLOAT64, 22, 31, num
	case schema.Decimal:
		p := t.Precision
		if p == 0 {
			p = 38
		}
		return querypb.Type_DECIMAL, uint32(p + 2), uint32(t.Scale), num
	case schema.Date:
		return querypb.Type_DATE, 10, 0, uint32(querypb.MySqlFlag_BINARY_FLAG)
	case schema.Datetime:
		l := uint32(19)
		if t.Precision > 0 {
			l += uint32(t.Precision) + 1
		}
		return querypb.Type_DATETIME, l, uint32(t.Precision), uint32(querypb.MySqlFlag_BINARY_FLAG)
	case schema.Char:
		return querypb.Type_CHAR, uint32(max(t.Length, 1)) * 4, 0, 0
	case schema.Varchar:
		return querypb.Type_VARCHAR, uint32(max(t.Length, 1)) * 4, 0, 0
	case schema.TimestampTZ:
		return querypb.Type_VARCHAR, 32 * 4, 0, 0
	case schema.TimestampNS:
		return querypb.Type_VARCHAR, 29 * 4, 0, 0
	case schema.Invalid:
		return querypb.Type_NULL_TYPE, 0, 0, 0
	}
	// STRING: Doris shows it as a VARCHAR of its largest length.
	return querypb.Type_VARCHAR, 65533 * 4, 0, 0
}

// fields returns the column definitions of a result schema.
func fields(sch *arrow.Schema) []*querypb.Field {
	out := make([]*querypb.Field, sch.NumFields())
	for i, f := range sch.Fields() {
		typ, length, dec, flags := columnType(rsql.FieldType(f))
		cs := uint32(collationBinary)
		if flags&uint32(querypb.MySqlFlag_BINARY_FLAG) == 0 && typ != querypb.Type_NULL_TYPE {
			cs = collationUTF8MB4
		}
		out[i] = &querypb.Field{Name: f.Name, Type: typ, ColumnLength: length, Decimals: dec, Flags: flags, Charset: cs}
	}
	return out
}

// batchRows converts one batch to rows of the text protocol (the library
// turns them into the binary protocol for prepared statements). All the
// values of a batch share one buffer.
func batchRows(b arrow.RecordBatch, types []schema.Type, mtypes []querypb.Type, loc *time.Location, buf []byte) ([][]sqltypes.Value, []byte) {
	n, nc := int(b.NumRows()), int(b.NumCols())
	fs := make([]func([]byte, int) []byte, nc)
	for j := range fs {
		col := b.Column(j)
		if types[j].Kind == schema.Boolean {
			fs[j] = boolFormatter(col)
			continue
		}
		fs[j] = exec.ColumnFormatter(col, types[j], loc, false)
	}
	// Offsets first, values after: buf may grow while a batch is written.
	buf = buf[:0]
	ends := make([]int, n*nc)
	for i := 0; i < n; i++ {
		for j := 0; j < nc; j++ {
			if b.Column(j).IsNull(i) {
				ends[i*nc+j] = -1
				continue
			}
			buf = fs[j](buf, i)
			ends[i*nc+j] = len(buf)
		}
	}
	rows := make([][]sqltypes.Value, n)
	vals := make([]sqltypes.Value, n*nc)
	start := 0
	for i := 0; i < n; i++ {
		for j := 0; j < nc; j++ {
			k := i*nc + j
			if ends[k] < 0 {
				vals[k] = sqltypes.NULL
				continue
			}
			vals[k] = sqltypes.MakeTrusted(mtypes[j], buf[start:ends[k]:ends[k]])
			start = ends[k]
		}
		rows[i] = vals[i*nc : (i+1)*nc : (i+1)*nc]
	}
	return rows, buf
}

func boolFormatter(col arrow.Array) func([]byte, int) []byte {
	c, ok := col.(*array.Boolean)
	if !ok {
		return exec.ColumnFormatter(col, schema.Type{Kind: schema.Boolean}, time.UTC, false)
	}
	return func(dst []byte, i int) []byte {
		if c.Value(i) {
			return append(dst, '1')
		}
		return append(dst, '0')
	}
}

// stream sends a result set batch by batch: the column definitions with
// the first batch (so that a statement failing before its first row is one
// ERR packet), then each batch as it is read. A statement cancelled while
// a batch was being written (KILL QUERY, while the client reads slowly)
// ends with the cancellation, even after its last batch. It releases r.
func stream(ctx context.Context, r array.RecordReader, callback func(*sqltypes.Result) error) error {
	defer r.Release()
	sch := r.Schema()
	fl := fields(sch)
	types := make([]schema.Type, len(fl))
	mtypes := make([]querypb.Type, len(fl))
	for i, f := range sch.Fields() {
		types[i] = rsql.FieldType(f)
		mtypes[i] = fl[i].Type
	}
	loc := rsql.ResultZone(sch)
	sent := false
	var buf []byte
	for r.Next() {
		// The library writes a batch's rows before the callback returns,
		// so the buffer is reused for the next one.
		rows, nb := batchRows(r.RecordBatch(), types, mtypes, loc, buf)
		buf = nb
		res := &sqltypes.Result{Rows: rows}
		if !sent {
			res.Fields = fl
			sent = true
		}
		if err := callback(res); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	if !sent {
		return callback(&sqltypes.Result{Fields: fl})
	}
	return nil
}
