package exec

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// This file holds the equality keys of rows shared by every operator that
// groups, deduplicates or matches rows (hash aggregation, distinct, hash
// joins through joinTable, set operations): how the key columns of a batch
// become one hashable key per row, and groupMap, the hash table from keys
// to dense group ids.
//
// A key takes one of two forms. A single column of a fixed width of at most
// eight bytes (integers, dates, timestamps, booleans, floats) is an int64,
// hashed with a multiply-xorshift mix; a single string column is the
// string's bytes, viewed in place. Anything else (several columns, a
// DECIMAL) is encoded into bytes by appendEqualKey, which is equal for two
// rows exactly when every column is equal with NULLs equal to each other,
// -0 equal to 0 and every NaN equal to every other NaN, as GROUP BY and
// DISTINCT want.

// keyForm is how rowKeys represents the keys of a batch.
type keyForm uint8

const (
	// keyInt is one fixed-width column as an int64 (floats as their
	// canonical bits).
	keyInt keyForm = iota + 1
	// keyString is one string column, viewed in place.
	keyString
	// keyEncoded is the equality encoding of every key column.
	keyEncoded
)

// hashSeed is the process's seed for byte keys. Hashes are never stored or
// compared across processes.
var hashSeed = maphash.MakeSeed()

// nullHash is the hash of the NULL key of a single-column form.
const nullHash = 0x5bd1e9955bd1e995

