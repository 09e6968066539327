package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/table"
	"github.com/rowttl/rowttl/ttlcol"
	"github.com/spf13/cobra"
)

type demoConfig struct {
	dir       string
	days      int
	perDay    int
	retention string
	deadline  string
	plot      string
	model     string
	upserts   bool
	keys      int
}

// demoModels are the --model values and the key model each makes.
var demoModels = map[string]schema.Model{"dup": schema.Duplicate, "mow": schema.UniqueMOW, "mor": schema.UniqueMOR}

// demoModelName is how the demo names a key model for a person.
func demoModelName(m schema.Model) string {
	switch m {
	case schema.UniqueMOW:
		return "UNIQUE merge-on-write"
	case schema.UniqueMOR:
		return "UNIQUE merge-on-read"
	}
	return "DUPLICATE"
}

func demoCommand() *cobra.Command {
	var c demoConfig
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Feed a table with a retention for simulated days and watch the disk level off",
		Long: `demo creates the table default.demo_events in the data directory (replacing an
earlier demo table) with rows that expire a retention after their event time,
and feeds it every four hours with simulated days of events on a simulated clock,
running auto-compaction as it goes. Day by day it prints the live rows, the
bytes on disk, the bytes of live rows, the bytes reclaimed so far, the
bytes the same ingest would take with no reclamation (every byte written)
and how long the oldest expired row still on disk has waited (the lag the
reclaim deadline bounds), with a bar of live (#) and dead (-) bytes. It
then says what was saved, whether reclamation kept within the reclaim
deadline, the write amplification (bytes written by compaction / bytes
ingested) and what the compactions did, writes a plot of the four, and
ends with the plateau ratio: the largest bytes on disk / live bytes seen
after the first retention period.

--model picks the key model: dup (DUPLICATE, the default: every event is
a row of its own), mow or mor (UNIQUE KEY merge-on-write or merge-on-read).
With --upserts (UNIQUE models only) every event rewrites one of --keys
keys (default: five days of events) with a new event time, so a key lives
on while it is written and superseded versions are what compaction must
reclaim.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), cmd.OutOrStdout(), c)
		},
	}
	cmd.Flags().StringVar(&c.dir, "dir", defaultDir, "data directory")
	cmd.Flags().IntVar(&c.days, "days", 60, "simulated days of ingest")
	cmd.Flags().IntVar(&c.perDay, "events-per-day", 48_000, "events written per simulated day, in batches every four hours")
	cmd.Flags().StringVar(&c.retention, "retention", "7 days", "retention of each row after its event time")
	cmd.Flags().StringVar(&c.deadline, "reclaim-deadline", "1 day", "rowttl.reclaim_deadline of the table (empty: none)")
	cmd.Flags().StringVar(&c.plot, "plot", "", "where to write the plot (.png or .svg; default <dir>/demo-plateau.png)")
	cmd.Flags().StringVar(&c.model, "model", "dup", "key model: dup, mow (UNIQUE merge-on-write) or mor (UNIQUE merge-on-read)")
	cmd.Flags().BoolVar(&c.upserts, "upserts", false, "every event rewrites one of --keys keys (mow and mor)")
	cmd.Flags().IntVar(&c.keys, "keys", 0, "keys the upserts draw from (default: five days of events)")
	return cmd
}

type demoDay struct {
	day                             int
	live                            int64
	diskBytes, liveBytes, reclaimed int64
	// ingested is every byte written so far: what the disk would hold
	// with no reclamation.
	ingested int64
	// lag is how long the oldest expired row still on disk has waited.
	lag    time.Duration
	behind bool
}

func runDemo(ctx context.Context, out io.Writer, c demoConfig) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := atLeast("days", c.days, 1); err != nil {
		return err
	}
	if err := atLeast("events-per-day", c.perDay, 1); err != nil {
		return err
	}
	if sec, err := ttlcol.ParseRetention(c.retention); err != nil {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "--retention %q: %w", c.retention, err)
	} else if sec <= 0 {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "--retention %q: must be more than zero", c.retention)
	}
	if c.model == "" {
		c.model = "dup"
	}
	model, ok := demoModels[strings.ToLower(c.model)]
	if !ok {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "--model %q: want dup, mow or mor", c.model)
	}
	if c.upserts && !model.IsUnique() {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "--upserts: a DUPLICATE table keeps every row; use --model mow or mor")
	}
	if c.keys != 0 || c.upserts {
		if c.keys == 0 {
			c.keys = 5 * c.perDay
		}
		if err := atLeast("keys", c.keys, 1); err != nil {
			return err
		}
		if !c.upserts {
			return rowttl.Errorf(rowttl.ErrInvalidArgument, "--keys: only the upserts draw from keys; add --upserts")
		}
	}
	if c.plot == "" {
		c.plot = filepath.Join(c.dir, "demo-plateau.png")
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := start
	// Simulated days pass in seconds of wall time, which would keep
	// batches in memtables (flushed by wall-clock age) instead of on the
	// disk the demo measures: every batch makes a rowset.
	db, err := table.OpenDB(c.dir, &table.Options{Clock: func() time.Time { return clock }, DisableAutoCompaction: true, SmallWriteRows: -1})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.DropTable("default", "demo_events", true); err != nil {
		return err
	}
	props := map[string]string{
		table.PropEnableRowTTL: "true",
		table.PropTTLCol:       "event_time",
		table.PropTTL:          c.retention,
		table.PropTTLTimeZone:  "UTC",
	}
	if c.deadline != "" {
		props[table.PropReclaimDeadline] = c.deadline
	}
	defModel := model
	if model == schema.UniqueMOR {
		defModel = schema.UniqueMOW
		props[table.PropMergeOnWrite] = "false"
	}
	tbl, err := db.CreateTable("default", "demo_events", &table.Definition{
		Model: defModel,
		Schema: schema.Schema{KeyCount: 1, Columns: []schema.Column{
			{Name: "id", Type: schema.BigIntType},
			{Name: "event_time", Type: schema.DatetimeType(6)},
			{Name: "user_id", Type: schema.BigIntType},
			{Name: "amount", Type: schema.DoubleType},
			{Name: "message", Type: schema.StringType, Nullable: true},
		}},
		Properties: props,
	}, false)
	if err != nil {
		return err
	}
	pol := tbl.Policy()
	retDays := int(pol.Retention / 86400)
	fmt.Fprintf(out, "table default.demo_events (%s) in %s: rows expire %s after event_time", demoModelName(model), c.dir, humanDuration(time.Duration(pol.Retention)*time.Second))
	if c.deadline != "" {
		fmt.Fprintf(out, ", reclaim deadline %s", c.deadline)
	}
	fmt.Fprintf(out, "\nfeeding %d simulated days, %d events a day in batches every four hours", c.days, c.perDay)
	if c.upserts {
		fmt.Fprintf(out, ", each an upsert of one of %d keys", c.keys)
	}
	fmt.Fprintf(out, "\n\n%-4s %10s %11s %11s %11s %11s %9s  %s\n", "day", "live rows", "on disk", "live", "reclaimed", "no reclaim", "lag", "disk: # live, - dead")

	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewPCG(42, 7))
	// A batch every four simulated hours: each write is a durable version
	// (three fsyncs), and the story needs no more.
	const batchesPerDay = 6
	step := 24 * time.Hour / batchesPerDay
	perBatch := max(c.perDay/batchesPerDay, 1)
	var days []demoDay
	var id int64
	began := time.Now()
	var peakDisk int64
	for d := 1; d <= c.days; d++ {
		for h := 0; h < batchesPerDay; h++ {
			keys := 0
			if c.upserts {
				keys = c.keys
			}
			rec := demoBatch(mem, rng, id, perBatch, keys, clock, step)
			id += int64(perBatch)
			err := tbl.WriteWith(ctx, rec, table.WriteOptions{Now: clock})
			rec.Release()
			if err != nil {
				return err
			}
			clock = clock.Add(step)
			for {
				did, err := tbl.CompactAuto(ctx)
				if err != nil {
					return err
				}
				if !did {
					break
				}
			}
		}
		st, err := tbl.Stats(ctx, clock)
		if err != nil {
			return err
		}
		days = append(days, demoDay{day: d, live: st.VisibleRows, diskBytes: st.BytesOnDisk, liveBytes: st.LiveBytes,
			reclaimed: st.ReclaimedBytes, ingested: st.IngestedBytes, lag: st.OldestExpiredAge(clock), behind: st.Behind})
		peakDisk = max(peakDisk, st.BytesOnDisk)
	}
	// Print after the run so that the bars share one scale.
	for _, dd := range days {
		lag := "-"
		if dd.lag > 0 {
			lag = humanDuration(dd.lag.Truncate(time.Minute))
		}
		if dd.behind {
			lag += "!"
		}
		fmt.Fprintf(out, "%-4d %10d %11s %11s %11s %11s %9s  %s\n", dd.day, dd.live, mib(dd.diskBytes), mib(dd.liveBytes),
			mib(dd.reclaimed), mib(dd.ingested), lag, demoBar(dd, peakDisk, 40))
	}
	ratio := 0.0
	for _, dd := range days {
		if dd.day > retDays && dd.liveBytes > 0 {
			ratio = max(ratio, float64(dd.diskBytes)/float64(dd.liveBytes))
		}
	}
	st, err := tbl.Stats(ctx, clock)
	if err != nil {
		return err
	}
	last := days[len(days)-1]
	fmt.Fprintf(out, "\n%d events in %.1fs of wall time.\n", id, time.Since(began).Seconds())
	if last.ingested > 0 {
		fmt.Fprintf(out, "After %d days: %s on disk where keeping every row would take %s (%.0f%% saved); %s are live.\n",
			last.day, mib(last.diskBytes), mib(last.ingested), 100*(1-float64(last.diskBytes)/float64(last.ingested)), mib(last.liveBytes))
	}
	demoLagLine(out, days, st.ReclaimDeadline)
	fmt.Fprintf(out, "%d compactions (%s); write amplification %.2f = bytes written by compaction (%s) / bytes ingested (%s)",
		st.TotalCompactions(), demoCounts(st.Triggers), st.WriteAmplification(), mib(st.CompactedBytes), mib(st.IngestedBytes))
	if st.CompactedBytes == 0 && st.TotalCompactions() > 0 {
		fmt.Fprintf(out, ":\n  0 because every compaction dropped whole expired rowsets without rewriting a byte")
	}
	fmt.Fprintln(out)
	if err := writePlot(c.plot, days, retDays); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	fmt.Fprintf(out, "plot of bytes on disk beside the bytes with no reclamation, the live bytes and the reclaimed area: %s\n", c.plot)
	if err := tbl.Check(); err != nil {
		return err
	}
	// The rows expire on the simulated clock: the shell must read at its
	// end to see the ones still alive then.
	fmt.Fprintf(out, "look at the table as of the last simulated day: rowttl sql --dir %s --now '%s'\n",
		c.dir, clock.Format(time.DateTime))
	fmt.Fprintf(out, "plateau ratio: %.2f\n", ratio)
	return nil
}

// demoLagLine says how long expired rows waited on disk, against the
// reclaim deadline when the table has one.
func demoLagLine(out io.Writer, days []demoDay, deadline time.Duration) {
	var worst time.Duration
	behind := 0
	for _, dd := range days {
		worst = max(worst, dd.lag)
		if dd.behind {
			behind++
		}
	}
	fmt.Fprintf(out, "Lag: the oldest expired row still on disk had waited at most %s at the end of a day", humanDuration(worst.Truncate(time.Minute)))
	switch {
	case deadline == 0:
		fmt.Fprintln(out, " (no reclaim deadline).")
	case behind == 0:
		fmt.Fprintf(out, ", within the %s reclaim deadline every day.\n", humanDuration(deadline))
	default:
		fmt.Fprintf(out, ": past the %s reclaim deadline on %d of %d days (marked !).\n", humanDuration(deadline), behind, len(days))
	}
}

// demoCounts writes a count by name as "a 3, b 1", by name.
func demoCounts(m map[string]int64) string {
	names := make([]string, 0, len(m))
	for k, n := range m {
		if n > 0 {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return "by trigger: " + strings.Join(parts, ", ")
}

// mib writes a byte count in MiB with one decimal.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// demoBar draws bytes on disk to scale: live bytes as #, dead as -.
func demoBar(d demoDay, peak int64, width int) string {
	if peak == 0 {
		return ""
	}
	disk := int(int64(width) * d.diskBytes / peak)
	live := min(int(int64(width)*d.liveBytes/peak), disk)
	return strings.Repeat("#", live) + strings.Repeat("-", disk-live)
}

// demoBatch makes n events spread over span from start: ids from firstID
// on, or, with keys > 0, upserts of random keys below keys.
func demoBatch(mem memory.Allocator, rng *rand.Rand, firstID int64, n, keys int, start time.Time, span time.Duration) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "event_time", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
		{Name: "user_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64},
		{Name: "message", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	messages := []string{"login ok", "logout", "purchase completed", "page view", "click: buy now"}
	h := start.UnixMicro()
	for i := 0; i < n; i++ {
		id := firstID + int64(i)
		if keys > 0 {
			id = rng.Int64N(int64(keys))
		}
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(h + int64(i)*span.Microseconds()/int64(n)))
		b.Field(2).(*array.Int64Builder).Append(rng.Int64N(100_000))
		b.Field(3).(*array.Float64Builder).Append(float64(rng.IntN(100_000)) / 100)
		b.Field(4).(*array.StringBuilder).Append(messages[rng.IntN(len(messages))])
	}
	return b.NewRecordBatch()
}
