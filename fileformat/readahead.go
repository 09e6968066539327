package fileformat

import (
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// ReadAhead returns a stream of rr's batches decoded ahead on a goroutine
// of their own, at most depth batches ahead of the reader, so that
// decoding a file overlaps with whatever its reader does with each batch
// (a load encoding it into a table): on two cores an import runs at the
// speed of the slower of the two rather than their sum. Memory grows by
// at most depth+1 batches. Releasing the stream stops the goroutine and
// releases rr; rr must not be used meanwhile.
func ReadAhead(rr array.RecordReader, depth int) array.RecordReader {
	if depth < 1 {
		depth = 1
	}
	ra := &readAhead{rr: rr, ch: make(chan arrow.RecordBatch, depth), stop: make(chan struct{}), refs: 1}
	ra.wg.Add(1)
	go ra.run()
	return ra
}

type readAhead struct {
	rr   array.RecordReader
	ch   chan arrow.RecordBatch
	stop chan struct{}
	wg   sync.WaitGroup
	cur  arrow.RecordBatch
	err  error // rr.Err(), read once the goroutine has ended
	done bool
	mu   sync.Mutex
	refs int
}

func (ra *readAhead) run() {
	defer ra.wg.Done()
	defer close(ra.ch)
	for ra.rr.Next() {
		rec := ra.rr.RecordBatch()
		rec.Retain()
		select {
		case ra.ch <- rec:
		case <-ra.stop:
			rec.Release()
			return
		}
	}
}

func (ra *readAhead) Schema() *arrow.Schema { return ra.rr.Schema() }

func (ra *readAhead) Next() bool {
	if ra.cur != nil {
		ra.cur.Release()
		ra.cur = nil
	}
	if ra.done {
		return false
	}
	rec, ok := <-ra.ch
	if !ok {
		ra.done = true
		ra.wg.Wait()
		ra.err = ra.rr.Err()
		return false
	}
	ra.cur = rec
	return true
}

func (ra *readAhead) RecordBatch() arrow.RecordBatch { return ra.cur }

// Record is RecordBatch under its older name.
func (ra *readAhead) Record() arrow.RecordBatch { return ra.cur }

func (ra *readAhead) Err() error { return ra.err }

func (ra *readAhead) Retain() {
	ra.mu.Lock()
	ra.refs++
	ra.mu.Unlock()
}

func (ra *readAhead) Release() {
	ra.mu.Lock()
	ra.refs--
	last := ra.refs == 0
	ra.mu.Unlock()
	if !last {
		return
	}
	close(ra.stop)
	for rec := range ra.ch {
		rec.Release()
	}
	ra.wg.Wait()
	if ra.cur != nil {
		ra.cur.Release()
		ra.cur = nil
	}
	ra.rr.Release()
}
