package fileformat

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/rowttl/rowttl"
)

// flatWriter writes Parquet files whose columns are all of the flat kinds
// it encodes itself (integers, dates and times, FLOAT, DOUBLE, strings and
// binary; required or optional), the shape of the exports. arrow-go's
// column writers were four fifths of an export's CPU: they go through
// levels, a generic page builder, per-value statistics and copies that a
// flat column does not need. Here a page is one batch of rows of one
// column: its levels are the validity bitmap (one bit-packed run, or one
// repeated run when nothing is NULL), its values one pass over the Arrow
// buffers (DELTA_BINARY_PACKED integers, PLAIN for the rest), its
// statistics computed in the same pass, then compressed once. Pages of
// different columns and of different batches are independent, so they
// are encoded on a pool of goroutines while the caller scans the next
// batches; a row group is written, column after column, as soon as all
// its pages are done. arrow-go still builds the footer.
type flatWriter struct {
	w     io.Writer
	off   int64 // bytes written
	cols  []flatColumn
	order []int // the most expensive columns first
	meta  *metadata.FileMetaDataBuilder

	workers int
	tasks   chan flatTask
	running sync.WaitGroup
	slots   chan struct{} // one per group being encoded: bounds memory

	pending     []arrow.RecordBatch // rows not yet handed to the encoders
	pendingRows int
	open        *flatRowGroup
	// Closed row groups go to the flusher, a goroutine that writes each
	// once its pages are encoded, so that the caller scans on meanwhile.
	flushQ    chan *flatRowGroup
	flushDone chan struct{}
	flushErr  atomic.Pointer[error] // the flusher's first failure
	ordinal   int16
	started   bool
	stopped   bool
	// adaptive stores a column uncompressed when its codec does not pay on
	// its first page (tried).
	adaptive, tried bool
}

// flatColumn is what a column's pages share.
type flatColumn struct {
	name     string
	kind     flatKind
	nullable bool
	enc      int32
	codec    compress.Codec
	level    int
	stored   bool // written uncompressed: its codec did not pay
	none     bool // stored, or the codec is UNCOMPRESSED
}

type flatKind uint8

const (
	flatInt32 flatKind = iota // INT8, INT16, INT32, DATE32 as INT32
	flatInt64                 // INT64, TIMESTAMP as INT64
	flatFloat
	flatDouble
	flatBytes // STRING, BINARY as BYTE_ARRAY
)

// Batches are cut into groups of rows, each a page of every column:
// large enough that a page's fixed costs (a header, a compressor's
// start) vanish and the codecs see long inputs, small enough that a few
// groups in flight stay within a core's cache and a bounded memory.
const (
	flatGroupRows = 1 << 15 // a group is handed to the encoders once it has this many rows
	flatSliceRows = 1 << 16 // a larger batch is cut into slices of this many rows
	flatInFlight  = 4       // groups being encoded at once, per goroutine
)

// storedGain is the least share of a column's bytes (a tenth) that its
// codec must save on the column's first page for its other pages to be
// compressed too. Delta-encoded keys and random numbers (the id, user_id
// and __TTL__ columns of the bench events table) are bit-packed to their
// entropy already, and snappy only costs CPU on them for a slightly
// larger page.
const storedGain = 10

// flatKindOf returns the kind that writes Arrow type dt as the physical
// type phys, if this writer encodes it.
func flatKindOf(dt arrow.DataType, phys parquet.Type) (flatKind, bool) {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.DATE32:
		return flatInt32, phys == parquet.Types.Int32
	case arrow.INT64:
		return flatInt64, phys == parquet.Types.Int64
	case arrow.TIMESTAMP:
		// pqarrow writes seconds as milliseconds, a conversion this writer
		// does not make.
		return flatInt64, phys == parquet.Types.Int64 && dt.(*arrow.TimestampType).Unit != arrow.Second
	case arrow.FLOAT32:
		return flatFloat, phys == parquet.Types.Float
	case arrow.FLOAT64:
		return flatDouble, phys == parquet.Types.Double
	case arrow.STRING, arrow.BINARY:
		return flatBytes, phys == parquet.Types.ByteArray
	}
	return 0, false
}

