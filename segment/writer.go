package segment

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/klauspost/compress/zstd"
	"github.com/rowttl/rowttl"
)

// The file layout is drawn in format.go; the encodings of a chunk body in
// encoding_int.go, encoding_string.go and encoding_fixed.go.

// DefaultPageRows is the page size used when WriterOptions.PageRows is 0.
const DefaultPageRows = 65536

// WriterOptions configures a Writer.
type WriterOptions struct {
	// PageRows is the number of rows per page; 0 means DefaultPageRows. At
	// most MaxPageRows.
	PageRows int
	// Codec chooses the compression of each column's chunks, applied
	// where it pays; CodecDefault is LZ4 for strings and binaries, zstd
	// for the rest.
	Codec Codec
	// ZstdLevel is the zstd level of the chunks Codec compresses with
	// zstd; 0 means DefaultZstdLevel. A negative value disables
	// compression altogether, LZ4 too: a file written to be read soon and
	// replaced (a memtable's, a load's sorted run) spends no CPU on it.
	ZstdLevel int
	// HotColumns lists columns, by index, that every scan reads and that
	// are therefore never compressed: their light encodings decode at
	// memory speed, zstd at under 1 GB/s and LZ4 at a few GB/s.
	HotColumns []int
	// Parallelism is the number of goroutines that encode the columns of
	// a page; 0 means GOMAXPROCS. 1 encodes on the caller's goroutine,
	// starting none, so that a writer sharing the machine with latency
	// bound work (a compaction beside small writes) keeps no more than
	// one processor busy. The file is the same whatever it is.
	Parallelism int
	// Tag is kept in the footer for the file's owner (Reader.Tag), at most
	// MaxTagBytes: the table records there what a file was written for, so
	// that a file the manifest does not list can still be accounted for.
	Tag []byte
}

// Summary describes a finished segment.
type Summary struct {
	Rows    int64
	Bytes   int64     // total file size
	Columns []ZoneMap // whole-segment zone map of each column
}

// Writer writes one segment to an io.Writer. It buffers at most one page of
// rows. It is not safe for concurrent use. It never syncs or closes the
// underlying writer.
type Writer struct {
	w        io.Writer
	sc       *arrow.Schema
	cols     []colType
	pageRows int
	zenc     *zstd.Encoder // nil when no column uses zstd
	comp     []compression // per column: what its chunks try
	tag      []byte

	stages  []colStage // the page being filled
	pending int        // rows staged

	// Pages are encoded in the background, several at a time, and written
	// in order by the caller's goroutine when it needs their slot, or
	// before any other use of the file.
	inflight []*pageSlot // encoding or encoded, oldest first
	free     []*pageSlot

	offset int64 // bytes written
	rows   int64
	pages  []int
	chunks []chunkMeta
	zones  []zoneAcc // per column, whole segment

	workers int // pages encoded at once, and goroutines per page

	maxPage   int       // rows of the largest page copied by CopyPage
	copyBuf   []byte    // CopyPage: the chunks of the page copied
	copyZones []zoneAcc // CopyPage: the zone maps of the page copied
	copySums  []ZoneMap // CopyPage: the sum fields of the page copied

	err      error // sticky: the first failure
	finished bool
}

