package rowset

import (
	"io"
	"sync"
)

// pacedBuffers is the number of buffers an asyncPaced writer queues, each
// of 4 writeback steps: 4 MiB of 256 KiB steps.
const pacedBuffers = 4

// asyncPaced hands what it is given to a goroutine of its own that writes
// it to w (a pacedWriter, which may wait between pieces), so that the
// segment's encoder goes on while the output waits for its pace: written
// in the encoder's goroutine, a paced rewrite took its encoding time plus
// its waits. At most pacedBuffers buffers are queued; Write blocks when
// they all are. The first error of w is returned by every later Write and
// by close. Small writes share a buffer.
type asyncPaced struct {
	full, free chan []byte
	done       chan struct{}
	// cur is the buffer Write fills, sent when full or at close.
	cur []byte

	mu  sync.Mutex
	err error
}

func newAsyncPaced(w io.Writer, step int) *asyncPaced {
	a := &asyncPaced{full: make(chan []byte, pacedBuffers), free: make(chan []byte, pacedBuffers), done: make(chan struct{})}
	for range pacedBuffers {
		a.free <- make([]byte, 0, 4*step)
	}
	go a.run(w)
	return a
}

func (a *asyncPaced) run(w io.Writer) {
	defer close(a.done)
	failed := false
	for b := range a.full {
		if !failed {
			if _, err := w.Write(b); err != nil {
				a.mu.Lock()
				a.err = err
				a.mu.Unlock()
				failed = true
			}
		}
		a.free <- b[:0]
	}
}

func (a *asyncPaced) failure() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

func (a *asyncPaced) Write(p []byte) (int, error) {
	if err := a.failure(); err != nil {
		return 0, err
	}
	n := len(p)
	for len(p) > 0 {
		if a.cur == nil {
			a.cur = <-a.free
		}
		k := min(len(p), cap(a.cur)-len(a.cur))
		a.cur = append(a.cur, p[:k]...)
		p = p[k:]
		if len(a.cur) == cap(a.cur) {
			a.full <- a.cur
			a.cur = nil
		}
	}
	return n, nil
}

// close waits until everything written has gone to w and returns the
// first error; a nil writer has nothing to wait for.
func (a *asyncPaced) close() error {
	if a == nil {
		return nil
	}
	if len(a.cur) > 0 {
		a.full <- a.cur
		a.cur = nil
	}
	close(a.full)
	<-a.done
	return a.failure()
}
