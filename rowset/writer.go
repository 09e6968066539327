package rowset

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/ttlcol"
	"github.com/rowttl/rowttl/vfs"
)

// DefaultSegmentRows is the number of rows after which a writer starts a new
// segment file.
const DefaultSegmentRows = 1 << 20

// WriterOptions configures a rowset writer.
type WriterOptions struct {
	FS  vfs.FS
	Dir string
	// Schema is the physical schema of every segment.
	Schema *arrow.Schema
	// TTLIndex is the position of __TTL__ in Schema, or -1.
	TTLIndex int
	Segment  segment.WriterOptions
	// SegmentRows cuts segments; 0 means DefaultSegmentRows.
	SegmentRows int64
	// NewFileNum allocates file numbers; it must never return a number in
	// use.
	NewFileNum func() uint64
	// MayRemove, when set, is asked by Abort before it deletes published
	// segment files: a write whose manifest record failed to sync may be
	// durable after all, and then its files must stay for the next open
	// to find (if the record is not durable, that open deletes them as
	// orphans). Temporary files are always removed.
	MayRemove func() bool
	// WritebackBytes is the step in which segment files go to disk while
	// they are written (see vfs.WritebackWriter): 0 means
	// vfs.DefaultWritebackBytes, < 0 writes them in one go, synced at the
	// end.
	WritebackBytes int64
	// Pace, when set, is called before every piece written to a segment
	// file, with its size, and may block: a compaction beside foreground
	// writes uses it to spread its output over time. A piece is at most a
	// writeback step, so that a large write is spread too.
	Pace func(n int)
}

// Writer writes the segments of one rowset. Rows are written in the order
// given; the caller sorts them.
type Writer struct {
	opts    WriterOptions
	cur     *openSegment
	done    []SegmentMeta
	created []string // every file created, for Abort
	stats   TTLStats
	hist    *ttlcol.Histogram
	rows    int64
	bytes   int64
	check   dataStats // the rows handed in, in the invariants build
}

type openSegment struct {
	fileNum uint64
	tmp     string
	f       vfs.File
	w       *segment.Writer
	// paced, when the file is paced, writes what w wrote: closed before
	// the file is synced or abandoned.
	paced *asyncPaced
	rows  int64
}

// NewWriter returns a writer; no file is created before the first row.
func NewWriter(opts WriterOptions) *Writer {
	if opts.SegmentRows <= 0 {
		opts.SegmentRows = DefaultSegmentRows
	}
	return &Writer{opts: opts}
}

// Write appends rows, cutting segments at SegmentRows.
func (w *Writer) Write(rec arrow.RecordBatch) error {
	n := rec.NumRows()
	var off int64
	for off < n {
		if w.cur == nil {
			if err := w.openSegment(); err != nil {
				return err
			}
		}
		take := min(n-off, w.opts.SegmentRows-w.cur.rows)
		part := rec
		if off != 0 || take != n {
			part = rec.NewSlice(off, off+take)
		}
		err := w.cur.w.Write(part)
		if err == nil && w.opts.TTLIndex >= 0 {
			w.addHist(part.Column(w.opts.TTLIndex))
		}
		if err == nil && Invariants {
			w.check.rows += take
			if w.opts.TTLIndex >= 0 {
				w.check.addTTL(part.Column(w.opts.TTLIndex))
			}
		}
		if part != rec {
			part.Release()
		}
		if err != nil {
			return err
		}
		w.cur.rows += take
		off += take
		if w.cur.rows >= w.opts.SegmentRows {
			if err := w.finishSegment(); err != nil {
				return err
			}
		}
	}
	return nil
}

// SetTag replaces the tag of the segment files the writer has not opened
// yet (see segment.WriterOptions.Tag).
func (w *Writer) SetTag(tag []byte) { w.opts.Segment.Tag = tag }

// SetParallelism replaces the encoding parallelism of the segment files the
// writer has not opened yet (see segment.WriterOptions.Parallelism).
func (w *Writer) SetParallelism(n int) { w.opts.Segment.Parallelism = n }

// SetPace replaces the pacing of the segment files the writer has not
// opened yet (see WriterOptions.Pace).
func (w *Writer) SetPace(pace func(n int)) { w.opts.Pace = pace }

func (w *Writer) openSegment() error {
	num := w.opts.NewFileNum()
	name := SegmentFileName(w.opts.Dir, num)
	tmp := name + ".tmp"
	f, err := w.opts.FS.Create(tmp)
	if err != nil {
		return fmt.Errorf("create segment %s: %w", tmp, err)
	}
	w.created = append(w.created, tmp)
	var out io.Writer = f
	var paced *asyncPaced
	if w.opts.WritebackBytes >= 0 {
		out = vfs.NewWritebackWriter(f, w.opts.WritebackBytes)
	}
	if w.opts.Pace != nil {
		step := w.opts.WritebackBytes
		if step <= 0 {
			step = vfs.DefaultWritebackBytes
		}
		paced = newAsyncPaced(pacedWriter{out, w.opts.Pace, int(step)}, int(step))
		out = paced
	}
	sw, err := segment.NewWriter(out, w.opts.Schema, w.opts.Segment)
	if err != nil {
		paced.close()
		f.Close()
		return err
	}
	w.cur = &openSegment{fileNum: num, tmp: tmp, f: f, w: sw, paced: paced}
	return nil
}