// newFlatWriter returns a writer of the columns of pqs, which must all be
// of a flat kind (flatKindOf), or false.
func newFlatWriter(w io.Writer, sc *arrow.Schema, pqs *schema.Schema, props *parquet.WriterProperties, kv metadata.KeyValueMetadata, order []int, workers int, adaptive bool) (*flatWriter, bool) {
	fw := &flatWriter{w: w, order: order, workers: workers, adaptive: adaptive}
	for i, f := range sc.Fields() {
		col := pqs.Column(i)
		kind, ok := flatKindOf(f.Type, col.PhysicalType())
		if !ok || col.MaxRepetitionLevel() != 0 || col.MaxDefinitionLevel() != boolToLevel(f.Nullable) {
			return nil, false
		}
		c := flatColumn{name: f.Name, kind: kind, nullable: f.Nullable, enc: int32(props.EncodingFor(col.Path()))}
		switch kind {
		case flatInt32, flatInt64:
			ok = c.enc == encDeltaBP
		case flatFloat, flatDouble:
			ok = c.enc == encPlain || c.enc == encBSS
		case flatBytes:
			ok = c.enc == encPlain || c.enc == encDeltaLength
		}
		if !ok {
			return nil, false
		}
		codec := props.CompressionFor(col.Path())
		cd, err := compress.GetCodec(codec)
		if err != nil {
			return nil, false
		}
		c.codec, c.level, c.none = cd, props.CompressionLevelFor(col.Path()), codec == compress.Codecs.Uncompressed
		if codec == compress.Codecs.Zstd {
			c.codec = fastZstd{cd}
		}
		fw.cols = append(fw.cols, c)
	}
	fw.meta = metadata.NewFileMetadataBuilder(pqs, props, kv)
	return fw, true
}

func boolToLevel(b bool) int16 {
	if b {
		return 1
	}
	return 0
}

// flatGroup is a run of rows encoded as one page of each column.
type flatGroup struct {
	recs  []arrow.RecordBatch
	rows  int
	pages []flatPage // one per column
	left  atomic.Int32
	done  chan struct{}
}

// flatRowGroup is the groups of a row group.
type flatRowGroup struct {
	groups []*flatGroup
	rows   int64
	raw    int64 // value bytes of its rows, as Arrow holds them
}

// flatPage is one encoded page and what the footer needs of it.
type flatPage struct {
	hdr   []byte
	body  []byte // compressed
	raw   int    // body's bytes before compression
	stats flatStats
	err   error
}

type flatTask struct {
	g     *flatGroup
	col   int
	trial bool // the column's first page, which decides its codec
}

// add takes the rows of rec (the writer's schema, fewer than the row
// group lacks); it encodes them later, on the pool.
func (fw *flatWriter) add(rec arrow.RecordBatch, maxRows, maxBytes int64) error {
	if fw.open == nil {
		fw.open = &flatRowGroup{}
	}
	for off, n := int64(0), rec.NumRows(); off < n; {
		size := min(n-off, flatSliceRows)
		part := rec.NewSlice(off, off+size)
		off += size
		fw.pending = append(fw.pending, part)
		fw.pendingRows += int(size)
		fw.open.rows += size
		fw.open.raw += rawBytes(part)
		if fw.pendingRows >= flatGroupRows {
			fw.submit()
		}
	}
	if fw.open.rows >= maxRows || fw.open.raw >= maxBytes {
		return fw.closeRowGroup()
	}
	return fw.flushed()
}

// flushed returns the flusher's failure, if any.
func (fw *flatWriter) flushed() error {
	if p := fw.flushErr.Load(); p != nil {
		return *p
	}
	return nil
}

// rawBytes is the size of the values of rec as Arrow holds them: the
// measure of a row group's size before it is encoded.
func rawBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		var offs []int32
		switch a := c.(type) {
		case *array.String:
			offs = a.ValueOffsets()
		case *array.Binary:
			offs = a.ValueOffsets()
		}
		if len(offs) > 0 {
			n += int64(offs[len(offs)-1] - offs[0])
		}
		if fw, ok := c.DataType().(arrow.FixedWidthDataType); ok {
			n += int64(c.Len() * fw.BitWidth() / 8)
		} else {
			n += 4 * int64(c.Len())
		}
	}
	return n
}

