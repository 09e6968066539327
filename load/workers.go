package load

import (
	"context"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// Workers bounds how many goroutines of loads convert or encode rows at
// once. A load has two such goroutines (one converts the input, one
// encodes the batches into the table's files), and each would keep a
// processor busy for as long as the scheduler lets it: eight loads are
// sixteen goroutines in the run queue, and a short query woken behind
// them waits for their time slices, not for its own work. Holding a slot
// of a pool smaller than GOMAXPROCS leaves processors to the queries;
// loads beyond the slots queue (first come, first served) instead of
// flooding the run queue, and their total throughput stays that of the
// slots, which the processors could not exceed anyway.
//
// A goroutine holds a slot only while it computes: it lets it go while it
// waits for its input (a slow client holds no slot) or for the other
// goroutine of its load, and it hands it over every few thousand rows when
// another load waits. The commit, which finishes the files (a UNIQUE load
// sorts and merges there), holds one too, its short wait for the table's
// writer lock included.
type Workers struct {
	slots   chan struct{}
	waiting atomic.Int32
}

// NewWorkers returns a pool of n slots (at least one).
func NewWorkers(n int) *Workers {
	return &Workers{slots: make(chan struct{}, max(n, 1))}
}

// Slots returns the pool's size.
func (w *Workers) Slots() int { return cap(w.slots) }

// Busy returns how many slots are held now.
func (w *Workers) Busy() int { return len(w.slots) }

// Waiting returns how many goroutines wait for a slot now.
func (w *Workers) Waiting() int { return int(w.waiting.Load()) }

// Acquire waits for a slot (giving up when ctx ends) for work other than
// a load's that should share the loads' bound; release gives it back.
func (w *Workers) Acquire(ctx context.Context) (release func(), err error) {
	s := &slot{w: w, ctx: ctx}
	if err := s.take(); err != nil {
		return nil, err
	}
	return s.drop, nil
}

// SharedWorkers is the process-wide pool a Server's loads use unless
// ServerOptions.Workers says otherwise: GOMAXPROCS-1 slots (at least one),
// so that one processor is always left to the statements of other
// clients. It is sized when first used.
var SharedWorkers = sync.OnceValue(func() *Workers {
	return NewWorkers(runtime.GOMAXPROCS(0) - 1)
})

// slot is one goroutine's hold on a Workers slot; a nil pool bounds
// nothing.
type slot struct {
	w    *Workers
	ctx  context.Context
	held bool
}

// take waits for a slot, giving up when the context ends.
func (s *slot) take() error {
	if s.w == nil || s.held {
		return nil
	}
	select {
	case s.w.slots <- struct{}{}:
		s.held = true
		return nil
	default:
	}
	s.w.waiting.Add(1)
	defer s.w.waiting.Add(-1)
	select {
	case s.w.slots <- struct{}{}:
		s.held = true
		return nil
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}

// drop lets the slot go.
func (s *slot) drop() {
	if s.held {
		s.held = false
		<-s.w.slots
	}
}

// yield hands the slot to a goroutine waiting for one, if any, and waits
// for it again: the waiters are served in order, so every load advances.
// With no load waiting it still lets the processor go to the goroutines
// ready to run (the statements of other clients), which would otherwise
// wait for the scheduler to preempt the load.
func (s *slot) yield() error {
	if s.w == nil || !s.held {
		return nil
	}
	if s.w.waiting.Load() == 0 {
		runtime.Gosched()
		return nil
	}
	s.drop()
	return s.take()
}

// slotReader lets the slot go while its source blocks: a load waiting for
// its client's bytes must not keep the others from computing.
type slotReader struct {
	r io.Reader
	s *slot
}

func (r *slotReader) Read(p []byte) (int, error) {
	held := r.s.held
	r.s.drop()
	n, err := r.r.Read(p)
	if held {
		if terr := r.s.take(); terr != nil && err == nil {
			err = terr
		}
	}
	return n, err
}
