package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
)

// Reader reads one segment. Its methods are safe for concurrent use: it keeps
// no cursor, every read is an io.ReaderAt.ReadAt of its own.
type Reader struct {
	ra io.ReaderAt
	// data holds the file's bytes when ra maps them (see Mapped): chunks
	// are then read where they lie, verified without a copy.
	data []byte
	used func(int) // the Used of the Mapped ra
	// checked marks, by footer chunk index, the chunks of a mapped file
	// whose checksum has been verified: the bytes in memory that every
	// later read sees are those verified, so each chunk is checksummed
	// once, not on every read. Nil for a file read by ReadAt, where every
	// read brings bytes of its own and verifies them.
	checked   []atomic.Bool
	size      int64
	name      string
	f         footer
	firstRows []int64 // first row of each page
	footerOff int64
	footerLen int
	footerCRC uint32
	memo      atomic.Pointer[memo] // see Memo
}

var (
	errShort   = errors.New("file too short")
	errMagic   = errors.New("bad magic")
	errVersion = errors.New("unsupported format version")
	errFooter  = errors.New("checksum mismatch")
	errTiling  = errors.New("chunks do not tile the file")
	errCRC     = errors.New("chunk checksum mismatch")
	errComp    = errors.New("chunk compression differs from the footer")
	errNulls   = errors.New("validity bitmap differs from the null count")
)

// Mapped is an io.ReaderAt whose bytes are in memory already, such as a
// file mapped by vfs.Map. MappedBytes returns all of them; the Reader reads
// them in place and never writes to them, and they must stay valid and
// unchanged as long as the Reader is used.
type Mapped interface {
	io.ReaderAt
	MappedBytes() []byte
	// Used says that n bytes were read from MappedBytes, so that the
	// mapping can bound the pages it keeps in the process (vfs.Mapping).
	Used(n int)
}

// Open reads and verifies the trailer, header and footer of the segment held
// by r, which is size bytes long. name identifies the file in errors. Every
// corruption found, here or later in ReadPage, wraps rowttl.ErrCorruption.
// When r is Mapped and holds size bytes, chunks are verified and decoded
// where they lie in memory instead of being read into buffers first.
func Open(r io.ReaderAt, size int64, name string) (*Reader, error) {
	rd := &Reader{ra: r, size: size, name: name}
	if m, ok := r.(Mapped); ok {
		if d := m.MappedBytes(); int64(len(d)) == size {
			rd.data, rd.used = d, m.Used
		}
	}
	if !littleEndian {
		return nil, rowttl.Errorf(rowttl.ErrNotSupported, "segment %s: big-endian hosts", name)
	}
	if size < int64(headerLen+trailerLen) {
		return nil, rd.corrupt("open", errShort)
	}
	var hdr [headerLen]byte
	if err := rd.readAt(hdr[:], 0); err != nil {
		return nil, err
	}
	if string(hdr[:len(magic)]) != magic {
		return nil, rd.corrupt("header", errMagic)
	}
	if v := binary.LittleEndian.Uint32(hdr[len(magic):]); v < minFormatVersion || v > formatVersion {
		return nil, rd.corrupt("header", fmt.Errorf("%w %d", errVersion, v))
	}
	var tr [trailerLen]byte
	if err := rd.readAt(tr[:], size-trailerLen); err != nil {
		return nil, err
	}
	if string(tr[12:]) != magic {
		return nil, rd.corrupt("trailer", errMagic)
	}
	if v := binary.LittleEndian.Uint32(tr[8:]); v < minFormatVersion || v > formatVersion {
		return nil, rd.corrupt("trailer", fmt.Errorf("%w %d", errVersion, v))
	}
	rd.f.version = binary.LittleEndian.Uint32(tr[8:])
	if hv := binary.LittleEndian.Uint32(hdr[len(magic):]); hv != rd.f.version {
		return nil, rd.corrupt("trailer", fmt.Errorf("%w %d, the header says %d", errVersion, rd.f.version, hv))
	}
	footerLen := int64(binary.LittleEndian.Uint32(tr[0:]))
	rd.footerCRC = binary.LittleEndian.Uint32(tr[4:])
	rd.footerOff = size - trailerLen - footerLen
	if rd.footerOff < int64(headerLen) {
		return nil, rd.corrupt("trailer", errShort)
	}
	rd.footerLen = int(footerLen)
	buf := make([]byte, footerLen)
	if err := rd.readAt(buf, rd.footerOff); err != nil {
		return nil, err
	}
	if checksum(buf) != rd.footerCRC {
		return nil, rd.corrupt("footer", errFooter)
	}
	rest, err := rd.f.Unmarshal(buf)
	if err != nil {
		return nil, rd.corrupt("footer", err)
	}
	if len(rest) != 0 {
		return nil, rd.corrupt("footer", errTrailing)
	}
	off := int64(headerLen)
	for i := range rd.f.chunks {
		c := &rd.f.chunks[i]
		c.offset = off
		c.ord = i
		off += c.length
		if off > rd.footerOff {
			return nil, rd.corrupt("footer", errTiling)
		}
	}
	if off != rd.footerOff {
		return nil, rd.corrupt("footer", errTiling)
	}
	if rd.data != nil {
		rd.checked = make([]atomic.Bool, len(rd.f.chunks))
	}
	rd.firstRows = make([]int64, len(rd.f.pages))
	var first int64
	for p, n := range rd.f.pages {
		rd.firstRows[p] = first
		first += int64(n)
	}
	return rd, nil
}

