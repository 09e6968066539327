package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rowttl/rowttl/load"
	"github.com/rowttl/rowttl/table"
)

// debtFullEnv, when set, makes TestOneShotLoadsLevelOff run at the size of
// the measurement in the README: 40 loads of 50,000 upserts over 300,000
// keys.
const debtFullEnv = "ROWTTL_DEBT_FULL"

// oneShotWorkload is a table fed by loads every four hours on a simulated
// clock: upserts of random keys (on a DUPLICATE table, new rows) whose
// rows expire a retention after the load that wrote them.
type oneShotWorkload struct {
	model              string // the CREATE TABLE key clause and properties
	loads, perLoad     int
	keys               int
	retention          string
	deadline           string
	retentionLoads     int // loads per retention period
	start              time.Time
	step               time.Duration
	seed               uint64
	maxRatio, endRatio float64
}

func (w *oneShotWorkload) createSQL() string {
	return fmt.Sprintf(`CREATE TABLE t (id BIGINT, v BIGINT, ts DATETIME(6)) %s PROPERTIES (
"function_column.enable_row_ttl" = "true", "function_column.ttl_col" = "ts",
"function_column.ttl" = %q, "function_column.ttl_time_zone" = "UTC",
"rowttl.reclaim_deadline" = %q%s)`, w.keyClause(), w.retention, w.deadline, w.extraProps())
}

func (w *oneShotWorkload) keyClause() string {
	if w.model == "dup" {
		return "DUPLICATE KEY(id)"
	}
	return "UNIQUE KEY(id)"
}

func (w *oneShotWorkload) extraProps() string {
	if w.model == "mor" {
		return `, "enable_unique_key_merge_on_write" = "false"`
	}
	return ""
}

// csv returns the rows of load i: "id,v" lines, ts being the load's now.
func (w *oneShotWorkload) csv(i int) string {
	rng := rand.New(rand.NewPCG(w.seed, uint64(i)))
	var b strings.Builder
	for r := 0; r < w.perLoad; r++ {
		id := int64(i*w.perLoad + r)
		if w.model != "dup" {
			id = rng.Int64N(int64(w.keys))
		}
		fmt.Fprintf(&b, "%d,%d\n", id, i)
	}
	return b.String()
}

func (w *oneShotWorkload) now(i int) time.Time { return w.start.Add(time.Duration(i) * w.step) }

const oneShotColumns = "id, v, ts=now()"

// observe records the storage ratio after load i.
func (w *oneShotWorkload) observe(t *testing.T, st table.Stats, i int) {
	t.Helper()
	if st.VisibleRows == 0 {
		t.Fatalf("load %d: no visible row", i)
	}
	ratio := float64(st.RowsOnDisk) / float64(st.VisibleRows)
	if i > w.retentionLoads {
		w.maxRatio = max(w.maxRatio, ratio)
	}
	w.endRatio = ratio
}

