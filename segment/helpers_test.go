package segment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/vfs"
)

// allTypes lists every supported Arrow type.
var allTypes = []arrow.DataType{
	arrow.FixedWidthTypes.Boolean,
	arrow.PrimitiveTypes.Int8,
	arrow.PrimitiveTypes.Int16,
	arrow.PrimitiveTypes.Int32,
	arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Float32,
	arrow.PrimitiveTypes.Float64,
	arrow.BinaryTypes.String,
	arrow.BinaryTypes.Binary,
	arrow.FixedWidthTypes.Date32,
	&arrow.TimestampType{Unit: arrow.Microsecond},
	&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
	&arrow.TimestampType{Unit: arrow.Second},
	&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "+08:00"},
	&arrow.TimestampType{Unit: arrow.Nanosecond},
	&arrow.Decimal128Type{Precision: 10, Scale: 2},
	&arrow.Decimal128Type{Precision: 38, Scale: 0},
}

// shape is the distribution of generated values.
type shape int

const (
	shapeRandom   shape = iota // anything the type holds
	shapeSmall                 // a narrow range: FOR, dict
	shapeSorted                // increasing with jitter: delta
	shapeConstant              // one value
)

var shapes = []shape{shapeRandom, shapeSmall, shapeSorted, shapeConstant}

func (s shape) String() string {
	return [...]string{"random", "small", "sorted", "constant"}[s]
}

// genArray makes n values of type dt. nullFrac is the probability of a null;
// 1 makes an all-null array.
func genArray(mem memory.Allocator, dt arrow.DataType, n int, rng *rand.Rand, sh shape, nullFrac float64) arrow.Array {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	var acc int64 = rng.Int64N(1 << 40)
	for i := 0; i < n; i++ {
		if nullFrac > 0 && rng.Float64() < nullFrac {
			b.AppendNull()
			continue
		}
		var x int64 // the value before conversion to the type
		switch sh {
		case shapeRandom:
			x = int64(rng.Uint64())
		case shapeSmall:
			x = 1000 + rng.Int64N(37)
		case shapeSorted:
			acc += rng.Int64N(1000)
			x = acc
		case shapeConstant:
			x = 42
		}
		if appendInt(b, x) {
			continue
		}
		switch bb := b.(type) {
		case *array.BooleanBuilder:
			bb.Append(x&1 == 1)
		case *array.Float32Builder:
			if sh == shapeRandom {
				bb.Append(math.Float32frombits(uint32(x)))
			} else {
				bb.Append(float32(x) / 8)
			}
		case *array.Float64Builder:
			if sh == shapeRandom {
				bb.Append(math.Float64frombits(uint64(x)))
			} else {
				bb.Append(float64(x) / 8)
			}
		case *array.StringBuilder:
			bb.Append(genString(rng, sh, x))
		case *array.BinaryBuilder:
			bb.Append([]byte(genString(rng, sh, x)))
		case *array.Decimal128Builder:
			bb.Append(decimal128.New(x>>7, uint64(x)*0x9e3779b97f4a7c15))
		default:
			panic(fmt.Sprintf("genArray: %T", b))
		}
	}
	return b.NewArray()
}

// appendInt appends x, truncated, to an integer, DATE or TIMESTAMP builder
// and says whether b was one.
func appendInt(b array.Builder, x int64) bool {
	switch bb := b.(type) {
	case *array.Int8Builder:
		bb.Append(int8(x))
	case *array.Int16Builder:
		bb.Append(int16(x))
	case *array.Int32Builder:
		bb.Append(int32(x))
	case *array.Int64Builder:
		bb.Append(x)
	case *array.Date32Builder:
		bb.Append(arrow.Date32(int32(x)))
	case *array.TimestampBuilder:
		bb.Append(arrow.Timestamp(x))
	default:
		return false
	}
	return true
}

func genString(rng *rand.Rand, sh shape, x int64) string {
	switch sh {
	case shapeRandom:
		n := rng.IntN(100) // some longer than MaxBoundLen
		var sb strings.Builder
		for range n {
			sb.WriteByte(byte(rng.IntN(256)))
		}
		return sb.String()
	case shapeSmall:
		return fmt.Sprintf("city-%d", x%13)
	case shapeSorted:
		return fmt.Sprintf("k%016d", x)
	}
	return "the same"
}

// newRecord makes a record of the arrays, naming columns c0, c1, ...
func newRecord(arrs ...arrow.Array) arrow.RecordBatch {
	fields := make([]arrow.Field, len(arrs))
	for i, a := range arrs {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: a.DataType(), Nullable: true}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(lenOf(arrs)))
}