// corrupt returns an error naming the file and the place, wrapping cause and
// rowttl.ErrCorruption.
func (r *Reader) corrupt(where string, cause error) error {
	return rowttl.Errorf(rowttl.ErrCorruption, "segment %s: %s: %w", r.name, where, cause)
}

// readAt fills buf from offset off. A short read means the file is shorter
// than its footer says: corruption. Other I/O errors are returned as such.
func (r *Reader) readAt(buf []byte, off int64) error {
	n, err := r.ra.ReadAt(buf, off)
	if n == len(buf) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return r.corrupt(fmt.Sprintf("read of %d bytes at %d", len(buf), off), errShort)
	}
	return &ioError{fmt.Errorf("segment %s: read at %d: %w", r.name, off, err)}
}

// chunkBytes returns the stored bytes of chunk c: a slice of the mapped
// file, or the chunk read into *buf (grown to fit). Mapped bytes are
// read-only and are not to outlive the Reader's use: what a caller keeps
// is copied or decoded from them. A compressed chunk is copied into *buf
// all the same unless inPlace: a decompressor reads its input a byte at a
// time, stalling on every page of the mapping the cache has not seen yet,
// where a copy streams the chunk in first; inPlace suits a read that
// decompresses a few parts of the chunk (ReadPageSelected).
func (r *Reader) chunkBytes(c *chunkMeta, buf *[]byte, inPlace bool) ([]byte, error) {
	n := int(c.length)
	if r.data != nil {
		// Open checked that the chunks tile the file within its size.
		r.used(n)
		m := r.data[c.offset : c.offset+int64(n) : c.offset+int64(n)]
		if c.comp == compNone || c.comp == compLZ4 || inPlace {
			return m, nil
		}
		*buf = grow(*buf, n)
		copy(*buf, m)
		return *buf, nil
	}
	*buf = grow(*buf, n)
	if err := r.readAt(*buf, c.offset); err != nil {
		return nil, err
	}
	return *buf, nil
}

// ioError marks a failed read: the disk said no, the data may be fine. It
// is passed up as it is, never labelled corruption.
type ioError struct{ err error }

func (e *ioError) Error() string { return e.err.Error() }
func (e *ioError) Unwrap() error { return e.err }

// Name returns the name given to Open.
func (r *Reader) Name() string { return r.name }

// Schema returns the schema the segment was written with: field names,
// types, nullability and metadata.
func (r *Reader) Schema() *arrow.Schema { return r.f.schema }

// Tag returns what the writer's WriterOptions.Tag held; nil before format 4.
func (r *Reader) Tag() []byte { return r.f.tag }

// SameLayout reports whether the segment's columns match those of sc: the
// same number of fields, with the same names and types in the same order.
// Nullability and metadata are not compared. Writer.CopyPage accepts the
// pages of a segment exactly when SameLayout holds for the writer's schema.
func (r *Reader) SameLayout(sc *arrow.Schema) bool {
	if sc == nil || sc.NumFields() != r.f.schema.NumFields() {
		return false
	}
	for i, f := range r.f.schema.Fields() {
		g := sc.Field(i)
		if g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) {
			return false
		}
	}
	return true
}

// NumRows returns the number of rows.
func (r *Reader) NumRows() int64 { return r.f.rows }

// NumPages returns the number of pages.
func (r *Reader) NumPages() int { return len(r.f.pages) }

// Page returns the rows page p covers in every column: [firstRow,
// firstRow+rows). Like PageStats and ColumnStats it panics when an index is
// out of range.
func (r *Reader) Page(p int) (firstRow int64, rows int) { return r.firstRows[p], r.f.pages[p] }

