package fileformat

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/rowttl/rowttl"
)

// Default Parquet layout: row groups big enough that scanners amortise
// their metadata, small enough that a writer holds one in memory.
const (
	DefaultRowGroupRows  = 1 << 20
	DefaultRowGroupBytes = 128 << 20
)

// dictionaryPageLimit is where a column's dictionary gives up for plain
// pages. Low-cardinality columns (codes, countries, flags) stay well
// under it; on high-cardinality ones (ids, messages) an early fallback
// costs nothing, where arrow-go's 1 MiB default spent CPU and memory on a
// dictionary only to write a bigger file (1M bench events rows: 10.3 MB
// with it, 9.1 MB with 128 KiB, 30% less CPU). It stays under the data
// page size, so that such a column falls back before its first page is
// cut and no page of it is dictionary-encoded for nothing.
const dictionaryPageLimit = 48 << 10

// dataPageSize is the raw size at which a column's page is cut, a
// sixteenth of arrow-go's 1 MiB default. A page's buffers (values,
// levels, the compressed copy, each zeroed when pooled again) are touched
// several times as it is encoded, compressed and copied, and at this
// size they stay in a core's cache: on the 1M-row bench events table
// (500K live rows) the export takes 6% less CPU than with 256 KiB pages
// (0.171 against 0.182 CPU s, three rounds each) for a 1% larger file
// (12.67 against 12.54 MB), and the last page of each column, compressed
// on one goroutine when its row group closes, is small.
const dataPageSize = 64 << 10

// zstdLevel is zstd's fastest level. On the bench events table it writes
// a smaller file than arrow-go's default (level 3: 11.2 against 11.3 MiB
// for 500K rows) in 20% less CPU, the encoder having been 40% of an
// export's CPU; other codecs ignore it.
const zstdLevel = 1

// ParquetOptions shape a Parquet file.
type ParquetOptions struct {
	// Compression is "" (the default: snappy, zstd for number, date and
	// time columns, none for a column that its codec does not shrink),
	// "snappy" (every column), "zstd" or "none".
	Compression string
	// RowGroupRows and RowGroupBytes cut row groups: after that many rows,
	// or once the buffered row group holds that many encoded bytes (raw
	// value bytes, as Arrow holds them, for the flat writer).
	RowGroupRows  int64
	RowGroupBytes int64
	// NoDictionary writes every column plain; by default integer, date
	// and time columns are delta-encoded and the others dictionary-encoded
	// until their dictionary outgrows a page.
	NoDictionary bool
	// Parallelism is the number of goroutines encoding the columns of a
	// batch; 0 means GOMAXPROCS.
	Parallelism int
}

// ParseCompression checks a compression name; "" is the default, snappy
// with zstd for number, date and time columns (floatCodec), "snappy" is snappy for
// every column, as DuckDB's, Spark's and Doris's. With integer columns
// delta-encoded, snappy takes 10-15% less CPU for the whole export than
// zstd at its fastest level, and the default's file stays smaller than the
// one DuckDB writes with zstd; zstd is there for files that are kept.
func ParseCompression(s string) (compress.Compression, error) {
	switch strings.ToLower(s) {
	case "zstd":
		return compress.Codecs.Zstd, nil
	case "", "snappy":
		return compress.Codecs.Snappy, nil
	case "none", "uncompressed":
		return compress.Codecs.Uncompressed, nil
	}
	return 0, rowttl.Errorf(rowttl.ErrInvalidArgument, "compression %q: only snappy, zstd and none are supported", s)
}

// floatCodec is the default compression of FLOAT and DOUBLE columns, and
// of integer, date and time ones, which are delta-encoded. Float pages
// are what snappy compresses worst and zstd best. On the amount column of
// the bench events table (cents as doubles, 500K live rows) snappy leaves
// 2.70 MB of 4.00 and zstd level 1 1.96 MB; byte-stream-split before zstd
// leaves 2.64 MB for a quarter of plain zstd's CPU (5 against 22 ms),
// which is what the flat writer does. zstd shrinks delta-encoded event
// times to 0.38 MB of 1.54 where snappy leaves 0.48, and keys to 0.15 MB
// of 0.21 where snappy gains nothing.
var floatCodec = compress.Codecs.Zstd

