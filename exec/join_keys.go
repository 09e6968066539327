package exec

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
)

// Row keys: the bytes by which hash joins and set operations decide that
// two rows are equal. Two keys are equal exactly when their columns hold
// equal values of the same Arrow type: fixed-width values by their bytes
// (FLOAT and DOUBLE normalised first, so that -0 equals 0 and every NaN
// equals every other NaN), strings by length and bytes.

// keyTypeSupported reports whether rows can be keyed on a column of t.
func keyTypeSupported(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DECIMAL128, arrow.STRING, arrow.DATE32, arrow.TIMESTAMP:
		return true
	}
	return false
}

// keyEncoder encodes the key columns of one batch at a time.
type keyEncoder struct {
	// nullsEqual encodes NULL as a value equal to every other NULL (set
	// operations); otherwise a row with a NULL key column is marked null
	// and has no key (joins, where NULL equals nothing).
	nullsEqual bool
	cols       []int
	arrs       []arrow.Array
	raws       [][]byte
	widths     []int

	buf  []byte
	offs []int
	null []bool
}

func newKeyEncoder(cols []int, nullsEqual bool) *keyEncoder {
	return &keyEncoder{nullsEqual: nullsEqual, cols: cols, arrs: make([]arrow.Array, len(cols)),
		raws: make([][]byte, len(cols)), widths: make([]int, len(cols))}
}

// encode computes the keys of every row of b; key(i) and isNull(i) read
// them until the next encode.
func (e *keyEncoder) encode(b arrow.RecordBatch) {
	n := int(b.NumRows())
	for j, c := range e.cols {
		a := b.Column(c)
		e.arrs[j] = a
		e.widths[j] = 0
		if fw, ok := a.DataType().(arrow.FixedWidthDataType); ok && a.DataType().ID() != arrow.BOOL {
			w := fw.BitWidth() / 8
			d := a.Data()
			e.widths[j] = w
			e.raws[j] = d.Buffers()[1].Bytes()[d.Offset()*w:]
		}
	}
	e.buf = e.buf[:0]
	e.offs = append(e.offs[:0], 0)
	e.null = e.null[:0]
	for i := 0; i < n; i++ {
		null := false
		for j, a := range e.arrs {
			if a.IsNull(i) {
				if !e.nullsEqual {
					null = true
					break
				}
				e.buf = append(e.buf, 0)
				continue
			}
			if e.nullsEqual {
				e.buf = append(e.buf, 1)
			}
			e.buf = e.appendValue(e.buf, j, i)
		}
		if null {
			e.buf = e.buf[:e.offs[len(e.offs)-1]]
		}
		e.null = append(e.null, null)
		e.offs = append(e.offs, len(e.buf))
	}
}

func (e *keyEncoder) appendValue(dst []byte, j, i int) []byte {
	a := e.arrs[j]
	switch a.DataType().ID() {
	case arrow.BOOL:
		if a.(*array.Boolean).Value(i) {
			return append(dst, 1)
		}
		return append(dst, 0)
	case arrow.STRING:
		s := a.(*array.String).Value(i)
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...)
	case arrow.FLOAT32:
		return binary.LittleEndian.AppendUint64(dst, floatKeyBits(float64(a.(*array.Float32).Value(i))))
	case arrow.FLOAT64:
		return binary.LittleEndian.AppendUint64(dst, floatKeyBits(a.(*array.Float64).Value(i)))
	}
	w := e.widths[j]
	return append(dst, e.raws[j][i*w:(i+1)*w]...)
}

// floatKeyBits maps equal floats to equal bits: -0 to 0, every NaN to one
// NaN.
func floatKeyBits(f float64) uint64 {
	switch {
	case f == 0:
		return 0
	case f != f:
		return 0x7ff8000000000001
	}
	return math.Float64bits(f)
}

func (e *keyEncoder) key(i int) []byte  { return e.buf[e.offs[i]:e.offs[i+1]] }
func (e *keyEncoder) isNull(i int) bool { return e.null[i] }

// int64KeyType reports the types whose values a single int64 holds
// exactly, which key the hash join's fast path.
func int64KeyType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DATE32, arrow.TIMESTAMP:
		return true
	}
	return false
}

// int64Keys appends the values of a (of an int64KeyType) to dst, NULLs as
// zero.
func int64Keys(dst []int64, a arrow.Array) []int64 {
	switch a := a.(type) {
	case *array.Int64:
		return append(dst, a.Int64Values()...)
	case *array.Int32:
		for _, v := range a.Int32Values() {
			dst = append(dst, int64(v))
		}
	case *array.Int16:
		for _, v := range a.Int16Values() {
			dst = append(dst, int64(v))
		}
	case *array.Int8:
		for _, v := range a.Int8Values() {
			dst = append(dst, int64(v))
		}
	case *array.Date32:
		for _, v := range a.Date32Values() {
			dst = append(dst, int64(v))
		}
	case *array.Timestamp:
		for _, v := range a.TimestampValues() {
			dst = append(dst, int64(v))
		}
	default:
		panic(fmt.Sprintf("exec: int64 keys of %s", a.DataType()))
	}
	return dst
}

// int64Table maps int64 keys to dense ids 0, 1, 2, ... in the order of
// their first insertion: open addressing, linear probing, at most half
// full.
type int64Table struct {
	slots []int64Slot
	mask  uint64
	n     int
}

