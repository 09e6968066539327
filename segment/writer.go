package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
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
	// ZstdLevel is the zstd level applied to a chunk where it pays; 0 means
	// DefaultZstdLevel, a negative value disables zstd.
	ZstdLevel int
	// HotColumns lists columns, by index, that every scan reads and that
	// are therefore never zstd-compressed: their light encodings decode at
	// memory speed, zstd at under 1 GB/s.
	HotColumns []int
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
	zenc     *zstd.Encoder // nil when compression is off
	hot      []bool        // per column: never compressed

	stages  []colStage // the page being filled
	pending int        // rows staged

	offset int64 // bytes written
	rows   int64
	pages  []int
	chunks []chunkMeta
	zones  []zoneAcc // per column, whole segment
	page   zoneAcc   // scratch

	body, block []byte
	ints        []uint64
	scaledInts  []int64 // scratch of the scaled encoding of doubles
	scaledBody  []byte
	strs        stringEncoder

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
		return nil, fmt.Errorf("segment: big-endian hosts: %w", rowttl.ErrNotSupported)
	}
	pageRows := opts.PageRows
	if pageRows == 0 {
		pageRows = DefaultPageRows
	}
	if pageRows < 0 || pageRows > MaxPageRows {
		return nil, fmt.Errorf("segment: page rows %d not in 1..%d: %w", opts.PageRows, MaxPageRows, rowttl.ErrInvalidArgument)
	}
	if sc.NumFields() > maxColumns {
		return nil, fmt.Errorf("segment: %d columns, at most %d: %w", sc.NumFields(), maxColumns, rowttl.ErrNotSupported)
	}
	wr := &Writer{w: w, sc: sc, pageRows: pageRows}
	for _, f := range sc.Fields() {
		ct, err := newColType(f.Type)
		if err != nil {
			return nil, fmt.Errorf("segment: column %q: %w", f.Name, err)
		}
		wr.cols = append(wr.cols, ct)
		wr.stages = append(wr.stages, colStage{ct: ct})
	}
	wr.zones = make([]zoneAcc, len(wr.cols))
	wr.hot = make([]bool, len(wr.cols))
	for _, c := range opts.HotColumns {
		if c < 0 || c >= len(wr.cols) {
			return nil, fmt.Errorf("segment: hot column %d of %d: %w", c, len(wr.cols), rowttl.ErrInvalidArgument)
		}
		wr.hot[c] = true
	}
	if opts.ZstdLevel >= 0 {
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
// batch sizes; only the last page of the segment, and a page that CopyPage
// flushes, may be shorter.
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
		n := min(w.pageRows-w.pending, total-off)
		for c := range w.stages {
			if err := w.stages[c].appendRows(rec.Column(c), off, n); err != nil {
				w.err = err
				return err
			}
		}
		w.pending += n
		off += n
		if w.pending == w.pageRows {
			if err := w.flushPage(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *Writer) checkSchema(rec arrow.RecordBatch) error {
	got := rec.Schema()
	if got.NumFields() != len(w.cols) {
		return fmt.Errorf("segment: batch has %d columns, the segment %d: %w", got.NumFields(), len(w.cols), rowttl.ErrInvalidArgument)
	}
	for i, f := range w.sc.Fields() {
		g := got.Field(i)
		if g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) || !arrow.TypeEqual(rec.Column(i).DataType(), f.Type) {
			return fmt.Errorf("segment: batch column %d is %s %s, the segment expects %s %s: %w",
				i, g.Name, g.Type, f.Name, f.Type, rowttl.ErrInvalidArgument)
		}
	}
	return nil
}

// flushPage encodes and writes the staged rows as one page.
func (w *Writer) flushPage() error {
	n := w.pending
	for c := range w.stages {
		st := &w.stages[c]
		st.zone(&w.page)
		meta, err := w.writeChunk(st, n, w.hot[c])
		if err != nil {
			w.err = err
			return err
		}
		sum := meta.zone
		meta.zone = w.page.zoneMap(st.ct.kind)
		meta.zone.HasSum, meta.zone.Sum, meta.zone.SumScale = sum.HasSum, sum.Sum, sum.SumScale
		w.chunks = append(w.chunks, meta)
		w.zones[c].merge(&w.page, st.ct.kind)
		st.reset()
	}
	w.pages = append(w.pages, n)
	w.rows += int64(n)
	w.pending = 0
	return nil
}

// writeChunk encodes the staged column and writes its chunk.
func (w *Writer) writeChunk(st *colStage, n int, hot bool) (chunkMeta, error) {
	body := w.body[:0]
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
		body, enc = encodeInts(body, st.ints, st.ct.width, &w.ints)
	case kindFloat, kindDecimal:
		fillNullsRaw(st.fixed, st.ct.width, st.valid, st.nulls)
		body, enc = encodeFixed(body, st.fixed, st.ct.width)
		if enc == encPlain && st.ct.kind == kindFloat && st.ct.width == 8 {
			start := len(body) - len(st.fixed)
			var scaled []byte
			var ok bool
			scaled, ok = encodeScaled(w.scaledBody[:0], castSlice[float64](st.fixed, n), len(st.fixed), &w.ints, &w.scaledInts)
			if ok {
				body = append(body[:start], scaled...)
				enc = encScaled
				sums.HasSum, sums.SumScale = true, int(scaled[0])
				sums.Sum = validSum(w.scaledInts[:n], st.valid)
			}
			w.scaledBody = scaled[:0]
		}
	case kindBytes:
		body, enc = w.strs.encodeStrings(body, stringsView{st.data, st.ends}, st.valid)
	}
	if st.ct.kind == kindInt {
		sums.HasSum, sums.Sum = true, validSum(st.ints, st.valid)
	}
	w.body = body
	if len(body) > maxPageBytes {
		return chunkMeta{}, fmt.Errorf("segment: an encoded page of %d bytes exceeds %d; use fewer rows per page: %w",
			len(body), maxPageBytes, rowttl.ErrInvalidArgument)
	}

	comp := compNone
	chunk := body
	if w.zenc != nil && !hot && len(body) >= minCompressLen {
		w.block = w.zenc.EncodeAll(body, w.block[:0])
		if len(w.block)*8 < len(body)*7 {
			comp, chunk = compZstd, w.block
		}
	}
	chunk = append(chunk, byte(comp))
	chunk = binary.LittleEndian.AppendUint32(chunk, checksum(chunk))
	if comp == compZstd {
		w.block = chunk
	} else {
		w.body = chunk
	}
	meta := chunkMeta{offset: w.offset, length: int64(len(chunk)), enc: enc, comp: comp, bodyLen: len(body), zone: sums}
	return meta, w.write(chunk)
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
		if err := w.flushPage(); err != nil {
			return Summary{}, err
		}
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
	}
	for c := range w.cols {
		f.columns[c] = w.zones[c].zoneMap(w.cols[c].kind)
		f.columns[c].Rows = w.rows
	}
	buf := f.Marshal(w.body[:0])
	if len(buf) > math.MaxUint32 {
		w.err = fmt.Errorf("segment: footer of %d bytes too large: %w", len(buf), rowttl.ErrNotSupported)
		return Summary{}, w.err
	}
	buf = trailer{footerLen: uint32(len(buf)), footerCRC: checksum(buf), version: formatVersion}.Marshal(buf)
	if err := w.write(buf); err != nil {
		return Summary{}, err
	}
	w.finished = true
	return Summary{Rows: w.rows, Bytes: w.offset, Columns: f.columns}, nil
}