// fastSnappy writes snappy blocks with s2's fastest snappy-compatible
// encoder instead of the "better" one arrow-go's codec uses. Compression
// was a third of an export's CPU; on the bench events table the fast mode
// takes 40% less of it for the string column (37 against 62 ms for 500K
// live rows, encoding included) and writes 20% more bytes for it (6.39
// against 5.34 MB), which the zstd of the float columns wins back: the
// whole default file is 12.5 MB against 12.1 MB with the better mode and
// 11.8 MB for DuckDB's zstd. Any snappy decoder reads the blocks.
type fastSnappy struct{ compress.Codec }

func (fastSnappy) Encode(dst, src []byte) []byte { return encodeSnappyFragments(dst, src) }

func (fastSnappy) EncodeLevel(dst, src []byte, _ int) []byte {
	return encodeSnappyFragments(dst, src)
}

func (fastSnappy) CompressBound(n int64) int64 { return int64(snappyFragmentsBound(int(n), 1)) }

// fastZstd is the zstd of the flat writer's pages: zstd's fastest level,
// as arrow-go's codec writes it at level 1, with two of arrow-go's
// choices undone. A frame's checksum (an xxhash of the page) is left out:
// a frame without one is as valid, and Parquet has a page checksum of its
// own (the page header's crc) for who wants one. And blocks
// hold 32 KiB rather than 128: a page of 32K byte-stream-split doubles
// is then one block per byte stream, each with a Huffman table of its
// own, so that the streams of random mantissa bytes no longer share a
// table with those of exponent bytes, which then code in fewer bits. On
// the bench events table's zstd pages (500K live rows, best of 15 runs)
// zstd takes 6% less time (11.1 against 11.8 ms); in the exported file
// the amount column shrinks by 2.3% (2.51 against 2.57 MB) and event
// times, whose matches now reach back 32 KiB at most, grow by 1.2%
// (0.383 against 0.379 MB). Any zstd decoder reads the frames.
type fastZstd struct{ compress.Codec }

var fastZstdPool = sync.Pool{New: func() any {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithZeroFrames(true), zstd.WithAllLitEntropyCompression(true), zstd.WithEncoderCRC(false),
		zstd.WithWindowSize(zstdWindow))
	if err != nil {
		panic(err) // the options are constants
	}
	return e
}}

// zstdWindow is fastZstd's window, and so its block size.
const zstdWindow = 32 << 10

func (fastZstd) Encode(dst, src []byte) []byte { return fastZstd{}.EncodeLevel(dst, src, 0) }

// EncodeLevel ignores level: the writer's level is zstdLevel, the fastest.
func (fastZstd) EncodeLevel(dst, src []byte, _ int) []byte {
	e := fastZstdPool.Get().(*zstd.Encoder)
	out := e.EncodeAll(src, dst[:0])
	fastZstdPool.Put(e)
	return out
}

// snappyFragment is the most input one call of s2's encoder compresses:
// a page is compressed in fragments of this size into one snappy block,
// as the reference C++ encoder compresses its input (its kBlockSize). s2
// encodes a longer input with a slower loop (32-bit offsets, longer
// copies); on the string column of the bench events table (DELTA_LENGTH,
// 590 KB pages, 9.2 MB for 500K live rows) fragments take 12% less of
// its CPU (10.5 against 11.9 ms) for 0.7% more bytes, as matches no
// longer reach back past a fragment's start.
const snappyFragment = 64 << 10

// snappyFragmentsBound is the most bytes encodeSnappyFragments writes for
// n bytes in the given number of pieces: the block's length, then each
// fragment's worst case.
func snappyFragmentsBound(n, pieces int) int {
	return binary.MaxVarintLen64 + s2.MaxEncodedLen(n) + 32*(n/snappyFragment+pieces)
}

