package fileformat

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// TestParquetRoundTrip writes every type, NULLs included, in several
// batches and row groups, and reads back the same values and types.
func TestParquetRoundTrip(t *testing.T) {
	for _, o := range []ParquetOptions{
		{},
		{Compression: "snappy", RowGroupRows: 100},
		{Compression: "none", NoDictionary: true, RowGroupRows: 7},
	} {
		t.Run(o.Compression+"/"+strings.TrimSpace(strings.Repeat("d", boolInt(o.NoDictionary))), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			sc := FileSchema(allColumns, false)
			var recs []arrow.RecordBatch
			for from := 0; from < 1000; from += 250 {
				recs = append(recs, sampleBatch(mem, sc, from, 250))
			}
			data := writeParquet(t, mem, sc, o, recs...)
			for _, r := range recs {
				r.Release()
			}
			pr, err := OpenParquet("x", bytes.NewReader(data), int64(len(data)), mem)
			if err != nil {
				t.Fatal(err)
			}
			if pr.NumRows() != 1000 {
				t.Fatalf("rows %d", pr.NumRows())
			}
			if o.RowGroupRows == 7 && pr.NumRowGroups() != 143 {
				t.Fatalf("row groups %d, want 143", pr.NumRowGroups())
			}
			for i, f := range pr.Schema().Fields() {
				typ, err := FileType(f)
				if err != nil || typ != allColumns[i].Type {
					t.Fatalf("column %s reads as %v (%v), want %v", f.Name, typ, err, allColumns[i].Type)
				}
			}
			pr.Close()
			rows, err := readValues(t, mem, data, columnTypes(allColumns))
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1000 {
				t.Fatalf("%d rows", len(rows))
			}
			for i, row := range rows {
				if want := sampleRow(i); !equalRows(row, want) {
					t.Fatalf("row %d:\n got %v\nwant %v", i, row, want)
				}
			}
		})
	}
}

