package fileformat

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/klauspost/compress/snappy"
	"github.com/rowttl/rowttl"
)

// flatFields has a field of every type the flat writer encodes, in both
// nullabilities.
func flatFields() []arrow.Field {
	types := []arrow.DataType{
		arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int8,
		arrow.FixedWidthTypes.Date32, &arrow.TimestampType{Unit: arrow.Microsecond},
		&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, &arrow.TimestampType{Unit: arrow.Nanosecond},
		arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32, arrow.BinaryTypes.String, arrow.BinaryTypes.Binary,
	}
	var fs []arrow.Field
	for i, dt := range types {
		fs = append(fs, arrow.Field{Name: fmt.Sprintf("c%d", 2*i), Type: dt},
			arrow.Field{Name: fmt.Sprintf("c%d", 2*i+1), Type: dt, Nullable: true})
	}
	return fs
}

// randomBatch builds n rows of random values of sc: runs of neighbours
// and jumps between extremes (every bit width of a delta), NaN, infinities
// and zeros of both signs, empty and long strings. nulls is the chance of
// a NULL in a nullable column; some batches have none, some only NULLs.
func randomBatch(rng *rand.Rand, mem memory.Allocator, sc *arrow.Schema, n int, nulls float64) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for c, f := range sc.Fields() {
		fb := b.Field(c)
		var prev int64
		for range n {
			if f.Nullable && rng.Float64() < nulls {
				fb.AppendNull()
				continue
			}
			var v int64
			switch rng.IntN(4) {
			case 0:
				v = prev + rng.Int64N(3) - 1
			case 1:
				v = prev + rng.Int64N(1<<uint(rng.IntN(62)+1))
			case 2:
				v = []int64{math.MinInt64, math.MaxInt64, 0, -1, math.MinInt32, math.MaxInt32}[rng.IntN(6)]
			default:
				v = int64(rng.Uint64())
			}
			prev = v
			switch fb := fb.(type) {
			case *array.Int64Builder:
				fb.Append(v)
			case *array.Int32Builder:
				fb.Append(int32(v))
			case *array.Int16Builder:
				fb.Append(int16(v))
			case *array.Int8Builder:
				fb.Append(int8(v))
			case *array.Date32Builder:
				fb.Append(arrow.Date32(int32(v)))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(v))
			case *array.Float64Builder:
				fb.Append(randomFloat(rng, v))
			case *array.Float32Builder:
				fb.Append(float32(randomFloat(rng, v)))
			case *array.StringBuilder:
				fb.Append(randomString(rng))
			case *array.BinaryBuilder:
				fb.Append([]byte(randomString(rng) + "\x00\xff"))
			}
		}
	}
	return b.NewRecordBatch()
}

func randomFloat(rng *rand.Rand, v int64) float64 {
	switch rng.IntN(8) {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1 - 2*rng.IntN(2))
	case 2:
		return math.Copysign(0, float64(1-2*rng.IntN(2)))
	case 3:
		return float64(v%1_000_000) / 100
	}
	return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
}

func randomString(rng *rand.Rand) string {
	switch rng.IntN(200) {
	case 0, 1, 2, 3, 4, 5, 6, 7, 8, 9:
		return ""
	case 10:
		return strings.Repeat("long é ", rng.IntN(1500)) // past the statistics' limit, sometimes
	}
	return fmt.Sprintf("%s #%d", []string{"view", "click", "refund", "ä"}[rng.IntN(4)], rng.Int64N(1e10))
}

// readBack reads a file with arrow-go's reader, as one table.
func readBack(t testing.TB, mem memory.Allocator, data []byte) arrow.Table {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data), file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 12}, mem)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// concatColumn concatenates column c of recs.
func concatColumn(t testing.TB, mem memory.Allocator, recs []arrow.RecordBatch, c int) arrow.Array {
	t.Helper()
	var parts []arrow.Array
	for _, r := range recs {
		parts = append(parts, r.Column(c))
	}
	return concatArrays(t, mem, parts)
}