// encodeSnappyFragments returns the pieces, one after another, as one
// snappy block, compressed a fragment at a time (each piece its own
// fragments). Copies never reach into an earlier fragment, and a block's
// elements are read one after another whatever their origin, so the
// fragments' elements, stripped of the length each fragment's block
// starts with, make one block. Each fragment is encoded in place just
// after the one before it, its length written over the last bytes of that
// one, which are put back after: no copy of the output. The pieces let a
// page compress values where its batches hold them, not copied first.
func encodeSnappyFragments(dst []byte, pieces ...[]byte) []byte {
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	if len(pieces) == 1 && n <= snappyFragment {
		return s2.EncodeSnappy(dst, pieces[0])
	}
	if bound := snappyFragmentsBound(n, len(pieces)); cap(dst) < bound {
		dst = make([]byte, bound)
	} else {
		dst = dst[:bound]
	}
	d := binary.PutUvarint(dst, uint64(n))
	var saved [binary.MaxVarintLen64]byte
	for _, src := range pieces {
		for off := 0; off < len(src); off += snappyFragment {
			frag := src[off:min(len(src), off+snappyFragment)]
			// A fragment's length takes no more bytes than the whole's,
			// which the first fragment overwrites.
			at := d - uvarintLen(uint64(len(frag)))
			copy(saved[:], dst[at:d])
			e := s2.EncodeSnappy(dst[at:], frag)
			copy(dst[at:d], saved[:d-at])
			d = at + len(e)
		}
	}
	return dst[:d]
}

func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// arrow-go's codecs are a process-wide registry: replacing snappy's there
// is the only way its page writers take another encoder. Only Parquet
// writing compresses with it, and decoding is unchanged.
func init() {
	if c, err := compress.GetCodec(compress.Codecs.Snappy); err == nil {
		compress.RegisterCodec(compress.Codecs.Snappy, fastSnappy{c})
	}
}

// ParquetWriter streams record batches into a Parquet file.
//
// It writes row groups buffered (every column chunk in memory until the
// row group closes), so the column chunks of a batch are independent and
// are encoded and compressed on several goroutines at once; the chunks
// still reach the file one after another, in column order, when their
// row group closes. Encoding is most of an export's CPU, and a writer
// that ran it on one goroutine left the second core idle while the scan
// waited for it.
type ParquetWriter struct {
	// The file is begun at the first batch, which decides between the flat
	// writer and arrow-go's (fw).
	w        io.Writer
	pqs      *schema.Schema
	props    *parquet.WriterProperties
	kv       metadata.KeyValueMetadata
	flatOK   bool // every column is of a kind flatWriter encodes
	adaptive bool // the default compression: columns it does not shrink are stored
	begun    bool
	flat     *flatWriter
	fw       *file.Writer
	sc       *arrow.Schema
	cols     []parquetColumn
	order    []int // column indices, the most expensive to encode first
	workers  int
	maxRows  int64
	maxBytes int64
	rgw      file.BufferedRowGroupWriter
	rgRows   int64
	rows     int64
	err      error // the first failure; the file is unusable after it
}

// parquetColumn is one column's writing state, used by one goroutine at
// a time.
type parquetColumn struct {
	nullable bool
	// ctx carries pqarrow's per-column scratch buffers, which must not be
	// shared by columns encoded at once.
	ctx  context.Context
	defs []int16 // definition levels of the batch being written
}

// serialRows is the batch size under which the columns of a batch are
// encoded on the caller's goroutine: handing a few rows to other
// goroutines costs more than it saves.
const serialRows = 4096