// NewWriter returns a writer of segments of schema sc. It fails for a field
// type the format does not support.
func NewWriter(w io.Writer, sc *arrow.Schema, opts WriterOptions) (*Writer, error) {
	if !littleEndian {
		return nil, rowttl.Errorf(rowttl.ErrNotSupported, "segment: big-endian hosts")
	}
	pageRows := opts.PageRows
	if pageRows == 0 {
		pageRows = DefaultPageRows
	}
	if pageRows < 0 || pageRows > MaxPageRows {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "segment: page rows %d not in 1..%d", opts.PageRows, MaxPageRows)
	}
	if sc.NumFields() > maxColumns {
		return nil, rowttl.Errorf(rowttl.ErrNotSupported, "segment: %d columns, at most %d", sc.NumFields(), maxColumns)
	}
	if len(opts.Tag) > MaxTagBytes {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "segment: tag of %d bytes, at most %d", len(opts.Tag), MaxTagBytes)
	}
	wr := &Writer{w: w, sc: sc, pageRows: pageRows, tag: bytes.Clone(opts.Tag)}
	for _, f := range sc.Fields() {
		ct, err := newColType(f.Type)
		if err != nil {
			return nil, fmt.Errorf("segment: column %q: %w", f.Name, err)
		}
		wr.cols = append(wr.cols, ct)
		wr.stages = append(wr.stages, colStage{ct: ct})
	}
	wr.zones = make([]zoneAcc, len(wr.cols))
	wr.workers = opts.Parallelism
	if wr.workers <= 0 {
		wr.workers = runtime.GOMAXPROCS(0)
	}
	// One page in flight per worker, so that a column slow to encode (zstd
	// on strings) runs for several pages at once; at most maxInflight
	// pages, as each holds a page of staged rows and its encodings.
	for range min(max(wr.workers, 1), maxInflight) {
		slot := &pageSlot{encs: make([]chunkEncoder, len(wr.cols))}
		for _, ct := range wr.cols {
			slot.stages = append(slot.stages, colStage{ct: ct})
		}
		wr.free = append(wr.free, slot)
	}
	if opts.Codec > CodecNone {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "segment: unknown %s", opts.Codec)
	}
	wr.comp = make([]compression, len(wr.cols))
	useZstd := false
	for c, ct := range wr.cols {
		switch {
		case opts.ZstdLevel < 0 || opts.Codec == CodecNone:
			wr.comp[c] = compNone
		case opts.Codec == CodecLZ4 || opts.Codec == CodecDefault && ct.kind == kindBytes:
			wr.comp[c] = compLZ4
		default:
			wr.comp[c] = compZstd
		}
	}
	for _, c := range opts.HotColumns {
		if c < 0 || c >= len(wr.cols) {
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "segment: hot column %d of %d", c, len(wr.cols))
		}
		wr.comp[c] = compNone
	}
	for _, c := range wr.comp {
		useZstd = useZstd || c == compZstd
	}
	if useZstd {
		level := opts.ZstdLevel
		if level == 0 {
			level = DefaultZstdLevel
		}
		e, err := zstdEncoder(level)
		if err != nil {
			return nil, fmt.Errorf("segment: zstd: %w", err)
		}
		wr.zenc = e
	}
	if err := wr.write(appendHeader(nil)); err != nil {
		return nil, err
	}
	return wr, nil
}

func (w *Writer) write(b []byte) error {
	n, err := w.w.Write(b)
	w.offset += int64(n)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = fmt.Errorf("segment: write: %w", err)
	}
	return w.err
}

var errFinished = errors.New("segment: writer already finished")

// Write adds the rows of rec, whose schema must have the writer's field names
// and types. Rows are cut into pages of exactly PageRows rows whatever the
// batch sizes; only the last page of the segment, a page that CopyPage
// flushes, and a page whose strings would pass PageBytes, may be shorter.
func (w *Writer) Write(rec arrow.RecordBatch) error {
	if w.err != nil {
		return w.err
	}
	if w.finished {
		return errFinished
	}
	if err := w.checkSchema(rec); err != nil {
		return err
	}
	total := int(rec.NumRows())
	for off := 0; off < total; {
		n := w.fitBytes(rec, off, min(w.pageRows-w.pending, total-off))
		if n == 0 {
			// The next row's strings would pass the page's budget: the
			// page ends here.
			if err := w.flushPage(true); err != nil {
				return err
			}
			continue
		}
		for c := range w.stages {
			if err := w.stages[c].appendRows(rec.Column(c), off, n); err != nil {
				w.err = err
				return err
			}
		}
		w.pending += n
		off += n
		if w.pending == w.pageRows {
			if err := w.flushPage(true); err != nil {
				return err
			}
		}
	}
	return nil
}

// PageBytes is the budget of string and binary bytes a page stages, all
// its columns together: a page ends early rather than pass it, so that long
// values (JSON payloads, say) make shorter pages, not pages of hundreds of
// MiB that would cost as much memory to write, to hold in flight and to
// read.
const PageBytes = 16 << 20

// fitBytes returns how many of the n rows from off fit in the page being
// staged without its strings and binaries passing PageBytes: at least one
// when the page is empty, so that a single long value still makes a page.
func (w *Writer) fitBytes(rec arrow.RecordBatch, off, n int) int {
	staged := 0
	var offsets [][]int32
	for c := range w.stages {
		if w.cols[c].kind != kindBytes {
			continue
		}
		staged += len(w.stages[c].data)
		switch a := rec.Column(c).(type) {
		case *array.String:
			offsets = append(offsets, a.ValueOffsets())
		case *array.Binary:
			offsets = append(offsets, a.ValueOffsets())
		}
	}
	if len(offsets) == 0 {
		return n
	}
	// bytes of rows off..off+m-1, all columns: grows with m.
	bytesOf := func(m int) int {
		b := 0
		for _, o := range offsets {
			b += int(o[off+m] - o[off])
		}
		return b
	}
	room := PageBytes - staged
	if bytesOf(n) > room {
		n = sort.Search(n+1, func(m int) bool { return bytesOf(m) > room }) - 1
	}
	if n <= 0 && w.pending == 0 {
		return 1
	}
	return max(n, 0)
}