// submit hands the pending rows to the encoders as one group.
func (fw *flatWriter) submit() {
	if fw.pendingRows == 0 {
		return
	}
	g := &flatGroup{recs: fw.pending, rows: fw.pendingRows, pages: make([]flatPage, len(fw.cols)), done: make(chan struct{})}
	fw.pending, fw.pendingRows = nil, 0
	fw.open.groups = append(fw.open.groups, g)
	g.left.Store(int32(len(fw.cols)))
	trial := fw.adaptive && !fw.tried
	if fw.workers <= 1 || trial {
		// The first group decides each column's codec before any other
		// page of it is encoded.
		fw.tried = true
		sc := getFlatScratch()
		for _, i := range fw.order {
			fw.run(flatTask{g, i, trial}, sc)
		}
		flatScratchPool.Put(sc)
		return
	}
	if fw.tasks == nil {
		fw.tasks = make(chan flatTask, fw.workers*flatInFlight*len(fw.cols))
		fw.slots = make(chan struct{}, fw.workers*flatInFlight)
		for range fw.workers {
			fw.running.Go(func() {
				sc := getFlatScratch()
				for t := range fw.tasks {
					fw.run(t, sc)
				}
				flatScratchPool.Put(sc)
			})
		}
	}
	fw.slots <- struct{}{}
	for _, i := range fw.order {
		fw.tasks <- flatTask{g, i, false}
	}
}

// run encodes one page; the last page of a group frees its rows.
func (fw *flatWriter) run(t flatTask, sc *flatScratch) {
	t.g.pages[t.col] = fw.cols[t.col].encode(t.g, t.col, sc, t.trial)
	if t.g.left.Add(-1) == 0 {
		for _, r := range t.g.recs {
			r.Release()
		}
		t.g.recs = nil
		close(t.g.done)
		if fw.slots != nil && fw.workers > 1 {
			<-fw.slots
		}
	}
}

// closeRowGroup ends the open row group; its pages may still be encoding.
// Serial, it writes the row group at once; else the flusher writes it, and
// a second closed row group waits for the one before it to be taken.
func (fw *flatWriter) closeRowGroup() error {
	rg := fw.open
	if rg == nil {
		return fw.flushed()
	}
	fw.submit()
	fw.open = nil
	if rg.rows == 0 {
		return fw.flushed()
	}
	if fw.workers <= 1 {
		return fw.writeRowGroup(rg)
	}
	if fw.flushQ == nil {
		// Unbuffered: a closed row group waits for the one before it to be
		// written, so that at most two are held.
		fw.flushQ, fw.flushDone = make(chan *flatRowGroup), make(chan struct{})
		go fw.flush()
	}
	fw.flushQ <- rg
	return fw.flushed()
}

// flush writes the row groups of flushQ in order; after a failure it only
// waits for their pages.
func (fw *flatWriter) flush() {
	defer close(fw.flushDone)
	for rg := range fw.flushQ {
		for _, g := range rg.groups {
			<-g.done
		}
		if fw.flushErr.Load() != nil {
			continue
		}
		if err := fw.writeRowGroup(rg); err != nil {
			fw.flushErr.Store(&err)
		}
	}
}

// stopFlusher waits for the flusher to write what it was given.
func (fw *flatWriter) stopFlusher() error {
	if fw.flushQ != nil {
		close(fw.flushQ)
		<-fw.flushDone
		fw.flushQ = nil
	}
	return fw.flushed()
}

func (fw *flatWriter) write(p []byte) error {
	n, err := fw.w.Write(p)
	fw.off += int64(n)
	return err
}

func (fw *flatWriter) start() error {
	if fw.started {
		return nil
	}
	fw.started = true
	return fw.write([]byte(parquetMagic))
}

// writeRowGroup writes the pages of rg, column after column, and their
// metadata.
func (fw *flatWriter) writeRowGroup(rg *flatRowGroup) error {
	for _, g := range rg.groups {
		for i := range g.pages {
			if err := g.pages[i].err; err != nil {
				return fmt.Errorf("column %s: %w", fw.cols[i].name, err)
			}
		}
	}
	if err := fw.start(); err != nil {
		return err
	}
	rgb := fw.meta.AppendRowGroup()
	rgb.SetNumRows(int(rg.rows))
	for i := range fw.cols {
		ccb := rgb.NextColumnChunk()
		if fw.cols[i].stored {
			// The builder took the codec of the writer's properties;
			// UNCOMPRESSED is 0 in the format's enum.
			ccb.Contents().MetaData.Codec = 0
		}
		first := fw.off
		var raw int64
		var st flatStats
		for _, g := range rg.groups {
			p := &g.pages[i]
			if err := fw.write(p.hdr); err != nil {
				return err
			}
			if err := fw.write(p.body); err != nil {
				return err
			}
			raw += int64(len(p.hdr) + p.raw)
			st.merge(&p.stats, fw.cols[i].kind)
			putPageBuf(p.body)
			p.body, p.hdr = nil, nil
		}
		ccb.SetStats(st.encode(fw.cols[i].kind))
		err := ccb.Finish(metadata.ChunkMetaInfo{
			NumValues:        rg.rows,
			DataPageOffset:   first,
			IndexPageOffset:  -1,
			CompressedSize:   fw.off - first,
			UncompressedSize: raw,
		}, false, false, metadata.EncodingStats{DataEncodingStats: map[parquet.Encoding]int32{parquet.Encoding(fw.cols[i].enc): int32(len(rg.groups))}})
		if err != nil {
			return err
		}
	}
	if err := rgb.Finish(0, fw.ordinal); err != nil {
		return err
	}
	fw.ordinal++
	return nil
}

