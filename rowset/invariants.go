package rowset

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
)

// The invariants build (go test -tags invariants) recomputes, whenever a
// rowset is written (a write, a load, a compaction's output), its row count
// and __TTL__ statistics from the data, twice: from the rows handed to the
// writer and from the segment files read back, and panics when either
// disagrees with the Meta the manifest would record. Wrong TTL statistics
// are the bug that loses data quietly: a rowset whose recorded maximum is
// too small is dropped whole by a compaction while rows in it are alive.
// Opening a rowset checks its Meta against its segments' zone maps, and
// Merge checks that each run's keys increase. Every check is behind the
// constant Invariants, so the default build compiles them away.

// dataStats accumulates what the rows themselves say.
type dataStats struct {
	rows int64
	ttl  TTLStats
}

func (d *dataStats) addTTL(a arrow.Array) {
	x := a.(*array.Int64)
	for i := 0; i < x.Len(); i++ {
		if x.IsNull(i) {
			d.ttl.Nulls++
			continue
		}
		v := x.Value(i)
		if !d.ttl.HasMinMax {
			d.ttl.HasMinMax, d.ttl.Min, d.ttl.Max = true, v, v
		}
		d.ttl.Min, d.ttl.Max = min(d.ttl.Min, v), max(d.ttl.Max, v)
	}
}

func invariantf(format string, args ...any) {
	panic("rowset invariant: " + fmt.Sprintf(format, args...))
}

// checkWritten compares a finished writer's Meta with the rows it was given
// and with its segment files read back.
func (w *Writer) checkWritten(m Meta) {
	in := w.check
	if m.Rows != in.rows {
		invariantf("rowset in %s: meta has %d rows, %d were written", w.opts.Dir, m.Rows, in.rows)
	}
	var seg int64
	for _, s := range m.Segments {
		seg += s.Rows
	}
	if seg != m.Rows {
		invariantf("rowset in %s: segments hold %d rows, meta says %d", w.opts.Dir, seg, m.Rows)
	}
	if w.opts.TTLIndex < 0 {
		return
	}
	if m.TTL != in.ttl {
		invariantf("rowset in %s: meta TTL stats %+v, the rows written say %+v", w.opts.Dir, m.TTL, in.ttl)
	}
	if m.Hist != nil && (m.Hist.Rows()+m.Hist.Nulls() != m.Rows || m.Hist.Nulls() != m.TTL.Nulls) {
		invariantf("rowset in %s: histogram counts %d rows and %d NULLs, meta %d rows and %d NULLs",
			w.opts.Dir, m.Hist.Rows(), m.Hist.Nulls(), m.Rows, m.TTL.Nulls)
	}
	// The files are read back through the writer's file system; an error
	// there (a fault a test injected) is no broken invariant, and the
	// check is skipped.
	back, ok := w.readBack(m)
	if !ok {
		return
	}
	if back.rows != m.Rows || back.ttl != m.TTL {
		invariantf("rowset in %s: its files hold %d rows with TTL stats %+v, meta says %d rows, %+v",
			w.opts.Dir, back.rows, back.ttl, m.Rows, m.TTL)
	}
}

func (w *Writer) readBack(m Meta) (dataStats, bool) {
	var back dataStats
	for _, s := range m.Segments {
		name := SegmentFileName(w.opts.Dir, s.FileNum)
		f, err := w.opts.FS.Open(name)
		if err != nil {
			return back, false
		}
		ok := func() bool {
			defer f.Close()
			st, err := f.Stat()
			if err != nil {
				return false
			}
			r, err := segment.Open(f, st.Size(), name)
			if err != nil {
				return false
			}
			back.rows += r.NumRows()
			for p := 0; p < r.NumPages(); p++ {
				a, err := r.ReadPage(memory.DefaultAllocator, w.opts.TTLIndex, p)
				if err != nil {
					return false
				}
				back.addTTL(a)
				a.Release()
			}
			return true
		}()
		if !ok {
			return back, false
		}
	}
	return back, true
}

// checkOpened compares a published rowset's Meta with its segments' footers.
func (h *Handle) checkOpened() {
	var rows int64
	var ttl TTLStats
	hasTTL := false
	for _, r := range h.Segments {
		rows += r.NumRows()
		if idx := r.Schema().FieldIndices(schema.TTLColumn); len(idx) == 1 {
			hasTTL = true
			ttl = ttl.Merge(statsOf(r.ColumnStats(idx[0])))
		}
	}
	if rows != h.Meta.Rows {
		invariantf("rowset %d: segments hold %d rows, meta says %d", h.Meta.ID, rows, h.Meta.Rows)
	}
	if hasTTL && ttl != h.Meta.TTL {
		invariantf("rowset %d: segments' TTL stats %+v, meta says %+v", h.Meta.ID, ttl, h.Meta.TTL)
	}
}