// PageStats returns the zone map of column col in page p.
func (r *Reader) PageStats(col, p int) ZoneMap { return r.f.chunk(col, p).zone }

// ColumnStats returns the zone map of column col over the whole segment.
func (r *Reader) ColumnStats(col int) ZoneMap { return r.f.columns[col] }

// Size returns the file size.
func (r *Reader) Size() int64 { return r.size }

// PageEncoding returns the encoding and compression of column col in page p,
// by name ("plain", "constant", "for", "delta", "dict", "bitmap", "scaled";
// "none", "zstd", "lz4"), for tests and inspection.
func (r *Reader) PageEncoding(col, p int) (enc, comp string) {
	c := r.f.chunk(col, p)
	return c.enc.String(), c.comp.String()
}

// scratch holds the temporary buffers of one ReadPage.
type scratch struct {
	raw, body []byte // the chunk read, the decompressed body
	pad       []byte // padded dictionary entries
	i32       []int32
	u32       []uint32
	sel32     []int32 // ReadPageSelected: the offsets of the page's strings
	strs      []byte  // ReadPageSelected: the values of a page not plain
	lz4       lz4View // ReadPageSelected: the parts of an LZ4 body
	stage     []byte  // an LZ4 part of a mapped chunk (Reader.stage)
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooled is the largest buffer kept in the pool.
const maxPooled = 4 << 20

func (s *scratch) release() {
	if cap(s.raw) > maxPooled {
		s.raw = nil
	}
	if cap(s.body) > maxPooled {
		s.body = nil
	}
	if cap(s.pad) > maxPooled {
		s.pad = nil
	}
	if cap(s.i32) > maxPooled/4 {
		s.i32 = nil
	}
	if cap(s.u32) > maxPooled/4 {
		s.u32 = nil
	}
	if cap(s.sel32) > maxPooled/4 {
		s.sel32 = nil
	}
	if cap(s.strs) > maxPooled {
		s.strs = nil
	}
	scratchPool.Put(s)
}

func grow[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}

func (s *scratch) int32s(n int) []int32 {
	s.i32 = grow(s.i32, n)
	return s.i32
}

func (s *scratch) uint32s(n int) []uint32 {
	s.u32 = grow(s.u32, n)
	return s.u32
}

// ReadPage decodes column col of page p into a new Arrow array allocated from
// mem; the caller releases it. The chunk checksum is verified first; a
// corrupt chunk is an error wrapping rowttl.ErrCorruption, never data.
func (r *Reader) ReadPage(mem memory.Allocator, col, p int) (arrow.Array, error) {
	if col < 0 || col >= len(r.f.cols) || p < 0 || p >= len(r.f.pages) {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "segment %s: column %d page %d out of range (%d columns, %d pages)", r.name, col, p, len(r.f.cols), len(r.f.pages))
	}
	c := r.f.chunk(col, p)
	sc := scratchPool.Get().(*scratch)
	defer sc.release()
	var body []byte
	var owner *memory.Buffer
	var err error
	if r.f.cols[col].kind == kindBytes && c.enc == encPlain {
		body, owner, err = r.readChunkOwned(mem, c, sc)
	} else {
		body, err = r.readChunk(c, sc)
	}
	if err != nil {
		return nil, r.pageError(col, p, err)
	}
	arr, err := decodeChunkOwned(mem, r.f.cols[col], r.f.pages[p], int(c.zone.NullCount), c.enc, body, owner, sc)
	if owner != nil {
		owner.Release()
	}
	if err != nil {
		return nil, r.corrupt(fmt.Sprintf("page %d column %d (%s)", p, col, r.f.schema.Field(col).Name), err)
	}
	return arr, nil
}