// hashInt mixes an integer key (murmur3's finaliser): keys that differ only
// in their high bits (timestamps rounded to hours) still spread over every
// bucket and partition.
func hashInt(k int64) uint64 {
	x := uint64(k)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func hashBytes(s string) uint64 { return maphash.String(hashSeed, s) }

// keyFormOf returns the form of keys over columns of types ts.
func keyFormOf(ts []schema.Type) keyForm {
	if len(ts) == 1 {
		switch ts[0].Kind {
		case schema.Decimal:
			return keyEncoded
		case schema.String, schema.Varchar, schema.Char:
			return keyString
		}
		return keyInt
	}
	return keyEncoded
}

// checkKeyType rejects types no key can be made of.
func checkKeyType(op string, t schema.Type) error {
	switch t.Kind {
	case schema.Boolean, schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt, schema.Float,
		schema.Double, schema.Decimal, schema.String, schema.Varchar, schema.Char, schema.Date,
		schema.Datetime, schema.TimestampTZ, schema.TimestampNS:
		return nil
	}
	return rowttl.Errorf(rowttl.ErrNotSupported, "%s: a key of type %s", op, t)
}

// rowKeys is the keys of one batch's rows, rebuilt batch after batch into
// the same buffers. Views into the batch live until the batch is released.
type rowKeys struct {
	form keyForm
	n    int
	ints []int64  // keyInt
	strs []string // keyString and keyEncoded
	// null marks rows whose single key column is NULL; nil when none is.
	null []bool
	hash []uint64
	// buf backs the encoded keys, offs their bounds: views are taken
	// once buf has stopped growing.
	buf  []byte
	offs []int
}

// fill computes the keys of cols (the key columns of one batch).
func (k *rowKeys) fill(cols []arrow.Array) {
	n := cols[0].Len()
	k.n = n
	k.hash = resize(k.hash, n)
	k.null = k.null[:0]
	if cols[0].NullN() > 0 && k.form != keyEncoded {
		k.null = resize(k.null, n)
		for i := range n {
			k.null[i] = cols[0].IsNull(i)
		}
	}
	switch k.form {
	case keyInt:
		k.ints = intKeys(k.ints, cols[0])
		for i, v := range k.ints {
			k.hash[i] = hashInt(v)
		}
	case keyString:
		a := cols[0].(*array.String)
		k.strs = resize(k.strs, n)
		for i := range n {
			s := a.Value(i)
			k.strs[i] = s
			k.hash[i] = hashBytes(s)
		}
	case keyEncoded:
		k.buf = k.buf[:0]
		k.offs = resize(k.offs, n+1)
		offs := k.offs
		offs[0] = 0
		for i := range n {
			for _, c := range cols {
				k.buf = appendEqualKey(k.buf, c, i)
			}
			offs[i+1] = len(k.buf)
		}
		k.strs = resize(k.strs, n)
		for i := range n {
			k.strs[i] = bytesView(k.buf[offs[i]:offs[i+1]])
			k.hash[i] = hashBytes(k.strs[i])
		}
	}
	if len(k.null) > 0 {
		for i, isNull := range k.null {
			if isNull {
				k.hash[i] = nullHash
			}
		}
	}
}

// isNull reports whether row i's single-column key is NULL.
func (k *rowKeys) isNull(i int) bool { return len(k.null) > 0 && k.null[i] }

func bytesView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// intKeys returns the values of a fixed-width column as int64s in dst:
// integers and temporals as they are, booleans as 0 and 1, floats as their
// bits with -0 folded into 0 and every NaN into one.
func intKeys(dst []int64, a arrow.Array) []int64 {
	n := a.Len()
	dst = resize(dst, n)
	switch a := a.(type) {
	case *array.Int8:
		widen(dst, a.Int8Values())
	case *array.Int16:
		widen(dst, a.Int16Values())
	case *array.Int32:
		widen(dst, a.Int32Values())
	case *array.Int64:
		copy(dst, a.Int64Values())
	case *array.Date32:
		widen(dst, a.Date32Values())
	case *array.Timestamp:
		widen(dst, a.TimestampValues())
	case *array.Boolean:
		for i := range n {
			dst[i] = 0
			if a.Value(i) {
				dst[i] = 1
			}
		}
	case *array.Float32:
		for i, v := range a.Float32Values() {
			dst[i] = int64(canonFloat32(v))
		}
	case *array.Float64:
		for i, v := range a.Float64Values() {
			dst[i] = int64(canonFloat64(v))
		}
	default:
		panic("exec: intKeys of " + a.DataType().String())
	}
	return dst
}

func widen[T ~int8 | ~int16 | ~int32 | ~int64](dst []int64, src []T) {
	for i, v := range src {
		dst[i] = int64(v)
	}
}

// canonFloat64 returns the bits of f with -0 as 0 and every NaN as one NaN.
func canonFloat64(f float64) uint64 {
	switch {
	case f == 0:
		return 0
	case f != f:
		return 0x7ff8000000000000
	}
	return math.Float64bits(f)
}

func canonFloat32(f float32) uint32 {
	switch {
	case f == 0:
		return 0
	case f != f:
		return 0x7fc00000
	}
	return math.Float32bits(f)
}

// appendEqualKey appends the equality encoding of row i of a: a tag byte
// (0 NULL, 1 a value), then the value, fixed-width little-endian or, for
// strings, a uvarint length and the bytes. Each column's encoding delimits
// itself, so a row's columns concatenate without ambiguity.
func appendEqualKey(dst []byte, a arrow.Array, i int) []byte {
	if a.IsNull(i) {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	return appendEqualValue(dst, a, i)
}

// appendEqualValue appends the encoding of the non-NULL row i of a without
// the tag byte.
func appendEqualValue(dst []byte, a arrow.Array, i int) []byte {
	switch a := a.(type) {
	case *array.Boolean:
		if a.Value(i) {
			return append(dst, 1)
		}
		return append(dst, 0)
	case *array.Int8:
		return append(dst, byte(a.Value(i)))
	case *array.Int16:
		return binary.LittleEndian.AppendUint16(dst, uint16(a.Value(i)))
	case *array.Int32:
		return binary.LittleEndian.AppendUint32(dst, uint32(a.Value(i)))
	case *array.Int64:
		return binary.LittleEndian.AppendUint64(dst, uint64(a.Value(i)))
	case *array.Date32:
		return binary.LittleEndian.AppendUint32(dst, uint32(a.Value(i)))
	case *array.Timestamp:
		return binary.LittleEndian.AppendUint64(dst, uint64(a.Value(i)))
	case *array.Float32:
		return binary.LittleEndian.AppendUint32(dst, canonFloat32(a.Value(i)))
	case *array.Float64:
		return binary.LittleEndian.AppendUint64(dst, canonFloat64(a.Value(i)))
	case *array.Decimal128:
		v := a.Value(i)
		dst = binary.LittleEndian.AppendUint64(dst, v.LowBits())
		return binary.LittleEndian.AppendUint64(dst, uint64(v.HighBits()))
	case *array.String:
		s := a.Value(i)
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...)
	}
	panic("exec: appendEqualValue of " + a.DataType().String())
}

// decodeEqualKey appends to b the value appendEqualKey encoded at the start
// of key and returns the rest of key.
func decodeEqualKey(b array.Builder, key []byte) []byte {
	if key[0] == 0 {
		b.AppendNull()
		return key[1:]
	}
	key = key[1:]
	le := binary.LittleEndian
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(key[0] != 0)
		return key[1:]
	case *array.Int8Builder:
		b.Append(int8(key[0]))
		return key[1:]
	case *array.Int16Builder:
		b.Append(int16(le.Uint16(key)))
		return key[2:]
	case *array.Int32Builder:
		b.Append(int32(le.Uint32(key)))
		return key[4:]
	case *array.Int64Builder:
		b.Append(int64(le.Uint64(key)))
		return key[8:]
	case *array.Date32Builder:
		b.Append(arrow.Date32(le.Uint32(key)))
		return key[4:]
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(le.Uint64(key)))
		return key[8:]
	case *array.Float32Builder:
		b.Append(math.Float32frombits(le.Uint32(key)))
		return key[4:]
	case *array.Float64Builder:
		b.Append(math.Float64frombits(le.Uint64(key)))
		return key[8:]
	case *array.Decimal128Builder:
		b.Append(decimal128.New(int64(le.Uint64(key[8:])), le.Uint64(key)))
		return key[16:]
	case *array.StringBuilder:
		n, w := binary.Uvarint(key)
		b.Append(string(key[w : w+int(n)]))
		return key[w+int(n):]
	}
	panic("exec: decodeEqualKey into " + b.Type().String())
}