// finish writes what is left and the footer.
func (fw *flatWriter) finish() error {
	err := fw.closeRowGroup()
	if ferr := fw.stopFlusher(); err == nil {
		err = ferr
	}
	fw.stop()
	if err != nil {
		return err
	}
	if err := fw.start(); err != nil {
		return err
	}
	md, err := fw.meta.Finish()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	n, err := md.WriteTo(&buf, nil)
	if err != nil {
		return err
	}
	buf.Write(binary.LittleEndian.AppendUint32(nil, uint32(n)))
	buf.WriteString(parquetMagic)
	return fw.write(buf.Bytes())
}

// stop ends the encoders and frees every row still held: after it, the
// writer holds no batch of its caller.
func (fw *flatWriter) stop() {
	if fw.stopped {
		return
	}
	fw.stopped = true
	fw.open = nil
	for _, r := range fw.pending {
		r.Release()
	}
	fw.pending = nil
	fw.stopFlusher()
	if fw.tasks != nil {
		close(fw.tasks)
		fw.running.Wait()
	}
}

// flatScratch is one encoder goroutine's reusable buffers.
type flatScratch struct {
	raw   []byte
	comp  []byte // the codec's output
	plain []byte
	valid []byte
	i64   []int64
	i32   []int32
	// pieces are the bytes of a page held in its batches, after raw.
	pieces [][]byte
}

var flatScratchPool = sync.Pool{New: func() any { return new(flatScratch) }}

func getFlatScratch() *flatScratch { return flatScratchPool.Get().(*flatScratch) }

// Pages live until their row group is written, then their buffers serve
// the pages after them: one pool for each power of two of capacity, so
// that a page holds less than twice its bytes.
var pagePools [48]sync.Pool

func pageClass(n int) int { return bits.Len(uint(max(n, 1) - 1)) }

func getPageBuf(n int) []byte {
	k := pageClass(n)
	if b, ok := pagePools[k].Get().(*[]byte); ok {
		return (*b)[:n]
	}
	return make([]byte, n, 1<<k)
}

func putPageBuf(b []byte) {
	k := pageClass(cap(b))
	if cap(b) != 1<<k || k >= len(pagePools) {
		return
	}
	b = b[:0]
	pagePools[k].Put(&b)
}

