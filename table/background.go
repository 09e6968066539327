package table

import (
	"context"
	"sort"
	"strconv"
	"time"

	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
)

// The auto-compaction policy. TTL work comes first and never waits behind
// size-tiered merges:
//
//  1. drop rowsets whose rows have all expired, by a manifest change alone
//     (DUPLICATE and merge-on-write);
//  2. reclaim rowsets whose expired rows are due: with a reclaim deadline,
//     when the oldest expired row of a rowset has waited half the deadline;
//     without one, when at least half of a rowset has expired. DUPLICATE and
//     merge-on-write rewrite the due rowsets alone; merge-on-read can only
//     drop expired rows in a compaction from version 0, so it merges the
//     base rowset up to the last due one;
//  3. cumulative: merge the recent small rowsets once there are enough;
//  4. base: merge the base rowset with the large rowsets once they pile up.
//
// Among candidates of one rank the one reclaiming the most bytes goes first.
const (
	cumulativeTrigger = 5
	baseTrigger       = 6
	// baseTriggerTTL is the base trigger of row TTL tables, where data
	// leaves by expiry and base merges would mostly rewrite rows about to
	// go.
	baseTriggerTTL    = 24
	promotionMinBytes = 4 << 20
	reclaimShare      = 0.4
)

// CompactAuto runs one round of the auto-compaction policy at the table's
// clock (bounded by the latest now a request used), whether or not
// background compaction is on, and reports whether it changed anything.
// Tests and simulations with their own clock call it directly.
func (t *Table) CompactAuto(ctx context.Context) (bool, error) {
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	now := t.reclaimNow()
	v, err := t.writable()
	if err != nil {
		return false, err
	}
	defer v.unref()
	j, ok := planAuto(v, now)
	if !ok {
		return false, nil
	}
	return true, t.runJob(ctx, v, j, now)
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

// expiredEstimate estimates a rowset's rows expired at threshold and the
// expiration of the oldest, from its histogram and TTL bounds alone.
func expiredEstimate(h *rowset.Handle, pol ttlcol.Policy, threshold int64) (rows int64, oldest int64) {
	m := h.Meta
	if pol.Mode == ttlcol.NoTTL || !m.TTL.HasMinMax || m.TTL.Min > threshold {
		return 0, 0
	}
	oldest, _ = pol.Expiration(m.TTL.Min)
	if m.TTL.Nulls == 0 && m.TTL.Max <= threshold {
		return m.Rows, oldest
	}
	if m.Hist != nil {
		rows = m.Hist.ExpiredAt(threshold)
	}
	if rows == 0 {
		rows = 1 // the minimum has expired, so at least one row has
	}
	return min(rows, m.Rows), oldest
}

// planAuto picks the compaction the policy wants at now, if any.
func planAuto(v *version, now time.Time) (job, bool) {
	rs := v.rowsets
	if len(rs) == 0 {
		return job{}, false
	}
	model := v.def.Model
	pol := v.policy
	nowUs := now.UnixMicro()
	threshold := pol.Threshold(nowUs)
	deadline := reclaimDeadline(v.def)

	// 1. Whole-rowset drops.
	if model != schema.UniqueMOR && pol.Mode != ttlcol.NoTTL {
		j := job{kind: TTLDrop, trigger: "ttl", dropOnly: true}
		for _, h := range rs {
			if whollyExpired(h, pol, threshold) {
				j.inputs = append(j.inputs, h)
			}
		}
		if len(j.inputs) > 0 {
			return j, true
		}
	}

	// 2. Rowsets whose expired (or deleted) rows are due.
	if pol.Mode != ttlcol.NoTTL || len(v.deleted) > 0 {
		type cand struct {
			i     int
			bytes int64
		}
		var due []cand
		trigger := "ttl"
		for i, h := range rs {
			n, oldest := expiredEstimate(h, pol, threshold)
			if h.Meta.Rows == 0 || (n == 0 && v.deleted[h.Meta.ID] == nil) {
				continue
			}
			dead := n
			if d := v.deleted[h.Meta.ID]; d != nil {
				// Rows deleted or superseded (merge-on-write) are as dead.
				dead = min(h.Meta.Rows, n+int64(d.GetCardinality()))
			}
			bytes := dead * h.Meta.Bytes / h.Meta.Rows
			isDue := float64(dead) >= reclaimShare*float64(h.Meta.Rows)
			if deadline > 0 && n > 0 && nowUs-oldest >= deadline/2 {
				isDue, trigger = true, "deadline"
			}
			if isDue {
				due = append(due, cand{i, bytes})
			}
		}
		if len(due) > 0 {
			if model == schema.UniqueMOR {
				last := due[len(due)-1].i
				return job{kind: Base, trigger: trigger, inputs: rs[:last+1], fromBase: true}, true
			}
			// The contiguous run of due rowsets reclaiming the most bytes.
			sort.SliceStable(due, func(a, b int) bool { return due[a].i < due[b].i })
			bestStart, bestEnd, bestBytes := 0, 0, int64(-1)
			for a := 0; a < len(due); {
				b, sum := a, due[a].bytes
				for b+1 < len(due) && due[b+1].i == due[b].i+1 {
					b++
					sum += due[b].bytes
				}
				if sum > bestBytes {
					bestStart, bestEnd, bestBytes = due[a].i, due[b].i, sum
				}
				a = b + 1
			}
			return job{kind: Cumulative, trigger: trigger, inputs: rs[bestStart : bestEnd+1], fromBase: bestStart == 0}, true
		}
	}

	// 3. Size-tiered cumulative: the newest run of small rowsets after the
	// base one.
	var total int64
	for _, h := range rs {
		total += h.Meta.Bytes
	}
	// Tiers: walking back from the newest rowset, take rowsets no larger
	// than three times the average of those taken, so that merges join
	// rowsets of like size and each row is rewritten about once per tier.
	//
	// On a row TTL table whose rowsets each cover a narrow range of
	// expirations (time-ordered events, the common case), merges also stop
	// where the merged range would grow past spanLimit: such rowsets then
	// expire whole and leave by a manifest change, instead of being
	// rewritten again and again as their oldest rows expire.
	spanLimit := ttlSpanLimit(v, deadline)
	start := len(rs)
	var taken int64
	var tLo, tHi int64
	for start > 1 {
		h := rs[start-1]
		b := h.Meta.Bytes
		n := int64(len(rs) - start)
		if n > 0 && b > 3*max(taken/n, 1) {
			break
		}
		if m := h.Meta.TTL; spanLimit > 0 && m.HasMinMax {
			if n > 0 && tHi-tLo <= spanLimit && m.Max-m.Min <= spanLimit &&
				max(tHi, m.Max)-min(tLo, m.Min) > spanLimit {
				break
			}
			if n == 0 {
				tLo, tHi = m.Min, m.Max
			} else {
				tLo, tHi = min(tLo, m.Min), max(tHi, m.Max)
			}
		}
		taken += b
		start--
	}
	if len(rs)-start >= cumulativeTrigger {
		return job{kind: Cumulative, trigger: "size", inputs: rs[start:]}, true
	}
	promotion := max(int64(promotionMinBytes), total/20)
	for start > 1 && rs[start-1].Meta.Bytes < promotion {
		start--
	}

	// 4. Base: the large rowsets have piled up.
	trig := baseTrigger
	if pol.Mode != ttlcol.NoTTL {
		trig = baseTriggerTTL
	}
	if start >= trig {
		return job{kind: Base, trigger: "size", inputs: rs[:start], fromBase: true}, true
	}
	return job{}, false
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
			for t.autoCompactionOn() {
				did, err := t.CompactAuto(ctx)
				if err != nil || !did {
					break
				}
			}
		}
	}()
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

// ttlSpanLimit is the widest range of stored __TTL__ values a size-tiered
// merge may build from rowsets that each cover a narrow one: half the reclaim
// deadline, or else an eighth of the table's whole range (at least an hour).
// 0 means no limit (no row TTL).
func ttlSpanLimit(v *version, deadline int64) int64 {
	if v.policy.Mode == ttlcol.NoTTL {
		return 0
	}
	if deadline > 0 {
		return max(deadline/2, 1)
	}
	var lo, hi int64
	first := true
	for _, h := range v.rowsets {
		if m := h.Meta.TTL; m.HasMinMax {
			if first {
				lo, hi, first = m.Min, m.Max, false
			} else {
				lo, hi = min(lo, m.Min), max(hi, m.Max)
			}
		}
	}
	if first {
		return 0
	}
	return max((hi-lo)/8, 3600e6)
}
