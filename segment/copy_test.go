package segment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// copyTypes are the columns of the segments TestCopyPageRoundTrip mixes.
var copyTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Int32,
	&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
	arrow.BinaryTypes.String,
	arrow.BinaryTypes.Binary,
	arrow.PrimitiveTypes.Float64,
	arrow.FixedWidthTypes.Boolean,
	&arrow.Decimal128Type{Precision: 12, Scale: 3},
	arrow.FixedWidthTypes.Date32,
	arrow.PrimitiveTypes.Float32,
	arrow.PrimitiveTypes.Int8,
}

// copySchema returns a schema of copyTypes; tag changes nullability and
// metadata, which CopyPage ignores.
func copySchema(tag int) *arrow.Schema {
	fields := make([]arrow.Field, len(copyTypes))
	for i, dt := range copyTypes {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: dt, Nullable: tag == 0 || i%2 == 0}
		if tag > 0 {
			fields[i].Metadata = arrow.NewMetadata([]string{"src"}, []string{fmt.Sprint(tag)})
		}
	}
	if tag > 0 {
		md := arrow.NewMetadata([]string{"source"}, []string{fmt.Sprint(tag)})
		return arrow.NewSchema(fields, &md)
	}
	return arrow.NewSchema(fields, nil)
}

// genCopyRecord makes n rows of copySchema(tag), each column of a random
// shape and null density.
func genCopyRecord(mem memory.Allocator, tag, n int, rng *rand.Rand) arrow.RecordBatch {
	sc := copySchema(tag)
	arrs := make([]arrow.Array, len(copyTypes))
	for i, dt := range copyTypes {
		sh := shapes[rng.IntN(len(shapes))]
		nullFrac := []float64{0, 0, 0.2, 1}[rng.IntN(4)]
		arrs[i] = genArray(mem, dt, n, rng, sh, nullFrac)
	}
	rec := array.NewRecordBatch(sc, arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

// withSchema returns rec under schema sc (same columns).
func withSchema(rec arrow.RecordBatch, sc *arrow.Schema) arrow.RecordBatch {
	return array.NewRecordBatch(sc, rec.Columns(), rec.NumRows())
}

// copySource is a source segment of TestCopyPageRoundTrip.
type copySource struct {
	rec  arrow.RecordBatch // its rows
	data []byte
	r    *Reader
}

// TestCopyPageRoundTrip mixes Write and CopyPage of pages of several source
// segments (different page sizes, encodings, nulls, zstd levels, metadata)
// at random and checks that the result reads back as the rows in order,
// that copied chunks are byte for byte those of the source, and that page
// rows and every zone map are right.
func TestCopyPageRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	seen := map[string]bool{}
	for seed := range uint64(12) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			copyRoundTrip(t, mem, seed, seen)
		})
	}
	for _, want := range []string{"plain", "constant", "for", "delta", "dict", "bitmap", "zstd", "none", "copied-no-bounds-string"} {
		if !seen[want] {
			t.Errorf("no copied chunk of kind %s", want)
		}
	}
}

func copyRoundTrip(t *testing.T, mem memory.Allocator, seed uint64, seen map[string]bool) {
	rng := rngFor(seed)
	srcOpts := []WriterOptions{
		{PageRows: 100, ZstdLevel: -1},
		{PageRows: 37, ZstdLevel: 0},
		{PageRows: 250, ZstdLevel: 19},
		{PageRows: 1, ZstdLevel: -1},
	}
	var srcs []copySource
	for i, opts := range srcOpts {
		rec := genCopyRecord(mem, i+1, 1+rng.IntN(600), rng)
		defer rec.Release()
		data, _ := writeBatches(t, rec, opts, 1+rng.IntN(300))
		srcs = append(srcs, copySource{rec: rec, data: data, r: openBytes(t, data, fmt.Sprintf("src%d.seg", i))})
	}
	fresh := genCopyRecord(mem, 0, 2000, rng)
	defer fresh.Release()

	sc := copySchema(0)
	const pageRows = 64
	var out bytes.Buffer
	w, err := NewWriter(&out, sc, WriterOptions{PageRows: pageRows})
	if err != nil {
		t.Fatal(err)
	}
	var pieces []arrow.RecordBatch // the rows written, in order
	defer func() {
		for _, p := range pieces {
			p.Release()
		}
	}()
	type copied struct{ src, page int }
	var pages []int      // expected rows of each page
	var origin []*copied // the source of each page, nil when written
	pending, freshOff := 0, 0
	for range 1 + rng.IntN(25) {
		if rng.IntN(2) == 0 && freshOff < int(fresh.NumRows()) {
			n := min(rng.IntN(150), int(fresh.NumRows())-freshOff)
			s := fresh.NewSlice(int64(freshOff), int64(freshOff+n))
			freshOff += n
			if err := w.Write(s); err != nil {
				t.Fatal(err)
			}
			pieces = append(pieces, s)
			for pending += n; pending >= pageRows; pending -= pageRows {
				pages, origin = append(pages, pageRows), append(origin, nil)
			}
			continue
		}
		si := rng.IntN(len(srcs))
		src := srcs[si]
		p := rng.IntN(src.r.NumPages())
		if err := w.CopyPage(src.r, p); err != nil {
			t.Fatal(err)
		}
		first, n := src.r.Page(p)
		s := src.rec.NewSlice(first, first+int64(n))
		pieces = append(pieces, withSchema(s, sc))
		s.Release()
		if pending > 0 {
			pages, origin = append(pages, pending), append(origin, nil)
			pending = 0
		}
		pages, origin = append(pages, n), append(origin, &copied{si, p})
	}
	if pending > 0 {
		pages, origin = append(pages, pending), append(origin, nil)
	}
	sum, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Bytes != int64(out.Len()) {
		t.Fatalf("summary says %d bytes, wrote %d", sum.Bytes, out.Len())
	}
	r := openBytes(t, out.Bytes(), "out.seg")
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	if !r.Schema().Equal(sc) {
		t.Fatalf("schema %s, want %s", r.Schema(), sc)
	}
	if r.NumPages() != len(pages) {
		t.Fatalf("%d pages, want %d (%v)", r.NumPages(), len(pages), pages)
	}
	var total int64
	for p, n := range pages {
		first, got := r.Page(p)
		if first != total || got != n {
			t.Fatalf("page %d covers [%d,+%d), want [%d,+%d)", p, first, got, total, n)
		}
		total += int64(n)
	}
	if r.NumRows() != total || sum.Rows != total {
		t.Fatalf("rows %d, summary %d, want %d", r.NumRows(), sum.Rows, total)
	}
	for c := range copyTypes {
		var parts []arrow.Array
		for _, p := range pieces {
			parts = append(parts, p.Column(c))
		}
		want, err := array.Concatenate(parts, mem)
		if err != nil {
			t.Fatal(err)
		}
		got := readColumn(t, r, mem, c)
		if !arraysIdentical(got, want) {
			t.Fatalf("column %d read back\n%v\nwant\n%v", c, got, want)
		}
		if wz := expectZone(want); !zoneEqual(sum.Columns[c], wz) || !zoneEqual(r.ColumnStats(c), wz) {
			t.Fatalf("column %d zone: summary %v, footer %v, want %v", c, sum.Columns[c], r.ColumnStats(c), wz)
		}
		for p := range pages {
			first, n := r.Page(p)
			s := array.NewSlice(want, first, first+int64(n))
			wz := expectZone(s)
			s.Release()
			if got := r.PageStats(c, p); !zoneEqual(got, wz) {
				t.Fatalf("column %d page %d zone %v, want %v", c, p, got, wz)
			}
		}
		got.Release()
		want.Release()
	}
	// Copied chunks are the source's bytes, encoding and compression.
	for p, o := range origin {
		if o == nil {
			continue
		}
		src := srcs[o.src].r
		for c := range copyTypes {
			gotEnc, gotComp := r.PageEncoding(c, p)
			wantEnc, wantComp := src.PageEncoding(c, o.page)
			if gotEnc != wantEnc || gotComp != wantComp {
				t.Fatalf("page %d column %d: %s/%s, source %s/%s", p, c, gotEnc, gotComp, wantEnc, wantComp)
			}
			seen[gotEnc], seen[gotComp] = true, true
			gc, scm := r.f.chunk(c, p), src.f.chunk(c, o.page)
			if !bytes.Equal(out.Bytes()[gc.offset:gc.offset+gc.length], srcs[o.src].data[scm.offset:scm.offset+scm.length]) {
				t.Fatalf("page %d column %d: chunk bytes differ from the source's", p, c)
			}
			if z := scm.zone; r.f.cols[c].kind == kindBytes && !z.HasBounds() && z.NullCount < z.Rows {
				seen["copied-no-bounds-string"] = true
			}
		}
	}
	var dump strings.Builder
	if err := r.Dump(&dump); err != nil {
		t.Fatal(err)
	}
}

// TestCopyPageLongStrings checks the column zone map when a copied page has
// no bounds of its own (its smallest or largest string is longer than
// MaxBoundLen): the column bounds must still be those of all its values, as
// Write gives them, neither lost nor too narrow.
func TestCopyPageLongStrings(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	longM, longA := strings.Repeat("m", 100), strings.Repeat("a", 100)
	srcVals := []any{longM, "e", nil, longA} // pages [longM e] [null longA]
	cases := []struct {
		write []any
		pages []int
		want  ZoneMap // Rows and NullCount are checked separately
	}{
		{[]any{"c", "d"}, []int{0}, ZoneMap{}},           // max longM
		{[]any{"a", "z"}, []int{0, 1}, zoneOf("a", "z")}, // long ones inside
		{[]any{"b", "z"}, []int{1}, ZoneMap{}},           // min longA
		{[]any{"0", "n"}, []int{1, 0}, zoneOf("0", "n")}, // both long ones inside
		{nil, []int{0}, ZoneMap{}},
	}
	for _, zstdLevel := range []int{-1, 0} {
		arr := buildArray(t, mem, arrow.BinaryTypes.String, srcVals)
		rec := newRecord(arr)
		arr.Release()
		src, _ := writeBatches(t, rec, WriterOptions{PageRows: 2, ZstdLevel: zstdLevel}, 0)
		rec.Release()
		r := openBytes(t, src, "long.seg")
		if r.PageStats(0, 0).HasBounds() || r.PageStats(0, 1).HasBounds() {
			t.Fatalf("pages have bounds: %v %v", r.PageStats(0, 0), r.PageStats(0, 1))
		}
		for i, tc := range cases {
			var out bytes.Buffer
			w, err := NewWriter(&out, r.Schema(), WriterOptions{ZstdLevel: zstdLevel})
			if err != nil {
				t.Fatal(err)
			}
			rows, nulls := int64(len(tc.write)), int64(0)
			if len(tc.write) > 0 {
				arr := buildArray(t, mem, arrow.BinaryTypes.String, tc.write)
				rec := newRecord(arr)
				arr.Release()
				err = w.Write(rec)
				rec.Release()
				if err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range tc.pages {
				if err := w.CopyPage(r, p); err != nil {
					t.Fatal(err)
				}
				rows += 2
				nulls += r.PageStats(0, p).NullCount
			}
			sum, err := w.Finish()
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			want.Rows, want.NullCount = rows, nulls
			got := openBytes(t, out.Bytes(), "out.seg")
			if !zoneEqual(sum.Columns[0], want) || !zoneEqual(got.ColumnStats(0), want) {
				t.Fatalf("zstd %d case %d: column zone: summary %v, footer %v, want %v",
					zstdLevel, i, sum.Columns[0], got.ColumnStats(0), want)
			}
			for p := range got.NumPages() {
				if _, n := got.Page(p); p >= got.NumPages()-len(tc.pages) && got.PageStats(0, p).HasBounds() || n != 2 {
					t.Fatalf("case %d: page %d: %d rows, zone %v", i, p, n, got.PageStats(0, p))
				}
			}
		}
	}
}

func zoneOf(lo, hi string) ZoneMap {
	return ZoneMap{Min: schema.BytesVal([]byte(lo)), Max: schema.BytesVal([]byte(hi))}
}

// TestCopyPageSchemaMismatch checks that only segments of the same column
// names and types are copied, and that a refused copy changes nothing.
func TestCopyPageSchemaMismatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := smallSegment(t, mem)
	r := openBytes(t, b, "small.seg")
	base := r.Schema().Fields()
	edit := func(f func([]arrow.Field) []arrow.Field) *arrow.Schema {
		fields := f(append([]arrow.Field(nil), base...))
		return arrow.NewSchema(fields, nil)
	}
	bad := map[string]*arrow.Schema{
		"renamed": edit(func(fs []arrow.Field) []arrow.Field { fs[3].Name = "other"; return fs }),
		"int64 as int32": edit(func(fs []arrow.Field) []arrow.Field {
			fs[0].Type = arrow.PrimitiveTypes.Int32
			return fs
		}),
		"string as binary": edit(func(fs []arrow.Field) []arrow.Field {
			fs[3].Type = arrow.BinaryTypes.Binary
			return fs
		}),
		"time zone": edit(func(fs []arrow.Field) []arrow.Field {
			fs[2].Type = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "+01:00"}
			return fs
		}),
		"unit": edit(func(fs []arrow.Field) []arrow.Field {
			fs[2].Type = &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
			return fs
		}),
		"scale": edit(func(fs []arrow.Field) []arrow.Field {
			fs[7].Type = &arrow.Decimal128Type{Precision: 12, Scale: 2}
			return fs
		}),
		"fewer":   edit(func(fs []arrow.Field) []arrow.Field { return fs[:len(fs)-1] }),
		"more":    edit(func(fs []arrow.Field) []arrow.Field { return append(fs, fs[0]) }),
		"swapped": edit(func(fs []arrow.Field) []arrow.Field { fs[3], fs[4] = fs[4], fs[3]; return fs }),
	}
	for name, sc := range bad {
		if r.SameLayout(sc) {
			t.Errorf("%s: SameLayout true", name)
		}
		var out bytes.Buffer
		w, err := NewWriter(&out, sc, WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		err = w.CopyPage(r, 0)
		if !errors.Is(err, rowttl.ErrInvalidArgument) || !strings.Contains(err.Error(), "small.seg") {
			t.Fatalf("%s: CopyPage: %v", name, err)
		}
		sum, err := w.Finish()
		if err != nil || sum.Rows != 0 {
			t.Fatalf("%s: Finish after a refused copy: %v %v", name, sum, err)
		}
	}
	if r.SameLayout(nil) {
		t.Error("SameLayout(nil) true")
	}

	// Nullability and metadata may differ.
	same := edit(func(fs []arrow.Field) []arrow.Field {
		for i := range fs {
			fs[i].Nullable = !fs[i].Nullable
			fs[i].Metadata = arrow.Metadata{}
		}
		return fs
	})
	if !r.SameLayout(same) || !r.SameLayout(r.Schema()) {
		t.Fatal("SameLayout false for the same columns")
	}
	var out bytes.Buffer
	w, err := NewWriter(&out, same, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{-1, r.NumPages()} {
		if err := w.CopyPage(r, p); !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Fatalf("CopyPage of page %d: %v", p, err)
		}
	}
	for p := range r.NumPages() {
		if err := w.CopyPage(r, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := w.CopyPage(r, 0); err == nil {
		t.Fatal("CopyPage after Finish succeeded")
	}
	got := openBytes(t, out.Bytes(), "copy.seg")
	if !got.Schema().Equal(same) || got.NumRows() != r.NumRows() {
		t.Fatalf("copy: schema %s, %d rows", got.Schema(), got.NumRows())
	}
	// A segment copied whole is the source, but for the schema.
	if !bytes.Equal(out.Bytes()[headerLen:got.footerOff], b[headerLen:r.footerOff]) {
		t.Fatal("chunks of a whole copy differ from the source's")
	}
}

// TestCopyPageCorrupt flips every byte of the chunks of one page of a
// source: each copy must be refused with ErrCorruption naming the source, and
// must leave the writer as it was, buffered rows included.
func TestCopyPageCorrupt(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	orig := smallSegment(t, mem)
	good := openBytes(t, orig, "good.seg")
	const page = 1
	first, last := good.f.chunk(0, page), good.f.chunk(len(good.f.cols)-1, page)
	start, end := first.offset, last.offset+last.length

	head := readRows(t, mem, good, 0, 5) // rows to buffer before the copies
	defer head.Release()
	build := func(copyFrom func(w *Writer)) []byte {
		var out bytes.Buffer
		w, err := NewWriter(&out, good.Schema(), WriterOptions{PageRows: 64})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(head); err != nil {
			t.Fatal(err)
		}
		copyFrom(w)
		if err := w.CopyPage(good, page); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	want := build(func(*Writer) {})

	buf := make([]byte, len(orig))
	refused := 0
	got := build(func(w *Writer) {
		for i := start; i < end; i++ {
			for _, mask := range []byte{0x01, 0xff} {
				copy(buf, orig)
				buf[i] ^= mask
				name := fmt.Sprintf("flip-%d-%02x.seg", i, mask)
				r := openBytes(t, buf, name) // the footer is intact
				err := w.CopyPage(r, page)
				if err == nil {
					t.Fatalf("flipping byte %d with %#x went unnoticed", i, mask)
				}
				checkCorrupt(t, err, name)
				refused++
				// The other pages are intact and can be copied; they are
				// not, to keep the output comparable.
			}
		}
	})
	if !bytes.Equal(got, want) {
		t.Fatal("refused copies changed the output")
	}
	t.Logf("%d corrupt copies refused", refused)

	// An I/O error of the source is passed up as such and changes nothing.
	sw := &switchReaderAt{ra: bytes.NewReader(orig)}
	r, err := Open(sw, int64(len(orig)), "io.seg")
	if err != nil {
		t.Fatal(err)
	}
	sw.fail = true
	got = build(func(w *Writer) {
		if err := w.CopyPage(r, page); !errors.Is(err, errIO) || errors.Is(err, rowttl.ErrCorruption) {
			t.Fatalf("CopyPage: %v", err)
		}
	})
	if !bytes.Equal(got, want) {
		t.Fatal("a failed read changed the output")
	}
}

// switchReaderAt fails every read once fail is set.
type switchReaderAt struct {
	ra   io.ReaderAt
	fail bool
}

func (s *switchReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if s.fail {
		return 0, errIO
	}
	return s.ra.ReadAt(p, off)
}

// readRows reads n rows of page p of r into a record.
func readRows(t testing.TB, mem memory.Allocator, r *Reader, p, n int) arrow.RecordBatch {
	t.Helper()
	arrs := make([]arrow.Array, len(r.Schema().Fields()))
	for c := range arrs {
		a, err := r.ReadPage(mem, c, p)
		if err != nil {
			t.Fatal(err)
		}
		arrs[c] = array.NewSlice(a, 0, int64(n))
		a.Release()
	}
	rec := array.NewRecordBatch(r.Schema(), arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

// TestCopyPageWriteError checks that an error writing a copied page sticks.
func TestCopyPageWriteError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := smallSegment(t, mem)
	r := openBytes(t, b, "small.seg")
	head := readRows(t, mem, r, 0, 3)
	defer head.Release()
	for after := 0; ; after++ {
		w, err := NewWriter(&failingWriter{after: after}, r.Schema(), WriterOptions{})
		if err != nil {
			continue
		}
		err = w.Write(head)
		for p := 0; err == nil && p < r.NumPages(); p++ {
			err = w.CopyPage(r, p)
		}
		if err == nil {
			_, err = w.Finish()
		}
		if err == nil {
			break
		}
		if !errors.Is(err, errIO) {
			t.Fatalf("after %d bytes: %v", after, err)
		}
		if err := w.CopyPage(r, 0); !errors.Is(err, errIO) {
			t.Fatalf("after %d bytes: the error does not stick: %v", after, err)
		}
	}
}

// TestCopyPageNoColumns copies pages of a segment without columns: only
// row counts.
func TestCopyPageNoColumns(t *testing.T) {
	sc := arrow.NewSchema(nil, nil)
	rec := array.NewRecordBatch(sc, nil, 10)
	defer rec.Release()
	src, _ := writeBatches(t, rec, WriterOptions{PageRows: 4}, 0)
	r := openBytes(t, src, "empty.seg")
	var out bytes.Buffer
	w, err := NewWriter(&out, sc, WriterOptions{PageRows: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil { // pages 4, 4 and 2 pending
		t.Fatal(err)
	}
	if err := w.CopyPage(r, 2); err != nil { // 2 rows
		t.Fatal(err)
	}
	sum, err := w.Finish()
	if err != nil || sum.Rows != 12 {
		t.Fatalf("%v %v", sum, err)
	}
	got := openBytes(t, out.Bytes(), "out.seg")
	if got.NumPages() != 4 || got.NumRows() != 12 {
		t.Fatalf("%d pages, %d rows", got.NumPages(), got.NumRows())
	}

	// A copied page larger than PageRows raises the size Dump announces.
	out.Reset()
	if w, err = NewWriter(&out, sc, WriterOptions{PageRows: 2}); err != nil {
		t.Fatal(err)
	}
	if err := w.CopyPage(r, 0); err != nil { // 4 rows
		t.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	var dump strings.Builder
	if err := openBytes(t, out.Bytes(), "big.seg").Dump(&dump); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dump.String(), "1 pages of up to 4 rows") {
		t.Fatalf("dump: %s", dump.String())
	}
}

// BenchmarkCopyPage compares copying every page of a 64Ki-row segment
// (8 pages) into a new one with CopyPage against the alternative, decoding
// each page with ReadPage and re-encoding it with Write (same options, so
// the same pages). Each bench case is one column; "all" has the eight
// columns together. Throughput is the Arrow bytes of the pages, for both.
func BenchmarkCopyPage(b *testing.B) {
	type source struct {
		name string
		r    *Reader
		zstd int
		out  int64 // Arrow bytes
	}
	var srcs []source
	mem := memory.NewGoAllocator()
	var all []arrow.Array
	for _, bc := range benchCases {
		r, out := buildBenchSegment(b, bc)
		srcs = append(srcs, source{bc.name, r, bc.zstd, out})
		all = append(all, bc.make(mem))
	}
	rec := newRecord(all...)
	for _, a := range all {
		a.Release()
	}
	data, _ := writeBatches(b, rec, WriterOptions{}, 0)
	rec.Release()
	r := openBytes(b, data, "all")
	var out int64
	for c := range all {
		a := readColumn(b, r, mem, c)
		out += decodedBytes(a)
		a.Release()
	}
	srcs = append(srcs, source{"all", r, 0, out})

	for _, s := range srcs {
		b.Run(s.name+"/copy", func(b *testing.B) {
			b.SetBytes(s.out)
			b.ReportAllocs()
			for b.Loop() {
				w, err := NewWriter(io.Discard, s.r.Schema(), WriterOptions{ZstdLevel: s.zstd})
				if err != nil {
					b.Fatal(err)
				}
				for p := range s.r.NumPages() {
					if err := w.CopyPage(s.r, p); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := w.Finish(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(s.name+"/decode+write", func(b *testing.B) {
			mem := memory.DefaultAllocator
			ncols := len(s.r.Schema().Fields())
			arrs := make([]arrow.Array, ncols)
			b.SetBytes(s.out)
			b.ReportAllocs()
			for b.Loop() {
				w, err := NewWriter(io.Discard, s.r.Schema(), WriterOptions{ZstdLevel: s.zstd})
				if err != nil {
					b.Fatal(err)
				}
				for p := range s.r.NumPages() {
					for c := range arrs {
						if arrs[c], err = s.r.ReadPage(mem, c, p); err != nil {
							b.Fatal(err)
						}
					}
					_, n := s.r.Page(p)
					rec := array.NewRecordBatch(s.r.Schema(), arrs, int64(n))
					for _, a := range arrs {
						a.Release()
					}
					err := w.Write(rec)
					rec.Release()
					if err != nil {
						b.Fatal(err)
					}
				}
				if _, err := w.Finish(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