// NewParquetWriter returns a writer of batches of schema sc to w.
func NewParquetWriter(w io.Writer, sc *arrow.Schema, o ParquetOptions, mem memory.Allocator) (*ParquetWriter, error) {
	codec, err := ParseCompression(o.Compression)
	if err != nil {
		return nil, err
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if o.RowGroupRows <= 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	if o.RowGroupBytes <= 0 {
		o.RowGroupBytes = DefaultRowGroupBytes
	}
	if o.Parallelism <= 0 {
		o.Parallelism = runtime.GOMAXPROCS(0)
	}
	for _, f := range sc.Fields() {
		if !flatType(f.Type) {
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "parquet: column %s: nested type %s is not written", f.Name, f.Type)
		}
	}
	opts := []parquet.WriterProperty{
		parquet.WithAllocator(mem),
		parquet.WithCompression(codec),
		parquet.WithCompressionLevel(zstdLevel),
		parquet.WithMaxRowGroupLength(o.RowGroupRows),
		parquet.WithDictionaryDefault(!o.NoDictionary),
		parquet.WithStats(true),
		parquet.WithDictionaryPageSizeLimit(dictionaryPageLimit),
		parquet.WithDataPageSize(dataPageSize),
		parquet.WithCreatedBy("rowttl"),
	}
	aprops := pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem))
	pqs, err := pqarrow.ToParquet(sc, parquet.NewWriterProperties(opts...), aprops)
	if err != nil {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "parquet: %w", err)
	}
	for i := range pqs.NumColumns() {
		col := pqs.Column(i)
		if !o.NoDictionary && deltaEncoded(col.PhysicalType()) {
			opts = append(opts, parquet.WithDictionaryPath(col.ColumnPath(), false),
				parquet.WithEncodingPath(col.ColumnPath(), parquet.Encodings.DeltaBinaryPacked))
		}
		if o.Compression == "" && floating(col.PhysicalType()) {
			opts = append(opts, parquet.WithCompressionPath(col.ColumnPath(), floatCodec))
		}
		if !o.NoDictionary && floating(col.PhysicalType()) && (o.Compression == "" || codec == compress.Codecs.Zstd) {
			opts = append(opts, parquet.WithEncodingPath(col.ColumnPath(), parquet.Encodings.ByteStreamSplit))
		}
		if !o.NoDictionary && col.PhysicalType() == parquet.Types.ByteArray {
			opts = append(opts, parquet.WithEncodingPath(col.ColumnPath(), parquet.Encodings.DeltaLengthByteArray))
		}
		if o.Compression == "" && !o.NoDictionary && deltaEncoded(col.PhysicalType()) {
			opts = append(opts, parquet.WithCompressionPath(col.ColumnPath(), compress.Codecs.Zstd))
		}
	}
	props := parquet.NewWriterProperties(opts...)
	// The footer keeps the Arrow schema as pqarrow's WithStoreSchema
	// stores it, so Arrow readers get the exact types back.
	kv := metadata.KeyValueMetadata{}
	md := sc.Metadata()
	for i, k := range md.Keys() {
		kv.Append(k, md.Values()[i])
	}
	kv.Append(arrowSchemaKey, base64.StdEncoding.EncodeToString(flight.SerializeSchema(sc, mem)))
	if types, ok := fileTypes(sc); ok {
		kv.Append(typesKey, types)
	}
	pw := &ParquetWriter{w: w, pqs: pqs, props: props, kv: kv, sc: sc, workers: o.Parallelism, maxRows: o.RowGroupRows, maxBytes: o.RowGroupBytes}
	for _, f := range sc.Fields() {
		pw.cols = append(pw.cols, parquetColumn{nullable: f.Nullable, ctx: pqarrow.NewArrowWriteContext(context.Background(), &aprops)})
		pw.order = append(pw.order, len(pw.order))
	}
	// Longest first, so the last column to start is a cheap one and the
	// goroutines finish a batch together.
	slices.SortStableFunc(pw.order, func(a, b int) int { return encodeCost(sc.Field(b).Type) - encodeCost(sc.Field(a).Type) })
	pw.adaptive = o.Compression == ""
	_, pw.flatOK = newFlatWriter(nil, sc, pqs, props, kv, nil, 0, false)
	pw.flatOK = pw.flatOK && !o.NoDictionary
	return pw, nil
}

// begin starts the file with the writer that suits the first batch (nil
// when there is none): the flat writer, unless a column of the batch
// repeats so few values that a dictionary, which only arrow-go's writes,
// would make the file much smaller.
func (pw *ParquetWriter) begin(rec arrow.RecordBatch) error {
	pw.begun = true
	if pw.flatOK && (rec == nil || !repetitive(rec)) {
		pw.flat, _ = newFlatWriter(pw.w, pw.sc, pw.pqs, pw.props, pw.kv, pw.order, pw.workers, pw.adaptive)
		return nil
	}
	fw, err := file.NewParquetWriterWithError(pw.w, pw.pqs.Root(), file.WithWriterProps(pw.props), file.WithWriteMetadata(pw.kv))
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	pw.fw = fw
	return nil
}