func concatArrays(t testing.TB, mem memory.Allocator, parts []arrow.Array) arrow.Array {
	t.Helper()
	if len(parts) == 0 {
		return array.MakeArrayOfNull(mem, arrow.Null, 0)
	}
	a, err := array.Concatenate(parts, mem)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// checkFile compares a file written from recs with recs, value for
// value, and the statistics of each column chunk with its values.
func checkFile(t testing.TB, mem memory.Allocator, data []byte, sc *arrow.Schema, recs []arrow.RecordBatch) {
	t.Helper()
	// arrow-go's delta decoders never free a scratch buffer (see
	// scratchAllocator), so the reader does not count against mem.
	tbl := readBack(t, memory.DefaultAllocator, data)
	defer tbl.Release()
	for i, f := range tbl.Schema().Fields() {
		if w := sc.Field(i); f.Name != w.Name || !arrow.TypeEqual(f.Type, w.Type) || f.Nullable != w.Nullable {
			t.Fatalf("read column %s, wrote %s", f, w)
		}
	}
	if tbl.NumCols() != int64(sc.NumFields()) {
		t.Fatalf("read %d columns, wrote %d", tbl.NumCols(), sc.NumFields())
	}
	for c := range sc.NumFields() {
		want := concatColumn(t, mem, recs, c)
		got := concatArrays(t, mem, tbl.Column(c).Data().Chunks())
		if got.Len() == 0 && want.Len() == 0 {
			got.Release()
			want.Release()
			continue
		}
		if got.Len() != want.Len() || !array.ApproxEqual(want, got, array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
			for j := range min(got.Len(), want.Len()) {
				if !array.ApproxEqual(array.NewSlice(want, int64(j), int64(j+1)), array.NewSlice(got, int64(j), int64(j+1)), array.WithNaNsEqual(true)) {
					t.Errorf("column %s row %d: read %v, wrote %v", sc.Field(c).Name, j, got.ValueStr(j), want.ValueStr(j))
					break
				}
			}
			t.Errorf("column %s: read %d values back, wrote %d", sc.Field(c).Name, got.Len(), want.Len())
		}
		want.Release()
		got.Release()
	}
	checkStats(t, data, sc, recs)
}

// checkStats compares each column chunk's statistics with the smallest
// and largest of its values, which it computes from the rows the row
// groups hold.
func checkStats(t testing.TB, data []byte, sc *arrow.Schema, recs []arrow.RecordBatch) {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	var all []arrow.Array
	for c := range sc.NumFields() {
		all = append(all, concatColumn(t, memory.DefaultAllocator, recs, c))
	}
	var from int64
	for g := range pf.NumRowGroups() {
		rg := pf.MetaData().RowGroup(g)
		for c := range sc.NumFields() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			st, err := cc.Statistics()
			if err != nil || st == nil {
				t.Fatalf("row group %d column %d: no statistics (%v)", g, c, err)
			}
			part := array.NewSlice(all[c], from, from+rg.NumRows())
			if st.NullCount() != int64(part.NullN()) {
				t.Errorf("row group %d column %s: %d NULLs in the statistics, %d in the data", g, sc.Field(c).Name, st.NullCount(), part.NullN())
			}
			wantMin, wantMax, ok := bounds(part)
			if !ok {
				if st.HasMinMax() {
					t.Errorf("row group %d column %s: bounds without a value", g, sc.Field(c).Name)
				}
				part.Release()
				continue
			}
			var gotMin, gotMax string
			switch s := st.(type) {
			case *metadata.Int64Statistics:
				gotMin, gotMax = fmt.Sprint(s.Min()), fmt.Sprint(s.Max())
			case *metadata.Int32Statistics:
				gotMin, gotMax = fmt.Sprint(s.Min()), fmt.Sprint(s.Max())
			case *metadata.Float64Statistics:
				gotMin, gotMax = fmt.Sprint(s.Min()), fmt.Sprint(s.Max())
			case *metadata.Float32Statistics:
				gotMin, gotMax = fmt.Sprint(float64(s.Min())), fmt.Sprint(float64(s.Max()))
			case *metadata.ByteArrayStatistics:
				if !s.HasMinMax() && (len(wantMin) > maxStatsBytes || len(wantMax) > maxStatsBytes) {
					part.Release()
					continue
				}
				gotMin, gotMax = string(s.Min()), string(s.Max())
			}
			if !st.HasMinMax() || gotMin != wantMin || gotMax != wantMax {
				t.Errorf("row group %d column %s: bounds %q..%q (%v), want %q..%q", g, sc.Field(c).Name, gotMin, gotMax, st.HasMinMax(), wantMin, wantMax)
			}
			part.Release()
		}
		from += rg.NumRows()
	}
	for _, a := range all {
		a.Release()
	}
}

// bounds returns the smallest and largest non-NULL, non-NaN value of a as
// text (zeros as the format's -0 and +0), or false when there is none.
func bounds(a arrow.Array) (lo, hi string, ok bool) {
	var ints []int64
	var floats []float64
	var strs []string
	for j := range a.Len() {
		if a.IsNull(j) {
			continue
		}
		switch a := a.(type) {
		case *array.Int64:
			ints = append(ints, a.Value(j))
		case *array.Int32:
			ints = append(ints, int64(a.Value(j)))
		case *array.Int16:
			ints = append(ints, int64(a.Value(j)))
		case *array.Int8:
			ints = append(ints, int64(a.Value(j)))
		case *array.Date32:
			ints = append(ints, int64(a.Value(j)))
		case *array.Timestamp:
			ints = append(ints, int64(a.Value(j)))
		case *array.Float64:
			if v := a.Value(j); v == v {
				floats = append(floats, v)
			}
		case *array.Float32:
			if v := float64(a.Value(j)); v == v {
				floats = append(floats, v)
			}
		case *array.String:
			strs = append(strs, a.Value(j))
		case *array.Binary:
			strs = append(strs, string(a.Value(j)))
		}
	}
	switch {
	case len(ints) > 0:
		return fmt.Sprint(slices.Min(ints)), fmt.Sprint(slices.Max(ints)), true
	case len(floats) > 0:
		lo, hi := slices.Min(floats), slices.Max(floats)
		if lo == 0 {
			lo = math.Copysign(0, -1)
		}
		if hi == 0 {
			hi = 0
		}
		return fmt.Sprint(lo), fmt.Sprint(hi), true
	case len(strs) > 0:
		return slices.Min(strs), slices.Max(strs), true
	}
	return "", "", false
}

