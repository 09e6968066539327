package main

import (
	"context"
	dsql "database/sql"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// A migration verifies content, not only counts: both sides' rows are
// reduced to a digest that ignores their order, the source's from the
// scan that feeds the chunks, the target's from a SELECT of the same
// columns streamed over the MySQL protocol. Each value is first brought
// to one form whatever side it came from: the target's text is parsed
// as its column's type (so DATETIME(3) printed with three digits, or a
// DECIMAL with trailing zeros, reads as the value the source holds), and
// floating-point values compare at the digits both sides print for sure
// (15 for DOUBLE, 6 for FLOAT), since a Doris FE may print fewer than
// the shortest exact form.

// rowDigest is an order-independent digest of rows: their number, and
// the sum of a mixed 64-bit hash of each row.
type rowDigest struct {
	rows int64
	sum  uint64
	buf  []byte
}

func (d *rowDigest) String() string { return fmt.Sprintf("%016x", d.sum) }

// addValue appends the canonical form of v, a value of type t.
func (d *rowDigest) addValue(t schema.Type, v schema.Value) {
	if v.IsNull() {
		d.buf = append(d.buf, 'N')
		return
	}
	switch {
	case t.Kind == schema.Float:
		d.buf = append(d.buf, 'f')
		d.buf = strconv.AppendFloat(d.buf, v.Float, 'g', 6, 32)
		d.buf = append(d.buf, 0)
	case t.Kind == schema.Double:
		d.buf = append(d.buf, 'f')
		d.buf = strconv.AppendFloat(d.buf, v.Float, 'g', 15, 64)
		d.buf = append(d.buf, 0)
	case t.Kind == schema.Decimal:
		d.buf = append(d.buf, 'd')
		d.buf = binary.LittleEndian.AppendUint64(d.buf, uint64(v.Int))
		d.buf = binary.LittleEndian.AppendUint64(d.buf, uint64(v.Hi))
	case t.IsString():
		d.buf = append(d.buf, 's')
		d.buf = binary.LittleEndian.AppendUint64(d.buf, uint64(len(v.Bytes)))
		d.buf = append(d.buf, v.Bytes...)
	default: // integers, booleans, dates and times: their integer
		d.buf = append(d.buf, 'i')
		d.buf = binary.LittleEndian.AppendUint64(d.buf, uint64(v.Int))
	}
}

// endRow folds the row whose values were added into the digest.
func (d *rowDigest) endRow() {
	h := uint64(14695981039346656037) // FNV-1a, without hash.Hash's allocation per row
	for _, b := range d.buf {
		h ^= uint64(b)
		h *= 1099511628211
	}
	d.sum += mix64(h)
	d.rows++
	d.buf = d.buf[:0]
}

// mix64 is splitmix64's finalizer: a sum of FNV hashes alone lets rows
// that differ in one byte cancel out too easily.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// addBatch adds every row of a scan's batch, whose columns have types.
func (d *rowDigest) addBatch(rec arrow.RecordBatch, types []schema.Type) {
	for r := 0; r < int(rec.NumRows()); r++ {
		for c, t := range types {
			d.addValue(t, schema.ValueAt(rec.Column(c), r))
		}
		d.endRow()
	}
}

// digestColumns are the columns a table's digest covers, as the target
// names them: the user columns, and the expiration of a direct-mode
// table (source-mode expirations are derived from a user column).
type digestColumns struct {
	names []string
	types []schema.Type
}

// targetDigest reads the columns of a table on the target, at the
// migration's now when the target takes it (frozen), on a connection of
// its own so that the settings it needs stay there.
func (m *migration) targetDigest(ctx context.Context, dbName, name string, cols digestColumns, frozen bool) (*rowDigest, error) {
	conn, err := m.target.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	set := []string{"SET time_zone = '+00:00'"} // TIMESTAMPTZ values print as UTC, as the scan holds them
	if frozen {
		set = append(set, "SET session_now = '"+schema.FormatDatetime(schema.DatetimeFromTime(m.st.Now), 6)+"'")
	}
	if len(cols.names) > 0 && schema.IsTTLName(cols.names[len(cols.names)-1]) {
		set = append(set, "SET show_hidden_columns = true")
	}
	for _, q := range set {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	quoted := make([]string, len(cols.names))
	for i, n := range cols.names {
		quoted[i] = parser.QuoteIdent(n)
	}
	q := fmt.Sprintf("SELECT %s FROM %s.%s", strings.Join(quoted, ", "), parser.QuoteIdent(dbName), parser.QuoteIdent(name))
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	vals := make([]dsql.RawBytes, len(cols.names))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	d := &rowDigest{}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, t := range cols.types {
			v, err := parseText(t, vals[i])
			if err != nil {
				return nil, rowttl.Errorf(rowttl.ErrCorruption, "the target's column %s holds %q, not a %s: %w", cols.names[i], vals[i], t, err)
			}
			d.addValue(t, v)
		}
		d.endRow()
	}
	return d, rows.Err()
}

// parseText reads a value of type t as the target printed it (nil:
// NULL). Text and integers, most of a table, are read without copying
// the bytes; anything else as a literal of its type.
func parseText(t schema.Type, b []byte) (schema.Value, error) {
	if b == nil {
		return schema.Null, nil
	}
	if t.IsString() {
		return schema.BytesVal(b), nil
	}
	if t.IsInteger() {
		if n, ok := parseInt(b); ok {
			return schema.IntVal(n), schema.CheckIntRange(t, n)
		}
	}
	return schema.ParseLiteral(t, string(b))
}

// parseInt reads a plain decimal integer that cannot overflow (at most
// 18 digits); ok is false for anything else.
func parseInt(b []byte) (n int64, ok bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// checkDigests compares the two sides' digests of a table.
func checkDigests(src, dst *rowDigest, cols digestColumns) error {
	if src.rows == dst.rows && src.sum == dst.sum {
		return nil
	}
	return rowttl.Errorf(rowttl.ErrCorruption, "the rows differ: the target's checksum over (%s) is %s, the source's %s, over %d and %d rows",
		strings.Join(cols.names, ", "), dst, src, dst.rows, src.rows)
}