// repetitive reports a batch with a FLOAT, DOUBLE or string column whose
// first values repeat few distinct ones (an eighth of them or fewer): the
// columns that arrow-go's writer dictionary-encodes while the dictionary
// stays under a page. Integer columns are delta-encoded by both writers.
func repetitive(rec arrow.RecordBatch) bool {
	const sample, least = 4096, 64
	for _, c := range rec.Columns() {
		n := min(c.Len(), sample)
		var distinct, count int
		switch a := c.(type) {
		case *array.String, *array.Binary:
			seen := make(map[string]struct{})
			bin := a.(interface{ ValueStr(int) string })
			for j := range n {
				if a.IsValid(j) {
					seen[bin.ValueStr(j)] = struct{}{}
					count++
				}
			}
			distinct = len(seen)
		case *array.Float64:
			seen := make(map[float64]struct{})
			for j := range n {
				if a.IsValid(j) {
					seen[a.Value(j)] = struct{}{}
					count++
				}
			}
			distinct = len(seen)
		case *array.Float32:
			seen := make(map[float32]struct{})
			for j := range n {
				if a.IsValid(j) {
					seen[a.Value(j)] = struct{}{}
					count++
				}
			}
			distinct = len(seen)
		default:
			continue
		}
		if count >= least && distinct*8 <= count {
			return true
		}
	}
	return false
}

// deltaEncoded reports the physical types written DELTA_BINARY_PACKED
// instead of dictionary-encoded: integers, dates and times. Their values
// mostly lie near their neighbours (keys, event times, expirations), so
// the deltas take a few bits each and the codec gets a fraction of the
// bytes a plain page would give it, where a dictionary of such a column
// soon outgrows its page and falls back to plain. On the 1M-row bench
// events table (four BIGINT or DATETIME columns of six, zstd) the file is
// 19% smaller and its encoding takes a quarter less CPU. arrow-go, DuckDB
// and Doris decode it (DuckDB's answers over such a file are rowttl's).
func deltaEncoded(t parquet.Type) bool {
	return t == parquet.Types.Int32 || t == parquet.Types.Int64
}

// floating reports the physical types of FLOAT and DOUBLE columns.
func floating(t parquet.Type) bool {
	return t == parquet.Types.Float || t == parquet.Types.Double
}

// flatType reports a type that is one Parquet leaf column: the only kind
// rowttl files hold, and the only kind this writer's levels describe.
func flatType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.STRUCT, arrow.MAP,
		arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW, arrow.DENSE_UNION, arrow.SPARSE_UNION,
		arrow.RUN_END_ENCODED:
		return false
	case arrow.EXTENSION:
		return flatType(dt.(arrow.ExtensionType).StorageType())
	}
	return true
}

// encodeCost ranks the work of encoding a value of a type: strings cost
// their bytes, fixed-width values their width.
func encodeCost(dt arrow.DataType) int {
	if fw, ok := dt.(arrow.FixedWidthDataType); ok {
		return fw.BitWidth()
	}
	return 1 << 10
}

// fileTypes lists the rowttl types of a schema's fields, when each has one.
func fileTypes(sc *arrow.Schema) (string, bool) {
	var ts []string
	for _, f := range sc.Fields() {
		t, ok := f.Metadata.GetValue(TypeKey)
		if !ok || strings.Contains(t, ";") {
			return "", false
		}
		ts = append(ts, t)
	}
	return strings.Join(ts, ";"), true
}

