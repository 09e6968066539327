package table

import (
	"context"
	"time"

	"github.com/rowttl/rowttl/ttlcol"
)

// Auto-compaction policy. A round does the first of these that applies:
//  1. drop rowsets whose rows have all expired (not merge-on-read);
//  2. a full compaction when expired rows are a large share of the bytes
//     on disk, so that their space comes back;
//  3. a cumulative compaction when recent rowsets pile up;
//  4. a base compaction when compaction outputs follow the base rowset.
const (
	cumulativeTrigger   = 5
	baseTrigger         = 3
	expiredShareTrigger = 0.3
)

// CompactAuto runs one round of the auto-compaction policy at the table's
// clock, whether or not background compaction is on, and reports whether it
// changed anything. Tests with a simulated clock call it directly.
func (t *Table) CompactAuto(ctx context.Context) (bool, error) {
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	now := t.reclaimNow()
	for _, k := range t.autoPlan(ctx, now) {
		did, err := t.compactLocked(ctx, k, now)
		if err != nil || did {
			return did, err
		}
	}
	return false, nil
}

// autoPlan lists the compactions worth trying now, most useful first.
func (t *Table) autoPlan(ctx context.Context, now time.Time) []CompactionKind {
	v, err := t.pin()
	if err != nil {
		return nil
	}
	defer v.unref()
	var plan []CompactionKind
	if v.policy.Mode != ttlcol.NoTTL {
		plan = append(plan, TTLDrop)
		threshold := v.policy.Threshold(now.UnixMicro())
		var expiredBytes, bytes int64
		for _, h := range v.rowsets {
			bytes += h.Meta.Bytes
			if !h.Meta.TTL.HasMinMax || h.Meta.TTL.Min > threshold {
				continue
			}
			n, _, err := expiredRows(h, threshold)
			if err == nil && h.Meta.Rows > 0 {
				expiredBytes += n * h.Meta.Bytes / h.Meta.Rows
			}
		}
		if bytes > 0 && float64(expiredBytes) >= expiredShareTrigger*float64(bytes) {
			plan = append(plan, Full)
		}
	}
	if len(v.rowsets) > cumulativeTrigger {
		plan = append(plan, Cumulative)
	}
	outputs := 0
	for _, h := range v.rowsets[min(1, len(v.rowsets)):] {
		if h.Meta.Hi > h.Meta.Lo {
			outputs++
		}
	}
	if outputs >= baseTrigger {
		plan = append(plan, Base)
	}
	return plan
}

// autoCompactionOn reads the table property.
func (t *Table) autoCompactionOn() bool {
	if t.opts.DisableAutoCompaction {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.current.def.Properties[PropDisableAutoComp] != "true"
}

// startBackground runs auto-compaction after writes and on a timer until
// Close.
func (t *Table) startBackground() {
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
			}
			for t.autoCompactionOn() {
				did, err := t.CompactAuto(ctx)
				if err != nil || !did {
					break
				}
			}
		}
	}()
}

// wake asks the background loop for a round.
func (t *Table) wake() {
	if t.kick == nil {
		return
	}
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

func (t *Table) stopBackground() {
	t.stopOnce.Do(func() {
		if t.stop != nil {
			close(t.stop)
			<-t.bgDone
		}
	})
}
