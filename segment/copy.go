package segment

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
)

// Copying pages. A page of a finished segment is a run of chunks, one per
// column, each self-contained (its bytes, encoding, compression and CRC do
// not depend on where it sits in the file, as offsets are implied by the
// footer). So a writer whose columns match can append the run as it is, with
// the chunk metas and zone maps of the source footer, without decoding.

// CopyPage appends page p of r to the segment as one page of its own, copying
// every column's chunk bytes (encoded, compressed and checksummed as they
// are) and zone maps, without decoding. Rows buffered by Write are first
// flushed as a page, possibly shorter than PageRows, so row order is
// preserved; the copied page keeps its own row count, which may differ from
// PageRows.
//
// r's columns must match the writer's schema (r.SameLayout: the same field
// names and types in order; nullability and metadata may differ), else the
// error wraps rowttl.ErrInvalidArgument, as it does for p out of range.
//
// The checksum and compression byte of every chunk are verified before
// anything is written: a corrupt source page is an error wrapping
// rowttl.ErrCorruption that names r's file, so corruption is never
// propagated. Such an error, an I/O error of r or an invalid argument leaves
// the writer as it was (buffered rows included) and usable; an error writing
// the output is sticky, as for Write.
//
// The whole-column zone maps of the Summary and footer include the copied
// page. Only for a string or binary column whose page zone map has no bounds
// (a value longer than MaxBoundLen) is that one chunk decoded, to merge its
// full-length bounds into the column's, as Write would have.
func (w *Writer) CopyPage(r *Reader, p int) error {
	if w.err != nil {
		return w.err
	}
	if w.finished {
		return errFinished
	}
	if p < 0 || p >= r.NumPages() {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "segment: copy of page %d of %s out of range (%d pages)", p, r.name, r.NumPages())
	}
	if !r.SameLayout(w.sc) {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "segment: copy from %s: its columns %s differ from the segment's %s", r.name, layoutString(r.f.schema), layoutString(w.sc))
	}

	// Read and verify the page before touching the writer.
	ncols := len(w.cols)
	var raw []byte
	var start int64
	if ncols > 0 {
		first, last := r.f.chunk(0, p), r.f.chunk(ncols-1, p)
		start = first.offset
		span := last.offset + last.length - start // chunks are page-major, contiguous
		w.copyBuf = grow(w.copyBuf, int(span))
		raw = w.copyBuf
		if err := r.readAt(raw, start); err != nil {
			return err
		}
	}
	if len(w.copyZones) != ncols {
		w.copyZones = make([]zoneAcc, ncols)
		w.copySums = make([]ZoneMap, ncols)
	}
	for c := range ncols {
		cm := r.f.chunk(c, p)
		chunk := raw[cm.offset-start : cm.offset-start+cm.length]
		block, err := checkChunk(chunk, cm)
		if err != nil {
			return r.pageError(c, p, err)
		}
		z := &w.copyZones[c]
		z.setZone(cm.zone, w.cols[c].kind)
		w.copySums[c] = cm.zone
		if sumField(w.cols[c].kind, cm.enc) && !cm.zone.HasSum {
			// A page of a file before format 3: its sum is computed.
			if w.copySums[c], err = r.chunkSum(c, p, block); err != nil {
				return err
			}
		}
		if w.cols[c].kind == kindBytes && !cm.zone.HasBounds() && cm.zone.NullCount < cm.zone.Rows {
			if err := r.chunkBounds(z, c, p, block); err != nil {
				return err
			}
		}
	}

	if w.pending > 0 {
		if err := w.flushPage(false); err != nil {
			return err
		}
	}
	if err := w.drain(); err != nil {
		return err
	}
	base := w.offset - start
	if err := w.write(raw); err != nil {
		return err
	}
	n := r.f.pages[p]
	for c := range ncols {
		cm := *r.f.chunk(c, p)
		cm.offset += base
		sum := w.copySums[c]
		cm.zone.HasSum, cm.zone.Sum, cm.zone.SumScale = sum.HasSum, sum.Sum, sum.SumScale
		w.chunks = append(w.chunks, cm)
		w.zones[c].merge(&w.copyZones[c], w.cols[c].kind)
	}
	w.pages = append(w.pages, n)
	w.rows += int64(n)
	w.maxPage = max(w.maxPage, n)
	return nil
}