// appendIntKey appends to b the value intKeys made k from.
func appendIntKey(b array.Builder, k int64) {
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(k != 0)
	case *array.Int8Builder:
		b.Append(int8(k))
	case *array.Int16Builder:
		b.Append(int16(k))
	case *array.Int32Builder:
		b.Append(int32(k))
	case *array.Int64Builder:
		b.Append(k)
	case *array.Date32Builder:
		b.Append(arrow.Date32(k))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(k))
	case *array.Float32Builder:
		b.Append(math.Float32frombits(uint32(k)))
	case *array.Float64Builder:
		b.Append(math.Float64frombits(uint64(k)))
	default:
		panic("exec: appendIntKey into " + b.Type().String())
	}
}

// groupMap maps keys to dense group ids 0, 1, ... in the order of their
// first insertion. It is an open-addressing table at a load factor of at
// most 1/2: an int key sits in its slot, so that a probe touches one cache
// line; a byte key sits in an arena and its slot holds 32 bits of its hash,
// so that a probe compares bytes only on a likely match. (A table of more
// than 2^32 slots would need more bits; none is that large.) A NULL key of a
// single-column form is a group of its own, outside the table.
type groupMap struct {
	form   keyForm
	mask   uint64
	islots []intSlot
	bslots []bytesSlot
	// ints holds the key of every group (keyInt); arena and offs the bytes
	// of group g at arena[offs[g]:offs[g+1]] (other forms).
	ints   []int64
	arena  []byte
	offs   []int
	n      int
	nullID int32 // -1 until a NULL key is inserted
}

type intSlot struct {
	key int64
	id  uint32 // group id + 1; 0 marks an empty slot
}

type bytesSlot struct {
	// tag is the low 32 bits of the hash: the bits that pick the slot, so
	// that growing moves slots without hashing keys again, and a tag match
	// still rules out most keys of a probe sequence.
	tag uint32
	id  uint32 // group id + 1; 0 marks an empty slot
}

const minSlots = 16

func newGroupMap(form keyForm) *groupMap { return newGroupMapSized(form, 0) }

// newGroupMapSized returns a map whose table holds n groups without
// growing, for callers that know how many keys are coming (a join's build
// side).
func newGroupMapSized(form keyForm, n int) *groupMap {
	size := minSlots
	for size < 2*n+2 {
		size *= 2
	}
	m := &groupMap{form: form, nullID: -1, mask: uint64(size - 1)}
	if form == keyInt {
		m.islots = make([]intSlot, size)
	} else {
		m.bslots = make([]bytesSlot, size)
		m.offs = []int{0}
	}
	return m
}

// len returns the number of groups.
func (m *groupMap) len() int { return m.n }

// bytes returns the memory the map holds.
func (m *groupMap) bytes() int64 {
	return int64(cap(m.islots))*int64(unsafe.Sizeof(intSlot{})) +
		int64(cap(m.bslots))*int64(unsafe.Sizeof(bytesSlot{})) +
		int64(cap(m.ints))*8 + int64(cap(m.arena)) + int64(cap(m.offs))*8
}

// find sets gids[j] to the group of row rows[j] of k, inserting new groups,
// and returns the number of groups inserted.
func (m *groupMap) find(k *rowKeys, rows []int32, gids []uint32) int {
	before := m.n
	if m.form == keyInt && len(k.null) == 0 {
		m.findInts(k.ints, k.hash, rows, gids)
	} else if m.form == keyInt {
		for j, r := range rows {
			if k.isNull(int(r)) {
				gids[j] = m.nullGroup()
				continue
			}
			gids[j] = m.findInt(k.ints[r], k.hash[r])
		}
	} else {
		for j, r := range rows {
			if k.isNull(int(r)) {
				gids[j] = m.nullGroup()
				continue
			}
			gids[j], _ = m.findBytes(k.strs[r], k.hash[r])
		}
	}
	return m.n - before
}

func (m *groupMap) nullGroup() uint32 {
	if m.nullID < 0 {
		m.nullID = int32(m.n)
		m.appendKey()
	}
	return uint32(m.nullID)
}

// appendKey records a new group whose key is NULL or written by the caller.
func (m *groupMap) appendKey() {
	m.n++
	if m.form == keyInt {
		m.ints = append(m.ints, 0)
	} else {
		m.offs = append(m.offs, len(m.arena))
	}
}

// findInts is find over int keys without NULLs, the probe loop inlined.
func (m *groupMap) findInts(keys []int64, hash []uint64, rows []int32, gids []uint32) {
	slots, mask := m.islots, m.mask
	for j, r := range rows {
		key := keys[r]
		i := hash[r] & mask
		for {
			s := &slots[i]
			if s.id == 0 {
				gids[j] = m.insertInt(i, key)
				slots, mask = m.islots, m.mask
				break
			}
			if s.key == key {
				gids[j] = s.id - 1
				break
			}
			i = (i + 1) & mask
		}
	}
}

func (m *groupMap) findInt(key int64, h uint64) uint32 {
	j := h & m.mask
	for {
		s := &m.islots[j]
		if s.id == 0 {
			break
		}
		if s.key == key {
			return s.id - 1
		}
		j = (j + 1) & m.mask
	}
	return m.insertInt(j, key)
}

// insertInt puts a new group of key in the empty slot j.
func (m *groupMap) insertInt(j uint64, key int64) uint32 {
	id := uint32(m.n)
	m.islots[j] = intSlot{key: key, id: id + 1}
	m.n++
	m.ints = append(m.ints, key)
	if uint64(m.n)*2 > m.mask+1 {
		m.growInt()
	}
	return id
}

