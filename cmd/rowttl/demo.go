package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/table"
	"github.com/spf13/cobra"
)

func demoCommand() *cobra.Command {
	var (
		dir       string
		days      int
		perDay    int
		retention string
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Show rows expiring one by one as time moves, on a table in the data directory",
		Long: `demo creates the table default.demo_events in the data directory (replacing
an earlier demo table), writes a few simulated days of events with a
retention on their event time, and then moves "now" forward day by day,
showing how many rows each query sees.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), cmd.OutOrStdout(), dir, days, perDay, retention)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", defaultDir, "data directory")
	cmd.Flags().IntVar(&days, "days", 7, "simulated days of events to write")
	cmd.Flags().IntVar(&perDay, "rows-per-day", 200_000, "events written per simulated day")
	cmd.Flags().StringVar(&retention, "retention", "3 days", "retention of each row after its event time")
	return cmd
}

func runDemo(ctx context.Context, out io.Writer, dir string, days, perDay int, retention string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	tdir := filepath.Join(dir, "default", "demo_events")
	if err := os.RemoveAll(tdir); err != nil {
		return err
	}
	def := &table.Definition{
		Model: schema.Duplicate,
		Schema: schema.Schema{KeyCount: 1, Columns: []schema.Column{
			{Name: "id", Type: schema.BigIntType},
			{Name: "event_time", Type: schema.DatetimeType(6)},
			{Name: "user_id", Type: schema.BigIntType},
			{Name: "amount", Type: schema.DoubleType},
			{Name: "message", Type: schema.StringType, Nullable: true},
		}},
		Properties: map[string]string{
			table.PropEnableRowTTL: "true",
			table.PropTTLCol:       "event_time",
			table.PropTTL:          retention,
			table.PropTTLTimeZone:  "UTC",
		},
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := start
	tbl, err := table.Create(tdir, def, &table.Options{Clock: func() time.Time { return clock }})
	if err != nil {
		return err
	}
	defer tbl.Close()
	pol := tbl.Policy()
	fmt.Fprintf(out, "table %s: DUPLICATE KEY(id), rows expire %s after event_time\n", tdir, time.Duration(pol.Retention)*time.Second)

	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewPCG(42, 7))
	began := time.Now()
	for d := 0; d < days; d++ {
		rec := demoBatch(mem, rng, int64(d*perDay), perDay, start.Add(time.Duration(d)*24*time.Hour))
		err := tbl.Write(ctx, rec)
		rec.Release()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote day %d: %d events (version %d)\n", d+1, perDay, tbl.LastVersion())
	}
	fmt.Fprintf(out, "wrote %d events in %.2fs\n\n", days*perDay, time.Since(began).Seconds())

	fmt.Fprintf(out, "%-19s  %10s\n", "now", "live rows")
	total := days * perDay
	for d := 0; d <= days+int(pol.Retention/86400)+1; d++ {
		now := start.Add(time.Duration(d) * 24 * time.Hour)
		n, err := tbl.Count(ctx, now, nil)
		if err != nil {
			return err
		}
		bar := strings.Repeat("#", int(40*n/int64(max(total, 1))))
		fmt.Fprintf(out, "%s  %10d  %s\n", now.Format("2006-01-02 15:04:05"), n, bar)
	}
	return tbl.Check()
}

// demoBatch makes n events spread over one day.
func demoBatch(mem memory.Allocator, rng *rand.Rand, firstID int64, n int, day time.Time) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "event_time", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
		{Name: "user_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64},
		{Name: "message", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	messages := []string{"login", "logout", "purchase", "view", "click"}
	dayUs := day.UnixMicro()
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Int64Builder).Append(firstID + int64(i))
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(dayUs + int64(i)*86400_000_000/int64(n)))
		b.Field(2).(*array.Int64Builder).Append(rng.Int64N(100_000))
		b.Field(3).(*array.Float64Builder).Append(float64(rng.IntN(100_000)) / 100)
		b.Field(4).(*array.StringBuilder).Append(messages[rng.IntN(len(messages))])
	}
	return b.NewRecordBatch()
}