// Write appends the rows of rec, which must have the writer's schema.
func (pw *ParquetWriter) Write(rec arrow.RecordBatch) error {
	if pw.err != nil {
		return pw.err
	}
	if rec.NumRows() == 0 {
		return nil
	}
	if !rec.Schema().Equal(pw.sc) {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "parquet: the batch's schema %s is not the file's %s", rec.Schema(), pw.sc)
	}
	if !pw.begun {
		if err := pw.begin(rec); err != nil {
			return pw.fail(err)
		}
	}
	n := rec.NumRows()
	if pw.flat != nil {
		return pw.writeFlat(rec)
	}
	for off := int64(0); off < n; {
		if pw.rgw == nil {
			rgw, err := pw.fw.AppendBufferedRowGroupChecked()
			if err != nil {
				return pw.fail(err)
			}
			pw.rgw, pw.rgRows = rgw, 0
		}
		size := min(n-off, pw.maxRows-pw.rgRows)
		part := rec
		if off > 0 || size < n {
			part = rec.NewSlice(off, off+size)
		}
		err := pw.writeColumns(part)
		if part != rec {
			part.Release()
		}
		if err != nil {
			return pw.fail(err)
		}
		off += size
		pw.rgRows += size
		pw.rows += size
		// Encoded pages count; the page each column is filling (at most the
		// data page size) does not, which bounds the error.
		if pw.rgRows >= pw.maxRows || pw.rgw.TotalCompressedBytes() >= pw.maxBytes {
			if err := pw.closeRowGroup(); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeFlat hands the rows of rec to the flat writer, cut where row
// groups end.
func (pw *ParquetWriter) writeFlat(rec arrow.RecordBatch) error {
	n := rec.NumRows()
	for off := int64(0); off < n; {
		var inGroup int64
		if pw.flat.open != nil {
			inGroup = pw.flat.open.rows
		}
		size := min(n-off, pw.maxRows-inGroup)
		part := rec.NewSlice(off, off+size)
		err := pw.flat.add(part, pw.maxRows, pw.maxBytes)
		part.Release()
		if err != nil {
			return pw.fail(err)
		}
		off += size
		pw.rows += size
	}
	return nil
}

// writeColumns encodes every column of rec into the open row group.
func (pw *ParquetWriter) writeColumns(rec arrow.RecordBatch) error {
	workers := min(pw.workers, len(pw.cols))
	if workers <= 1 || rec.NumRows() < serialRows {
		for _, i := range pw.order {
			if err := pw.writeColumn(i, rec.Column(i)); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, len(pw.cols))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= len(pw.order) {
					return
				}
				i := pw.order[k]
				errs[i] = pw.writeColumn(i, rec.Column(i))
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// writeColumn encodes arr as the next values of column i. The schema is
// flat, so a value's definition level is 1 when it is present and 0 when
// it is NULL, and a NOT NULL column has none: the levels are read off the
// validity bitmap instead of through pqarrow's general path builder.
func (pw *ParquetWriter) writeColumn(i int, arr arrow.Array) error {
	c := &pw.cols[i]
	cw, err := pw.rgw.Column(i)
	if err != nil {
		return err
	}
	var defs []int16
	if c.nullable {
		n := arr.Len()
		if cap(c.defs) < n {
			c.defs = make([]int16, n)
		}
		defs = c.defs[:n]
		for j := range defs {
			defs[j] = 1
		}
		if arr.NullN() > 0 {
			bm, off := arr.NullBitmapBytes(), arr.Data().Offset()
			for j := range defs {
				if !bitutil.BitIsSet(bm, off+j) {
					defs[j] = 0
				}
			}
		}
	}
	if err := pqarrow.WriteArrowToColumn(c.ctx, cw, arr, defs, nil, c.nullable); err != nil {
		return fmt.Errorf("column %s: %w", pw.sc.Field(i).Name, err)
	}
	return nil
}

// closeRowGroup writes the open row group's column chunks to the file.
func (pw *ParquetWriter) closeRowGroup() error {
	if err := pw.rgw.Close(); err != nil {
		return pw.fail(err)
	}
	pw.rgw = nil
	return nil
}

// fail keeps the first error and frees what the open row group holds:
// after a failure the file is unusable, and nothing else would close the
// column writers that a failed row group left open.
func (pw *ParquetWriter) fail(err error) error {
	if pw.err == nil {
		pw.err = fmt.Errorf("parquet: %w", err)
	}
	if pw.flat != nil {
		pw.flat.stop()
	}
	if pw.rgw != nil {
		for i := range pw.cols {
			if cw, err := pw.rgw.Column(i); err == nil && cw != nil {
				cw.Close() // its error is pw.err's consequence
			}
		}
		pw.rgw = nil
	}
	return pw.err
}

// Rows returns the rows written so far.
func (pw *ParquetWriter) Rows() int64 { return pw.rows }

// Close writes the last row group and the footer. It does not close the
// underlying writer.
func (pw *ParquetWriter) Close() error {
	if pw.err != nil {
		return pw.err
	}
	if !pw.begun {
		if err := pw.begin(nil); err != nil {
			return pw.fail(err)
		}
	}
	if pw.flat != nil {
		if err := pw.flat.finish(); err != nil {
			return pw.fail(err)
		}
		pw.err = errors.New("parquet: the file is closed")
		return nil
	}
	if pw.rgw != nil {
		if err := pw.closeRowGroup(); err != nil {
			return err
		}
	}
	if err := pw.fw.Close(); err != nil {
		return pw.fail(err)
	}
	return nil
}

// parquetMagic starts and ends every Parquet file (the encrypted-footer
// variant "PARE" is not read).
const parquetMagic = "PAR1"

// ReaderAtSeeker is what reading a Parquet file needs: random access.
type ReaderAtSeeker = parquet.ReaderAtSeeker

// ParquetReader reads a Parquet file as record batches of its columns.
type ParquetReader struct {
	name    string
	pf      *file.Reader
	fr      *pqarrow.FileReader
	sc      *arrow.Schema
	scratch *scratchAllocator
}

// DefaultBatchRows is the rows of each batch a ParquetReader returns.
const DefaultBatchRows = 64 << 10

// OpenParquet checks the frame of a Parquet file (the magic at both ends,
// the footer and the schema) and returns its reader; name is the file's
// name in messages. Every error about the file's contents wraps
// rowttl.ErrCorruption (a file that is not Parquet, or cut short) or
// rowttl.ErrNotSupported (encryption, types rowttl cannot hold are only
// refused when read).
func OpenParquet(name string, r ReaderAtSeeker, size int64, mem memory.Allocator) (pr *ParquetReader, err error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	defer recoverCorrupt(name, &err)
	var head, tail [4]byte
	if size < 12 {
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "%s: not a Parquet file: %d bytes is shorter than a Parquet frame", name, size)
	}
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if _, err := r.ReadAt(tail[:], size-4); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if string(head[:]) != parquetMagic {
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "%s: not a Parquet file: it starts with %q, not %q", name, head[:], parquetMagic)
	}
	if string(tail[:]) != parquetMagic {
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "%s: not a whole Parquet file: it ends with %q, not %q (truncated?)", name, tail[:], parquetMagic)
	}
	props := parquet.NewReaderProperties(mem)
	// Pages stream through a buffer instead of whole column chunks being
	// read at once, so memory stays near a batch whatever the row groups.
	props.BufferedStreamEnabled = true
	props.BufferSize = 1 << 20
	pf, err := file.NewParquetReader(r, file.WithReadProps(props))
	if err != nil {
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "%s: bad Parquet footer: %w", name, err)
	}
	types := trustMetadata(pf)
	// The column readers and their decoders take memory from pqarrow's
	// allocator, not from the file's.
	scratch := newScratchAllocator(mem)
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: DefaultBatchRows}, scratch)
	if err != nil {
		pf.Close()
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "%s: bad Parquet schema: %w", name, err)
	}
	sc, err := fr.Schema()
	if err != nil {
		pf.Close()
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "%s: bad Parquet schema: %w", name, err)
	}
	if len(types) == sc.NumFields() {
		fs := sc.Fields()
		for i := range fs {
			fs[i].Metadata = arrow.NewMetadata([]string{TypeKey}, []string{types[i]})
		}
		sc = arrow.NewSchema(fs, nil)
	}
	return &ParquetReader{name: name, pf: pf, fr: fr, sc: sc, scratch: scratch}, nil
}

