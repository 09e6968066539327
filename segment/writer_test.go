package segment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
)

func TestWriterRejects(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var buf bytes.Buffer
	unsupported := []arrow.DataType{
		arrow.BinaryTypes.LargeString,
		arrow.ListOf(arrow.PrimitiveTypes.Int64),
		arrow.PrimitiveTypes.Uint32,
		&arrow.Decimal256Type{Precision: 40, Scale: 0},
	}
	for _, dt := range unsupported {
		sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: dt}}, nil)
		if _, err := NewWriter(&buf, sc, WriterOptions{}); !errors.Is(err, rowttl.ErrNotSupported) {
			t.Errorf("%s: %v", dt, err)
		}
	}
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	for _, n := range []int{-1, MaxPageRows + 1} {
		if _, err := NewWriter(&buf, sc, WriterOptions{PageRows: n}); !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Errorf("page rows %d: %v", n, err)
		}
	}

	w, err := NewWriter(&buf, sc, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []arrow.Array{
		buildArray(t, mem, arrow.PrimitiveTypes.Int32, []any{int32(1)}),
		buildArray(t, mem, arrow.PrimitiveTypes.Int64, []any{int64(1)}), // wrong name
	} {
		rec := newRecord(bad) // named c0
		if err := w.Write(rec); !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Errorf("batch %s: %v", rec.Schema(), err)
		}
		rec.Release()
		bad.Release()
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); err == nil {
		t.Error("second Finish succeeded")
	}
}

type failingWriter struct{ after int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.after < len(p) {
		return 0, errIO
	}
	f.after -= len(p)
	return len(p), nil
}

func TestWriterIOError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	arr := genArray(mem, arrow.PrimitiveTypes.Int64, 100, rngFor(1), shapeRandom, 0)
	defer arr.Release()
	rec := newRecord(arr)
	defer rec.Release()
	// Fail at every point of the write; the error sticks.
	for after := 0; ; after++ {
		w, err := NewWriter(&failingWriter{after: after}, rec.Schema(), WriterOptions{PageRows: 10})
		if err != nil {
			if !errors.Is(err, errIO) {
				t.Fatal(err)
			}
			continue
		}
		err = w.Write(rec)
		if err == nil {
			_, err = w.Finish()
		}
		if err == nil {
			break
		}
		if !errors.Is(err, errIO) {
			t.Fatalf("after %d bytes: %v", after, err)
		}
		if _, err2 := w.Finish(); !errors.Is(err2, errIO) {
			t.Fatalf("the error does not stick: %v", err2)
		}
	}
}

// TestSchemaPreserved checks names, types, nullability and metadata.
func TestSchemaPreserved(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var fields []arrow.Field
	for i, dt := range allTypes {
		f := arrow.Field{Name: string(rune('a'+i)) + "é", Type: dt, Nullable: i%2 == 0}
		if i%3 == 0 {
			f.Metadata = arrow.NewMetadata([]string{"z", "a", ""}, []string{"1", "", "x"})
		}
		fields = append(fields, f)
	}
	md := arrow.NewMetadata([]string{"k"}, []string{"v"})
	sc := arrow.NewSchema(fields, &md)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, sc, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	r := openBytes(t, buf.Bytes(), "schema")
	got := r.Schema()
	if !got.Equal(sc) || !got.Metadata().Equal(sc.Metadata()) {
		t.Fatalf("schema %s, want %s", got, sc)
	}
	for i, f := range got.Fields() {
		want := sc.Field(i)
		if !f.Equal(want) || f.Nullable != want.Nullable || !f.Metadata.Equal(want.Metadata) ||
			f.Metadata.String() != want.Metadata.String() {
			t.Fatalf("field %d: %v, want %v", i, f, want)
		}
	}
}

