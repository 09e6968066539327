package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/table"
	"github.com/rowttl/rowttl/ttlcol"
	"github.com/spf13/cobra"
)

func inspectCommand() *cobra.Command {
	var dir, name, nowText string
	cmd := &cobra.Command{
		Use:   "inspect --table [DB.]TABLE",
		Short: "Print a table's rowsets with their expiration histograms",
		Long: `inspect prints, for one table, its TTL policy and every rowset: versions,
rows, bytes, expired and deleted rows at now, and a histogram of when its
rows expire. It runs no compaction and changes nothing: it opens the data
directory read-only, alongside a process that owns it (rowttl serve).`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			now := time.Now()
			if nowText != "" {
				us, err := schema.ParseDatetime(nowText)
				if err != nil {
					return err
				}
				now = time.UnixMicro(us)
			}
			if name == "" {
				return fmt.Errorf("--table is required\nUsage: %s", cmd.UseLine())
			}
			dbName, tblName, err := tableArg(name)
			if err != nil {
				return err
			}
			// Read-only: no lock that would get in the way of the
			// process that owns the directory, nothing created.
			db, err := table.OpenDB(dir, &table.Options{ReadOnly: true, DisableAutoCompaction: true})
			if err != nil {
				return err
			}
			defer db.Close()
			tbl, err := db.Table(dbName, tblName)
			if err != nil {
				return err
			}
			return inspect(cmd.Context(), cmd.OutOrStdout(), dbName+"."+tblName, tbl, now)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", defaultDir, "data directory")
	cmd.Flags().StringVar(&name, "table", "", "table to inspect, as [DB.]TABLE")
	cmd.Flags().StringVar(&nowText, "now", "", "judge expiry at this UTC time ('YYYY-MM-DD HH:MM:SS'; default: the wall clock)")
	return cmd
}

func fmtMicros(us int64) string {
	return time.UnixMicro(us).UTC().Format("2006-01-02 15:04:05")
}

func inspect(ctx context.Context, out io.Writer, name string, tbl *table.Table, now time.Time) error {
	if ctx == nil {
		ctx = context.Background()
	}
	def := tbl.Definition()
	pol := tbl.Policy()
	fmt.Fprintf(out, "table %s: %s KEY, %d columns\n", name, def.Model.KeyWord(), len(def.Schema.Columns))
	switch pol.Mode {
	case ttlcol.SourceMode:
		fmt.Fprintf(out, "row TTL: %s + %s (zone %s)\n", pol.SourceColumn, humanDuration(time.Duration(pol.Retention)*time.Second), ttlcol.FormatZone(pol.ZoneOffset))
	case ttlcol.DirectMode:
		fmt.Fprintf(out, "row TTL: __TTL__ holds each row's expiration\n")
	default:
		fmt.Fprintf(out, "no row TTL\n")
	}
	st, err := tbl.Stats(ctx, now)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "now %s: %d rowsets, %d rows on disk (%d bytes), %d visible, %d expired on disk, %d reclaimed rows (%d bytes), write amplification %.2f\n",
		now.UTC().Format("2006-01-02 15:04:05"), st.Rowsets, st.RowsOnDisk, st.BytesOnDisk, st.VisibleRows, st.ExpiredRowsOnDisk, st.ReclaimedRows, st.ReclaimedBytes, st.WriteAmplification())
	if st.OldestExpiration != 0 {
		fmt.Fprintf(out, "oldest expired row still on disk expired at %s (%s ago)", fmtMicros(st.OldestExpiration), humanDuration(st.OldestExpiredAge(now)))
		if st.ReclaimDeadline > 0 {
			fmt.Fprintf(out, "; reclaim deadline %s", humanDuration(st.ReclaimDeadline))
			if st.Behind {
				fmt.Fprintf(out, ", BEHIND by %s", humanDuration(st.BehindBy))
			}
		}
		fmt.Fprintln(out)
	}
	infos, err := tbl.Rowsets(ctx, now)
	if err != nil {
		return err
	}
	if len(infos) > 0 {
		fmt.Fprintf(out, "\nEach rowset's rows by expiration time: x every row of the line has expired at now,\n"+
			"~ some have, blank none; # is the line's rows, the longest bar the rowset's largest line.\n")
	}
	for _, r := range infos {
		fmt.Fprintf(out, "\nrowset %d  versions %d-%d  rows %d  bytes %d  expired %d  deleted %d\n", r.ID, r.Lo, r.Hi, r.Rows, r.Bytes, r.ExpiredRows, r.DeletedRows)
		if r.Hist == nil {
			continue
		}
		hist := r.Hist.Clone()
		for hist.Buckets() > 8 {
			hist.Coarsen(2)
		}
		var peak int64
		hist.Each(func(_, _, n int64) { peak = max(peak, n) })
		hist.Each(func(start, width, n int64) {
			mark := " "
			switch {
			case start+width-1 <= now.UnixMicro():
				mark = "x" // expired by now
			case start <= now.UnixMicro():
				mark = "~" // partly
			}
			bar := strings.Repeat("#", int(max(1, 30*n/max(peak, 1))))
			fmt.Fprintf(out, "  %s expires %s .. %s %8d %s\n", mark, fmtMicros(start), fmtMicros(start+width-1), n, bar)
		})
		if r.Hist.Nulls() > 0 {
			fmt.Fprintf(out, "    never expires                                %8d\n", r.Hist.Nulls())
		}
	}
	return nil
}
