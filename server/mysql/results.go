package mysql

import (
	"context"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	rsql "github.com/rowttl/rowttl/sql"
	vtmysql "vitess.io/vitess/go/mysql"
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
	fs := formatters(b, types, loc, nil)
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

// formatters are the text formatters of a batch's columns.
func formatters(b arrow.RecordBatch, types []schema.Type, loc *time.Location, fs []func([]byte, int) []byte) []func([]byte, int) []byte {
	fs = fs[:0]
	for j, col := range b.Columns() {
		if types[j].Kind == schema.Boolean {
			fs = append(fs, boolFormatter(col))
			continue
		}
		fs = append(fs, exec.ColumnFormatter(col, types[j], loc, false))
	}
	return fs
}

// rowWriter writes the rows of the text protocol straight from a batch's
// arrays: each value formatted into one buffer behind its length, each
// row a packet, handed to the library's buffered writer whole when the
// buffer is full and at the end of each batch (rows reach the client as
// batches are computed, a small result in one write with its end). The
// library's way (a sqltypes.Value per value, a locked write and a timer
// reset per row) costs several times as much. The connection numbers the
// packets (outFraming), which the library does not count.
type rowWriter struct {
	c   *conn
	vc  *vtmysql.Conn
	buf []byte
	fs  []func([]byte, int) []byte
}

// rowWriterFlushAt is the buffer size past which rows are written out.
const rowWriterFlushAt = 256 << 10

var rowBuffers = sync.Pool{New: func() any { return new([]byte) }}

// rowWriterOf returns the connection's row writer, or nil where the
// library must write (TLS hides the socket's stream).
func rowWriterOf(st *connState) *rowWriter {
	if st == nil || st.conn == nil || st.vc == nil || st.vc.TLSEnabled() {
		return nil
	}
	return &rowWriter{c: st.conn, vc: st.vc}
}

// batch writes the rows of b.
func (w *rowWriter) batch(b arrow.RecordBatch, types []schema.Type, loc *time.Location) error {
	w.c.out.renumber.Store(true)
	if w.buf == nil {
		w.buf = (*rowBuffers.Get().(*[]byte))[:0]
	}
	w.fs = formatters(b, types, loc, w.fs)
	cols := b.Columns()
	buf := w.buf[:0]
	for i, n := 0, int(b.NumRows()); i < n; i++ {
		start := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		for j, col := range cols {
			if col.IsNull(i) {
				buf = append(buf, 0xfb)
				continue
			}
			at := len(buf)
			buf = w.fs[j](append(buf, 0), i)
			buf = putLenenc(buf, at, len(buf)-at-1)
		}
		if payload := len(buf) - start - packetHeader; payload < maxPayload {
			buf[start], buf[start+1], buf[start+2] = byte(payload), byte(payload>>8), byte(payload>>16)
		} else {
			buf = splitPacket(buf, start)
		}
		if len(buf) >= rowWriterFlushAt {
			if err := w.vc.WritePacketRaw(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	w.buf = buf
	return w.vc.WritePacketRaw(buf)
}

// release returns the buffer; a huge one (a row of many MiB) is dropped.
func (w *rowWriter) release() {
	if w.buf != nil && cap(w.buf) <= 4*rowWriterFlushAt {
		b := w.buf[:0]
		rowBuffers.Put(&b)
	}
	w.buf = nil
}

// putLenenc writes the length-encoded length l of the value that follows
// the one byte reserved for it at buf[at], moving the value when its
// length takes more.
func putLenenc(buf []byte, at, l int) []byte {
	if l < 251 {
		buf[at] = byte(l)
		return buf
	}
	var pre [9]byte
	p := lenenc(pre[:0], uint64(l))
	buf = append(buf, pre[1:len(p)]...)
	copy(buf[at+len(p):], buf[at+1:at+1+l])
	copy(buf[at:], p)
	return buf
}

// splitPacket cuts the payload at buf[start+4:] (0xffffff bytes or more)
// into packets of at most 0xffffff bytes, ending with a shorter (maybe
// empty) one.
func splitPacket(buf []byte, start int) []byte {
	payload := append([]byte(nil), buf[start+packetHeader:]...)
	buf = buf[:start]
	for {
		k := min(len(payload), maxPayload)
		buf = append(buf, byte(k), byte(k>>8), byte(k>>16), 0)
		buf = append(buf, payload[:k]...)
		payload = payload[k:]
		if k < maxPayload {
			return buf
		}
	}
}

// stream sends a result set batch by batch: the column definitions with
// the first batch (so that a statement failing before its first row is one
// ERR packet), then each batch as it is read. A statement cancelled while
// a batch was being written (KILL QUERY, while the client reads slowly)
// ends with the cancellation, even after its last batch. With w (the text
// protocol) the rows go straight to the socket, else through the library
// (the binary protocol of prepared statements). It releases r.
func stream(ctx context.Context, r array.RecordReader, w *rowWriter, callback func(*sqltypes.Result) error) error {
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
	if w != nil {
		defer w.release()
	}
	for r.Next() {
		if w != nil {
			if !sent {
				if err := callback(&sqltypes.Result{Fields: fl}); err != nil {
					return err
				}
				sent = true
			}
			if err := w.batch(r.RecordBatch(), types, loc); err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			continue
		}
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