type int64Slot struct {
	key int64
	id  int32 // -1: empty
}

// newInt64Table returns a table sized for about n keys.
func newInt64Table(n int) *int64Table {
	t := &int64Table{}
	t.resize(tableSize(n))
	return t
}

// tableSize is the number of slots that holds n keys at most half full.
func tableSize(n int) int {
	size := 64
	for size < 2*n {
		size *= 2
	}
	return size
}

func (t *int64Table) resize(size int) {
	old := t.slots
	t.slots = make([]int64Slot, size)
	for i := range t.slots {
		t.slots[i].id = -1
	}
	t.mask = uint64(size - 1)
	for _, s := range old {
		if s.id >= 0 {
			i := mix64(uint64(s.key)) & t.mask
			for t.slots[i].id >= 0 {
				i = (i + 1) & t.mask
			}
			t.slots[i] = s
		}
	}
}

func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// insert returns k's id, and whether k is new.
func (t *int64Table) insert(k int64) (int32, bool) {
	if 2*(t.n+1) > len(t.slots) {
		t.resize(2 * len(t.slots))
	}
	i := mix64(uint64(k)) & t.mask
	for {
		s := &t.slots[i]
		if s.id < 0 {
			s.key, s.id = k, int32(t.n)
			t.n++
			return s.id, true
		}
		if s.key == k {
			return s.id, false
		}
		i = (i + 1) & t.mask
	}
}

// find returns k's id, or -1.
func (t *int64Table) find(k int64) int32 {
	i := mix64(uint64(k)) & t.mask
	for {
		s := t.slots[i]
		if s.id < 0 || s.key == k {
			return s.id
		}
		i = (i + 1) & t.mask
	}
}

func (t *int64Table) bytes() int64 { return int64(len(t.slots)) * 16 }

// bytesTable maps byte keys to dense ids in the order of their first
// insertion, keeping one copy of each distinct key.
type bytesTable struct {
	slots []byteKeySlot
	mask  uint64
	arena []byte
	offs  []int // key id's bytes are arena[offs[id]:offs[id+1]]
}

type byteKeySlot struct {
	hash uint64
	id   int32 // -1: empty
}

var keySeed = maphash.MakeSeed()

// newBytesTable returns a table sized for about n keys.
func newBytesTable(n int) *bytesTable {
	t := &bytesTable{offs: []int{0}}
	t.resize(tableSize(n))
	return t
}

func (t *bytesTable) len() int { return len(t.offs) - 1 }

func (t *bytesTable) resize(size int) {
	old := t.slots
	t.slots = make([]byteKeySlot, size)
	for i := range t.slots {
		t.slots[i].id = -1
	}
	t.mask = uint64(size - 1)
	for _, s := range old {
		if s.id >= 0 {
			i := s.hash & t.mask
			for t.slots[i].id >= 0 {
				i = (i + 1) & t.mask
			}
			t.slots[i] = s
		}
	}
}

func (t *bytesTable) keyOf(id int32) []byte { return t.arena[t.offs[id]:t.offs[id+1]] }

// insert returns k's id, and whether k is new.
func (t *bytesTable) insert(k []byte) (int32, bool) {
	if 2*(t.len()+1) > len(t.slots) {
		t.resize(2 * len(t.slots))
	}
	h := maphash.Bytes(keySeed, k)
	i := h & t.mask
	for {
		s := &t.slots[i]
		if s.id < 0 {
			s.hash, s.id = h, int32(t.len())
			t.arena = append(t.arena, k...)
			t.offs = append(t.offs, len(t.arena))
			return s.id, true
		}
		if s.hash == h && string(t.keyOf(s.id)) == string(k) {
			return s.id, false
		}
		i = (i + 1) & t.mask
	}
}

// find returns k's id, or -1.
func (t *bytesTable) find(k []byte) int32 {
	h := maphash.Bytes(keySeed, k)
	i := h & t.mask
	for {
		s := t.slots[i]
		if s.id < 0 || (s.hash == h && string(t.keyOf(s.id)) == string(k)) {
			return s.id
		}
		i = (i + 1) & t.mask
	}
}

func (t *bytesTable) bytes() int64 {
	return int64(len(t.slots))*16 + int64(cap(t.arena)) + int64(cap(t.offs))*8
}

// checkSameTypes checks that column pairs of two inputs have identical
// Arrow types, as keys compared by their bytes must; what names them
// (for errors) is op.
func checkSameTypes(op string, l, r Schema, lcols, rcols []int) error {
	for i := range lcols {
		lt, rt := l[lcols[i]].Type, r[rcols[i]].Type
		if !arrow.TypeEqual(lt.Arrow(), rt.Arrow()) {
			return rowttl.Errorf(rowttl.ErrInvalidArgument,
				"%s: column %s (%s) and column %s (%s) have different types; cast one to the other",
				op, l[lcols[i]].Name, lt, r[rcols[i]].Name, rt)
		}
		if !keyTypeSupported(lt.Arrow()) {
			return rowttl.Errorf(rowttl.ErrNotSupported, "%s: cannot compare values of type %s (column %s)",
				op, lt, l[lcols[i]].Name)
		}
	}
	return nil
}