// setZone makes z the accumulator of the page whose zone map is m.
func (z *zoneAcc) setZone(m ZoneMap, kind physKind) {
	z.reset()
	z.rows, z.nulls = m.Rows, m.NullCount
	if !m.HasBounds() {
		return
	}
	z.has = true
	switch kind {
	case kindBool, kindInt:
		z.imin, z.imax = m.Min.Int, m.Max.Int
	case kindFloat:
		z.fmin, z.fmax = m.Min.Float, m.Max.Float
	case kindBytes:
		z.bmin = append(z.bmin, m.Min.Bytes...)
		z.bmax = append(z.bmax, m.Max.Bytes...)
	}
}

// chunkBounds decodes the verified block of the string or binary chunk of
// column col in page p and adds its values to z.
func (r *Reader) chunkBounds(z *zoneAcc, col, p int, block []byte) error {
	cm := r.f.chunk(col, p)
	sc := scratchPool.Get().(*scratch)
	defer sc.release()
	body, err := chunkBody(block, cm, sc, nil)
	if err != nil {
		return r.pageError(col, p, err)
	}
	arr, err := decodeChunk(memory.DefaultAllocator, r.f.cols[col], r.f.pages[p], int(cm.zone.NullCount), cm.enc, body, sc)
	if err != nil {
		return r.pageError(col, p, err)
	}
	defer arr.Release()
	a := arr.(interface { // *array.String or *array.Binary
		arrow.Array
		ValueOffsets() []int32
		ValueBytes() []byte
	})
	offs, data := a.ValueOffsets(), a.ValueBytes()
	base := offs[0]
	for i := range a.Len() {
		if a.IsValid(i) {
			z.addBytes(data[offs[i]-base : offs[i+1]-base])
		}
	}
	return nil
}

// chunkSum decodes the verified block of the chunk of column col in page p,
// an integer or scaled chunk, and returns its zone map with the sum set.
func (r *Reader) chunkSum(col, p int, block []byte) (ZoneMap, error) {
	sc := scratchPool.Get().(*scratch)
	defer sc.release()
	body, err := chunkBody(block, r.f.chunk(col, p), sc, nil)
	if err != nil {
		return ZoneMap{}, r.pageError(col, p, err)
	}
	return r.bodySum(col, p, body, sc)
}

// bodySum is chunkSum of a chunk's body.
func (r *Reader) bodySum(col, p int, body []byte, sc *scratch) (ZoneMap, error) {
	cm := r.f.chunk(col, p)
	z := cm.zone
	z.HasSum = true
	ct, n := r.f.cols[col], r.f.pages[p]
	if ct.kind == kindFloat || ct.width == 8 {
		z.Sum = Int128{}
		v := Values{Nulls: int(cm.zone.NullCount)}
		if err := v.decode(ct, n, cm.enc, body, false, nil); err != nil {
			return ZoneMap{}, r.corrupt(fmt.Sprintf("page %d column %d", p, col), err)
		}
		for i, x := range v.Ints {
			if v.Valid == nil || v.Valid[i/8]>>(i%8)&1 == 1 {
				z.Sum.Add(x)
			}
		}
		z.SumScale = max(v.Scale, 0)
		return z, nil
	}
	arr, err := decodeChunk(memory.DefaultAllocator, ct, n, int(cm.zone.NullCount), cm.enc, body, sc)
	if err != nil {
		return ZoneMap{}, r.pageError(col, p, err)
	}
	defer arr.Release()
	z.Sum = Int128{}
	for i := range arr.Len() {
		if arr.IsValid(i) {
			switch a := arr.(type) {
			case *array.Int8:
				z.Sum.Add(int64(a.Value(i)))
			case *array.Int16:
				z.Sum.Add(int64(a.Value(i)))
			case *array.Int32:
				z.Sum.Add(int64(a.Value(i)))
			case *array.Date32:
				z.Sum.Add(int64(a.Value(i)))
			}
		}
	}
	return z, nil
}

// layoutString lists the names and types of the fields of sc.
func layoutString(sc *arrow.Schema) string {
	s := "("
	for i, f := range sc.Fields() {
		if i > 0 {
			s += ", "
		}
		s += f.Name + " " + f.Type.String()
	}
	return s + ")"
}