// finishSegment seals the current segment: footer, fsync, close, rename.
func (w *Writer) finishSegment() error {
	s := w.cur
	w.cur = nil
	sum, err := s.w.Finish()
	if perr := s.paced.close(); err == nil {
		err = perr
	}
	if err == nil {
		err = s.f.Sync()
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write segment %s: %w", s.tmp, err)
	}
	name := SegmentFileName(w.opts.Dir, s.fileNum)
	if err := w.opts.FS.Rename(s.tmp, name); err != nil {
		return fmt.Errorf("publish segment %s: %w", name, err)
	}
	w.created[len(w.created)-1] = name
	w.done = append(w.done, SegmentMeta{FileNum: s.fileNum, Rows: sum.Rows, Bytes: sum.Bytes})
	w.rows += sum.Rows
	w.bytes += sum.Bytes
	if w.opts.TTLIndex >= 0 {
		w.stats = w.stats.Merge(statsOf(sum.Columns[w.opts.TTLIndex]))
	}
	return nil
}

func statsOf(z segment.ZoneMap) TTLStats {
	s := TTLStats{Nulls: z.NullCount}
	if z.Min.Kind == schema.IntValue && z.Max.Kind == schema.IntValue {
		s.HasMinMax, s.Min, s.Max = true, z.Min.Int, z.Max.Int
	}
	return s
}

// Histogram buckets start one minute wide and are widened to keep at most
// histBuckets of them: enough to schedule reclaim, small in the manifest.
const (
	histStartWidth = 60 * 1000000
	histBuckets    = 64
)

// addHist counts a batch's __TTL__ values, through a dense array when
// their range is narrow (the usual case: a batch of recent events).
func (w *Writer) addHist(a arrow.Array) {
	if w.hist == nil {
		w.hist = ttlcol.NewHistogram(histStartWidth)
	}
	h := w.hist
	n := a.Len()
	h.AddNulls(int64(a.NullN()))
	if a.NullN() == n {
		return
	}
	d := a.Data()
	vals := arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())[d.Offset() : d.Offset()+n]
	valid := func(i int) bool { return true }
	if a.NullN() > 0 {
		valid = a.IsValid
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for i, v := range vals {
		if valid(i) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	width := h.BucketMicros()
	blo, bhi := floorDiv(lo, width), floorDiv(hi, width)
	if bhi-blo < 1<<16 {
		dense := make([]int64, bhi-blo+1)
		for i, v := range vals {
			if valid(i) {
				dense[floorDiv(v, width)-blo]++
			}
		}
		for b, c := range dense {
			h.AddCounts((blo+int64(b))*width, c)
		}
	} else {
		for i, v := range vals {
			if valid(i) {
				h.AddCounts(v, 1)
			}
		}
	}
	for h.Buckets() > 4*histBuckets {
		h.Coarsen(2)
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Finish seals the last segment and makes the directory entries durable. It
// returns a Meta without ID and versions, which the caller fills in before
// publishing. A rowset of no rows has no segments.
func (w *Writer) Finish() (Meta, error) {
	if w.cur != nil {
		if err := w.finishSegment(); err != nil {
			return Meta{}, err
		}
	}
	if len(w.done) > 0 {
		if err := w.opts.FS.SyncDir(filepath.Clean(w.opts.Dir)); err != nil {
			return Meta{}, fmt.Errorf("sync %s: %w", w.opts.Dir, err)
		}
	}
	if w.hist != nil {
		for w.hist.Buckets() > histBuckets {
			w.hist.Coarsen(2)
		}
	}
	m := Meta{Segments: w.done, Rows: w.rows, Bytes: w.bytes, TTL: w.stats, Hist: w.hist}
	if Invariants {
		w.checkWritten(m)
	}
	return m, nil
}

// Abort removes every file the writer created. Files of an aborted write are
// never referenced by the manifest, so a failed removal only leaves an orphan
// that the next open deletes.
func (w *Writer) Abort() {
	if w.cur != nil {
		w.cur.w.Abandon()
		w.cur.paced.close()
		w.cur.f.Close()
		w.cur = nil
	}
	keep := w.opts.MayRemove != nil && !w.opts.MayRemove()
	for _, name := range w.created {
		if keep && !strings.HasSuffix(name, ".tmp") {
			continue
		}
		w.opts.FS.Remove(name)
	}
	w.created = nil
}

// CopyPage appends page p of segment r without decoding it (see
// segment.Writer.CopyPage); r must have the writer's schema. The page's
// __TTL__ values are decoded to keep the histogram whole.
func (w *Writer) CopyPage(mem memory.Allocator, r *segment.Reader, p int) error {
	if w.cur == nil {
		if err := w.openSegment(); err != nil {
			return err
		}
	}
	if err := w.cur.w.CopyPage(r, p); err != nil {
		return err
	}
	_, n := r.Page(p)
	w.cur.rows += int64(n)
	if Invariants {
		w.check.rows += int64(n)
	}
	if w.opts.TTLIndex >= 0 {
		a, err := r.ReadPage(mem, w.opts.TTLIndex, p)
		if err != nil {
			return err
		}
		w.addHist(a)
		if Invariants {
			w.check.addTTL(a)
		}
		a.Release()
	}
	if w.cur.rows >= w.opts.SegmentRows {
		return w.finishSegment()
	}
	return nil
}

// pacedWriter writes in pieces of at most step bytes and asks pace
// before each.
type pacedWriter struct {
	w    io.Writer
	pace func(n int)
	step int
}

func (p pacedWriter) Write(b []byte) (int, error) {
	written := 0
	for len(b) > 0 {
		k := min(len(b), p.step)
		p.pace(k)
		n, err := p.w.Write(b[:k])
		written += n
		if err != nil {
			return written, err
		}
		b = b[k:]
	}
	return written, nil
}