// writeFlat writes recs as writeParquet does and fails unless the flat
// writer wrote them.
func writeFlat(t testing.TB, mem memory.Allocator, sc *arrow.Schema, o ParquetOptions, recs ...arrow.RecordBatch) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewParquetWriter(&buf, sc, o, mem)
	if err != nil {
		t.Fatal(err)
	}
	// Begun without a batch, the file is the flat writer's whatever the
	// values (TestFlatFallback tests the choice).
	if err := w.begin(nil); err != nil || w.flat == nil {
		t.Fatalf("%+v: the flat writer does not write %s (%v)", o, sc, err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFlatRoundTrip writes random batches of every flat type, NULLs
// included, with the flat writer (serial and parallel, each codec, row
// groups of a few rows and of many batches, batches cut across pages)
// and reads them back with arrow-go's reader: the values and the column
// chunks' statistics must be what was written.
func TestFlatRoundTrip(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema(flatFields(), nil)
	for _, o := range []ParquetOptions{
		{},
		{Parallelism: 1, RowGroupRows: 333},
		{Compression: "snappy", RowGroupRows: 1000},
		{Compression: "zstd", Parallelism: 3, RowGroupBytes: 1 << 16},
		{Compression: "none", Parallelism: 2},
	} {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			var recs []arrow.RecordBatch
			for range 1 + rng.IntN(6) {
				n := []int{0, 1, 9, 300, 3000, flatGroupRows + 17}[rng.IntN(6)]
				nulls := []float64{0, 0.1, 0.5, 1}[rng.IntN(4)]
				rec := randomBatch(rng, mem, sc, n, nulls)
				if n > 20 && rng.IntN(2) == 0 {
					// A slice starts its buffers and bitmaps mid-byte.
					s := rec.NewSlice(3, int64(n-5))
					rec.Release()
					rec = s
				}
				recs = append(recs, rec)
			}
			data := writeFlat(t, mem, sc, o, recs...)
			checkFile(t, mem, data, sc, recs)
			for _, r := range recs {
				r.Release()
			}
		})
	}
}

// TestFlatEncodings: the flat writer's encodings and codecs are the ones
// the footer names: integers delta-encoded, floats byte-stream-split,
// strings delta-length, and by default a codec only where it pays.
func TestFlatEncodings(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
		{Name: "rnd", Type: arrow.PrimitiveTypes.Int64},
		{Name: "d", Type: arrow.PrimitiveTypes.Float64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		b.Field(0).(*array.Int64Builder).Append(int64(i * 1000))
		b.Field(1).(*array.Int64Builder).Append(rng.Int64())
		b.Field(2).(*array.Float64Builder).Append(float64(rng.IntN(1e6)) / 100)
		b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("click #%d", rng.Int64N(1e10)))
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	for _, o := range []ParquetOptions{{}, {Compression: "snappy"}} {
		data := writeFlat(t, mem, sc, o, rec)
		pf, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		rg := pf.MetaData().RowGroup(0)
		want := []struct {
			enc   parquet.Encoding
			codec string
		}{
			{parquet.Encodings.DeltaBinaryPacked, "ZSTD"},
			{parquet.Encodings.DeltaBinaryPacked, "UNCOMPRESSED"}, // random: zstd does not pay
			{parquet.Encodings.ByteStreamSplit, "ZSTD"},
			{parquet.Encodings.DeltaLengthByteArray, "SNAPPY"},
		}
		if o.Compression == "snappy" {
			want[0].codec, want[1].codec, want[2].codec = "SNAPPY", "SNAPPY", "SNAPPY"
			want[2].enc = parquet.Encodings.Plain
		}
		for i, w := range want {
			cc, _ := rg.ColumnChunk(i)
			if !slices.Contains(cc.Encodings(), w.enc) || cc.Compression().String() != w.codec {
				t.Errorf("%+v: column %s: %v %s, want %s %s", o, sc.Field(i).Name, cc.Encodings(), cc.Compression(), w.enc, w.codec)
			}
		}
		pf.Close()
		checkFile(t, mem, data, sc, []arrow.RecordBatch{rec})
	}
}