// Footer keys: the Arrow schema pqarrow stores, and the rowttl types this
// package stores beside it (one per top-level column, ';'-separated).
const (
	arrowSchemaKey = "ARROW:schema"
	typesKey       = "rowttl.types"
)

// trustMetadata removes the stored Arrow schema from a file's footer
// before pqarrow sees it, and returns the rowttl types of the columns
// when the file names them. Arrow's flatbuffer decoder allocates whatever
// lengths a damaged schema claims (a few bytes can ask for gigabytes,
// which no recover catches), and everything rowttl needs from it is in
// the Parquet schema and the rowttl types.
func trustMetadata(pf *file.Reader) []string {
	md := pf.MetaData()
	kv := md.KeyValueMetadata()
	var types []string
	kept := kv[:0:0]
	for _, e := range kv {
		switch e.Key {
		case arrowSchemaKey:
			continue
		case typesKey:
			if e.Value != nil {
				types = strings.Split(*e.Value, ";")
			}
		}
		kept = append(kept, e)
	}
	md.FileMetaData.KeyValueMetadata = kept
	return types
}

// recoverCorrupt turns a panic of the Parquet decoder on malformed input
// into a corruption error: a file's bytes must never crash the process.
func recoverCorrupt(name string, err *error) {
	if p := recover(); p != nil {
		*err = rowttl.Errorf(rowttl.ErrCorruption, "%s: malformed Parquet data: %v", name, p)
	}
}