// encode writes the page of column i of group g.
func (c *flatColumn) encode(g *flatGroup, i int, sc *flatScratch, trial bool) (p flatPage) {
	raw := sc.raw[:0]
	nulls := 0
	for _, r := range g.recs {
		nulls += r.Column(i).NullN()
	}
	p.stats.nulls = int64(nulls)
	if nulls > 0 && !c.nullable {
		p.err = rowttl.Errorf(rowttl.ErrInvalidArgument, "a NOT NULL column holds %d NULLs", nulls)
		return p
	}
	if c.nullable {
		var valid []byte
		if nulls > 0 {
			nb := (g.rows + 7) / 8
			if cap(sc.valid) < nb {
				sc.valid = make([]byte, nb)
			}
			valid = sc.valid[:nb]
			clear(valid)
			pos := 0
			for _, r := range g.recs {
				a := r.Column(i)
				if a.NullN() == 0 {
					bitutil.SetBitsTo(valid, int64(pos), int64(a.Len()), true)
				} else {
					bitutil.CopyBitmap(a.NullBitmapBytes(), a.Data().Offset(), a.Len(), valid, pos)
				}
				pos += a.Len()
			}
		}
		raw = appendLevels(raw, g.rows, valid)
	}
	switch c.kind {
	case flatInt64:
		vs := sc.i64[:0]
		if len(g.recs) == 1 && nulls == 0 {
			vs = int64Values(g.recs[0].Column(i))
		} else {
			for _, r := range g.recs {
				vs = appendValid(vs, r.Column(i), int64Values(r.Column(i)))
			}
			sc.i64 = vs
		}
		var lo, hi int64
		raw, lo, hi = appendDelta(raw, vs)
		p.stats.has, p.stats.imin, p.stats.imax = len(vs) > 0, lo, hi
	case flatInt32:
		vs := sc.i32[:0]
		for _, r := range g.recs {
			a := r.Column(i)
			switch a := a.(type) {
			case *array.Int8:
				vs = appendValid(vs, a, widen(a.Int8Values()))
			case *array.Int16:
				vs = appendValid(vs, a, widen(a.Int16Values()))
			default:
				vs = appendValid(vs, a, int32Values(a))
			}
		}
		sc.i32 = vs
		var lo, hi int32
		raw, lo, hi = appendDelta(raw, vs)
		p.stats.has, p.stats.imin, p.stats.imax = len(vs) > 0, int64(lo), int64(hi)
	case flatDouble, flatFloat:
		// BYTE_STREAM_SPLIT transposes the PLAIN bytes of the whole page.
		plain := raw
		if c.enc == encBSS {
			plain = sc.plain[:0]
		}
		width := 8
		if c.kind == flatFloat {
			width = 4
		}
		for _, r := range g.recs {
			a := r.Column(i)
			if c.kind == flatDouble {
				vs := arrow.Float64Traits.CastFromBytes(valueBytes(a, 8))
				plain = appendPlain(plain, a, vs, arrow.Float64Traits.CastToBytes(vs), 8)
				p.stats.floats(a, vs)
			} else {
				vs := arrow.Float32Traits.CastFromBytes(valueBytes(a, 4))
				plain = appendPlain(plain, a, vs, arrow.Float32Traits.CastToBytes(vs), 4)
				p.stats.floats32(a, vs)
			}
		}
		if c.enc == encBSS {
			sc.plain = plain
			raw = appendStreamSplit(raw, plain, width)
		} else {
			raw = plain
		}
	case flatBytes:
		if c.enc == encDeltaLength {
			lens := sc.i32[:0]
			for _, r := range g.recs {
				lens = appendLengths(lens, r.Column(i))
			}
			sc.i32 = lens
			raw, _, _ = appendDelta(raw, lens)
		}
		// Snappy compresses the values' bytes where the batches hold them,
		// the copy of the page's largest part saved: the string pages of
		// the bench events table's 500K live rows take 15.6 ms instead of
		// 16.6 (best of 30). A page whose codec is on trial is assembled
		// whole, as it may be stored.
		_, snappy := c.codec.(fastSnappy)
		direct := c.enc == encDeltaLength && nulls == 0 && !c.none && !trial && snappy
		if direct {
			sc.pieces = append(sc.pieces[:0], nil) // raw, once assembled
		}
		for _, r := range g.recs {
			a := r.Column(i)
			if direct {
				v := valueRun(a)
				sc.pieces = append(sc.pieces, v)
				p.raw += len(v)
				byteArrayBounds(a, &p.stats)
			} else {
				raw = appendByteArrays(raw, a, c.enc == encPlain, &p.stats)
			}
		}
		p.stats.keepBytes()
	}
	sc.raw = raw
	p.raw += len(raw)
	out := raw
	if len(sc.pieces) > 0 {
		sc.pieces[0] = raw
		bound := snappyFragmentsBound(p.raw, len(sc.pieces))
		if cap(sc.comp) < bound {
			sc.comp = make([]byte, bound)
		}
		out = encodeSnappyFragments(sc.comp[:bound], sc.pieces...)
		sc.comp = out[:cap(out)]
		// The batches' buffers are not kept past their group.
		clear(sc.pieces)
		sc.pieces = sc.pieces[:0]
	} else if !c.none {
		bound := int(c.codec.CompressBound(int64(len(raw))))
		if cap(sc.comp) < bound {
			sc.comp = make([]byte, bound)
		}
		out = c.codec.EncodeLevel(sc.comp[:bound], raw, c.level)
		sc.comp = out[:cap(out)]
		if trial && len(out) > len(raw)-len(raw)/storedGain {
			c.stored, c.none = true, true
			out = raw
		}
	}
	// The page keeps a buffer of its own size: one of the codec's bound,
	// or the scratch buffer of the largest page before it, would hold the
	// row group's pages in about twice the memory.
	p.body = append(getPageBuf(len(out))[:0], out...)
	p.hdr = appendPageHeader(make([]byte, 0, 32), p.raw, len(p.body), g.rows, c.enc)
	return p
}

