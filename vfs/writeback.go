package vfs

import "io"

// DefaultWritebackBytes is the step of a WritebackWriter made with step 0:
// small enough that the two steps in flight take a few milliseconds of a
// modest disk, which is what a log sync behind them then waits; 1 MiB steps
// left it waiting twice as long during a compaction.
const DefaultWritebackBytes = 256 << 10

// WritebackWriter writes a large file in steps: after each step of bytes it
// has the kernel start writing that step to disk and waits for the step
// before it. A file written in one go and synced at the end leaves all of
// it dirty in the page cache until then, and its one large sync fills the
// device queue, so that a small sync of another file (the write-ahead log's
// commit) waits behind all of it. Written in steps, at most two steps are
// ever on their way to disk, and the final Sync has little left to do.
//
// The steps are only a schedule: durability still comes from the caller's
// Sync. Files that are not the operating system's (MemFS, ErrorFS) and
// systems without a ranged writeback are written as they would be without
// it. An error of the writeback is returned, not dropped: the kernel may
// report a write error only once, to whichever call on the file asks first.
type WritebackWriter struct {
	f    File
	step int64
	// off is the bytes written; started the bytes whose writeback began.
	off, started int64
	// done is set once a ranged writeback proved unavailable.
	done bool
}

// NewWritebackWriter writes to f, which is empty and written only through
// the writer, in steps of step bytes (0: DefaultWritebackBytes).
func NewWritebackWriter(f File, step int64) *WritebackWriter {
	if step <= 0 {
		step = DefaultWritebackBytes
	}
	w := &WritebackWriter{f: f, step: step}
	if _, ok := f.(fder); !ok {
		w.done = true
	}
	return w
}

var _ io.Writer = (*WritebackWriter)(nil)

func (w *WritebackWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.off += int64(n)
	if err != nil || w.done {
		return n, err
	}
	for w.off-w.started >= w.step {
		if err := w.writeback(w.started, w.step); err != nil {
			return n, err
		}
		w.started += w.step
	}
	return n, nil
}

// writeback starts the writeback of [off, off+n) after waiting for the
// step before it.
func (w *WritebackWriter) writeback(off, n int64) error {
	fd := w.f.(fder).Fd()
	if off >= w.step {
		if ok, err := rangeWait(fd, off-w.step, w.step); !ok {
			w.done = true
			return err
		}
	}
	ok, err := rangeStart(fd, off, n)
	if !ok {
		w.done = true
	}
	return err
}

// fder is a file of the operating system.
type fder interface{ Fd() uintptr }
