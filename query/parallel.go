package query

import (
	"context"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"
)

// A scan reads pages on several goroutines and hands the batches out in
// page order, so its output does not depend on the number of workers. At
// most a few pages per worker are in flight: memory does not grow with the
// table.

type pageResult struct {
	rec arrow.RecordBatch
	// part is Aggregate's share of the page, when hasPart.
	part    partial
	hasPart bool
	err     error
}

// pageFunc handles one page; each worker gets its own from a factory, so
// that it can keep buffers across pages without locks.
type pageFunc func(pageTask) pageResult

type pipeline struct {
	futures chan chan pageResult
	// free holds the futures the reader is done with: each carries one
	// result, so a drained one serves another page, and a count over
	// many small pages makes no channel per page.
	free    chan chan pageResult
	done    chan struct{}
	stopped chan struct{}
}

// recycle hands a drained future back to the producer.
func (pl *pipeline) recycle(fut chan pageResult) {
	select {
	case pl.free <- fut:
	default:
	}
}

type parallelismKey struct{}

// WithParallelism returns ctx under which scans that ask for no
// parallelism of their own (Request.Parallelism 0) decode pages on n
// goroutines: a server running many statements at once runs each on
// one, since spreading a small scan over goroutines that all wait for a
// busy processor only adds handoffs to its latency.
func WithParallelism(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, parallelismKey{}, n)
}

func defaultWorkers(ctx context.Context, requested int) int {
	if requested > 0 {
		return requested
	}
	if n, ok := ctx.Value(parallelismKey{}).(int); ok && n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

func (s *Scan) startPipeline(newWorker func() pageFunc) {
	depth := 2 * s.workers
	pl := &pipeline{
		futures: make(chan chan pageResult, depth),
		free:    make(chan chan pageResult, depth+2),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	s.pl = pl
	type job struct {
		task pageTask
		out  chan pageResult
	}
	jobs := make(chan job, depth)
	// The producer walks the pages in order; the cursor is its alone.
	go func() {
		defer close(pl.futures)
		defer close(jobs)
		for {
			task, ok := s.advance()
			if !ok {
				return
			}
			var out chan pageResult
			select {
			case out = <-pl.free:
			default:
				out = make(chan pageResult, 1)
			}
			select {
			case pl.futures <- out:
			case <-pl.done:
				return
			}
			select {
			case jobs <- job{task, out}:
			case <-pl.done:
				out <- pageResult{}
				return
			}
		}
	}()
	finished := make(chan struct{}, s.workers)
	for w := 0; w < s.workers; w++ {
		work := newWorker()
		go func() {
			defer func() { finished <- struct{}{} }()
			for j := range jobs {
				select {
				case <-pl.done:
					j.out <- pageResult{}
					continue
				default:
				}
				if err := s.ctx.Err(); err != nil {
					j.out <- pageResult{err: err}
					continue
				}
				j.out <- work(j.task)
			}
		}()
	}
	go func() {
		for w := 0; w < s.workers; w++ {
			<-finished
		}
		close(pl.stopped)
	}()
}

func (s *Scan) nextParallel() bool {
	if s.pl == nil {
		s.startPipeline(func() pageFunc {
			return func(t pageTask) pageResult {
				rec, err := s.readPage(t)
				return pageResult{rec: rec, err: err}
			}
		})
	}
	for fut := range s.pl.futures {
		res := <-fut
		s.pl.recycle(fut)
		if res.err != nil {
			s.err = res.err
			s.stopPipeline()
			return false
		}
		if res.rec != nil {
			s.cur = res.rec
			return true
		}
	}
	s.stopPipeline()
	return false
}

// stopPipeline stops the goroutines and frees batches nobody will read.
func (s *Scan) stopPipeline() {
	pl := s.pl
	if pl == nil {
		return
	}
	select {
	case <-pl.done:
		return
	default:
	}
	close(pl.done)
	for fut := range pl.futures {
		if res := <-fut; res.rec != nil {
			res.rec.Release()
		}
	}
	<-pl.stopped
}
