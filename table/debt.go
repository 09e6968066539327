package table

import (
	"context"
	"sort"
	"time"
)

// CompactDue runs rounds of the auto-compaction policy (CompactAuto) until
// none is due, so that a process about to exit pays the compaction debt
// its writes made instead of leaving it to a background loop that may
// never get to run. No round starts after until (zero: no limit); the
// round under way when it passes finishes, since a compaction cut short
// is work thrown away and a table whose every compaction outlasts the cap
// would otherwise never be compacted. Cancelling ctx stops the round
// under way. after, when not nil, is called after each round that changed
// something, with the number of rounds so far.
//
// It does nothing when the table's disable_auto_compaction property is
// set; Options.DisableAutoCompaction, which stops only the background
// loop, does not stop it. It reports the rounds that changed
// something and whether it stopped at until before finding nothing due
// (work may be left for the next process).
func (t *Table) CompactDue(ctx context.Context, until time.Time, after func(rounds int)) (rounds int, capped bool, err error) {
	t.mu.Lock()
	off := t.vs.current.def.Properties[PropDisableAutoComp] == "true"
	t.mu.Unlock()
	if off {
		return 0, false, nil
	}
	for {
		if !until.IsZero() && !time.Now().Before(until) {
			return rounds, true, nil
		}
		if err := ctx.Err(); err != nil {
			return rounds, false, err
		}
		did, err := t.CompactAuto(ctx)
		if err != nil || !did {
			return rounds, false, err
		}
		rounds++
		if after != nil {
			after(rounds)
		}
	}
}

// OpenTables returns the tables this DB has opened so far, by name: the
// ones a process has used, so the ones whose compaction debt it made.
func (db *DB) OpenTables() []*Table {
	db.mu.Lock()
	defer db.mu.Unlock()
	out := make([]*Table, 0, len(db.mu.tables))
	for _, t := range db.mu.tables {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
