package exec

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// Order keys: the sort keys of a row as bytes whose bytewise order is the
// row's ORDER BY order (normalised keys), shared by Sort, TopN and the
// window operators. Each key column contributes
//
//	| null byte (1B) | value |
//
// where the null byte is 0 for a NULL placed first, 2 for a NULL placed
// last and 1 before a value, and the value is absent for NULL. A
// fixed-width value is 8 bytes big-endian of an order-preserving uint64
// (orderU64); a string is its bytes with 0x00 escaped as 0x00 0xFF and
// ended by 0x00 0x00, so that a string sorts before its extensions; a
// DECIMAL is 16 bytes, its high word's sign flipped. DESC inverts the
// value's bytes, never the null byte. Every column's encoding is
// prefix-free, so a row's key compares column by column.

// orderKeys encodes the order keys of the batches it is bound to.
type orderKeys struct {
	keys []SortKey
	enc  []func(dst []byte, i int) []byte
	// fixed is set for a single key of a fixed width of at most 8 bytes,
	// which Sort orders as a uint64 rather than as bytes.
	fixed bool
}

func newOrderKeys(op string, in Schema, keys []SortKey) (*orderKeys, error) {
	if len(keys) == 0 {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "%s: no sort keys", op)
	}
	for _, k := range keys {
		if k.Column < 0 || k.Column >= len(in) {
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "%s: sort key %d of an input of %d columns", op, k.Column, len(in))
		}
		if err := checkKeyType(op, in[k.Column].Type); err != nil {
			return nil, err
		}
	}
	o := &orderKeys{keys: append([]SortKey(nil), keys...), enc: make([]func([]byte, int) []byte, len(keys))}
	t := in[keys[0].Column].Type
	o.fixed = len(keys) == 1 && !t.IsString() && t.Kind != schema.Decimal
	return o, nil
}

// bind makes the encoders read the columns of b.
func (o *orderKeys) bind(b arrow.RecordBatch) { o.bindWith(b, nil) }

// bindWith is bind where key i drops its null byte when dropNull[i]: Sort,
// which sees its whole input at once, sets it for a column without NULLs
// in any batch, since every row would share the byte.
func (o *orderKeys) bindWith(b arrow.RecordBatch, dropNull []bool) {
	for i, k := range o.keys {
		o.enc[i] = orderEncoder(b.Column(k.Column), k, dropNull != nil && dropNull[i])
	}
}

// appendKey appends the order key of row i of the bound batch.
func (o *orderKeys) appendKey(dst []byte, i int) []byte {
	for _, e := range o.enc {
		dst = e(dst, i)
	}
	return dst
}

func nullByte(k SortKey) byte {
	if k.NullsFirst {
		return 0
	}
	return 2
}

func orderEncoder(a arrow.Array, k SortKey, noNullByte bool) func(dst []byte, i int) []byte {
	nb := nullByte(k)
	nulls := a.NullN() > 0
	vb := []byte{1}
	if noNullByte {
		vb = nil
	}
	var inv uint64
	if k.Desc {
		inv = math.MaxUint64
	}
	switch a := a.(type) {
	case *array.String:
		inv8 := byte(inv)
		return func(dst []byte, i int) []byte {
			if nulls && a.IsNull(i) {
				return append(dst, nb)
			}
			dst = append(dst, vb...)
			s := a.Value(i)
			for j := 0; j < len(s); j++ {
				c := s[j]
				if c == 0 {
					dst = append(dst, inv8, 0xFF^inv8)
				} else {
					dst = append(dst, c^inv8)
				}
			}
			return append(dst, inv8, inv8)
		}
	case *array.Decimal128:
		vals := a.Values()
		return func(dst []byte, i int) []byte {
			if nulls && a.IsNull(i) {
				return append(dst, nb)
			}
			v := vals[i]
			dst = append(dst, vb...)
			dst = binary.BigEndian.AppendUint64(dst, (uint64(v.HighBits())^1<<63)^inv)
			return binary.BigEndian.AppendUint64(dst, v.LowBits()^inv)
		}
	}
	ord := orderU64(a)
	return func(dst []byte, i int) []byte {
		if nulls && a.IsNull(i) {
			return append(dst, nb)
		}
		return binary.BigEndian.AppendUint64(append(dst, vb...), ord(i)^inv)
	}
}

// orderU64 returns the ascending order-preserving uint64 of the values
// of a fixed-width array: integers with the sign bit flipped, floats with
// -0 as 0 and NaN after +Inf.
func orderU64(a arrow.Array) func(i int) uint64 {
	switch a := a.(type) {
	case *array.Boolean:
		return func(i int) uint64 {
			if a.Value(i) {
				return 1
			}
			return 0
		}
	case *array.Int8:
		v := a.Int8Values()
		return func(i int) uint64 { return uint64(int64(v[i])) ^ 1<<63 }
	case *array.Int16:
		v := a.Int16Values()
		return func(i int) uint64 { return uint64(int64(v[i])) ^ 1<<63 }
	case *array.Int32:
		v := a.Int32Values()
		return func(i int) uint64 { return uint64(int64(v[i])) ^ 1<<63 }
	case *array.Int64:
		v := a.Int64Values()
		return func(i int) uint64 { return uint64(v[i]) ^ 1<<63 }
	case *array.Date32:
		v := a.Date32Values()
		return func(i int) uint64 { return uint64(int64(v[i])) ^ 1<<63 }
	case *array.Timestamp:
		v := a.TimestampValues()
		return func(i int) uint64 { return uint64(v[i]) ^ 1<<63 }
	case *array.Float32:
		v := a.Float32Values()
		return func(i int) uint64 { return floatU64(float64(v[i])) }
	case *array.Float64:
		v := a.Float64Values()
		return func(i int) uint64 { return floatU64(v[i]) }
	}
	panic("exec: orderU64 of " + a.DataType().String())
}

// floatU64 maps f to a uint64 in its sort order: -0 equal to 0, every NaN
// equal and after +Inf.
func floatU64(f float64) uint64 {
	b := canonFloat64(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// keyArena holds the order keys of many rows, key r at
// buf[offs[r]:offs[r+1]].
type keyArena struct {
	buf  []byte
	offs []int
}

func (a *keyArena) key(r int) []byte { return a.buf[a.offs[r]:a.offs[r+1]] }

// compareKeys orders two rows by their keys, then by their position, so
// that equal keys keep their input order.
func compareKeys(ka, kb []byte, ra, rb int64) int {
	if c := bytes.Compare(ka, kb); c != 0 {
		return c
	}
	switch {
	case ra < rb:
		return -1
	case ra > rb:
		return 1
	}
	return 0
}