// TestRowGroupBytes: a row group is cut once its encoded pages reach
// RowGroupBytes, whatever its rows.
func TestRowGroupBytes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	big := strings.Repeat("0123456789abcdef", 4096) // 64 KiB
	var recs []arrow.RecordBatch
	for i := 0; i < 8; i++ {
		b := array.NewStringBuilder(mem)
		for j := 0; j < 32; j++ {
			b.Append(big[j:] + big[:j])
		}
		arr := b.NewArray()
		b.Release()
		recs = append(recs, array.NewRecordBatch(sc, []arrow.Array{arr}, 32))
		arr.Release()
	}
	data := writeParquet(t, mem, sc, ParquetOptions{Compression: "none", NoDictionary: true, RowGroupBytes: 4 << 20}, recs...)
	for _, r := range recs {
		r.Release()
	}
	pr, err := OpenParquet("x", bytes.NewReader(data), int64(len(data)), mem)
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	if pr.NumRows() != 256 || pr.NumRowGroups() < 3 {
		t.Fatalf("%d rows in %d row groups; want 256 rows in several row groups of about 4 MiB", pr.NumRows(), pr.NumRowGroups())
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestForeignParquet reads files that arrow-go's own writer made with
// other settings (dictionary or plain, data page v2, several row groups,
// other codecs, int96 and millisecond timestamps, no stored Arrow schema,
// dictionary-typed strings, delta encodings) and gets the same values,
// every buffer given back (arrow-go's delta decoders never free theirs).
func TestForeignParquet(t *testing.T) {
	cases := []struct {
		name  string
		props []parquet.WriterProperty
		arrow []pqarrow.WriterOption
	}{
		{"plain", []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}, nil},
		{"dictionary-v2-pages", []parquet.WriterProperty{parquet.WithDictionaryDefault(true), parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithDataPageSize(512)}, nil},
		{"row-groups-gzip", []parquet.WriterProperty{parquet.WithMaxRowGroupLength(33), parquet.WithCompression(compress.Codecs.Gzip)}, []pqarrow.WriterOption{pqarrow.WithStoreSchema()}},
		{"brotli-lz4", []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Brotli), parquet.WithCompressionFor("s", compress.Codecs.Lz4Raw)}, nil},
		{"int96", nil, []pqarrow.WriterOption{pqarrow.WithDeprecatedInt96Timestamps(true)}},
		{"millis", nil, []pqarrow.WriterOption{pqarrow.WithCoerceTimestamps(arrow.Millisecond), pqarrow.WithTruncatedTimestamps(true)}},
		{"v1-format", []parquet.WriterProperty{parquet.WithVersion(parquet.V1_0)}, nil},
		{"delta", []parquet.WriterProperty{parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(1024),
			parquet.WithEncodingFor("id", parquet.Encodings.DeltaBinaryPacked), parquet.WithEncodingFor("i", parquet.Encodings.DeltaBinaryPacked),
			parquet.WithEncodingFor("ts", parquet.Encodings.DeltaBinaryPacked), parquet.WithEncodingFor("dt", parquet.Encodings.DeltaBinaryPacked),
			parquet.WithEncodingFor("s", parquet.Encodings.DeltaLengthByteArray), parquet.WithEncodingFor("v", parquet.Encodings.DeltaByteArray)}, nil},
	}
	// Columns a foreign writer has no rowttl metadata for: the values are
	// read by natural type, then converted to the table's types.
	var cols []schema.Column // TIMESTAMP_NS does not survive int96 or millis
	var keep []int
	for i, c := range allColumns {
		if c.Type.Kind != schema.TimestampNS {
			cols, keep = append(cols, c), append(keep, i)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			var fs []arrow.Field
			for _, col := range cols {
				fs = append(fs, arrow.Field{Name: col.Name, Type: col.Type.Arrow(), Nullable: true})
			}
			sc := arrow.NewSchema(fs, nil)
			rec := sampleBatchOf(mem, sc, keep, 0, 200)
			defer rec.Release()
			var buf bytes.Buffer
			props := parquet.NewWriterProperties(append([]parquet.WriterProperty{parquet.WithAllocator(mem)}, c.props...)...)
			fw, err := pqarrow.NewFileWriter(sc, &buf, props, pqarrow.NewArrowWriterProperties(append([]pqarrow.WriterOption{pqarrow.WithAllocator(mem)}, c.arrow...)...))
			if err != nil {
				t.Fatal(err)
			}
			if err := fw.Write(rec); err != nil {
				t.Fatal(err)
			}
			if err := fw.Close(); err != nil {
				t.Fatal(err)
			}
			rows, err := readValues(t, mem, buf.Bytes(), columnTypes(cols))
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 200 {
				t.Fatalf("%d rows", len(rows))
			}
			for i, row := range rows {
				var want []schema.Value
				for _, k := range keep {
					want = append(want, sampleRow(i)[k])
				}
				if c.name == "millis" && !want[13].IsNull() {
					// Coerced to milliseconds on writing.
					want[13] = schema.IntVal(floorDiv(want[13].Int, 1000) * 1000)
				}
				if !equalRows(row, want) {
					t.Fatalf("row %d:\n got %v\nwant %v", i, row, want)
				}
			}
		})
	}
}