// valueBytes returns the bytes of the values of fixed-width array a.
func valueBytes(a arrow.Array, width int) []byte {
	if a.Len() == 0 {
		return nil
	}
	b := a.Data().Buffers()[1].Bytes()
	off := a.Data().Offset() * width
	return b[off : off+a.Len()*width]
}

func int64Values(a arrow.Array) []int64 {
	return arrow.Int64Traits.CastFromBytes(valueBytes(a, 8))
}

func int32Values(a arrow.Array) []int32 {
	return arrow.Int32Traits.CastFromBytes(valueBytes(a, 4))
}

func widen[T int8 | int16](vs []T) []int32 {
	out := make([]int32, len(vs))
	for i, v := range vs {
		out[i] = int32(v)
	}
	return out
}

// appendValid appends the values of vs (the values of a) that are not
// NULL.
func appendValid[T any](dst []T, a arrow.Array, vs []T) []T {
	if a.NullN() == 0 {
		return append(dst, vs...)
	}
	// A byte of the bitmap at a time: all set (most, when NULLs are few)
	// appends eight values at once, none skips them.
	bm, off := a.NullBitmapBytes(), a.Data().Offset()
	n, j := len(vs), 0
	for ; j < n && (off+j)%8 != 0; j++ {
		if bitutil.BitIsSet(bm, off+j) {
			dst = append(dst, vs[j])
		}
	}
	for ; j+8 <= n; j += 8 {
		switch b := bm[(off+j)/8]; b {
		case 0xff:
			dst = append(dst, vs[j:j+8]...)
		case 0:
		default:
			for ; b != 0; b &= b - 1 {
				dst = append(dst, vs[j+bits.TrailingZeros8(b)])
			}
		}
	}
	for ; j < n; j++ {
		if bitutil.BitIsSet(bm, off+j) {
			dst = append(dst, vs[j])
		}
	}
	return dst
}

// appendPlain appends the PLAIN encoding of the non-NULL values of a,
// fixed-width values vs whose bytes are b.
func appendPlain[T any](dst []byte, a arrow.Array, vs []T, b []byte, width int) []byte {
	if a.NullN() == 0 {
		return append(dst, b...)
	}
	bm, off := a.NullBitmapBytes(), a.Data().Offset()
	for j := range vs {
		if bitutil.BitIsSet(bm, off+j) {
			dst = append(dst, b[j*width:(j+1)*width]...)
		}
	}
	return dst
}

// byteArrays returns the value offsets and bytes of a string or binary
// array.
func byteArrays(a arrow.Array) ([]int32, []byte) {
	switch a := a.(type) {
	case *array.String:
		return a.ValueOffsets(), a.ValueBytes()
	case *array.Binary:
		return a.ValueOffsets(), a.ValueBytes()
	}
	return nil, nil
}

// appendLengths appends the lengths of the non-NULL values of a string or
// binary array: the first part of DELTA_LENGTH_BYTE_ARRAY.
func appendLengths(dst []int32, a arrow.Array) []int32 {
	offs, _ := byteArrays(a)
	n := a.Len()
	if n == 0 {
		return dst
	}
	offs = offs[:n+1]
	if a.NullN() == 0 {
		// Written in place, without append's check of the capacity at
		// every value: 9 instructions a value under cachegrind, not 16.
		at := len(dst)
		dst = slices.Grow(dst, n)[:at+n]
		out := dst[at:]
		prev, next := offs[0], offs[1:]
		out = out[:len(next)]
		for j, o := range next {
			out[j] = o - prev
			prev = o
		}
		return dst
	}
	bm, off := a.NullBitmapBytes(), a.Data().Offset()
	for j := range n {
		if bitutil.BitIsSet(bm, off+j) {
			dst = append(dst, offs[j+1]-offs[j])
		}
	}
	return dst
}

