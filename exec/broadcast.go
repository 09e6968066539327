package exec

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
)

// shared is a prepared batch that every worker of a broadcast fold reads;
// refs counts the workers yet to finish with it.
type shared interface{ refs() *atomic.Int32 }

// foldBroadcast folds the rest of in with a goroutine per worker: the
// calling goroutine pulls and prepares batches while the workers fold the
// previous ones, each worker every batch, in input order. A few prepared
// batches (made by alloc) circulate, so the operator holds a bounded number
// of input batches; recycle (nil: nothing to do) runs on a batch once the
// last worker is done with it. The first fold error cancels the rest and
// is returned; a cancelled ctx stops the pull.
func foldBroadcast[B shared](ctx context.Context, in Operator, workers int, alloc func() B, prepare func(B, arrow.RecordBatch), fold func(w int, b B) error, recycle func(B)) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	free := make(chan B, workers+2)
	for range cap(free) {
		free <- alloc()
	}
	finish := func(b B) {
		if b.refs().Add(-1) == 0 {
			if recycle != nil {
				recycle(b)
			}
			free <- b
		}
	}
	chans := make([]chan B, workers)
	var wg sync.WaitGroup
	for i := range chans {
		chans[i] = make(chan B, 2)
		wg.Go(func() {
			for b := range chans[i] {
				if ctx.Err() == nil {
					if err := fold(i, b); err != nil {
						cancel(err)
					}
				}
				finish(b)
			}
		})
	}
	var err error
pull:
	for {
		var rec arrow.RecordBatch
		if rec, err = in.Next(ctx); err != nil || rec == nil {
			break
		}
		var b B
		select {
		case b = <-free:
		case <-ctx.Done():
			rec.Release()
			break pull
		}
		prepare(b, rec)
		b.refs().Store(int32(workers))
		for i, ch := range chans {
			select {
			case ch <- b:
			case <-ctx.Done():
				for range workers - i {
					finish(b)
				}
				break pull
			}
		}
	}
	for _, ch := range chans {
		close(ch)
	}
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return err
}