// TestFlatFallback: a batch whose string column repeats a few values goes
// to arrow-go's writer, whose dictionary makes it small; one of distinct
// values to the flat writer; NoDictionary and a nested or boolean column
// to arrow-go's.
func TestFlatFallback(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	build := func(f func(int) string) arrow.RecordBatch {
		b := array.NewRecordBuilder(mem, sc)
		defer b.Release()
		for i := range 5000 {
			b.Field(0).(*array.StringBuilder).Append(f(i))
		}
		return b.NewRecordBatch()
	}
	few := build(func(i int) string { return []string{"DE", "FR", "US"}[i%3] })
	defer few.Release()
	many := build(func(i int) string { return fmt.Sprint("u", i) })
	defer many.Release()
	for _, tc := range []struct {
		rec  arrow.RecordBatch
		o    ParquetOptions
		flat bool
	}{{few, ParquetOptions{}, false}, {many, ParquetOptions{}, true}, {many, ParquetOptions{NoDictionary: true}, false}} {
		var buf bytes.Buffer
		w, err := NewParquetWriter(&buf, sc, tc.o, mem)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(tc.rec); err != nil {
			t.Fatal(err)
		}
		if (w.flat != nil) != tc.flat {
			t.Errorf("%+v, %d rows: flat writer %v, want %v", tc.o, tc.rec.NumRows(), w.flat != nil, tc.flat)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		checkFile(t, mem, buf.Bytes(), sc, []arrow.RecordBatch{tc.rec})
	}
	for _, f := range []arrow.Field{{Name: "b", Type: arrow.FixedWidthTypes.Boolean}, {Name: "t", Type: &arrow.TimestampType{Unit: arrow.Second}}} {
		w, err := NewParquetWriter(&bytes.Buffer{}, arrow.NewSchema([]arrow.Field{f}, nil), ParquetOptions{}, mem)
		if err != nil {
			t.Fatal(err)
		}
		if w.flatOK {
			t.Errorf("a %s column is taken for the flat writer", f.Type)
		}
		w.Close()
	}
}

// TestFlatEmpty: a file without rows, and one whose only batch is empty,
// are files of no row group that both readers open.
func TestFlatEmpty(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema(flatFields(), nil)
	empty := randomBatch(rand.New(rand.NewPCG(1, 1)), mem, sc, 0, 0)
	defer empty.Release()
	for _, recs := range [][]arrow.RecordBatch{nil, {empty}} {
		data := writeFlat(t, mem, sc, ParquetOptions{}, recs...)
		checkFile(t, mem, data, sc, recs)
		pr, err := OpenParquet("empty.parquet", bytes.NewReader(data), int64(len(data)), mem)
		if err != nil {
			t.Fatal(err)
		}
		if pr.NumRows() != 0 || pr.NumRowGroups() != 0 {
			t.Errorf("%d rows in %d row groups, want none", pr.NumRows(), pr.NumRowGroups())
		}
		pr.Close()
	}
}

// TestFlatErrors: NULLs in a NOT NULL column fail the write with
// ErrInvalidArgument, a failing output fails it with the output's error,
// and neither leaves a batch held.
func TestFlatErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	strict := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	loose := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	rec := randomBatch(rand.New(rand.NewPCG(3, 3)), mem, loose, 5000, 0.5)
	defer rec.Release()
	bad := array.NewRecordBatch(strict, rec.Columns(), rec.NumRows())
	defer bad.Release()
	w, err := NewParquetWriter(&bytes.Buffer{}, strict, ParquetOptions{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	err = w.Write(bad)
	if err == nil {
		err = w.Close()
	}
	if !errors.Is(err, rowttl.ErrInvalidArgument) || !strings.Contains(err.Error(), "NOT NULL") {
		t.Fatalf("NULLs in a NOT NULL column: %v, want ErrInvalidArgument", err)
	}
	w, err = NewParquetWriter(&failingWriter{limit: 1 << 10}, loose, ParquetOptions{RowGroupRows: 1000}, mem)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if err = w.Write(rec); err != nil {
			break
		}
	}
	if err == nil {
		err = w.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "sink full") {
		t.Fatalf("a failing output: %v", err)
	}
	if err2 := w.Write(rec); err2 == nil {
		t.Fatal("a write after a failure succeeded")
	}
}

// TestPacked32 compares the bit packer with packing bit by bit, at every
// width.
func TestPacked32(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for w := range uint(65) {
		vs := make([]uint64, 32)
		for i := range vs {
			if w > 0 {
				vs[i] = rng.Uint64() >> (64 - w)
			}
		}
		want := make([]byte, 4*w)
		for i, v := range vs {
			for k := range w {
				if v>>k&1 == 1 {
					bit := uint(i)*w + k
					want[bit/8] |= 1 << (bit % 8)
				}
			}
		}
		if got := appendPacked32([]byte{0xAA}, vs, w); !bytes.Equal(got[1:], want) || got[0] != 0xAA {
			t.Fatalf("width %d: packed % x, want % x", w, got[1:], want)
		}
	}
}

// TestDeltaLayout checks the bytes of a DELTA_BINARY_PACKED run: header,
// the block's minimum delta, and the bit width of each miniblock, the
// widest delta of the miniblock above that minimum. A wrong width reads
// back as other values.
func TestDeltaLayout(t *testing.T) {
	// 1 value then 40 deltas: 31 of 5 (less the minimum 5: width 0), one
	// of 5+7 (width 3), 8 of 5+255 (width 8).
	vs := []int64{100}
	for i := range 40 {
		d := int64(5)
		switch {
		case i == 31:
			d += 7
		case i >= 32:
			d += 255
		}
		vs = append(vs, vs[len(vs)-1]+d)
	}
	got, lo, hi := appendDelta(nil, vs)
	if lo != 100 || hi != vs[40] {
		t.Errorf("bounds %d..%d, want 100..%d", lo, hi, vs[40])
	}
	want := []byte{0x80, 0x01, 4, 41, 0xc8, 0x01} // block 128, 4 miniblocks, 41 values, first 100 (zigzag 200)
	want = append(want, 10)                       // minimum delta 5, zigzag
	want = append(want, 3, 8, 0, 0)               // widths: the last two miniblocks are not needed
	if !bytes.Equal(got[:len(want)], want) {
		t.Fatalf("header % x, want % x", got[:len(want)], want)
	}
	if len(got) != len(want)+4*3+4*8 {
		t.Fatalf("%d bytes, want %d: two miniblocks of widths 3 and 8", len(got), len(want)+4*3+4*8)
	}
	// The first miniblock holds 31 zeros then 7, in 3 bits each.
	mb := binary.LittleEndian.Uint32(got[len(want)+8:])
	if top := mb >> (31*3 - 64); top != 7 {
		t.Fatalf("the 32nd value of the first miniblock is %d, want 7", top)
	}

	// Every width from 0 to 64 round-trips through arrow-go's decoder,
	// for INT64 and INT32 columns.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "b", Type: arrow.PrimitiveTypes.Int32}}, nil)
	ab := array.NewRecordBuilder(mem, sc)
	for w := range 65 {
		var v int64
		for i := range 129 {
			d := int64(0)
			if i%31 == 0 && w > 0 {
				d = int64(uint64(1)<<(w-1) | uint64(i)) // exactly w bits above the minimum 0
			}
			v += d
			ab.Field(0).(*array.Int64Builder).Append(v)
			ab.Field(1).(*array.Int32Builder).Append(int32(v))
		}
	}
	rec := ab.NewRecordBatch()
	ab.Release()
	defer rec.Release()
	data := writeFlat(t, mem, sc, ParquetOptions{Compression: "none"}, rec)
	checkFile(t, mem, data, sc, []arrow.RecordBatch{rec})
}

// TestLevelsLayout checks the definition levels of a page: one repeated
// run of 1 without NULLs, else one bit-packed run whose bytes are the
// validity bitmap, behind the 4-byte length.
func TestLevelsLayout(t *testing.T) {
	if got, want := appendLevels(nil, 300, nil), []byte{3, 0, 0, 0, 0xd8, 0x04, 1}; !bytes.Equal(got, want) {
		t.Errorf("300 present: % x, want % x", got, want)
	}
	valid := []byte{0b10110101, 0b00000010}
	if got, want := appendLevels(nil, 10, valid), []byte{3, 0, 0, 0, 2<<1 | 1, 0b10110101, 0b00000010}; !bytes.Equal(got, want) {
		t.Errorf("10 with NULLs: % x, want % x", got, want)
	}
}

// FuzzFlatWriter writes batches built from the fuzzer's bytes with the
// flat writer and reads them back with arrow-go's reader.
func FuzzFlatWriter(f *testing.F) {
	f.Add([]byte{}, uint16(0), uint8(0))
	f.Add([]byte("view #1234567890 click #2345678901"), uint16(4), uint8(3))
	f.Add(bytes.Repeat([]byte{0xff, 0, 0x80, 0x7f}, 300), uint16(3), uint8(255))
	f.Add(bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, 2000), uint16(1000), uint8(17))
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	f.Fuzz(func(t *testing.T, data []byte, rowGroup uint16, nullMask uint8) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		b := array.NewRecordBuilder(mem, sc)
		n := len(data) / 8
		for i := range n {
			w := data[i*8 : i*8+8]
			v := binary.LittleEndian.Uint64(w)
			null := nullMask>>(i%8)&1 == 1
			if null {
				b.Field(0).AppendNull()
				b.Field(2).AppendNull()
				b.Field(3).AppendNull()
			} else {
				b.Field(0).(*array.Int64Builder).Append(int64(v))
				b.Field(2).(*array.Float64Builder).Append(math.Float64frombits(v))
				b.Field(3).(*array.StringBuilder).Append(strings.ToValidUTF8(string(data[i*8:min(len(data), i*8+int(w[0]%64))]), "?"))
			}
			b.Field(1).(*array.Int32Builder).Append(int32(v >> 7))
		}
		rec := b.NewRecordBatch()
		b.Release()
		defer rec.Release()
		o := ParquetOptions{RowGroupRows: int64(rowGroup) + 1, Parallelism: 1 + int(nullMask%3)}
		out := writeFlat(t, mem, sc, o, rec)
		checkFile(t, mem, out, sc, []arrow.RecordBatch{rec})
	})
}