func lenOf(arrs []arrow.Array) int {
	if len(arrs) == 0 {
		return 0
	}
	return arrs[0].Len()
}

// writeBatches writes rec as batches of batch rows (all when batch ≤ 0).
func writeBatches(t testing.TB, rec arrow.RecordBatch, opts WriterOptions, batch int) ([]byte, Summary) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, rec.Schema(), opts)
	if err != nil {
		t.Fatal(err)
	}
	n := int(rec.NumRows())
	if batch <= 0 {
		batch = max(n, 1)
	}
	for off := 0; off < n; off += batch {
		s := rec.NewSlice(int64(off), int64(min(off+batch, n)))
		err := w.Write(s)
		s.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	sum, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Bytes != int64(buf.Len()) {
		t.Fatalf("summary says %d bytes, wrote %d", sum.Bytes, buf.Len())
	}
	return buf.Bytes(), sum
}

// openBytes opens the segment b as a table opens its files: mapped
// read-only where the host maps files (vfs.Map), so that a write into the
// mapping or a read past it is a fault the test dies of; read through
// ReadAt elsewhere.
func openBytes(t testing.TB, b []byte, name string) *Reader {
	t.Helper()
	var ra io.ReaderAt = bytes.NewReader(b)
	if m := mapBytes(t, b); m != nil {
		ra = m
	}
	r, err := Open(ra, int64(len(b)), name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// mapBytes writes b to a file and maps it (unmapped when the test ends),
// or returns nil where the host does not map files.
func mapBytes(t testing.TB, b []byte) *vfs.Mapping {
	t.Helper()
	if len(b) == 0 {
		return nil
	}
	f, err := os.CreateTemp(t.TempDir(), "seg")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	m, ok := vfs.Map(f, int64(len(b)))
	if !ok {
		return nil
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// heapMapped is Mapped over bytes of the Go heap: what a mapping gives,
// at no cost per file.
type heapMapped struct {
	*bytes.Reader
	b    []byte
	used atomic.Int64
}

func newHeapMapped(b []byte) *heapMapped { return &heapMapped{Reader: bytes.NewReader(b), b: b} }

func (h *heapMapped) MappedBytes() []byte { return h.b }
func (h *heapMapped) Used(n int)          { h.used.Add(int64(n)) }

// readColumn reads every page of col and concatenates them.
func readColumn(t testing.TB, r *Reader, mem memory.Allocator, col int) arrow.Array {
	t.Helper()
	var pages []arrow.Array
	defer func() {
		for _, p := range pages {
			p.Release()
		}
	}()
	for p := 0; p < r.NumPages(); p++ {
		a, err := r.ReadPage(mem, col, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, n := r.Page(p); a.Len() != n {
			t.Fatalf("page %d: %d rows, want %d", p, a.Len(), n)
		}
		pages = append(pages, a)
	}
	if len(pages) == 0 {
		return array.MakeArrayOfNull(mem, r.Schema().Field(col).Type, 0)
	}
	out, err := array.Concatenate(pages, mem)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkCorrupt fails unless err wraps rowttl.ErrCorruption and names the file.
func checkCorrupt(t testing.TB, err error, name string) {
	t.Helper()
	if !errors.Is(err, rowttl.ErrCorruption) {
		t.Fatalf("error %v does not wrap ErrCorruption", err)
	}
	if !strings.Contains(err.Error(), name) {
		t.Fatalf("error %q does not name the file %q", err, name)
	}
}

func decimal128FromInt(v int64) decimal128.Num { return decimal128.FromI64(v) }

// arraysIdentical is array.Equal, except that floats compare by their bits,
// so NaNs round-trip too.
func arraysIdentical(a, b arrow.Array) bool {
	if !arrow.TypeEqual(a.DataType(), b.DataType()) || a.Len() != b.Len() || a.NullN() != b.NullN() {
		return false
	}
	switch x := a.(type) {
	case *array.Float32:
		y := b.(*array.Float32)
		for i := 0; i < a.Len(); i++ {
			if x.IsNull(i) != y.IsNull(i) || (x.IsValid(i) && math.Float32bits(x.Value(i)) != math.Float32bits(y.Value(i))) {
				return false
			}
		}
		return true
	case *array.Float64:
		y := b.(*array.Float64)
		for i := 0; i < a.Len(); i++ {
			if x.IsNull(i) != y.IsNull(i) || (x.IsValid(i) && math.Float64bits(x.Value(i)) != math.Float64bits(y.Value(i))) {
				return false
			}
		}
		return true
	}
	return array.Equal(a, b)
}

func rngFor(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }
