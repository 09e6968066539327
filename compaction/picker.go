package compaction

import (
	"fmt"
	"time"

	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
)

// Kind names a compaction of SPEC §3.
type Kind string

// The compaction kinds. Cumulative merges the recent rowsets after the base
// one; base merges the base rowset (the one holding the oldest versions,
// which covers from version 0) with the compaction outputs that follow it;
// full merges everything. TTLDrop removes rowsets whose rows have all
// expired, by a manifest change alone.
const (
	Cumulative Kind = "cumulative"
	Base       Kind = "base"
	Full       Kind = "full"
	TTLDrop    Kind = "ttl_drop"
)

// The auto-compaction policy. TTL work comes first and never waits behind
// size-tiered merges:
//
//  1. drop rowsets whose rows have all expired, by a manifest change alone
//     (DUPLICATE and merge-on-write);
//  2. reclaim rowsets whose expired or hidden rows are due: with a reclaim
//     deadline, when the oldest expired row of a rowset has waited half the
//     deadline; when a quarter of its rows are hidden (deleted, or
//     superseded by newer versions of their keys); when expired and hidden
//     rows together reach 40% of it. DUPLICATE and merge-on-write rewrite
//     the due rowsets alone, and so does merge-on-read for hidden rows;
//     merge-on-read can only drop expired rows in a compaction from version
//     0, so for those it merges the base rowset up to the last due one;
//  3. cumulative: merge the recent small rowsets once there are enough;
//  4. base: merge the base rowset with the large rowsets once they pile up.
//
// Among candidates of one rank the one reclaiming the most bytes goes first.
const (
	// CumulativeTrigger is how many small rowsets above the base make a
	// cumulative compaction due.
	CumulativeTrigger = 5
	baseTrigger       = 6
	// baseTriggerTTL is the base trigger of row TTL tables, where data
	// leaves by expiry and base merges would mostly rewrite rows about to
	// go.
	baseTriggerTTL    = 24
	promotionMinBytes = 4 << 20
	reclaimShare      = 0.4
	// hiddenShare is the share of a rowset's rows its version hides
	// (deleted, or superseded by newer versions of their keys) that makes
	// it due for a rewrite: below reclaimShare, since hidden rows never
	// leave by expiry of their own before the rowset's other rows do.
	hiddenShare = 0.25
)

// Rowset is what the picker knows of one rowset of a version: its metadata
// and how many of its rows the version's delete bitmap hides.
type Rowset struct {
	Meta *rowset.Meta
	// Deleted counts the rows of the rowset the version hides: deleted, or
	// superseded by a newer version of their key (merge-on-write by its
	// bitmaps, merge-on-read by a key merge).
	Deleted int64
}

// View is the picker's view of one version of a table: its rowsets in
// version order (the base rowset first), the model, the TTL policy and the
// reclaim deadline. The picker reads nothing else: no file, no clock.
type View struct {
	Model  schema.Model
	Policy ttlcol.Policy
	// Deadline is the table's reclaim deadline in µs, 0 for none.
	Deadline int64
	Rowsets  []Rowset
}

// Plan is one compaction to run: its inputs are a run of the view's
// rowsets in version order, contiguous except for a TTLDrop.
type Plan struct {
	Kind Kind
	// Trigger says why it runs: "manual", "size", "ttl" (expired rows),
	// "hidden" (deleted or superseded rows) or "deadline".
	Trigger string
	// Inputs index View.Rowsets, ascending; Reasons says for each why it was
	// chosen.
	Inputs  []int
	Reasons []string
	// FromBase reports that the inputs start with the base rowset, so
	// nothing older lies below them.
	FromBase bool
	// DropOnly removes the inputs without writing anything: every row of
	// each has expired.
	DropOnly bool
}

// Handles returns the plan's inputs among rs, the handles of the view's
// rowsets in the same order.
func (p Plan) Handles(rs []*rowset.Handle) []*rowset.Handle {
	out := make([]*rowset.Handle, len(p.Inputs))
	for i, x := range p.Inputs {
		out[i] = rs[x]
	}
	return out
}

func (p *Plan) add(i int, reason string) {
	p.Inputs = append(p.Inputs, i)
	p.Reasons = append(p.Reasons, reason)
}

func (p *Plan) addRun(lo, hi int, reason string) {
	for i := lo; i < hi; i++ {
		p.add(i, reason)
	}
}

// DropsExpired tells whether a compaction may drop expired rows (SPEC §3):
// everywhere on DUPLICATE and merge-on-write tables of published rowsets;
// on merge-on-read tables only when nothing older lies below the inputs,
// since an expired newest version there still hides the older ones.
func DropsExpired(model schema.Model, fromBase bool) bool {
	if model == schema.UniqueMOR {
		return fromBase
	}
	return true
}

// rowsetState classifies a whole rowset at threshold from its TTL statistics.
func rowsetState(m *rowset.Meta, pol ttlcol.Policy, threshold int64) ttlcol.PageState {
	if pol.Mode == ttlcol.NoTTL {
		return ttlcol.AllLive
	}
	return ttlcol.Classify(m.Rows, m.TTL.Nulls, m.TTL.HasMinMax, m.TTL.Min, m.TTL.Max, threshold)
}

// WhollyExpired reports a rowset whose every row has expired at threshold:
// a compaction that may drop expired rows need not read it, and on
// DUPLICATE and merge-on-write tables it can go by a manifest change alone.
func WhollyExpired(m *rowset.Meta, pol ttlcol.Policy, threshold int64) bool {
	return rowsetState(m, pol, threshold) == ttlcol.AllExpired
}

// expiredEstimate estimates a rowset's rows expired at threshold and the
// expiration of the oldest, from its histogram and TTL bounds alone.
func expiredEstimate(m *rowset.Meta, pol ttlcol.Policy, threshold int64) (rows int64, oldest int64) {
	switch rowsetState(m, pol, threshold) {
	case ttlcol.AllLive:
		return 0, 0
	case ttlcol.AllExpired:
		oldest, _ = pol.Expiration(m.TTL.Min)
		return m.Rows, oldest
	}
	if !m.TTL.HasMinMax || m.TTL.Min > threshold {
		return 0, 0
	}
	oldest, _ = pol.Expiration(m.TTL.Min)
	if m.Hist != nil {
		rows = m.Hist.ExpiredAt(threshold)
	}
	if rows == 0 {
		rows = 1 // the minimum has expired, so at least one row has
	}
	return min(rows, m.Rows), oldest
}

// PickManual plans a compaction that was asked for by kind at now (µs since
// the epoch), or reports that there is nothing to do.
func PickManual(kind Kind, v View, now int64) (Plan, bool) {
	p := Plan{Kind: kind, Trigger: "manual"}
	rs := v.Rowsets
	switch kind {
	case TTLDrop:
		if v.Model == schema.UniqueMOR {
			return p, false
		}
		threshold := v.Policy.Threshold(now)
		for i, r := range rs {
			if WhollyExpired(r.Meta, v.Policy, threshold) {
				p.add(i, "wholly expired")
			}
		}
		p.DropOnly = true
		return p, len(p.Inputs) > 0
	case Full:
		p.addRun(0, len(rs), "full")
		p.FromBase = true
		return p, len(rs) > 0
	case Base:
		if len(rs) == 0 {
			return p, false
		}
		// The base rowset and the compaction outputs (spanning several
		// versions) that follow it; at least the next rowset.
		n := 1
		for n < len(rs) && rs[n].Meta.Hi > rs[n].Meta.Lo {
			n++
		}
		if n == 1 && len(rs) > 1 {
			n = 2
		}
		p.add(0, "base rowset")
		p.addRun(1, n, "after the base rowset")
		p.FromBase = true
		return p, true
	case Cumulative:
		if len(rs) < 3 {
			return p, false
		}
		p.addRun(1, len(rs), "after the base rowset")
		return p, true
	}
	return p, false
}

// PickAuto plans the compaction the auto-compaction policy wants at now (µs
// since the epoch), if any.
func PickAuto(v View, now int64) (Plan, bool) {
	rs := v.Rowsets
	if len(rs) == 0 {
		return Plan{}, false
	}
	if p, ok := pickDrops(v, now); ok {
		return p, true
	}
	if p, ok := pickDue(v, now); ok {
		return p, true
	}
	return pickSize(v)
}

// pickDrops is rule 1: whole-rowset drops.
func pickDrops(v View, now int64) (Plan, bool) {
	if v.Model == schema.UniqueMOR || v.Policy.Mode == ttlcol.NoTTL {
		return Plan{}, false
	}
	p := Plan{Kind: TTLDrop, Trigger: "ttl", DropOnly: true}
	threshold := v.Policy.Threshold(now)
	for i, r := range v.Rowsets {
		if WhollyExpired(r.Meta, v.Policy, threshold) {
			p.add(i, "wholly expired")
		}
	}
	return p, len(p.Inputs) > 0
}

// pickDue is rule 2: rowsets whose expired or hidden rows are due.
func pickDue(v View, now int64) (Plan, bool) {
	pol, rs := v.Policy, v.Rowsets
	anyHidden := false
	for _, r := range rs {
		anyHidden = anyHidden || r.Deleted > 0
	}
	if pol.Mode == ttlcol.NoTTL && !anyHidden {
		return Plan{}, false
	}
	threshold := pol.Threshold(now)
	var due []candidate
	for i, r := range rs {
		m := r.Meta
		n, oldest := expiredEstimate(m, pol, threshold)
		if m.Rows == 0 || (n == 0 && r.Deleted == 0) {
			continue
		}
		// Rows hidden (deleted, or superseded by a newer version of their
		// key) are as dead as expired ones.
		dead := min(m.Rows, n+r.Deleted)
		c := candidate{i: i, bytes: dead * m.Bytes / m.Rows}
		switch share := float64(r.Deleted) / float64(m.Rows); {
		case v.Deadline > 0 && n > 0 && now-oldest >= v.Deadline/2:
			c.trigger = "deadline"
			c.reason = fmt.Sprintf("deadline: oldest expired %v ago, half the deadline is %v", micros(now-oldest), micros(v.Deadline/2))
		case share >= hiddenShare:
			c.trigger = "hidden"
			c.reason = fmt.Sprintf("hidden share %.2f (%d of %d rows hidden, %d expired)", share, r.Deleted, m.Rows, n)
		case float64(dead) >= reclaimShare*float64(m.Rows):
			c.trigger = "ttl"
			c.reason = fmt.Sprintf("dead share %.2f (expired %d, hidden %d of %d)", float64(dead)/float64(m.Rows), n, r.Deleted, m.Rows)
		}
		if c.reason != "" {
			due = append(due, c)
		}
	}
	if len(due) == 0 {
		return Plan{}, false
	}
	if v.Model == schema.UniqueMOR {
		// Expired rows go only in a compaction from version 0: merge the
		// base rowset up to the last rowset whose expired rows are due.
		// Hidden rows go in any compaction: the versions that hide them
		// stay, so rowsets due for those alone are rewritten where they lie.
		last := -1
		for _, c := range due {
			if c.trigger != "hidden" {
				last = c.i
			}
		}
		if last >= 0 {
			p := Plan{Kind: Base, FromBase: true}
			d := 0
			for i := 0; i <= last; i++ {
				if due[d].i == i {
					p.add(i, due[d].reason)
					p.Trigger = urgent(p.Trigger, due[d].trigger)
					d++
				} else {
					p.add(i, "below a due rowset (merge-on-read drops expired rows from version 0 only)")
				}
			}
			return p, true
		}
	}
	// The contiguous run of due rowsets reclaiming the most bytes.
	bestStart, bestEnd, bestBytes := 0, 0, int64(-1)
	for a := 0; a < len(due); {
		b, sum := a, due[a].bytes
		for b+1 < len(due) && due[b+1].i == due[b].i+1 {
			b++
			sum += due[b].bytes
		}
		if sum > bestBytes {
			bestStart, bestEnd, bestBytes = a, b, sum
		}
		a = b + 1
	}
	p := Plan{Kind: Cumulative, FromBase: due[bestStart].i == 0}
	for _, c := range due[bestStart : bestEnd+1] {
		p.add(c.i, c.reason)
		p.Trigger = urgent(p.Trigger, c.trigger)
	}
	return p, true
}