// BenchmarkAppendDelta encodes a page of increasing times with gaps, as
// an export's event_time column.
func BenchmarkAppendDelta(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	vs := make([]int64, 1<<15)
	for i := 1; i < len(vs); i++ {
		vs[i] = vs[i-1] + int64(rng.IntN(4))*2592000 + int64(rng.IntN(2))
	}
	var buf []byte
	b.SetBytes(int64(8 * len(vs)))
	for b.Loop() {
		buf, _, _ = appendDelta(buf[:0], vs)
	}
}

// TestAppendValid compares the NULL-skipping gather with a bit-by-bit
// one, at every offset of a sliced array and every density of NULLs.
func TestAppendValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	for _, nulls := range []float64{0.01, 0.3, 0.9} {
		rec := randomBatch(rng, mem, sc, 300, nulls)
		for from := range 20 {
			a := array.NewSlice(rec.Column(0), int64(from), int64(from+rng.IntN(280-from)))
			vs := int64Values(a)
			var want []int64
			for j := range a.Len() {
				if a.IsValid(j) {
					want = append(want, vs[j])
				}
			}
			if got := appendValid(nil, a, vs); !slices.Equal(got, want) {
				t.Fatalf("NULLs %.2f, slice at %d of %d: %v, want %v", nulls, from, a.Len(), got, want)
			}
			a.Release()
		}
		rec.Release()
	}
}