// TestDictionaryColumn reads a column of Arrow dictionary type, which a
// stored Arrow schema brings back as such.
func TestDictionaryColumn(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	sc := arrow.NewSchema([]arrow.Field{{Name: "s", Type: dt, Nullable: true}}, nil)
	b := array.NewDictionaryBuilder(mem, dt).(*array.BinaryDictionaryBuilder)
	defer b.Release()
	for i := 0; i < 100; i++ {
		if i%10 == 9 {
			b.AppendNull()
			continue
		}
		b.AppendString([]string{"red", "green", "blue"}[i%3])
	}
	arr := b.NewArray()
	rec := array.NewRecordBatch(sc, []arrow.Array{arr}, 100)
	arr.Release()
	defer rec.Release()
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(sc, &buf, parquet.NewWriterProperties(parquet.WithAllocator(mem)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem), pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	fw.Close()
	rows, err := readValues(t, mem, buf.Bytes(), []schema.Type{schema.VarcharType(10)})
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range rows {
		want := schema.Null
		if i%10 != 9 {
			want = schema.BytesVal([]byte([]string{"red", "green", "blue"}[i%3]))
		}
		if !equalRows(row, []schema.Value{want}) {
			t.Fatalf("row %d: %v, want %v", i, row, want)
		}
	}
}

// TestBadParquet: files cut short, with a wrong magic, empty or damaged
// fail with rowttl.ErrCorruption naming the file, never a panic.
func TestBadParquet(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := FileSchema(allColumns, true)
	rec := sampleBatch(mem, FileSchema(allColumns, false), 0, 300)
	ttl := schema.ConstArray(mem, arrow.PrimitiveTypes.Int64, schema.IntVal(5), 300)
	full := array.NewRecordBatch(sc, append(rec.Columns(), ttl), 300)
	rec.Release()
	ttl.Release()
	good := writeParquet(t, mem, sc, ParquetOptions{NoDictionary: true}, full)
	full.Release()
	damaged := bytes.Clone(good)
	for i := 200; i < 260; i++ {
		damaged[i] ^= 0x5a
	}
	cases := map[string][]byte{
		"empty":       nil,
		"short":       []byte("PAR1PAR1"),
		"csv":         []byte("1\t2\n3\t4\nsome more text to be long enough\n"),
		"truncated":   good[:len(good)/2],
		"cut-footer":  good[:len(good)-1],
		"bad-head":    append([]byte("PAR2"), good[4:]...),
		"damaged":     damaged,
		"footer-len":  append(bytes.Clone(good[:len(good)-8]), 0xff, 0xff, 0xff, 0x7f, 'P', 'A', 'R', '1'),
		"tiny-footer": append(bytes.Clone(good[:len(good)-8]), 1, 0, 0, 0, 'P', 'A', 'R', '1'),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := readValues(t, mem, data, columnTypes(allColumns))
			if err == nil {
				t.Fatal("read without error")
			}
			if !errors.Is(err, rowttl.ErrCorruption) {
				t.Fatalf("error %v does not wrap ErrCorruption", err)
			}
			if !strings.Contains(err.Error(), "test.parquet") {
				t.Fatalf("error %q does not name the file", err)
			}
			t.Log(err)
		})
	}
}

// TestParquetParallelColumns: batches big enough to be encoded on several
// goroutines, one spanning a row-group boundary and one without NULLs in
// its nullable columns, give the same bytes as encoding on one goroutine,
// and read back as written.
func TestParquetParallelColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := FileSchema(allColumns, false)
	var recs []arrow.RecordBatch
	from := 0
	for _, n := range []int{serialRows, 3 * serialRows, 1, 2*serialRows + 5} {
		recs = append(recs, sampleBatch(mem, sc, from, n))
		from += n
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	o := ParquetOptions{RowGroupRows: 2*serialRows + 100, Parallelism: 1}
	serial := writeParquet(t, mem, sc, o, recs...)
	o.Parallelism = 8
	parallel := writeParquet(t, mem, sc, o, recs...)
	if !bytes.Equal(serial, parallel) {
		t.Fatalf("parallel encoding wrote %d bytes that differ from the serial %d", len(parallel), len(serial))
	}
	pr, err := OpenParquet("x", bytes.NewReader(parallel), int64(len(parallel)), mem)
	if err != nil {
		t.Fatal(err)
	}
	if pr.NumRows() != int64(from) || pr.NumRowGroups() != 3 {
		t.Fatalf("%d rows in %d row groups, want %d in 3", pr.NumRows(), pr.NumRowGroups(), from)
	}
	pr.Close()
	rows, err := readValues(t, mem, parallel, columnTypes(allColumns))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != from {
		t.Fatalf("%d rows, want %d", len(rows), from)
	}
	for i, row := range rows {
		if want := sampleRow(i); !equalRows(row, want) {
			t.Fatalf("row %d:\n got %v\nwant %v", i, row, want)
		}
	}
}

// failingWriter accepts limit bytes, then fails.
type failingWriter struct{ limit int }

var errSinkFull = errors.New("sink full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.limit {
		return 0, errSinkFull
	}
	w.limit -= len(p)
	return len(p), nil
}

