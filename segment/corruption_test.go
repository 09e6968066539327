package segment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
)

// smallSegment writes a segment of a few pages whose chunks use every
// encoding, nulls, and zstd, with schema and field metadata.
func smallSegment(t testing.TB, mem memory.Allocator) []byte {
	t.Helper()
	const n = 40
	ints := make([]any, n)
	seq := make([]any, n)
	tss := make([]any, n)
	strs := make([]any, n)
	dict := make([]any, n)
	floats := make([]any, n)
	bools := make([]any, n)
	decs := make([]any, n)
	for i := range n {
		ints[i] = int64(1000 + i*i%17)
		seq[i] = int32(i * 5)
		tss[i] = arrow.Timestamp(1_767_225_600_000_000 + int64(i)*1_000_000 + int64(i*i%7))
		strs[i] = fmt.Sprintf("value-%03d-%s", i, "padding-padding-padding")
		dict[i] = []string{"red", "green", "blue"}[i%3]
		floats[i] = float64(i) / 4
		bools[i] = i%3 == 0
		decs[i] = int64(i) * 12345
		if i%7 == 3 {
			ints[i], strs[i], floats[i], bools[i] = nil, nil, nil, nil
		}
	}
	cols := []struct {
		dt   arrow.DataType
		vals []any
	}{
		{arrow.PrimitiveTypes.Int64, ints},
		{arrow.PrimitiveTypes.Int32, seq},
		{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, tss},
		{arrow.BinaryTypes.String, strs},
		{arrow.BinaryTypes.String, dict},
		{arrow.PrimitiveTypes.Float64, floats},
		{arrow.FixedWidthTypes.Boolean, bools},
		{&arrow.Decimal128Type{Precision: 12, Scale: 3}, decs},
		{arrow.PrimitiveTypes.Int8, make([]any, n)}, // all null
	}
	var fields []arrow.Field
	var arrs []arrow.Array
	for i, c := range cols {
		arrs = append(arrs, buildArray(t, mem, c.dt, c.vals))
		fields = append(fields, arrow.Field{
			Name: fmt.Sprintf("c%d", i), Type: c.dt, Nullable: i != 1,
			Metadata: arrow.NewMetadata([]string{"comment"}, []string{fmt.Sprint("column ", i)}),
		})
	}
	md := arrow.NewMetadata([]string{"table"}, []string{"t"})
	rec := array.NewRecordBatch(arrow.NewSchema(fields, &md), arrs, n)
	for _, a := range arrs {
		a.Release()
	}
	defer rec.Release()
	b, _ := writeBatches(t, rec, WriterOptions{PageRows: 16}, 11)
	return b
}

// readAll opens b and reads every page, returning the first error: once
// through ReadAt, and once as mapped bytes (Mapped), where chunks are
// verified in place and once each, which must find every corruption the
// reads find. A corruption either misses is reported as none.
func readAll(mem memory.Allocator, b []byte, name string) ([][]arrow.Array, error) {
	cols, err := readAllFrom(mem, bytes.NewReader(b), int64(len(b)), name)
	if err == nil {
		return cols, nil
	}
	mcols, merr := readAllFrom(mem, newHeapMapped(b), int64(len(b)), name)
	if merr == nil {
		return mcols, nil
	}
	return nil, merr
}

func readAllFrom(mem memory.Allocator, ra io.ReaderAt, size int64, name string) ([][]arrow.Array, error) {
	r, err := Open(ra, size, name)
	if err != nil {
		return nil, err
	}
	var out [][]arrow.Array
	for c := 0; c < len(r.Schema().Fields()); c++ {
		var pages []arrow.Array
		for p := 0; p < r.NumPages(); p++ {
			a, err := r.ReadPage(mem, c, p)
			if err != nil {
				releaseAll(append(out, pages))
				return nil, err
			}
			pages = append(pages, a)
		}
		out = append(out, pages)
	}
	return out, nil
}