// TestFlatPageMemory: an encoded page waiting for its row group holds a
// buffer of less than twice its bytes, not one of the codec's bound or of
// the largest page encoded before it (which held a row group's pages in
// about twice their memory).
func TestFlatPageMemory(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}, {Name: "r", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(mem, sc)
	rng := rand.New(rand.NewPCG(8, 8))
	for i := range 3 * flatGroupRows {
		b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("the same words, row %d", i%1000))
		b.Field(1).(*array.Int64Builder).Append(rng.Int64())
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := NewParquetWriter(&buf, sc, ParquetOptions{Parallelism: 1}, mem)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.begin(nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	for gi, g := range w.flat.open.groups {
		for c, p := range g.pages {
			if len(p.body) == 0 || cap(p.body) >= 2*len(p.body) {
				t.Errorf("group %d column %s: a page of %d bytes holds %d", gi, sc.Field(c).Name, len(p.body), cap(p.body))
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkFile(t, mem, buf.Bytes(), sc, []arrow.RecordBatch{rec})
}

// TestFlatStringPieces: a snappy page of strings without NULLs, which is
// compressed from its batches' buffers (sliced ones too) rather than from
// a copy, holds the bytes the copy would have held; a page with NULLs, or
// on its codec's trial, is still assembled whole.
func TestFlatStringPieces(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 11))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema(flatFields(), nil)
	col := sc.FieldIndices("c21")[0] // a nullable STRING
	snappyCodec, err := compress.GetCodec(compress.Codecs.Snappy)
	if err != nil {
		t.Fatal(err)
	}
	none, err := compress.GetCodec(compress.Codecs.Uncompressed)
	if err != nil {
		t.Fatal(err)
	}
	for _, nulls := range []float64{0, 0.3} {
		for _, trial := range []bool{false, true} {
			var recs []arrow.RecordBatch
			for _, n := range []int{3000, flatGroupRows + 17, 1, 9000} {
				rec := randomBatch(rng, mem, sc, n, nulls)
				if n > 20 {
					s := rec.NewSlice(3, int64(n-5))
					rec.Release()
					rec = s
				}
				recs = append(recs, rec)
			}
			g := &flatGroup{recs: recs}
			for _, r := range recs {
				g.rows += int(r.NumRows())
			}
			plain := flatColumn{kind: flatBytes, nullable: true, enc: encDeltaLength, codec: none, none: true}
			want := plain.encode(g, col, new(flatScratch), false)
			c := flatColumn{kind: flatBytes, nullable: true, enc: encDeltaLength, codec: snappyCodec}
			scr := new(flatScratch)
			got := c.encode(g, col, scr, trial)
			if got.err != nil || want.err != nil {
				t.Fatal(got.err, want.err)
			}
			if direct := nulls == 0 && !trial; direct != (cap(scr.pieces) > 0) {
				t.Errorf("nulls %v, trial %v: pieces used %v", nulls, trial, !direct)
			}
			dec, err := snappy.Decode(nil, got.body)
			if c.stored {
				dec, err = got.body, nil
			}
			if err != nil || !bytes.Equal(dec, want.body) || got.raw != want.raw {
				t.Fatalf("nulls %v, trial %v: %v, %d bytes back (raw %d) of %d", nulls, trial, err, len(dec), got.raw, len(want.body))
			}
			if !bytes.Equal(got.stats.bmin, want.stats.bmin) || !bytes.Equal(got.stats.bmax, want.stats.bmax) {
				t.Fatalf("nulls %v, trial %v: bounds %q %q, not %q %q", nulls, trial, got.stats.bmin, got.stats.bmax, want.stats.bmin, want.stats.bmax)
			}
			for _, p := range scr.pieces[:cap(scr.pieces)] {
				if p != nil {
					t.Fatal("the scratch buffers keep a batch's bytes")
				}
			}
			for _, r := range recs {
				r.Release()
			}
		}
	}
}

// TestByteArrayBounds: the smallest and largest values of string arrays
// (sliced, with NULLs, of values sharing 8-byte prefixes or shorter than
// 8 bytes, zero bytes included) taken into bounds already held are those
// of a plain comparison of every value.
func TestByteArrayBounds(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 17))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	alphabet := []string{"", "a", "b", "\x00", "\xff", "cart_add", "cart_add #1", "view #9", "view #99", "view #9\x00"}
	for round := range 300 {
		b := array.NewStringBuilder(mem)
		n := rng.IntN(40)
		for range n {
			if rng.IntN(5) == 0 {
				b.AppendNull()
				continue
			}
			var v string
			for range rng.IntN(3) + 1 {
				v += alphabet[rng.IntN(len(alphabet))]
			}
			b.Append(v)
		}
		arr := b.NewArray()
		b.Release()
		from := rng.IntN(max(n, 1))
		a := array.NewSlice(arr, int64(from), int64(from+rng.IntN(n-from+1)))
		arr.Release()
		var st flatStats
		if rng.IntN(2) == 0 {
			st.has, st.bmin, st.bmax = true, []byte(alphabet[rng.IntN(len(alphabet))]), []byte("view #9\x00\x01")
			if bytes.Compare(st.bmin, st.bmax) > 0 {
				st.bmin, st.bmax = st.bmax, st.bmin
			}
		}
		want := st
		for j := range a.Len() {
			if a.IsNull(j) {
				continue
			}
			v := []byte(a.(*array.String).Value(j))
			if !want.has || bytes.Compare(v, want.bmin) < 0 {
				want.bmin = v
			}
			if !want.has || bytes.Compare(v, want.bmax) > 0 {
				want.bmax = v
			}
			want.has = true
		}
		byteArrayBounds(a, &st)
		if st.has != want.has || !bytes.Equal(st.bmin, want.bmin) || !bytes.Equal(st.bmax, want.bmax) {
			t.Fatalf("round %d: bounds %v %q %q, want %v %q %q", round, st.has, st.bmin, st.bmax, want.has, want.bmin, want.bmax)
		}
		a.Release()
	}
}

