package exec

import (
	"context"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// Parallel probing: once the build side is held, its table is only read,
// so probe batches can be paired on several goroutines. One goroutine
// reads the probe side (an Operator is called from one goroutine at a
// time), Env.Parallelism workers each probe a whole batch with their own
// prober, and the join's Next hands out their output batch by batch in
// probe order, so the output is what the sequential join gives. Only
// joins whose pairing reads nothing but the table do this: no residual
// (an expression may not be safe to evaluate concurrently) and no
// Right or Full (whose matched build rows every worker would write).

// parallelOK reports whether the join probes in parallel.
func (j *hashJoin) parallelOK() bool {
	if j.nested || j.residual != nil || j.workers() < 2 {
		return false
	}
	switch j.kind {
	case InnerJoin, LeftJoin, SemiJoin, AntiJoin, NullAwareAntiJoin:
		return true
	}
	return false
}

func (j *hashJoin) workers() int {
	if j.env.Parallelism > 0 {
		return j.env.Parallelism
	}
	return runtime.GOMAXPROCS(0)
}

type probeJob struct {
	seq int
	b   arrow.RecordBatch
}

// probeResult is the output of probe batch seq, or the end of the probe
// side (eof) after seq batches, or a failure.
type probeResult struct {
	seq int
	out []arrow.RecordBatch
	eof bool
	err error
}

type parallelProbe struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	jobs    chan probeJob
	results chan probeResult
	// held are results that came before their turn, by seq.
	held map[int]probeResult
	want int
}

// startParallel starts the reader and the workers.
func (j *hashJoin) startParallel(ctx context.Context) *parallelProbe {
	ctx, cancel := context.WithCancel(ctx)
	n := j.workers()
	pp := &parallelProbe{cancel: cancel, jobs: make(chan probeJob, n), results: make(chan probeResult, n),
		held: map[int]probeResult{}}
	pp.wg.Add(1 + n)
	go func() {
		defer pp.wg.Done()
		defer close(pp.jobs)
		for seq := 0; ; seq++ {
			b, err := j.left.Next(ctx)
			if err != nil || b == nil {
				pp.send(ctx, probeResult{seq: seq, eof: err == nil, err: err})
				return
			}
			select {
			case pp.jobs <- probeJob{seq: seq, b: b}:
			case <-ctx.Done():
				b.Release()
				return
			}
		}
	}()
	for range n {
		go func() {
			defer pp.wg.Done()
			p := &prober{j: j}
			for job := range pp.jobs {
				out, err := p.whole(ctx, job.b)
				if !pp.send(ctx, probeResult{seq: job.seq, out: out, err: err}) {
					releaseAll(out)
				}
			}
		}()
	}
	return pp
}

// send delivers r unless the probe is being stopped.
func (pp *parallelProbe) send(ctx context.Context, r probeResult) bool {
	select {
	case pp.results <- r:
		return true
	case <-ctx.Done():
		return false
	}
}

// whole pairs every row of probe batch b and returns the batches made.
func (p *prober) whole(ctx context.Context, b arrow.RecordBatch) ([]arrow.RecordBatch, error) {
	p.startProbe(b)
	for p.row < int(p.probe.NumRows()) && p.j.pairsNeeded() {
		if err := p.pairChunk(ctx); err != nil {
			p.release()
			return nil, err
		}
	}
	if err := p.endProbe(); err != nil {
		p.release()
		return nil, err
	}
	out := p.pending
	p.pending = nil
	return out, nil
}

// next moves the output of the next probe batch in order to ps's pending
// batches; it reports false at the end of the probe side.
func (pp *parallelProbe) next(ctx context.Context, ps *prober) (bool, error) {
	for {
		if r, ok := pp.held[pp.want]; ok {
			delete(pp.held, pp.want)
			if r.err != nil {
				return false, r.err
			}
			if r.eof {
				return false, nil
			}
			pp.want++
			ps.pending = append(ps.pending, r.out...)
			return true, nil
		}
		select {
		case r := <-pp.results:
			pp.held[r.seq] = r
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// stopParallel stops the reader and the workers, waits for them and lets
// go of what they made; the probe side is then free to be closed.
func (j *hashJoin) stopParallel() {
	pp := j.par
	if pp == nil {
		return
	}
	j.par = nil
	pp.cancel()
	done := make(chan struct{})
	go func() {
		pp.wg.Wait()
		close(done)
	}()
	for {
		select {
		case r := <-pp.results:
			releaseAll(r.out)
			continue
		case <-done:
		}
		break
	}
	for {
		select {
		case r := <-pp.results:
			releaseAll(r.out)
			continue
		default:
		}
		break
	}
	for job := range pp.jobs {
		job.b.Release()
	}
	for _, r := range pp.held {
		releaseAll(r.out)
	}
	pp.held = nil
}

func releaseAll(bs []arrow.RecordBatch) {
	for _, b := range bs {
		b.Release()
	}
}