// appendByteArrays appends the bytes of the non-NULL values of a string or
// binary array, each behind its 4-byte length when plain (PLAIN) or one
// after another (the second part of DELTA_LENGTH_BYTE_ARRAY), and takes
// their smallest and largest into st.
func appendByteArrays(dst []byte, a arrow.Array, plain bool, st *flatStats) []byte {
	offs, data := byteArrays(a)
	if a.Len() == 0 {
		return dst
	}
	base := offs[0]
	data = data[:offs[a.Len()]-base]
	bm, off := a.NullBitmapBytes(), a.Data().Offset()
	noNulls := a.NullN() == 0
	if noNulls && !plain {
		dst = append(dst, data...)
	} else {
		dst = slicesGrow(dst, 4*a.Len()+len(data))
		for j := range a.Len() {
			if !noNulls && !bitutil.BitIsSet(bm, off+j) {
				continue
			}
			v := data[offs[j]-base : offs[j+1]-base]
			if plain {
				dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v)))
			}
			dst = append(dst, v...)
		}
	}
	byteArrayBounds(a, st)
	return dst
}

// valueRun returns the bytes of the values of a string or binary array,
// one after another: the second part of DELTA_LENGTH_BYTE_ARRAY when none
// is NULL.
func valueRun(a arrow.Array) []byte {
	offs, data := byteArrays(a)
	if a.Len() == 0 {
		return nil
	}
	return data[:offs[a.Len()]-offs[0]]
}

// byteArrayBounds takes the smallest and largest non-NULL values of a
// string or binary array into st.
func byteArrayBounds(a arrow.Array, st *flatStats) {
	offs, data := byteArrays(a)
	n := a.Len()
	if n == 0 {
		return
	}
	offs = offs[:n+1]
	base := offs[0]
	bm, off := a.NullBitmapBytes(), a.Data().Offset()
	noNulls := a.NullN() == 0
	// The bounds compare 8-byte big-endian prefixes first: strictly between
	// those of the bounds, which most values are, a value is neither, and
	// only a value whose prefix equals a bound's is compared whole (out of
	// the loop, as are st's bounds): the loop keeps few enough variables
	// to stay in registers.
	b := byteBounds{mn: -1, mx: -1}
	for j := range n {
		if !noNulls && !bitutil.BitIsSet(bm, off+j) {
			continue
		}
		s, e := int(offs[j]-base), int(offs[j+1]-base)
		var k uint64
		if e-s >= 8 {
			k = binary.BigEndian.Uint64(data[s:])
		} else {
			k = prefixKey(data[s:e])
		}
		if b.mn < 0 {
			b.mn, b.mx, b.mnKey, b.mxKey = j, j, k, k
			continue
		}
		switch {
		case k < b.mnKey:
			b.mn, b.mnKey = j, k
		case k > b.mxKey:
			b.mx, b.mxKey = j, k
		case k == b.mnKey || k == b.mxKey:
			b.tie(j, k, offs, data)
		}
	}
	if b.mn < 0 {
		return
	}
	if v := b.val(b.mn, offs, data); !st.has || bytes.Compare(v, st.bmin) < 0 {
		st.bmin = v
	}
	if v := b.val(b.mx, offs, data); !st.has || bytes.Compare(v, st.bmax) > 0 {
		st.bmax = v
	}
	st.has = true
}

// byteBounds are the rows of an array's smallest and largest values (-1
// before the first) and their prefix keys.
type byteBounds struct {
	mn, mx       int
	mnKey, mxKey uint64
}

func (b *byteBounds) val(j int, offs []int32, data []byte) []byte {
	return data[offs[j]-offs[0] : offs[j+1]-offs[0]]
}

// tie takes row j if it is a new bound, its key k equal to a bound's.
func (b *byteBounds) tie(j int, k uint64, offs []int32, data []byte) {
	v := b.val(j, offs, data)
	switch {
	case k == b.mnKey && bytes.Compare(v, b.val(b.mn, offs, data)) < 0:
		b.mn = j
	case k == b.mxKey && bytes.Compare(v, b.val(b.mx, offs, data)) > 0:
		b.mx = j
	}
}

// prefixKey is the first 8 bytes of v as a big-endian number, zeros after
// a shorter v: when two keys differ, their values are ordered as the keys.
func prefixKey(v []byte) uint64 {
	if len(v) >= 8 {
		return binary.BigEndian.Uint64(v)
	}
	var k uint64
	for i, c := range v {
		k |= uint64(c) << (56 - 8*i)
	}
	return k
}

func slicesGrow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), len(b)+n+len(b)/4)
	copy(nb, b)
	return nb
}

// flatStats are a page's or a column chunk's statistics.
type flatStats struct {
	nulls      int64
	has        bool // min and max hold a value
	imin, imax int64
	fmin, fmax float64
	bmin, bmax []byte
}