// TestStreamSplit: BYTE_STREAM_SPLIT of values of every width is the k-th
// bytes of all values, for k = 0 to the width, whatever their number (the
// 8-byte encoder transposes eight at a time) and what dst holds before.
func TestStreamSplit(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 19))
	for _, width := range []int{8, 4, 3} {
		for n := range 70 {
			plain := make([]byte, n*width)
			for i := range plain {
				plain[i] = byte(rng.Uint32())
			}
			prefix := []byte("head")
			got := appendStreamSplit(slices.Clone(prefix), plain, width)
			if !bytes.Equal(got[:len(prefix)], prefix) || len(got) != len(prefix)+len(plain) {
				t.Fatalf("width %d, %d values: %d bytes, prefix %q", width, n, len(got), got[:min(len(got), 4)])
			}
			got = got[len(prefix):]
			for i := range n {
				for k := range width {
					if got[k*n+i] != plain[i*width+k] {
						t.Fatalf("width %d, %d values: byte %d of value %d is %#x, not %#x", width, n, k, i, got[k*n+i], plain[i*width+k])
					}
				}
			}
		}
	}
}

// TestFastZstd checks the flat writer's zstd frames: they decode with
// arrow-go's codec, carry no checksum, declare a 32 KiB window, and a
// page of byte-stream-split cents (random low mantissa bytes, sign and
// exponent bytes of few values) comes out smaller than arrow-go's level-1 codec writes it.
func TestFastZstd(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var plain []byte
	for range 1 << 15 {
		plain = binary.LittleEndian.AppendUint64(plain, math.Float64bits(float64(rng.IntN(1e6))/100))
	}
	page := appendStreamSplit(nil, plain, 8)
	ref, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	got := fastZstd{ref}.EncodeLevel(nil, page, zstdLevel)
	if back := ref.Decode(nil, got); !bytes.Equal(back, page) {
		t.Fatal("the frame does not decode to the page")
	}
	if magic := binary.LittleEndian.Uint32(got); magic != 0xfd2fb528 {
		t.Fatalf("magic %#x", magic)
	}
	desc := got[4]
	if desc&(1<<2) != 0 {
		t.Error("the frame carries a checksum")
	}
	if desc&(1<<5) != 0 {
		t.Fatal("single segment: no window descriptor")
	}
	exp, mant := got[5]>>3, got[5]&7
	if base := 1 << (10 + exp); base+base/8*int(mant) != zstdWindow {
		t.Errorf("window %d, want %d", base+base/8*int(mant), zstdWindow)
	}
	old := ref.EncodeLevel(nil, page, zstdLevel)
	if len(got) >= len(old) {
		t.Errorf("%d bytes, arrow-go's codec %d: the smaller blocks do not pay", len(got), len(old))
	}
	t.Logf("%d bytes of %d, arrow-go's codec %d", len(got), len(page), len(old))
}