func (w *Writer) checkSchema(rec arrow.RecordBatch) error {
	got := rec.Schema()
	if got.NumFields() != len(w.cols) {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "segment: batch has %d columns, the segment %d", got.NumFields(), len(w.cols))
	}
	for i, f := range w.sc.Fields() {
		g := got.Field(i)
		if g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) || !arrow.TypeEqual(rec.Column(i).DataType(), f.Type) {
			return rowttl.Errorf(rowttl.ErrInvalidArgument, "segment: batch column %d is %s %s, the segment expects %s %s", i, g.Name, g.Type, f.Name, f.Type)
		}
	}
	return nil
}

// maxInflight bounds the pages a writer encodes at once.
const maxInflight = 4

// pageSlot is a page handed to the background: its staged rows and one
// encoder per column, kept from page to page.
type pageSlot struct {
	stages []colStage
	encs   []chunkEncoder
	n      int
	done   chan struct{}
	err    error
}

// flushPage hands the staged rows to a free slot to be encoded as one page,
// in the background with async, first writing the oldest page in flight
// when no slot is free; without async it writes every page in flight.
func (w *Writer) flushPage(async bool) error {
	if len(w.free) == 0 {
		if err := w.emitOldest(); err != nil {
			return err
		}
	}
	slot := w.free[len(w.free)-1]
	w.free = w.free[:len(w.free)-1]
	slot.stages, w.stages = w.stages, slot.stages
	slot.n, slot.err = w.pending, nil
	slot.done = make(chan struct{})
	w.pending = 0
	w.inflight = append(w.inflight, slot)
	if !async || w.workers == 1 {
		w.encodePage(slot)
		return w.drain()
	}
	go w.encodePage(slot)
	return nil
}

// encodePage encodes the page of slot, its columns on up to w.workers
// goroutines. It touches nothing but the slot.
func (w *Writer) encodePage(slot *pageSlot) {
	defer close(slot.done)
	encode := func(c int) {
		e, st := &slot.encs[c], &slot.stages[c]
		st.zone(&e.page)
		e.chunk, e.meta, e.err = e.encode(st, slot.n, w.zenc, w.comp[c])
	}
	if workers := min(w.workers, len(slot.stages)); workers > 1 {
		var next atomic.Int32
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for c := int(next.Add(1)) - 1; c < len(slot.stages); c = int(next.Add(1)) - 1 {
					encode(c)
				}
			}()
		}
		wg.Wait()
	} else {
		for c := range slot.stages {
			encode(c)
		}
	}
	for c := range slot.encs {
		if err := slot.encs[c].err; err != nil {
			slot.err = err
			return
		}
	}
}

// emitOldest waits for the oldest page in flight, writes its chunks and
// frees its slot.
func (w *Writer) emitOldest() error {
	slot := w.inflight[0]
	<-slot.done
	w.inflight = w.inflight[1:]
	err := slot.err
	if err == nil {
		err = w.emitPage(slot)
	}
	for c := range slot.stages {
		slot.stages[c].reset()
	}
	w.free = append(w.free, slot)
	if err != nil && w.err == nil {
		w.err = err
	}
	return err
}

// drain writes every page in flight.
func (w *Writer) drain() error {
	for len(w.inflight) > 0 {
		if err := w.emitOldest(); err != nil {
			return err
		}
	}
	return nil
}

// emitPage writes the chunks of an encoded page in column order.
func (w *Writer) emitPage(slot *pageSlot) error {
	for c := range slot.stages {
		e, st := &slot.encs[c], &slot.stages[c]
		meta := e.meta
		meta.offset = w.offset
		sum := meta.zone
		meta.zone = e.page.zoneMap(st.ct.kind)
		meta.zone.HasSum, meta.zone.Sum, meta.zone.SumScale = sum.HasSum, sum.Sum, sum.SumScale
		if err := w.write(e.chunk); err != nil {
			return err
		}
		w.chunks = append(w.chunks, meta)
		w.zones[c].merge(&e.page, st.ct.kind)
	}
	w.pages = append(w.pages, slot.n)
	w.rows += int64(slot.n)
	return nil
}

// chunkEncoder encodes the chunks of one column, keeping its scratch
// buffers from page to page.
type chunkEncoder struct {
	body, block []byte
	ints        []uint64
	scaledInts  []int64 // scratch of the scaled encoding of doubles
	scaledBody  []byte
	strs        stringEncoder
	lz4Tmp      []byte  // one LZ4 part compressed
	page        zoneAcc // the statistics of the page being encoded

	// The result of the last encode.
	chunk []byte
	meta  chunkMeta
	err   error
}

