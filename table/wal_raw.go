package table

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The walRowsRaw shape of a log record's rows:
//
//	rows (uvarint) | columns (uvarint) | column...
//	column:  nulls (uvarint) | buffers (uvarint) | buffer...
//	buffer:  length (uvarint) | bytes
//
// A column's buffers are its Arrow buffers, trimmed to what its rows use:
// validity (empty without nulls) then values for a fixed-width type;
// validity, offsets, then data for a string or binary one. The types come
// from the table's physical schema, which replay checks the columns
// against.

// rawLayout reports how many buffers a column of type dt has in the raw
// shape, or 0 when the shape cannot carry it.
func rawLayout(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
		return 3
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DATE32, arrow.DATE64,
		arrow.TIMESTAMP, arrow.DECIMAL128, arrow.DECIMAL256:
		return 2
	}
	return 0
}

// encodeRowsRaw is encodeRows in the walRowsRaw shape; false when a
// column is of a type the shape cannot carry, a slice of another, or
// short of a buffer.
func encodeRowsRaw(rec arrow.RecordBatch, label string) ([]byte, bool) {
	return appendRowsRaw(nil, rec, label)
}

// appendRowsRaw is encodeRowsRaw into the space of dst (its contents are
// overwritten), which it uses when large enough.
func appendRowsRaw(dst []byte, rec arrow.RecordBatch, label string) ([]byte, bool) {
	rows := int(rec.NumRows())
	// On the stack for tables of a usual width: one allocation fewer on
	// every small write.
	var colsBuf [24][3][]byte
	cols := colsBuf[:0]
	if rec.NumCols() > int64(len(colsBuf)) {
		cols = make([][3][]byte, 0, rec.NumCols())
	}
	cols = cols[:rec.NumCols()]
	size := 3*binary.MaxVarintLen64 + len(label)
	for i, c := range rec.Columns() {
		d := c.Data()
		bs := d.Buffers()
		n := rawLayout(d.DataType())
		if n == 0 || d.Offset() != 0 || len(bs) != n || len(d.Children()) != 0 {
			return nil, false
		}
		part := func(k, want int) ([]byte, bool) {
			if want == 0 {
				return nil, true
			}
			if bs[k] == nil || bs[k].Len() < want {
				return nil, false
			}
			return bs[k].Bytes()[:want], true
		}
		ok := true
		if c.NullN() > 0 {
			cols[i][0], ok = part(0, int(bitutil.BytesForBits(int64(rows))))
		}
		if n == 3 {
			offs, ok1 := part(1, 4*(rows+1))
			if !ok || !ok1 {
				return nil, false
			}
			end := int(int32(binary.LittleEndian.Uint32(offs[4*rows:])))
			data, ok2 := part(2, end)
			cols[i][1], cols[i][2], ok = offs, data, ok2
		} else if ok {
			width := int64(d.DataType().(arrow.FixedWidthDataType).BitWidth())
			cols[i][1], ok = part(1, int(bitutil.BytesForBits(width*int64(rows))))
		}
		if !ok {
			return nil, false
		}
		for _, b := range cols[i][:n] {
			size += len(b) + binary.MaxVarintLen64
		}
		size += 2 * binary.MaxVarintLen64
	}
	buf := dst[:0]
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	buf = binary.AppendUvarint(buf, uint64(len(label)))
	buf = append(buf, label...)
	buf = append(buf, walRowsRaw)
	buf = binary.AppendUvarint(buf, uint64(rows))
	buf = binary.AppendUvarint(buf, uint64(rec.NumCols()))
	for i, c := range rec.Columns() {
		n := rawLayout(c.DataType())
		buf = binary.AppendUvarint(buf, uint64(c.NullN()))
		buf = binary.AppendUvarint(buf, uint64(n))
		for _, b := range cols[i][:n] {
			buf = appendRawBuffer(buf, b)
		}
	}
	return buf, true
}

func appendRawBuffer(buf, b []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(b)))
	return append(buf, b...)
}

var errRawShort = errors.New("record ends inside its rows")

