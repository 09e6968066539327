package table

import (
	"context"
	"strconv"
	"time"

	"github.com/rowttl/rowttl/compaction"
)

// CompactAuto runs one round of the auto-compaction policy at the table's
// clock (bounded by the latest now a request used), whether or not
// background compaction is on, and reports whether it changed anything.
// Tests and simulations with their own clock call it directly.
func (t *Table) CompactAuto(ctx context.Context) (bool, error) {
	now := t.reclaimNow()
	return t.compact(ctx, now, func(v *version) (job, bool, error) { return t.planAuto(v, now) })
}

// planAuto asks the auto-compaction policy (compaction.PickAuto) for the
// compaction it wants on v at now, if any, showing it the rows v hides.
func (t *Table) planAuto(v *version, now time.Time) (job, bool, error) {
	hidden, err := v.hidden(t.opts.Allocator)
	if err != nil {
		return job{}, false, err
	}
	p, ok := compaction.PickAuto(v.view(hidden), now.UnixMicro())
	return jobOf(v, p), ok, nil
}

// reclaimDeadline returns the table's reclaim deadline in µs, or 0.
func reclaimDeadline(def *Definition) int64 {
	if s, ok := def.Properties[PropReclaimDeadline]; ok {
		if secs, err := strconv.ParseInt(s, 10, 64); err == nil && secs > 0 {
			return secs * 1e6
		}
	}
	return 0
}

// autoCompactionOn reads the table property.
func (t *Table) autoCompactionOn() bool {
	if t.opts.DisableAutoCompaction {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.vs.current.def.Properties[PropDisableAutoComp] != "true"
}

// startCompactionScheduler starts the loop that runs the auto-compaction
// policy (compaction.PickAuto) after writes and on a timer, until Close; the
// same loop flushes deferred work and records what the manifest published.
func (t *Table) startCompactionScheduler() {
	t.kick = make(chan struct{}, 1)
	t.stop = make(chan struct{})
	t.bgDone = make(chan struct{})
	kick, stop, done := t.kick, t.stop, t.bgDone
	interval := t.opts.CompactionInterval
	if interval <= 0 {
		interval = time.Second
	}
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		var publish <-chan time.Time
		if p := t.opts.PublishInterval; p >= 0 {
			if p == 0 {
				p = interval
			}
			pt := time.NewTicker(p)
			defer pt.Stop()
			publish = pt.C
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			<-stop
			cancel()
		}()
		for {
			select {
			case <-stop:
				return
			case <-kick:
			case <-tick.C:
				t.flushDeferred()
			case <-publish:
				// Best effort: a failure leaves CURRENT as it was, and the
				// next tick tries again.
				t.recordPublished()
				continue
			}
			t.compactWhileDue(ctx)
		}
	}()
}

// compactWhileDue runs auto-compaction rounds until the policy wants
// nothing more (or one fails: the next round tries again).
func (t *Table) compactWhileDue(ctx context.Context) {
	for t.autoCompactionOn() {
		did, err := t.CompactAuto(ctx)
		if err != nil || !did {
			return
		}
	}
}

// recordPublished records in CURRENT the last record the manifest made
// durable (see versionSet.recordPublished), unless the table is closed.
func (t *Table) recordPublished() error {
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	t.mu.Lock()
	closed := t.mu.closed
	t.mu.Unlock()
	if closed {
		return nil
	}
	return t.vs.recordPublished()
}

// wake asks the background loop for a round.
func (t *Table) wake() { nudge(t.kick) }

// nudge posts to a loop's one-slot wake-up channel without waiting: a
// post already pending covers this one too. A nil channel (no loop) is
// left alone.
func nudge(ch chan struct{}) {
	if ch == nil {
		return
	}
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (t *Table) stopCompactionScheduler() {
	t.stopOnce.Do(func() {
		if t.stop != nil {
			close(t.stop)
			<-t.bgDone
		}
	})
}