// encode encodes the staged column into a chunk (which aliases the
// encoder's buffers until its next call) and its meta, without offset; the
// zone map of the meta holds only the sum fields. try is the compression
// to apply where it pays.
func (e *chunkEncoder) encode(st *colStage, n int, zenc *zstd.Encoder, try compression) ([]byte, chunkMeta, error) {
	body := e.body[:0]
	if st.nulls > 0 && st.nulls < n {
		body = appendBitmap(body, n, func(i int) bool { return st.valid[i] })
	}
	var enc encoding
	var sums ZoneMap // the sum fields of the page's zone map
	switch st.ct.kind {
	case kindBool:
		fillNulls(st.ints, st.valid, st.nulls)
		body, enc = encodeBools(body, st.ints)
	case kindInt:
		fillNullInts(st.ints, st.valid, st.nulls)
		body, enc = encodeInts(body, st.ints, st.ct.width, &e.ints)
	case kindFloat, kindDecimal:
		fillNullsRaw(st.fixed, st.ct.width, st.valid, st.nulls)
		body, enc = encodeFixed(body, st.fixed, st.ct.width)
		if enc == encPlain && st.ct.kind == kindFloat && st.ct.width == 8 {
			start := len(body) - len(st.fixed)
			var scaled []byte
			var ok bool
			scaled, ok = encodeScaled(e.scaledBody[:0], castSlice[float64](st.fixed, n), len(st.fixed), &e.ints, &e.scaledInts)
			if ok {
				body = append(body[:start], scaled...)
				enc = encScaled
				sums.HasSum, sums.SumScale = true, int(scaled[0])
				sums.Sum = validSum(e.scaledInts[:n], st.valid)
			}
			e.scaledBody = scaled[:0]
		}
	case kindBytes:
		body, enc = e.strs.encodeStrings(body, stringsView{st.data, st.ends}, st.valid)
	}
	if st.ct.kind == kindInt {
		sums.HasSum, sums.Sum = true, validSum(st.ints, st.valid)
	}
	e.body = body
	if len(body) > maxPageBytes {
		return nil, chunkMeta{}, rowttl.Errorf(rowttl.ErrInvalidArgument, "segment: an encoded page of %d bytes exceeds %d; use fewer rows per page", len(body), maxPageBytes)
	}

	comp := compNone
	chunk := body
	if try != compNone && len(body) >= minCompressLen {
		if try == compZstd {
			e.block = zenc.EncodeAll(body, e.block[:0])
		} else {
			e.block = appendLZ4(e.block, body, &e.lz4Tmp)
		}
		if len(e.block) > 0 && len(e.block)*8 < len(body)*7 {
			comp, chunk = try, e.block
		}
	}
	chunk = append(chunk, byte(comp))
	chunk = binary.LittleEndian.AppendUint32(chunk, checksum(chunk))
	if comp != compNone {
		e.block = chunk
	} else {
		e.body = chunk
	}
	return chunk, chunkMeta{length: int64(len(chunk)), enc: enc, comp: comp, bodyLen: len(body), zone: sums}, nil
}

// validSum adds the values of the valid slots exactly.
func validSum(vals []int64, valid []bool) Int128 {
	var s Int128
	for i, v := range vals {
		if valid[i] {
			s.Add(v)
		}
	}
	return s
}

// Abandon stops the writer without finishing the segment: it waits for a
// page being written in the background, so that the caller may then close
// or remove what it writes to. The writer cannot be used afterwards.
func (w *Writer) Abandon() {
	for _, slot := range w.inflight {
		<-slot.done
	}
	w.inflight = nil
	w.finished = true
}

// Finish writes the last page, the footer and the trailer. The writer cannot
// be used afterwards.
func (w *Writer) Finish() (Summary, error) {
	if w.err != nil {
		return Summary{}, w.err
	}
	if w.finished {
		return Summary{}, errFinished
	}
	if w.pending > 0 {
		if err := w.flushPage(false); err != nil {
			return Summary{}, err
		}
	}
	if err := w.drain(); err != nil {
		return Summary{}, err
	}
	f := footer{
		version:  formatVersion,
		pageRows: max(w.pageRows, w.maxPage),
		rows:     w.rows,
		schema:   w.sc,
		cols:     w.cols,
		pages:    w.pages,
		chunks:   w.chunks,
		columns:  make([]ZoneMap, len(w.cols)),
		tag:      w.tag,
	}
	for c := range w.cols {
		f.columns[c] = w.zones[c].zoneMap(w.cols[c].kind)
		f.columns[c].Rows = w.rows
	}
	buf := f.Marshal(nil)
	if len(buf) > math.MaxUint32 {
		w.err = rowttl.Errorf(rowttl.ErrNotSupported, "segment: footer of %d bytes too large", len(buf))
		return Summary{}, w.err
	}
	buf = trailer{footerLen: uint32(len(buf)), footerCRC: checksum(buf), version: formatVersion}.Marshal(buf)
	if err := w.write(buf); err != nil {
		return Summary{}, err
	}
	w.finished = true
	return Summary{Rows: w.rows, Bytes: w.offset, Columns: f.columns}, nil
}