// floats takes the smallest and largest non-NULL values of a; NaN has no
// place in the order and is left out, as arrow-go's writer leaves it out.
func (st *flatStats) floats(a arrow.Array, vs []float64) {
	noNulls := a.NullN() == 0
	bm, off := a.NullBitmapBytes(), a.Data().Offset()
	mn, mx, has := st.fmin, st.fmax, st.has
	for j, v := range vs {
		if v != v || (!noNulls && !bitutil.BitIsSet(bm, off+j)) {
			continue
		}
		if !has {
			mn, mx, has = v, v, true
		} else if v < mn {
			mn = v
		} else if v > mx {
			mx = v
		}
	}
	st.fmin, st.fmax, st.has = mn, mx, has
}

func (st *flatStats) floats32(a arrow.Array, vs []float32) {
	noNulls := a.NullN() == 0
	bm, off := a.NullBitmapBytes(), a.Data().Offset()
	for j, v := range vs {
		if v != v || (!noNulls && !bitutil.BitIsSet(bm, off+j)) {
			continue
		}
		f := float64(v)
		if !st.has {
			st.fmin, st.fmax, st.has = f, f, true
		} else if f < st.fmin {
			st.fmin = f
		} else if f > st.fmax {
			st.fmax = f
		}
	}
}

// keepBytes copies the smallest and largest values out of the batch's
// buffers, which are freed before the footer is written. The copies are
// never nil: an empty string's bound from a batch without value bytes is
// nil there, and a nil bound is left out of the footer.
func (st *flatStats) keepBytes() {
	if st.has {
		st.bmin = append(make([]byte, 0, len(st.bmin)), st.bmin...)
		st.bmax = append(make([]byte, 0, len(st.bmax)), st.bmax...)
	}
}

// merge adds page statistics o to st.
func (st *flatStats) merge(o *flatStats, k flatKind) {
	st.nulls += o.nulls
	if !o.has {
		return
	}
	if !st.has {
		nulls := st.nulls
		*st = *o
		st.nulls = nulls
		return
	}
	switch k {
	case flatInt32, flatInt64:
		st.imin, st.imax = min(st.imin, o.imin), max(st.imax, o.imax)
	case flatFloat, flatDouble:
		st.fmin, st.fmax = min(st.fmin, o.fmin), max(st.fmax, o.fmax)
	case flatBytes:
		if bytes.Compare(o.bmin, st.bmin) < 0 {
			st.bmin = o.bmin
		}
		if bytes.Compare(o.bmax, st.bmax) > 0 {
			st.bmax = o.bmax
		}
	}
}

// maxStatsBytes is arrow-go's limit on a statistic's value: longer string
// bounds are left out rather than written.
const maxStatsBytes = 4096

// encode returns st as the footer holds it: bounds in their PLAIN
// encoding, signed order for numbers and unsigned bytes for strings.
func (st *flatStats) encode(k flatKind) metadata.EncodedStatistics {
	es := metadata.EncodedStatistics{HasNullCount: true, NullCount: st.nulls, Signed: k != flatBytes}
	if !st.has {
		return es
	}
	var mn, mx []byte
	switch k {
	case flatInt32:
		mn = binary.LittleEndian.AppendUint32(nil, uint32(int32(st.imin)))
		mx = binary.LittleEndian.AppendUint32(nil, uint32(int32(st.imax)))
	case flatInt64:
		mn = binary.LittleEndian.AppendUint64(nil, uint64(st.imin))
		mx = binary.LittleEndian.AppendUint64(nil, uint64(st.imax))
	case flatFloat, flatDouble:
		// The format's rule for zeros: a minimum of zero is -0, a maximum +0.
		fmin, fmax := st.fmin, st.fmax
		if fmin == 0 {
			fmin = math.Copysign(0, -1)
		}
		if fmax == 0 {
			fmax = 0
		}
		if k == flatFloat {
			mn = binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(fmin)))
			mx = binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(fmax)))
		} else {
			mn = binary.LittleEndian.AppendUint64(nil, math.Float64bits(fmin))
			mx = binary.LittleEndian.AppendUint64(nil, math.Float64bits(fmax))
		}
	case flatBytes:
		if len(st.bmin) > maxStatsBytes || len(st.bmax) > maxStatsBytes {
			return es
		}
		mn, mx = st.bmin, st.bmax
	}
	es.HasMin, es.Min, es.HasMax, es.Max = true, mn, true, mx
	return es
}