// refDelta is DELTA_BINARY_PACKED as the format describes it, one step
// at a time: every delta first, then each block's smallest, then each
// miniblock's width and its packed deltas less that smallest, the
// miniblocks past the last value left out with width 0.
func refDelta[T deltaInt](vs []T) (_ []byte, lo, hi T) {
	b := appendUvarint(nil, deltaBlock)
	b = appendUvarint(b, deltaMinis)
	b = appendUvarint(b, uint64(len(vs)))
	if len(vs) == 0 {
		return appendZigzag(b, 0), 0, 0
	}
	b = appendZigzag(b, int64(vs[0]))
	lo, hi = slices.Min(vs), slices.Max(vs)
	var ds []T
	for i := 1; i < len(vs); i++ {
		ds = append(ds, vs[i]-vs[i-1])
	}
	mask := ^uint64(0)
	if unsafe.Sizeof(T(0)) == 4 {
		mask = 1<<32 - 1
	}
	for len(ds) > 0 {
		blk := ds[:min(deltaBlock, len(ds))]
		ds = ds[len(blk):]
		minD := slices.Min(blk)
		b = appendZigzag(b, int64(minD))
		var packed [deltaMinis][]uint64
		var widths [deltaMinis]uint8
		for m := range deltaMinis {
			if m*deltaMiniSize >= len(blk) {
				continue
			}
			vals := make([]uint64, deltaMiniSize)
			for i := range vals {
				if j := m*deltaMiniSize + i; j < len(blk) {
					vals[i] = uint64(blk[j]-minD) & mask
					widths[m] = max(widths[m], uint8(bits.Len64(vals[i])))
				}
			}
			packed[m] = vals
		}
		b = append(b, widths[:]...)
		for m := range deltaMinis {
			if packed[m] != nil {
				b = appendPacked32(b, packed[m], uint(widths[m]))
			}
		}
	}
	return b, lo, hi
}

// TestDeltaReference compares appendDelta with refDelta, byte for byte
// and bound for bound, on runs of every length up to a few blocks:
// sorted, random over the whole range (deltas that overflow), constant,
// and falling.
func TestDeltaReference(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 19))
	gens := map[string]func(i int, prev int64) int64{
		"sorted":   func(_ int, prev int64) int64 { return prev + rng.Int64N(1000) },
		"random":   func(int, int64) int64 { return int64(rng.Uint64()) },
		"constant": func(int, int64) int64 { return -5 },
		"falling":  func(_ int, prev int64) int64 { return prev - rng.Int64N(1<<40) },
		"extremes": func(int, int64) int64 { return []int64{math.MinInt64, math.MaxInt64, 0, -1}[rng.IntN(4)] },
	}
	for name, gen := range gens {
		for n := range 3*deltaBlock + 40 {
			v64 := make([]int64, n)
			v32 := make([]int32, n)
			prev := rng.Int64() - 1<<62
			for i := range n {
				prev = gen(i, prev)
				v64[i], v32[i] = prev, int32(prev)
			}
			got, lo, hi := appendDelta(nil, v64)
			want, wlo, whi := refDelta(v64)
			if !bytes.Equal(got, want) || lo != wlo || hi != whi {
				t.Fatalf("%s int64 n=%d: % x %d..%d, want % x %d..%d", name, n, got, lo, hi, want, wlo, whi)
			}
			got, lo32, hi32 := appendDelta(nil, v32)
			want, wlo32, whi32 := refDelta(v32)
			if !bytes.Equal(got, want) || lo32 != wlo32 || hi32 != whi32 {
				t.Fatalf("%s int32 n=%d: % x %d..%d, want % x %d..%d", name, n, got, lo32, hi32, want, wlo32, whi32)
			}
		}
	}
}

// TestFlatEmptyStringBounds: a page whose smallest value is the empty
// string has it in the footer's min_value even when its batch holds no
// value bytes at all (a gathered batch of empty strings and NULLs): a
// nil bound is left out of the footer, which then has a max_value and no
// min_value.
func TestFlatEmptyStringBounds(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	offs := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{0, 0, 0}))
	valid := memory.NewBufferBytes([]byte{1})
	d := array.NewData(arrow.BinaryTypes.String, 2, []*memory.Buffer{valid, offs, nil}, nil, 1, 0)
	a := array.MakeFromData(d)
	d.Release()
	defer a.Release()
	var st flatStats
	byteArrayBounds(a, &st)
	st.keepBytes()
	es := st.encode(flatBytes)
	if !es.HasMin || !es.HasMax || es.Min == nil || es.Max == nil || len(es.Min) != 0 || len(es.Max) != 0 {
		t.Errorf("the bounds of a page of \"\" are %v %q (nil %v), %v %q (nil %v); want \"\", present", es.HasMin, es.Min, es.Min == nil, es.HasMax, es.Max, es.Max == nil)
	}
}