// candidate is a rowset due for a rewrite: the bytes it would reclaim, what
// makes it due and why.
type candidate struct {
	i       int
	bytes   int64
	trigger string
	reason  string
}

// urgent returns the more urgent of two triggers of due rowsets: a
// deadline, then expiry, then hidden rows.
func urgent(a, b string) string {
	rank := func(s string) int {
		switch s {
		case "deadline":
			return 3
		case "ttl":
			return 2
		case "hidden":
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// pickSize is rules 3 and 4: size-tiered merges.
func pickSize(v View) (Plan, bool) {
	rs := v.Rowsets
	var total int64
	for _, r := range rs {
		total += r.Meta.Bytes
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
	spanLimit := ttlSpanLimit(v)
	start := len(rs)
	var taken int64
	var tLo, tHi int64
	for start > 1 {
		m := rs[start-1].Meta
		b := m.Bytes
		n := int64(len(rs) - start)
		if n > 0 && b > 3*max(taken/n, 1) {
			break
		}
		if spanLimit > 0 && m.TTL.HasMinMax {
			if n > 0 && tHi-tLo <= spanLimit && m.TTL.Max-m.TTL.Min <= spanLimit &&
				max(tHi, m.TTL.Max)-min(tLo, m.TTL.Min) > spanLimit {
				break
			}
			if n == 0 {
				tLo, tHi = m.TTL.Min, m.TTL.Max
			} else {
				tLo, tHi = min(tLo, m.TTL.Min), max(tHi, m.TTL.Max)
			}
		}
		taken += b
		start--
	}
	if len(rs)-start >= CumulativeTrigger {
		p := Plan{Kind: Cumulative, Trigger: "size"}
		avg := taken / int64(len(rs)-start)
		p.addRun(start, len(rs), fmt.Sprintf("size tier: %d rowsets of %d bytes on average", len(rs)-start, avg))
		return p, true
	}
	promotion := max(int64(promotionMinBytes), total/20)
	small := start
	for start > 1 && rs[start-1].Meta.Bytes < promotion {
		start--
	}

	trig := baseTrigger
	if v.Policy.Mode != ttlcol.NoTTL {
		trig = baseTriggerTTL
	}
	if start < trig {
		return Plan{}, false
	}
	p := Plan{Kind: Base, Trigger: "size", FromBase: true}
	p.add(0, fmt.Sprintf("base rowset: %d rowsets below the newest tier, base trigger %d", start, trig))
	for i := 1; i < start; i++ {
		if i >= small {
			p.add(i, fmt.Sprintf("below the promotion size %d", promotion))
		} else {
			p.add(i, "large, older than the newest tier")
		}
	}
	return p, true
}

// ttlSpanLimit is the widest range of stored __TTL__ values a size-tiered
// merge may build from rowsets that each cover a narrow one: half the reclaim
// deadline, or else an eighth of the table's whole range (at least an hour).
// 0 means no limit (no row TTL).
func ttlSpanLimit(v View) int64 {
	if v.Policy.Mode == ttlcol.NoTTL {
		return 0
	}
	if v.Deadline > 0 {
		return max(v.Deadline/2, 1)
	}
	var lo, hi int64
	first := true
	for _, r := range v.Rowsets {
		if m := r.Meta.TTL; m.HasMinMax {
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

// micros formats a span of µs for reasons.
func micros(us int64) time.Duration { return time.Duration(us) * time.Microsecond }
