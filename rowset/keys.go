package rowset

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
)

// Keys are compared as memcomparable byte strings: each key column in turn,
// a NULL flag byte (0 NULL, 1 a value) then the value encoded so that byte
// order is value order:
//
//	integers, dates, timestamps, booleans: 8 bytes big-endian, sign bit flipped
//	floats: 8 bytes big-endian of the IEEE bits, all bits flipped for negatives
//	decimals: the 128-bit unscaled integer, 16 bytes big-endian, sign bit flipped
//	strings: bytes with 0x00 escaped as 0x00 0xFF, ended by 0x00 0x01
//
// The encoding of the first column is a prefix of the whole key, which lets
// zone maps of the first key column bound a page's keys.

// AppendValueKey appends the encoding of one value.
func AppendValueKey(dst []byte, v schema.Value) []byte {
	switch v.Kind {
	case schema.NullValue:
		return append(dst, 0)
	case schema.IntValue:
		return binary.BigEndian.AppendUint64(append(dst, 1), uint64(v.Int)^(1<<63))
	case schema.FloatValue:
		b := math.Float64bits(v.Float)
		if b&(1<<63) != 0 {
			b = ^b
		} else {
			b |= 1 << 63
		}
		return binary.BigEndian.AppendUint64(append(dst, 1), b)
	case schema.DecimalValue:
		dst = binary.BigEndian.AppendUint64(append(dst, 1), uint64(v.Hi)^(1<<63))
		return binary.BigEndian.AppendUint64(dst, uint64(v.Int))
	case schema.BytesValue:
		dst = append(dst, 1)
		for _, c := range v.Bytes {
			if c == 0 {
				dst = append(dst, 0, 0xFF)
			} else {
				dst = append(dst, c)
			}
		}
		return append(dst, 0, 1)
	}
	return dst
}

// KeyEncoder encodes the key of any row of a batch.
type KeyEncoder struct {
	cols []func(dst []byte, i int) []byte
}

// NewKeyEncoder prepares encoding for the given key columns.
func NewKeyEncoder(cols []arrow.Array) *KeyEncoder {
	e := &KeyEncoder{}
	for _, a := range cols {
		e.cols = append(e.cols, columnKeyFunc(a))
	}
	return e
}

// Append appends the key of row i.
func (e *KeyEncoder) Append(dst []byte, i int) []byte {
	for _, f := range e.cols {
		dst = f(dst, i)
	}
	return dst
}

func columnKeyFunc(a arrow.Array) func([]byte, int) []byte {
	intKey := func(dst []byte, v int64) []byte {
		return binary.BigEndian.AppendUint64(append(dst, 1), uint64(v)^(1<<63))
	}
	switch x := a.(type) {
	case *array.Int64:
		vals := x.Int64Values()
		return func(dst []byte, i int) []byte {
			if x.IsNull(i) {
				return append(dst, 0)
			}
			return intKey(dst, vals[i])
		}
	case *array.Int32:
		vals := x.Int32Values()
		return func(dst []byte, i int) []byte {
			if x.IsNull(i) {
				return append(dst, 0)
			}
			return intKey(dst, int64(vals[i]))
		}
	case *array.String:
		return func(dst []byte, i int) []byte {
			if x.IsNull(i) {
				return append(dst, 0)
			}
			return AppendValueKey(dst, schema.BytesVal([]byte(x.Value(i))))
		}
	}
	return func(dst []byte, i int) []byte { return AppendValueKey(dst, schema.ValueAt(a, i)) }
}

// KeyCursor walks the keys of one rowset in stored order, segment by
// segment and page by page, decoding only the key columns.
type KeyCursor struct {
	h        *Handle
	mem      memory.Allocator
	keyCount int

	seg, page int
	base      int64 // ordinal of the first row of the current segment
	first     int64 // ordinal of the first row of the current page
	cols      []arrow.Array
	enc       *KeyEncoder
	i, n      int

	// Key and Ordinal describe the current row after a successful Next. Key
	// is valid until the next call.
	Key     []byte
	Ordinal int64
}

// NewKeyCursor returns a cursor before the first row.
func NewKeyCursor(h *Handle, mem memory.Allocator, keyCount int) *KeyCursor {
	return &KeyCursor{h: h, mem: mem, keyCount: keyCount, page: -1}
}

// Next moves to the next row.
func (c *KeyCursor) Next() (bool, error) {
	for c.i >= c.n {
		ok, err := c.nextPage(nil)
		if !ok || err != nil {
			return false, err
		}
	}
	c.Key = c.enc.Append(c.Key[:0], c.i)
	c.Ordinal = c.first + int64(c.i)
	c.i++
	return true, nil
}

// NextPageWhere skips to the next page for which keep (given the page's
// first-key-column bounds, as encoded keys, nil when unknown) says yes, and
// positions the cursor at its first row; it returns false at the end.
func (c *KeyCursor) NextPageWhere(keep func(lo, hi []byte) bool) (bool, error) {
	return c.nextPage(keep)
}

func (c *KeyCursor) nextPage(keep func(lo, hi []byte) bool) (bool, error) {
	c.release()
	for c.seg < len(c.h.Segments) {
		r := c.h.Segments[c.seg]
		c.page++
		if c.page >= r.NumPages() {
			c.base += r.NumRows()
			c.seg++
			c.page = -1
			continue
		}
		first, n := r.Page(c.page)
		if keep != nil {
			z := r.PageStats(0, c.page)
			var lo, hi []byte
			if !z.Min.IsNull() && !z.Max.IsNull() {
				lo = AppendValueKey(nil, z.Min)
				hi = append(AppendValueKey(nil, z.Max), 0xFF)
			}
			if !keep(lo, hi) {
				continue
			}
		}
		c.cols = c.cols[:0]
		for k := 0; k < c.keyCount; k++ {
			a, err := r.ReadPage(c.mem, k, c.page)
			if err != nil {
				c.release()
				return false, err
			}
			c.cols = append(c.cols, a)
		}
		c.enc = NewKeyEncoder(c.cols)
		c.first = c.base + first
		c.i, c.n = 0, n
		return true, nil
	}
	return false, nil
}

// String says where the cursor is, for messages.
func (c *KeyCursor) String() string {
	return fmt.Sprintf("rowset %d segment %d page %d row %d", c.h.Meta.ID, c.seg, c.page, c.i)
}

func (c *KeyCursor) release() {
	for _, a := range c.cols {
		a.Release()
	}
	c.cols = c.cols[:0]
	c.i, c.n = 0, 0
}

// Close releases decoded pages.
func (c *KeyCursor) Close() { c.release() }

// AtPageEnd reports whether the last Next returned the current page's last
// row.
func (c *KeyCursor) AtPageEnd() bool { return c.i >= c.n }