// readChunkOwned is readChunk into a buffer of mem (the decompressed body,
// or the chunk as read when it is not compressed), which the caller
// releases; the body returned begins its bytes. A plain string page's
// values are then the Arrow data buffer as they are, not a copy of them.
func (r *Reader) readChunkOwned(mem memory.Allocator, c *chunkMeta, sc *scratch) ([]byte, *memory.Buffer, error) {
	if c.comp == compNone && r.data != nil {
		// Verified where it lies; the array gets a copy of its own, as
		// it may outlive the mapping.
		r.used(int(c.length))
		block, err := r.checkChunk(r.data[c.offset:c.offset+c.length], c)
		if err != nil {
			return nil, nil, err
		}
		owner := newBuffer(mem, len(block))
		copy(owner.Bytes(), block)
		return owner.Bytes(), owner, nil
	}
	if c.comp == compNone {
		owner := newBuffer(mem, int(c.length))
		if err := r.readAt(owner.Bytes(), c.offset); err != nil {
			owner.Release()
			return nil, nil, err
		}
		block, err := checkChunk(owner.Bytes(), c)
		if err != nil {
			owner.Release()
			return nil, nil, err
		}
		return block, owner, nil
	}
	raw, err := r.chunkBytes(c, &sc.raw, false)
	if err != nil {
		return nil, nil, err
	}
	block, err := r.checkChunk(raw, c)
	if err != nil {
		return nil, nil, err
	}
	owner := newBuffer(mem, c.bodyLen)
	body, err := decompressStaged(owner.Bytes(), block, c.comp, c.bodyLen, r.stage(sc))
	if err != nil {
		owner.Release()
		return nil, nil, err
	}
	return body, owner, nil
}

func (r *Reader) pageError(col, p int, err error) error {
	var ioe *ioError
	if errors.Is(err, rowttl.ErrCorruption) || errors.As(err, &ioe) {
		return err
	}
	return r.corrupt(fmt.Sprintf("page %d column %d (%s)", p, col, r.f.schema.Field(col).Name), err)
}

// readChunk reads and verifies a chunk and returns its body, which lives in
// sc or, uncompressed, in the mapped file.
func (r *Reader) readChunk(c *chunkMeta, sc *scratch) ([]byte, error) {
	raw, err := r.chunkBytes(c, &sc.raw, false)
	if err != nil {
		return nil, err
	}
	block, err := r.checkChunk(raw, c)
	if err != nil {
		return nil, err
	}
	return chunkBody(block, c, sc, r.stage(sc))
}

// stage returns where the LZ4 parts of a chunk read in place from the
// mapped file are copied before they are decoded (lz4View.stage); nil for
// a file read through ReadAt, whose chunks are copies already.
func (r *Reader) stage(sc *scratch) *[]byte {
	if r.data == nil {
		return nil
	}
	return &sc.stage
}

// checkChunk is checkChunk of a chunk of r: the chunks of a mapped file are
// verified on their first read alone (Reader.checked).
func (r *Reader) checkChunk(raw []byte, c *chunkMeta) ([]byte, error) {
	if r.checked == nil {
		return checkChunk(raw, c)
	}
	if r.checked[c.ord].Load() {
		return raw[:len(raw)-chunkTrailer], nil
	}
	block, err := checkChunk(raw, c)
	if err == nil {
		r.checked[c.ord].Store(true)
	}
	return block, err
}

// checkChunk verifies the checksum and compression byte of raw, the bytes of
// chunk c as stored, and returns its block.
func checkChunk(raw []byte, c *chunkMeta) ([]byte, error) {
	n := len(raw) // c.length, at least chunkTrailer (checked by Open)
	if checksum(raw[:n-4]) != binary.LittleEndian.Uint32(raw[n-4:]) {
		return nil, errCRC
	}
	if compression(raw[n-5]) != c.comp {
		return nil, errComp
	}
	block := raw[:n-chunkTrailer]
	if c.comp == compNone && len(block) != c.bodyLen {
		return nil, errBodyLen
	}
	return block, nil
}

// chunkBody returns the body held by the verified block of chunk c: the
// block itself, or its decompression into sc, LZ4 parts copied into
// *stage first when it is not nil (Reader.stage).
func chunkBody(block []byte, c *chunkMeta, sc *scratch, stage *[]byte) ([]byte, error) {
	if c.comp == compNone {
		return block, nil
	}
	sc.body = grow(sc.body, c.bodyLen)
	return decompressStaged(sc.body, block, c.comp, c.bodyLen, stage)
}

// newBuffer allocates an Arrow buffer of size bytes from mem.
func newBuffer(mem memory.Allocator, size int) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(size)
	return b
}

// decodeChunk decodes a chunk body of n rows into an Arrow array.
func decodeChunk(mem memory.Allocator, ct colType, n, nulls int, enc encoding, body []byte, sc *scratch) (arrow.Array, error) {
	return decodeChunkOwned(mem, ct, n, nulls, enc, body, nil, sc)
}