// runOneShot feeds dir with one `rowttl load` child process per load and
// reads the table's storage (read-only, as `rowttl inspect` does) after
// each.
func runOneShot(t *testing.T, w *oneShotWorkload, extra ...string) (final table.Stats) {
	dir := t.TempDir()
	sqlIn(t, dir, w.createSQL())
	ctx := context.Background()
	for i := 0; i < w.loads; i++ {
		args := append([]string{"load", "--dir", dir, "--table", "t", "--column-separator", ",",
			"--columns", oneShotColumns, "--now", w.now(i).Format(time.DateTime), "--no-progress"}, extra...)
		cmd := childCommand(append(args, "-")...)
		cmd.Stdin = strings.NewReader(w.csv(i))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if out, err := cmd.Output(); err != nil {
			t.Fatalf("load %d: %v\n%s%s", i, err, out, stderr.String())
		}
		db, err := table.OpenDB(dir, &table.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := db.Table(table.DefaultDatabase, "t")
		if err != nil {
			t.Fatal(err)
		}
		final, err = tbl.Stats(ctx, w.now(i))
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		w.observe(t, final, i)
	}
	return final
}

// runInProcess feeds the same loads into one table that stays open, the
// auto-compaction policy run after each load: a long-running process.
func runInProcess(t *testing.T, w *oneShotWorkload) (final table.Stats) {
	dir := t.TempDir()
	sqlIn(t, dir, w.createSQL())
	ctx := context.Background()
	clock := w.now(0)
	db, err := table.OpenDB(dir, &table.Options{Clock: func() time.Time { return clock }, DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl, err := db.Table(table.DefaultDatabase, "t")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < w.loads; i++ {
		clock = w.now(i)
		res := load.Run(ctx, tbl, strings.NewReader(w.csv(i)), load.Options{ColumnSeparator: ",", Columns: oneShotColumns, Now: clock}, nil)
		if !res.OK() {
			t.Fatalf("load %d: %s", i, res.JSON())
		}
		for {
			did, err := tbl.CompactAuto(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !did {
				break
			}
		}
		if final, err = tbl.Stats(ctx, clock); err != nil {
			t.Fatal(err)
		}
		w.observe(t, final, i)
	}
	return final
}

// TestOneShotLoadsLevelOff: a table fed only by one-shot `rowttl load`
// processes, each at a clock four hours later, levels off as one fed by a
// long-running process does, because each load pays the compaction debt
// it made before it exits. With ROWTTL_DEBT_FULL set it runs at the size
// of the README's measurement.
func TestOneShotLoadsLevelOff(t *testing.T) {
	full := os.Getenv(debtFullEnv) != ""
	models := []string{"mor", "dup"}
	if full {
		models = []string{"dup", "mow", "mor"}
	}
	for _, model := range models {
		t.Run(model, func(t *testing.T) {
			mk := func() *oneShotWorkload {
				w := &oneShotWorkload{model: model, loads: 40, perLoad: 300, keys: 1800,
					retention: "1 day", deadline: "12 hours", retentionLoads: 6,
					start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), step: 4 * time.Hour, seed: 20}
				if full {
					w.perLoad, w.keys = 50_000, 300_000
				}
				return w
			}
			long, short := mk(), mk()
			ref := runInProcess(t, long)
			got := runOneShot(t, short)
			t.Logf("%s: long-running process: ratio max %.2f end %.2f, %d rowsets, %d compactions; one-shot loads: ratio max %.2f end %.2f, %d rowsets, %d compactions",
				model, long.maxRatio, long.endRatio, ref.Rowsets, ref.TotalCompactions(),
				short.maxRatio, short.endRatio, got.Rowsets, got.TotalCompactions())
			if got.VisibleRows != ref.VisibleRows {
				t.Errorf("one-shot loads see %d rows, the long-running process %d", got.VisibleRows, ref.VisibleRows)
			}
			if short.maxRatio > long.maxRatio*1.1+0.05 {
				t.Errorf("one-shot loads reached %.2f× the live rows on disk, the long-running process %.2f×", short.maxRatio, long.maxRatio)
			}
			if got.Rowsets > ref.Rowsets+2 || got.TotalCompactions() == 0 {
				t.Errorf("one-shot loads left %d rowsets after %d compactions, the long-running process %d", got.Rowsets, got.TotalCompactions(), ref.Rowsets)
			}
		})
	}
}

// debtDB is a data directory whose table t has compaction due: small
// writes that nothing compacted.
func debtDB(t *testing.T) (*table.DB, *table.Table) {
	t.Helper()
	dir := t.TempDir()
	sqlIn(t, dir, "CREATE TABLE t (id BIGINT, v BIGINT) DUPLICATE KEY(id)")
	db, err := table.OpenDB(dir, &table.Options{DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tbl, err := db.Table(table.DefaultDatabase, "t")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		res := load.Run(context.Background(), tbl, strings.NewReader(fmt.Sprintf("%d\t%d\n", i, i)), load.Options{}, nil)
		if !res.OK() {
			t.Fatalf("%s", res.JSON())
		}
	}
	return db, tbl
}

// TestPayDebt: the compaction before exit runs until nothing is due and
// says nothing; the time cap, Ctrl-C (a cancelled context) and
// --no-compact leave the debt, the first two with a line saying so.
func TestPayDebt(t *testing.T) {
	ctx := context.Background()
	rowsets := func(tbl *table.Table) int {
		st, err := tbl.Stats(ctx, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return st.Rowsets
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		f      compactFlags
		paid   bool
		stderr string
	}{
		{"paid", ctx, compactFlags{timeout: time.Minute}, true, ""},
		{"capped", ctx, compactFlags{timeout: time.Nanosecond}, false,
			"rowttl: compaction stopped at --compact-timeout 1ns with work still due (0 compactions ran); the next command that writes goes on (or raise --compact-timeout)\n"},
		{"interrupted", cancelled, compactFlags{timeout: time.Minute}, false,
			"rowttl: compaction interrupted (0 compactions ran); the next command that writes goes on (or raise --compact-timeout)\n"},
		{"no-compact", ctx, compactFlags{skip: true, timeout: time.Minute}, false, ""},
		{"timeout 0", ctx, compactFlags{}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, tbl := debtDB(t)
			before := rowsets(tbl)
			var stderr bytes.Buffer
			payDebt(tc.ctx, db.OpenTables(), tc.f, &stderr)
			after := rowsets(tbl)
			if paid := after < before; paid != tc.paid {
				t.Errorf("%d rowsets before, %d after: paid %v, want %v", before, after, paid, tc.paid)
			}
			if tc.paid {
				if did, err := tbl.CompactAuto(ctx); did || err != nil {
					t.Errorf("compaction still due after paying: %v %v", did, err)
				}
			}
			if stderr.String() != tc.stderr {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.stderr)
			}
		})
	}
}