// Schema returns the file's columns as Arrow fields.
func (pr *ParquetReader) Schema() *arrow.Schema { return pr.sc }

// NumRows returns the rows the footer announces.
func (pr *ParquetReader) NumRows() int64 { return pr.pf.NumRows() }

// NumRowGroups returns the file's row groups.
func (pr *ParquetReader) NumRowGroups() int { return pr.pf.NumRowGroups() }

// SetBatchRows sets the rows of each batch of the streams Records returns
// from now on (DefaultBatchRows until set); n <= 0 keeps the default.
func (pr *ParquetReader) SetBatchRows(n int) {
	if n <= 0 {
		n = DefaultBatchRows
	}
	pr.fr.Props.BatchSize = int64(n)
}

// Close releases the reader. It does not close the underlying file.
func (pr *ParquetReader) Close() error {
	err := pr.pf.Close()
	pr.scratch.release()
	return err
}

// Records returns a stream of batches of the given columns (indices into
// Schema; nil for all) of every row group.
func (pr *ParquetReader) Records(ctx context.Context, cols []int) (rr array.RecordReader, err error) {
	defer recoverCorrupt(pr.name, &err)
	var leaves []int
	if cols != nil {
		// pqarrow selects leaf columns; rowttl files are flat, and a nested
		// column has no rowttl type, so a field is a leaf here.
		for _, c := range cols {
			l, err := pr.leaves(c)
			if err != nil {
				return nil, err
			}
			leaves = append(leaves, l...)
		}
		if len(leaves) == 0 {
			return &emptyReader{sc: arrow.NewSchema(nil, nil)}, nil
		}
	}
	if pr.pf.NumRowGroups() == 0 {
		fs := pr.sc.Fields()
		if cols != nil {
			fs = nil
			for _, c := range cols {
				fs = append(fs, pr.sc.Field(c))
			}
		}
		return &emptyReader{sc: arrow.NewSchema(fs, nil)}, nil
	}
	rdr, err := pr.fr.GetRecordReader(ctx, leaves, nil)
	if err != nil {
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "%s: %w", pr.name, err)
	}
	return &safeReader{name: pr.name, RecordReader: rdr}, nil
}

// leaves returns the leaf column indices of top-level field i.
func (pr *ParquetReader) leaves(i int) ([]int, error) {
	if i < 0 || i >= len(pr.fr.Manifest.Fields) {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "%s: no column %d", pr.name, i)
	}
	var out []int
	var walk func(f *pqarrow.SchemaField)
	walk = func(f *pqarrow.SchemaField) {
		if f.IsLeaf() {
			out = append(out, f.ColIndex)
			return
		}
		for j := range f.Children {
			walk(&f.Children[j])
		}
	}
	walk(&pr.fr.Manifest.Fields[i])
	return out, nil
}

// safeReader marks the decoder's errors as corruption and turns its panics
// on malformed pages into errors.
type safeReader struct {
	name string
	pqarrow.RecordReader
	err error
}

func (s *safeReader) Next() (ok bool) {
	if s.err != nil {
		return false
	}
	defer func() {
		if p := recover(); p != nil {
			s.err = rowttl.Errorf(rowttl.ErrCorruption, "%s: malformed Parquet data: %v", s.name, p)
			ok = false
		}
	}()
	return s.RecordReader.Next()
}

func (s *safeReader) Err() error {
	if s.err != nil {
		return s.err
	}
	if err := s.RecordReader.Err(); err != nil && !errors.Is(err, io.EOF) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return rowttl.Errorf(rowttl.ErrCorruption, "%s: reading Parquet data: %w", s.name, err)
	}
	return nil
}

// emptyReader is the stream of a file without row groups.
type emptyReader struct {
	sc *arrow.Schema
}

func (e *emptyReader) Retain()                        {}
func (e *emptyReader) Release()                       {}
func (e *emptyReader) Schema() *arrow.Schema          { return e.sc }
func (e *emptyReader) Next() bool                     { return false }
func (e *emptyReader) RecordBatch() arrow.RecordBatch { return nil }
func (e *emptyReader) Record() arrow.RecordBatch      { return nil }
func (e *emptyReader) Err() error                     { return nil }