func releaseAll(cols [][]arrow.Array) {
	for _, c := range cols {
		for _, a := range c {
			a.Release()
		}
	}
}

// TestCorruptionEveryByte flips every byte of a small segment, in two ways;
// each flip must be reported as corruption naming the file. No byte of the
// format is unchecked padding.
func TestCorruptionEveryByte(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	orig := smallSegment(t, mem)
	t.Logf("segment of %d bytes", len(orig))
	r := openBytes(t, orig, "x")
	encs := map[string]bool{}
	for c := range r.Schema().Fields() {
		for p := 0; p < r.NumPages(); p++ {
			e, z := r.PageEncoding(c, p)
			encs[e] = true
			encs[z] = true
		}
	}
	for _, want := range []string{"plain", "constant", "for", "delta", "dict", "bitmap", "zstd", "lz4", "none"} {
		if !encs[want] {
			t.Errorf("the corruption segment has no %s chunk", want)
		}
	}
	buf := make([]byte, len(orig))
	for i := range orig {
		for _, mask := range []byte{0xff, 0x01, 0x80} {
			copy(buf, orig)
			buf[i] ^= mask
			name := fmt.Sprintf("flip-%d-%02x.seg", i, mask)
			cols, err := readAll(mem, buf, name)
			if err == nil {
				releaseAll(cols)
				t.Fatalf("flipping byte %d with %#x went unnoticed", i, mask)
			}
			checkCorrupt(t, err, name)
		}
	}
}

// TestCorruptionTruncated cuts the file at every length and appends bytes.
func TestCorruptionTruncated(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	orig := smallSegment(t, mem)
	for n := 0; n < len(orig); n++ {
		name := fmt.Sprintf("cut-%d.seg", n)
		cols, err := readAll(mem, orig[:n], name)
		if err == nil {
			releaseAll(cols)
			t.Fatalf("truncation to %d bytes went unnoticed", n)
		}
		checkCorrupt(t, err, name)
	}
	for _, extra := range [][]byte{{0}, []byte("rowttlsg"), orig[len(orig)-trailerLen:]} {
		b := append(bytes.Clone(orig), extra...)
		cols, err := readAll(mem, b, "long.seg")
		if err == nil {
			releaseAll(cols)
			t.Fatalf("%d appended bytes went unnoticed", len(extra))
		}
		checkCorrupt(t, err, "long.seg")
	}
}

// TestCorruptionLargerFile flips a dense sample of the bytes of a larger
// segment with big zstd chunks.
func TestCorruptionLargerFile(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var arrs []arrow.Array
	for _, dt := range allTypes {
		arrs = append(arrs, genArray(mem, dt, 5000, rngFor(7), shapeSmall, 0.1))
	}
	rec := newRecord(arrs...)
	for _, a := range arrs {
		a.Release()
	}
	orig, _ := writeBatches(t, rec, WriterOptions{PageRows: 2000}, 0)
	rec.Release()
	step := max(1, len(orig)/600)
	buf := make([]byte, len(orig))
	for i := 0; i < len(orig); i += step {
		copy(buf, orig)
		buf[i] ^= 0x10
		cols, err := readAll(mem, buf, "large.seg")
		if err == nil {
			releaseAll(cols)
			t.Fatalf("flipping byte %d went unnoticed", i)
		}
		checkCorrupt(t, err, "large.seg")
	}
}

// failingReaderAt fails every read.
type failingReaderAt struct{ ok io.ReaderAt }

var errIO = errors.New("disk on fire")

func (f failingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if f.ok != nil && off == 0 {
		return f.ok.ReadAt(p, off)
	}
	return 0, errIO
}

// TestIOError checks that I/O errors are passed up as such, not as
// corruption.
func TestIOError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := smallSegment(t, mem)
	_, err := Open(failingReaderAt{ok: bytes.NewReader(b)}, int64(len(b)), "io.seg")
	if !errors.Is(err, errIO) || errors.Is(err, rowttl.ErrCorruption) {
		t.Fatalf("Open: %v", err)
	}
}