// TestConcurrentReads reads every page from many goroutines at once.
func TestConcurrentReads(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := smallSegment(t, mem)
	r := openBytes(t, b, "concurrent")
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(b)
	bad[headerLen+2] ^= 1
	if err := openBytes(t, bad, "bad.seg").Verify(); !errors.Is(err, rowttl.ErrCorruption) {
		t.Fatalf("Verify of a damaged chunk: %v", err)
	}
	want, err := readAll(mem, b, "concurrent")
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(want)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				for c := range want {
					for p := range want[c] {
						a, err := r.ReadPage(mem, c, p)
						if err != nil {
							errs <- err
							return
						}
						if !arraysIdentical(a, want[c][p]) {
							errs <- errors.New("concurrent read differs")
						}
						a.Release()
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestReadPageOutOfRange(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := openBytes(t, smallSegment(t, mem), "range")
	for _, cp := range [][2]int{{-1, 0}, {0, -1}, {100, 0}, {0, r.NumPages()}} {
		if _, err := r.ReadPage(mem, cp[0], cp[1]); !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Errorf("ReadPage(%d, %d): %v", cp[0], cp[1], err)
		}
	}
}

// TestBatchBoundaries checks that pages are cut at exactly PageRows rows
// whatever the batches, and that an empty batch is harmless.
func TestBatchBoundaries(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	arr := genArray(mem, arrow.PrimitiveTypes.Int64, 1000, rngFor(9), shapeSorted, 0.1)
	defer arr.Release()
	rec := newRecord(arr)
	defer rec.Release()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, rec.Schema(), WriterOptions{PageRows: 128})
	if err != nil {
		t.Fatal(err)
	}
	rng := rngFor(10)
	for off := 0; off < 1000; {
		n := min(rng.IntN(300), 1000-off)
		s := rec.NewSlice(int64(off), int64(off+n))
		if err := w.Write(s); err != nil {
			t.Fatal(err)
		}
		s.Release()
		off += n
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	r := openBytes(t, buf.Bytes(), "batches")
	if r.NumPages() != 8 {
		t.Fatalf("%d pages", r.NumPages())
	}
	got := readColumn(t, r, mem, 0)
	defer got.Release()
	if !array.Equal(got, arr) {
		t.Fatal("differs")
	}
}

// TestHotColumns checks that a hot column is never compressed, even where
// compression would pay, and that the others still are.
func TestHotColumns(t *testing.T) {
	mem := memory.NewGoAllocator()
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	for i := range 2000 {
		sb.Append(fmt.Sprintf("event number %08d of the day", i))
	}
	a := sb.NewArray()
	defer a.Release()
	for i := range 2000 {
		sb.Append(fmt.Sprintf("event number %08d of the day", i))
	}
	b := sb.NewArray()
	defer b.Release()
	rec := newRecord(a, b)
	defer rec.Release()
	data, _ := writeBatches(t, rec, WriterOptions{HotColumns: []int{1}}, 0)
	r := openBytes(t, data, "hot.seg")
	if _, comp := r.PageEncoding(0, 0); comp != "lz4" {
		t.Fatalf("column 0 stored %s; the test needs data LZ4 shrinks", comp)
	}
	if _, comp := r.PageEncoding(1, 0); comp != "none" {
		t.Fatalf("hot column stored %s, want none", comp)
	}
	got := readColumn(t, r, mem, 1)
	defer got.Release()
	if !arraysIdentical(got, b) {
		t.Fatal("hot column reads back different")
	}
	for _, bad := range []int{-1, 2} {
		if _, err := NewWriter(io.Discard, rec.Schema(), WriterOptions{HotColumns: []int{bad}}); !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Errorf("hot column %d: %v, want ErrInvalidArgument", bad, err)
		}
	}
}

// TestParallelEncodingSameFile checks that the file does not depend on how
// many goroutines encode the columns of a page.
func TestParallelEncodingSameFile(t *testing.T) {
	mem := memory.NewGoAllocator()
	var arrs []arrow.Array
	for i, dt := range allTypes {
		arrs = append(arrs, genArray(mem, dt, 5000, rngFor(uint64(i)), shapes[i%len(shapes)], 0.1))
	}
	rec := newRecord(arrs...)
	defer rec.Release()
	for _, a := range arrs {
		a.Release()
	}
	one, _ := writeBatches(t, rec, WriterOptions{PageRows: 700, Parallelism: 1}, 999)
	for _, p := range []int{2, 3, 16} {
		got, _ := writeBatches(t, rec, WriterOptions{PageRows: 700, Parallelism: p}, 999)
		if !bytes.Equal(got, one) {
			t.Fatalf("parallelism %d wrote a different file (%d bytes, %d with one goroutine)", p, len(got), len(one))
		}
	}
}

// TestParallelismOneEncodesInline checks that a writer told to use one
// goroutine encodes on the caller's: each page is written out before the
// Write that filled it returns, nothing left in flight on a goroutine of its
// own that would take a second processor.
func TestParallelismOneEncodesInline(t *testing.T) {
	mem := memory.NewGoAllocator()
	var arrs []arrow.Array
	for i, dt := range allTypes {
		arrs = append(arrs, genArray(mem, dt, 3000, rngFor(uint64(i)), shapes[i%len(shapes)], 0.1))
	}
	rec := newRecord(arrs...)
	defer rec.Release()
	for _, a := range arrs {
		a.Release()
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, rec.Schema(), WriterOptions{PageRows: 500, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off < rec.NumRows(); off += 500 {
		before := buf.Len()
		s := rec.NewSlice(off, off+500)
		err := w.Write(s)
		s.Release()
		if err != nil {
			t.Fatal(err)
		}
		if len(w.inflight) != 0 || buf.Len() == before {
			t.Fatalf("rows %d: %d pages in flight, %d bytes written by the Write that filled a page", off, len(w.inflight), buf.Len()-before)
		}
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
}

// TestLongStringsCutPages writes strings long enough that a page of
// PageRows rows would hold far more than PageBytes of them: pages end early
// instead, the values read back, and a single value longer than the budget
// still makes a page of its own.
func TestLongStringsCutPages(t *testing.T) {
	mem := memory.NewGoAllocator()
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	long := strings.Repeat("x", 10_000)
	const n = 5000 // 50 MB of strings in one default page of rows
	for i := range n {
		sb.Append(fmt.Sprintf("%05d", i) + long)
	}
	sb.Append(strings.Repeat("y", PageBytes+1))
	sb.Append("short")
	a := sb.NewArray()
	defer a.Release()
	// Two string columns: the budget is the page's, both together.
	rec := newRecord(a, a)
	defer rec.Release()
	data, _ := writeBatches(t, rec, WriterOptions{ZstdLevel: -1}, 1200)
	r := openBytes(t, data, "long.seg")
	if r.NumPages() < 5 {
		t.Fatalf("%d pages for %d MB of strings", r.NumPages(), 2*n*10/1000)
	}
	for p := 0; p < r.NumPages(); p++ {
		_, rows := r.Page(p)
		size := 0
		for c := 0; c < 2; c++ {
			got, err := r.ReadPage(mem, c, p)
			if err != nil {
				t.Fatal(err)
			}
			size += len(got.(*array.String).ValueBytes())
			got.Release()
		}
		if size > PageBytes && rows > 1 {
			t.Fatalf("page %d: %d rows of %d bytes, over the budget", p, rows, size)
		}
	}
	back := readColumn(t, r, mem, 0)
	defer back.Release()
	if !arraysIdentical(back, a) {
		t.Fatal("long strings read back differently")
	}
}