// decodeChunkOwned is decodeChunk of a body that begins the bytes of owner,
// when owner is not nil: the values of a plain string page are then a slice
// of it.
func decodeChunkOwned(mem memory.Allocator, ct colType, n, nulls int, enc encoding, body []byte, owner *memory.Buffer, sc *scratch) (arrow.Array, error) {
	bodyLen := len(body)
	var bufs [3]*memory.Buffer
	nbufs := 2
	release := func() {
		for _, b := range bufs {
			if b != nil {
				b.Release()
			}
		}
	}
	bl := (n + 7) / 8
	switch {
	case nulls == 0:
	case nulls == n:
		bufs[0] = newBuffer(mem, bl)
		clear(bufs[0].Bytes())
	default:
		bm, rest, err := splitValidity(body, n, nulls)
		if err != nil {
			return nil, err
		}
		body = rest
		bufs[0] = newBuffer(mem, bl)
		copy(bufs[0].Bytes(), bm)
	}
	var err error
	switch ct.kind {
	case kindBool:
		bufs[1] = newBuffer(mem, bl)
		err = decodeBools(bufs[1].Bytes(), n, enc, body)
	case kindInt:
		bufs[1] = newBuffer(mem, n*ct.width)
		err = decodeInts(bufs[1].Bytes(), n, ct.width, enc, body)
	case kindFloat, kindDecimal:
		bufs[1] = newBuffer(mem, n*ct.width)
		if enc == encScaled && ct.kind == kindFloat && ct.width == 8 {
			err = decodeScaled(bufs[1].Bytes(), n, body)
		} else {
			err = decodeFixed(bufs[1].Bytes(), ct.width, enc, body)
		}
	case kindBytes:
		nbufs = 3
		bufs[1] = newBuffer(mem, (n+1)*4)
		offsets := castSlice[int32](bufs[1].Bytes(), n+1)
		if owner != nil && enc == encPlain {
			var vals []byte
			if vals, err = plainStrings(offsets, body); err == nil {
				// vals ends the body, which begins owner's bytes.
				bufs[2] = memory.SliceBuffer(owner, bodyLen-len(vals), len(vals))
			}
			break
		}
		err = decodeStrings(offsets, enc, body, func(size int) []byte {
			// 16 bytes of slack for copyShortEntries.
			bufs[2] = memory.NewResizableBuffer(mem)
			if size == 0 {
				return nil
			}
			bufs[2].Reserve(size + 16)
			bufs[2].Resize(size)
			return bufs[2].Buf()[: size : size+16]
		}, sc)
	}
	if err != nil {
		release()
		return nil, err
	}
	data := array.NewData(ct.dt, n, bufs[:nbufs], nil, nulls, 0)
	release()
	arr := array.MakeFromData(data)
	data.Release()
	return arr, nil
}

var errSum = errors.New("zone map sum differs from the data")

// verifySum checks the sum in the zone map of column c of page p, if any.
func (r *Reader) verifySum(c, p int) error {
	z := r.PageStats(c, p)
	if !z.HasSum {
		return nil
	}
	sc := scratchPool.Get().(*scratch)
	defer sc.release()
	body, err := r.readChunk(r.f.chunk(c, p), sc)
	if err != nil {
		return r.pageError(c, p, err)
	}
	got, err := r.bodySum(c, p, body, sc)
	if err != nil {
		return err
	}
	if got.Sum != z.Sum || got.SumScale != z.SumScale {
		return r.corrupt(fmt.Sprintf("page %d column %d (%s)", p, c, r.f.schema.Field(c).Name), errSum)
	}
	return nil
}

// VerifyChecksums checks the checksum of every chunk of the file, those a
// mapped file has checked already too: the bytes as they are now, not as
// they were at their first read. It returns the first error.
func (r *Reader) VerifyChecksums() error {
	var buf []byte
	for p := range r.f.pages {
		for c := range r.f.cols {
			ch := r.f.chunk(c, p)
			raw, err := r.chunkBytes(ch, &buf, true)
			if err == nil {
				_, err = checkChunk(raw, ch)
			}
			if err != nil {
				return r.pageError(c, p, err)
			}
		}
	}
	return nil
}

// Verify reads and decodes every chunk of the file, checking every checksum
// (VerifyChecksums) and structure; it returns the first error. Tests and
// consistency checks call it; scans need not, as ReadPage verifies what it
// reads.
func (r *Reader) Verify() error {
	if err := r.VerifyChecksums(); err != nil {
		return err
	}
	for p := range r.f.pages {
		for c := range r.f.cols {
			a, err := r.ReadPage(memory.DefaultAllocator, c, p)
			if err != nil {
				return err
			}
			a.Release()
			if err := r.verifySum(c, p); err != nil {
				return err
			}
		}
	}
	return nil
}