func (m *groupMap) growInt() {
	old := m.islots
	m.islots = make([]intSlot, 2*len(old))
	m.mask = uint64(len(m.islots) - 1)
	for _, s := range old {
		if s.id == 0 {
			continue
		}
		j := hashInt(s.key) & m.mask
		for m.islots[j].id != 0 {
			j = (j + 1) & m.mask
		}
		m.islots[j] = s
	}
}

// findBytes returns the group of key, inserting it when new.
func (m *groupMap) findBytes(key string, h uint64) (id uint32, inserted bool) {
	tag := uint32(h)
	j := h & m.mask
	for {
		s := &m.bslots[j]
		if s.id == 0 {
			break
		}
		if s.tag == tag {
			g := s.id - 1
			if bytesView(m.arena[m.offs[g]:m.offs[g+1]]) == key {
				return g, false
			}
		}
		j = (j + 1) & m.mask
	}
	id = uint32(m.n)
	m.bslots[j] = bytesSlot{tag: tag, id: id + 1}
	m.arena = append(m.arena, key...)
	m.appendKey()
	if uint64(m.n)*2 > m.mask+1 {
		m.growBytes()
	}
	return id, true
}

func (m *groupMap) growBytes() {
	old := m.bslots
	m.bslots = make([]bytesSlot, 2*len(old))
	m.mask = uint64(len(m.bslots) - 1)
	for _, s := range old {
		if s.id == 0 {
			continue
		}
		j := uint64(s.tag) & m.mask
		for m.bslots[j].id != 0 {
			j = (j + 1) & m.mask
		}
		m.bslots[j] = s
	}
}

// key returns the bytes of group g (byte forms; nil for the NULL group).
func (m *groupMap) key(g int) []byte { return m.arena[m.offs[g]:m.offs[g+1]] }

// appendGroupKeys appends the key columns of groups g0..g1-1 to bs.
func (m *groupMap) appendGroupKeys(bs []array.Builder, g0, g1 int) {
	for g := g0; g < g1; g++ {
		if int32(g) == m.nullID {
			bs[0].AppendNull()
			continue
		}
		switch m.form {
		case keyInt:
			appendIntKey(bs[0], m.ints[g])
		case keyString:
			bs[0].(*array.StringBuilder).Append(string(m.key(g)))
		case keyEncoded:
			key := m.key(g)
			for _, b := range bs {
				key = decodeEqualKey(b, key)
			}
		}
	}
}

// lookup sets out[i] to the group of row i of k, or -1 when the map has
// no such group; it inserts nothing.
func (m *groupMap) lookup(k *rowKeys, out []int32) {
	switch {
	case m.form == keyInt:
		slots, mask := m.islots, m.mask
		for i, key := range k.ints[:k.n] {
			if k.isNull(i) {
				out[i] = m.nullID
				continue
			}
			j := k.hash[i] & mask
			for {
				s := &slots[j]
				if s.id == 0 {
					out[i] = -1
					break
				}
				if s.key == key {
					out[i] = int32(s.id - 1)
					break
				}
				j = (j + 1) & mask
			}
		}
	default:
		for i := range k.n {
			if k.isNull(i) {
				out[i] = m.nullID
				continue
			}
			out[i] = m.lookupBytes(k.strs[i], k.hash[i])
		}
	}
}

func (m *groupMap) lookupBytes(key string, h uint64) int32 {
	tag := uint32(h)
	j := h & m.mask
	for {
		s := &m.bslots[j]
		if s.id == 0 {
			return -1
		}
		if s.tag == tag {
			g := s.id - 1
			if bytesView(m.arena[m.offs[g]:m.offs[g+1]]) == key {
				return int32(g)
			}
		}
		j = (j + 1) & m.mask
	}
}

// keyTypeSupported reports whether rows can be keyed on a column of t.
func keyTypeSupported(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DECIMAL128, arrow.STRING, arrow.DATE32, arrow.TIMESTAMP:
		return true
	}
	return false
}

// int64KeyType reports the types whose values a single int64 holds
// exactly, which the window sort flattens into int64s.
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