// TestParquetWriterErrors: a batch of another schema and a nested column
// are refused as invalid arguments; a failing file fails the write that
// reaches it and every call after it, with its error kept.
func TestParquetWriterErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := FileSchema(allColumns, false)
	rec := sampleBatch(mem, sc, 0, 2*serialRows)
	defer rec.Release()

	var buf bytes.Buffer
	w, err := NewParquetWriter(&buf, FileSchema(allColumns[:3], false), ParquetOptions{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Fatalf("a batch of another schema: %v, want ErrInvalidArgument", err)
	}
	w.Close()

	nested := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}}, nil)
	if _, err := NewParquetWriter(&buf, nested, ParquetOptions{}, mem); !errors.Is(err, rowttl.ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "column l") {
		t.Fatalf("a nested column: %v, want ErrInvalidArgument naming it", err)
	}

	w, err = NewParquetWriter(&failingWriter{limit: 1 << 10}, sc, ParquetOptions{RowGroupRows: serialRows}, mem)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); !errors.Is(err, errSinkFull) {
		t.Fatalf("write into a failing file: %v, want its error", err)
	}
	if err := w.Write(rec); !errors.Is(err, errSinkFull) {
		t.Fatalf("write after a failure: %v, want the first error", err)
	}
	if err := w.Close(); !errors.Is(err, errSinkFull) {
		t.Fatalf("close after a failure: %v, want the first error", err)
	}
}

