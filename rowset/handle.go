package rowset

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"sync/atomic"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/vfs"
)

// Handle is a published rowset with its segment files open. Versions that
// list the rowset each hold a reference; the files are closed when the last
// reference goes, and deleted too if the rowset was marked obsolete (a
// compaction replaced it), so a reader never loses a file it is reading.
type Handle struct {
	Meta     Meta
	Segments []*segment.Reader

	fs    vfs.FS
	dir   string
	files []vfs.File
	// maps holds the mappings of the segment files the Segments read
	// (vfs.Map), unmapped with the files when the last reference goes.
	maps     []*vfs.Mapping
	refs     atomic.Int32
	obsolete atomic.Bool
	once     sync.Once
	// onRelease is called after the files are closed and, for an obsolete
	// rowset, removed; the table uses it to count reclaimed space.
	onRelease func(h *Handle, removed bool)
}

// Open opens the segment files of a published rowset. The handle starts
// with one reference.
func Open(fsys vfs.FS, dir string, m Meta, onRelease func(*Handle, bool)) (*Handle, error) {
	h := &Handle{Meta: m, fs: fsys, dir: dir, onRelease: onRelease}
	h.refs.Store(1)
	for _, s := range m.Segments {
		name := SegmentFileName(dir, s.FileNum)
		f, err := fsys.Open(name)
		if err != nil {
			h.closeFiles()
			if errors.Is(err, fs.ErrNotExist) {
				return nil, rowttl.Errorf(rowttl.ErrCorruption, "rowset %d: segment file %s is missing", m.ID, name)
			}
			return nil, fmt.Errorf("rowset %d: open %s: %w", m.ID, name, err)
		}
		h.files = append(h.files, f)
		st, err := f.Stat()
		if err != nil {
			h.closeFiles()
			return nil, fmt.Errorf("rowset %d: stat %s: %w", m.ID, name, err)
		}
		if st.Size() != s.Bytes {
			h.closeFiles()
			return nil, rowttl.Errorf(rowttl.ErrCorruption, "segment file %s has %d bytes, the manifest says %d", name, st.Size(), s.Bytes)
		}
		// A finished segment never changes: scans read it mapped, where
		// the page cache holds it, rather than copying every chunk they
		// read into buffers of their own.
		var ra io.ReaderAt = f
		if m, ok := vfs.Map(f, st.Size()); ok {
			h.maps = append(h.maps, m)
			ra = m
		}
		r, err := segment.Open(ra, st.Size(), name)
		if err != nil {
			h.closeFiles()
			return nil, err
		}
		if r.NumRows() != s.Rows {
			h.closeFiles()
			return nil, rowttl.Errorf(rowttl.ErrCorruption, "segment file %s has %d rows, the manifest says %d", name, r.NumRows(), s.Rows)
		}
		h.Segments = append(h.Segments, r)
	}
	if Invariants {
		h.checkOpened()
	}
	return h, nil
}

// Ref adds a reference.
func (h *Handle) Ref() { h.refs.Add(1) }

// Unref drops a reference; the last one closes the files.
func (h *Handle) Unref() {
	n := h.refs.Add(-1)
	if n < 0 {
		panic("rowset: Unref without Ref")
	}
	if n == 0 {
		h.once.Do(h.release)
	}
}

// MarkObsolete says that no future version lists this rowset: its files go
// when the last reader lets go.
func (h *Handle) MarkObsolete() { h.obsolete.Store(true) }

func (h *Handle) release() {
	h.closeFiles()
	removed := false
	if h.obsolete.Load() {
		removed = true
		for _, s := range h.Meta.Segments {
			if err := h.fs.Remove(SegmentFileName(h.dir, s.FileNum)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				// Left behind, it is an orphan that the next open deletes.
				removed = false
			}
		}
	}
	if h.onRelease != nil {
		h.onRelease(h, removed)
	}
}

func (h *Handle) closeFiles() {
	for _, m := range h.maps {
		m.Close()
	}
	h.maps = nil
	for _, f := range h.files {
		f.Close()
	}
	h.files = nil
}
