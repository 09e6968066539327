package table

import (
	"sync"
	"time"
)

// defaultCompactionWriteRate is Options.CompactionWriteRate's default, in
// bytes a second. On a virtual disk a log sync waits for whatever the
// compaction handed the device just before it; a rewrite writing as fast
// as it encodes hands it its output in bursts of several writeback steps
// (150 MB/s over 10 ms at 1M rows). The rate is the trade between the
// writes' tail and the compaction's length: on the 2-core bench machine, at
// 10M rows, a 10-row write's p99 during a full rewrite was 1.3 ms unpaced
// and at 64 MB/s (which a 10M-row rewrite barely reaches on average), 0.84-0.90
// ms at 32 MB/s, 0.6-1.0 ms at 24 and 0.6-0.7 ms at 16 MB/s, while the rewrite
// took 2.2, 3.9, 5.1 and 7.5 s. 32 MB/s (2.7 TB a day) keeps the tail within
// a few times the idle one and outpaces what small writes bring in.
const defaultCompactionWriteRate = 32e6

// compactionPaceBurst is the most a paced compaction writes at once after
// a pause: one writeback step.
const compactionPaceBurst = 256 << 10

// pacer is a token bucket over a table's compaction output: while small
// writes came within smallWritesRecent it lets rate bytes a second
// through (burst at once), otherwise everything at once, so that a
// compaction with no writer beside it (a reclaim, a load's debt) keeps its
// full speed. Every compaction of the table shares it.
type pacer struct {
	rate  float64 // bytes a second
	burst float64
	// lastWrite is when a small write last came (Unix nanoseconds, 0:
	// never); now and sleep are the clock, injected by tests.
	lastWrite func() int64
	now       func() time.Time
	sleep     func(time.Duration)

	mu     sync.Mutex
	tokens float64
	at     time.Time // when tokens was last brought up to date
}

// newPacerFor paces at o.CompactionWriteRate.
func newPacerFor(o *Options, lastWrite func() int64) *pacer {
	rate := float64(o.CompactionWriteRate)
	if o.CompactionWriteRate == 0 {
		rate = defaultCompactionWriteRate
	}
	return newPacer(rate, lastWrite)
}

// newPacer paces at rate bytes a second (<= 0: never).
func newPacer(rate float64, lastWrite func() int64) *pacer {
	return &pacer{rate: rate, burst: compactionPaceBurst, lastWrite: lastWrite, now: time.Now, sleep: time.Sleep, tokens: compactionPaceBurst}
}

// pace waits until n more bytes may go.
func (p *pacer) pace(n int) {
	if d := p.reserve(n); d > 0 {
		p.sleep(d)
	}
}

// reserve takes n bytes from the bucket and returns how long the caller
// must wait before writing them.
func (p *pacer) reserve(n int) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	last := p.lastWrite()
	if p.rate <= 0 || last == 0 || now.Sub(time.Unix(0, last)) >= smallWritesRecent {
		// Unpaced: the bucket stays full for when writes come back.
		p.tokens, p.at = p.burst, now
		return 0
	}
	if !p.at.IsZero() {
		p.tokens = min(p.burst, p.tokens+now.Sub(p.at).Seconds()*p.rate)
	}
	p.at = now
	p.tokens -= float64(n)
	if p.tokens >= 0 {
		return 0
	}
	// The debt is paid by the wait: the next reserve finds the tokens
	// that came meanwhile.
	return time.Duration(-p.tokens / p.rate * float64(time.Second))
}