// TestDeltaScratchAfterClose: a batch of a delta-encoded file kept past
// the reader's Close is still whole, and releasing it then frees the rest.
func TestDeltaScratchAfterClose(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewInt64Builder(mem)
	for i := range 5000 {
		if i%7 == 0 {
			b.AppendNull()
			continue
		}
		b.Append(int64(i * i))
	}
	arr := b.NewArray()
	b.Release()
	rec := array.NewRecordBatch(sc, []arrow.Array{arr}, int64(arr.Len()))
	arr.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithAllocator(mem), parquet.WithDictionaryDefault(false),
		parquet.WithEncoding(parquet.Encodings.DeltaBinaryPacked), parquet.WithMaxRowGroupLength(1000))
	fw, err := pqarrow.NewFileWriter(sc, &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	fw.Close()
	rec.Release()
	pr, err := OpenParquet("x", bytes.NewReader(buf.Bytes()), int64(buf.Len()), mem)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := pr.Records(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var last arrow.RecordBatch
	for rr.Next() {
		if last != nil {
			last.Release()
		}
		last = rr.RecordBatch()
		last.Retain()
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	rr.Release()
	pr.Close()
	if last == nil {
		t.Fatal("no batch")
	}
	col := last.Column(0).(*array.Int64)
	for i := range col.Len() {
		row := 5000 - col.Len() + i
		if want := int64(row * row); col.IsNull(i) != (row%7 == 0) || (!col.IsNull(i) && col.Value(i) != want) {
			t.Fatalf("row %d after Close: %v, want %d", row, col.GetOneForMarshal(i), want)
		}
	}
	last.Release()
}

// TestParquetEncodings: integer, date and time columns are delta-encoded,
// a string column of few values dictionary-encoded, and NoDictionary
// writes both plain; pages are snappy by default, zstd for FLOAT and
// DOUBLE and for delta-encoded columns, and snappy for every column when
// snappy is asked for.
func TestParquetEncodings(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := FileSchema(allColumns, false)
	rec := sampleBatch(mem, sc, 0, 3000)
	defer rec.Release()
	has := func(es []parquet.Encoding, e parquet.Encoding) bool { return slices.Contains(es, e) }
	for _, o := range []ParquetOptions{{}, {NoDictionary: true}, {Compression: "snappy"}} {
		noDict := o.NoDictionary
		data := writeParquet(t, mem, sc, o, rec)
		pf, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		rg := pf.MetaData().RowGroup(0)
		for i, c := range allColumns {
			cc, err := rg.ColumnChunk(i)
			if err != nil {
				t.Fatal(err)
			}
			phys := pf.MetaData().Schema.Column(i).PhysicalType()
			want := compress.Codecs.Snappy
			if o.Compression == "" && (phys == parquet.Types.Float || phys == parquet.Types.Double) {
				want = compress.Codecs.Zstd
			}
			if o.Compression == "" && !noDict && (phys == parquet.Types.Int32 || phys == parquet.Types.Int64) {
				want = compress.Codecs.Zstd
			}
			if cc.Compression() != want {
				t.Errorf("%+v: column %s (%s) compressed %s, want %s", o, c.Name, phys, cc.Compression(), want)
			}
			es := cc.Encodings()
			delta := phys == parquet.Types.Int32 || phys == parquet.Types.Int64
			switch {
			case noDict && (has(es, parquet.Encodings.DeltaBinaryPacked) || has(es, parquet.Encodings.RLEDict)):
				t.Errorf("NoDictionary: column %s encoded %v", c.Name, es)
			case !noDict && delta != has(es, parquet.Encodings.DeltaBinaryPacked):
				t.Errorf("column %s (%s) encoded %v", c.Name, phys, es)
			case !noDict && c.Name == "c" && !has(es, parquet.Encodings.RLEDict):
				t.Errorf("column c of one value encoded %v, want a dictionary", es)
			}
		}
		pf.Close()
	}
}

// TestFastSnappy: Parquet pages are compressed by s2's fast snappy mode,
// and what it writes is snappy that the reference decoder reads.
func TestFastSnappy(t *testing.T) {
	c, err := compress.GetCodec(compress.Codecs.Snappy)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(fastSnappy); !ok {
		t.Fatalf("the snappy codec is %T, not fastSnappy", c)
	}
	src := []byte(strings.Repeat("view #1234567890 click #2345678901 ", 2000))
	enc := c.EncodeLevel(make([]byte, c.CompressBound(int64(len(src)))), src, 0)
	if len(enc) >= len(src)/4 {
		t.Errorf("%d bytes compressed to %d", len(src), len(enc))
	}
	dec, err := snappy.Decode(nil, enc)
	if err != nil || !bytes.Equal(dec, src) {
		t.Fatalf("snappy.Decode: %v, %d bytes back of %d", err, len(dec), len(src))
	}
	if dec := c.Decode(nil, enc); !bytes.Equal(dec, src) {
		t.Fatalf("the codec's Decode gave %d bytes back of %d", len(dec), len(src))
	}
}

// TestSnappyFragments: a page longer than a fragment is one snappy block
// made of its fragments' blocks, which the reference decoder reads back
// whatever the input and whatever buffer the codec is given.
func TestSnappyFragments(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	words := []string{"view ", "click ", "#1234567890 ", "buy ", "\x00\xff"}
	gen := func(n int, random bool) []byte {
		b := make([]byte, 0, n+16)
		for len(b) < n {
			if random {
				b = append(b, byte(rng.Uint32()))
			} else {
				b = append(b, words[rng.IntN(len(words))]...)
			}
		}
		return b[:n]
	}
	c, err := compress.GetCodec(compress.Codecs.Snappy)
	if err != nil {
		t.Fatal(err)
	}
	const f = snappyFragment
	for _, n := range []int{0, 1, 16, 17, f - 1, f, f + 1, f + 17, 2 * f, 3*f + 5, 5*f + rng.IntN(f)} {
		for _, random := range []bool{false, true} {
			src := gen(n, random)
			bound := int(c.CompressBound(int64(n)))
			for _, dst := range [][]byte{nil, make([]byte, 10), make([]byte, bound), bytes.Repeat([]byte{0xa5}, 2*bound)} {
				enc := c.EncodeLevel(dst, src, 0)
				if len(enc) > bound {
					t.Fatalf("%d bytes (random %v): %d encoded, more than the bound %d", n, random, len(enc), bound)
				}
				dec, err := snappy.Decode(nil, enc)
				if err != nil || !bytes.Equal(dec, src) {
					t.Fatalf("%d bytes (random %v), dst cap %d: snappy.Decode: %v, %d bytes back", n, random, cap(dst), err, len(dec))
				}
			}
			// The block is the fragments' blocks, each without its length.
			want := binary.AppendUvarint(nil, uint64(n))
			if n <= f {
				want = s2.EncodeSnappy(nil, src)
			} else {
				for off := 0; off < n; off += f {
					e := s2.EncodeSnappy(nil, src[off:min(n, off+f)])
					_, k := binary.Uvarint(e)
					want = append(want, e[k:]...)
				}
			}
			if got := c.EncodeLevel(nil, src, 0); !bytes.Equal(got, want) {
				t.Fatalf("%d bytes (random %v): %d bytes encoded, not the %d of its fragments", n, random, len(got), len(want))
			}
		}
	}
}