// decodeRowsRaw reads rows in the walRowsRaw shape as a batch of schema
// phys, checking every length and offset before Arrow trusts it; its
// buffers are mem's, copied out of b.
func decodeRowsRaw(mem memory.Allocator, b []byte, phys *arrow.Schema) (arrow.RecordBatch, error) {
	next := func() (uint64, error) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, errRawShort
		}
		b = b[n:]
		return v, nil
	}
	rows64, err := next()
	if err != nil {
		return nil, err
	}
	// Every row takes at least one bit of some buffer of the record.
	if rows64 > 8*uint64(len(b))+8 {
		return nil, fmt.Errorf("%d rows in %d bytes", rows64, len(b))
	}
	rows := int(rows64)
	ncols, err := next()
	if err != nil {
		return nil, err
	}
	if ncols != uint64(phys.NumFields()) {
		return nil, fmt.Errorf("%d columns, the table's physical schema has %d", ncols, phys.NumFields())
	}
	cols := make([]arrow.Array, 0, ncols)
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for i := range phys.NumFields() {
		f := phys.Field(i)
		want := rawLayout(f.Type)
		nulls, err := next()
		if err != nil {
			return nil, err
		}
		nbufs, err := next()
		if err != nil {
			return nil, err
		}
		if want == 0 || nbufs != uint64(want) {
			return nil, fmt.Errorf("column %s of type %v in %d buffers", f.Name, f.Type, nbufs)
		}
		if nulls > uint64(rows) {
			return nil, fmt.Errorf("column %s: %d nulls in %d rows", f.Name, nulls, rows)
		}
		raw := make([][]byte, want)
		for k := range raw {
			n, err := next()
			if err != nil {
				return nil, err
			}
			if n > uint64(len(b)) {
				return nil, errRawShort
			}
			raw[k], b = b[:n], b[n:]
		}
		if err := checkRawColumn(f, rows, int(nulls), raw); err != nil {
			return nil, err
		}
		bufs := make([]*memory.Buffer, want)
		for k, r := range raw {
			if len(r) == 0 && k == 0 {
				continue // no validity bitmap: no nulls
			}
			bufs[k] = memory.NewResizableBuffer(mem)
			bufs[k].Resize(len(r))
			copy(bufs[k].Bytes(), r)
		}
		d := array.NewData(f.Type, rows, bufs, nil, int(nulls), 0)
		for _, bb := range bufs {
			if bb != nil {
				bb.Release()
			}
		}
		cols = append(cols, array.MakeFromData(d))
		d.Release()
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%d bytes after the rows", len(b))
	}
	rec := array.NewRecordBatch(phys, cols, int64(rows))
	return rec, nil
}

// checkRawColumn checks the buffers of one column of rows rows.
func checkRawColumn(f arrow.Field, rows, nulls int, raw [][]byte) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("column %s: %s", f.Name, fmt.Sprintf(format, args...))
	}
	if nulls == 0 && len(raw[0]) != 0 || nulls > 0 && len(raw[0]) != int(bitutil.BytesForBits(int64(rows))) {
		return bad("validity of %d bytes for %d rows, %d null", len(raw[0]), rows, nulls)
	}
	if nulls > 0 && rows-bitutil.CountSetBits(raw[0], 0, rows) != nulls {
		return bad("validity does not hold %d nulls", nulls)
	}
	if len(raw) == 3 {
		offs, data := raw[1], raw[2]
		if len(offs) != 4*(rows+1) {
			return bad("%d bytes of offsets for %d rows", len(offs), rows)
		}
		prev := int32(0)
		for r := 0; r <= rows; r++ {
			o := int32(binary.LittleEndian.Uint32(offs[4*r:]))
			if o < prev || int(o) > len(data) {
				return bad("offset %d of row %d out of order or past %d bytes of data", o, r, len(data))
			}
			prev = o
		}
		if int(prev) != len(data) {
			return bad("%d bytes of data, the offsets use %d", len(data), prev)
		}
		return nil
	}
	width := int64(f.Type.(arrow.FixedWidthDataType).BitWidth())
	if want := int(bitutil.BytesForBits(width * int64(rows))); len(raw[1]) != want {
		return bad("%d bytes of values for %d rows, want %d", len(raw[1]), rows, want)
	}
	return nil
}
