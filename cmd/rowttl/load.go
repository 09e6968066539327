package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rowttl/rowttl/load"
	"github.com/rowttl/rowttl/table"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// loadFailed makes the command exit with status 1 after a load that did
// not succeed (its JSON answer is already printed).
type loadFailed struct{ res *load.Result }

func (e *loadFailed) Error() string {
	return fmt.Sprintf("load %s: %s: %s", e.res.Label, e.res.Status, e.res.Message)
}

func (e *loadFailed) Unwrap() error { return e.res.Err }

type loadFlags struct {
	dir        string
	table      string
	o          load.Options
	format     string
	strict     bool
	noProgress bool
	now        string
	compact    compactFlags
	wait       time.Duration
}

func loadCommand() *cobra.Command {
	var f loadFlags
	cmd := &cobra.Command{
		Use:   "load --table [DB.]TABLE [flags] FILE|-",
		Short: "Load a CSV or Parquet file into a table as one atomic version, as Doris Stream Load does",
		Long: `load streams a CSV file (or standard input, "-") into a table as one
atomic version, in batches, with bounded memory whatever the file's size,
and prints the answer as Stream Load's JSON: Status (Success, Label
Already Exists, Fail), Label, NumberTotalRows, NumberLoadedRows,
NumberFilteredRows, LoadBytes, LoadTimeMs, Message. The exit status is 0
only for Success.

The options are Stream Load's headers: fields are separated by TAB unless
--column-separator says otherwise (several bytes are allowed, and \t, \n,
\\ and \xHH escapes), records end at "\n"; \N is NULL; fields are not
quoted unless --enclose is given. --columns is the Stream Load column list:
plain names bind the fields in order (a name that is not a column is a
variable), and name=expr derives a column, for instance
  --columns 'id, event_time, exp, __DORIS_TTL_COL__=cast(exp as datetime(6))'
--timezone reads DATE and DATETIME values derived into __TTL__ (UTC,
+08:00, Asia/Shanghai).

Rows that do not parse or convert are filtered (skipped and counted); the
load fails, writing nothing, when they exceed --max-filter-ratio of the
rows (default 0: any bad row fails it). A label already used for the table
answers "Label Already Exists" and writes nothing. Rows already expired
are loaded (and invisible). A load that runs more than a few seconds
prints its progress on standard error.

--now runs the load at that instant instead of the wall clock, as
rowttl sql --now does (read in UTC unless it names a zone): it is the
CURRENT_TIMESTAMP of column defaults and mappings, and the now at which
the compaction after the load judges expiry. It is for tests and
simulations that feed a table on a clock of their own.

Before it exits, a load that succeeded runs the compaction the table has
due (the background policy's, until nothing is due), so that a table fed
only by loads is compacted as one fed by a long-running server: no
compaction starts after --compact-timeout (30s; the one under way
finishes), Ctrl-C or a failure leaves the rest for the next command
without changing the load's outcome, a terminal shows what it does, and
--no-compact skips it (and the background compaction that may start
while the command runs).

--format parquet loads a Parquet file: --columns then names the file's
columns (by name, not position; without it, the file's columns that the
table has are loaded, __TTL__ too in a direct-mode table), the CSV
options do not apply, and a file that is not Parquet, is cut short, lacks
a named column or has a column of a type that does not convert fails the
load before any row is written.`,
		Args: fileArg("FILE (a CSV or Parquet file, or - for standard input)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if cmd.Flags().Changed("strict-mode") {
				f.o.StrictMode = &f.strict
			}
			return runLoad(ctx, f, args[0], cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", defaultDir, "data directory")
	fl.StringVar(&f.table, "table", "", "table to load, as [DB.]TABLE (required)")
	fl.StringVar(&f.o.Label, "label", "", "label making the load idempotent (default: generated)")
	fl.StringVar(&f.o.ColumnSeparator, "column-separator", "", `field separator (default "\t")`)
	fl.StringVar(&f.o.LineDelimiter, "line-delimiter", "", `record delimiter (default "\n")`)
	fl.StringVar(&f.o.Columns, "columns", "", "Stream Load column list (default: the table's columns in order)")
	fl.StringVar(&f.o.TimeZone, "timezone", "", "time zone of DATE/DATETIME values written into __TTL__ (default UTC)")
	fl.Float64Var(&f.o.MaxFilterRatio, "max-filter-ratio", 0, "share of rows that may be filtered before the load fails (0 to 1)")
	fl.StringVar(&f.o.Enclose, "enclose", "", `quote byte of enclosed fields, e.g. '"' (default: none)`)
	fl.StringVar(&f.o.Escape, "escape", "", "escape byte inside enclosed fields (default: none)")
	fl.StringVar(&f.format, "format", "csv", "csv, csv_with_names (skips a header line), csv_with_names_and_types (skips two) or parquet")
	fl.IntVar(&f.o.SkipLines, "skip-lines", 0, "leading records to skip")
	fl.BoolVar(&f.strict, "strict-mode", true, "filter rows whose fields do not convert; false makes such fields NULL")
	fl.BoolVar(&f.o.Partial, "partial-columns", false, "partial-column update (refused on row TTL tables)")
	fl.BoolVar(&f.noProgress, "no-progress", false, "never print progress on standard error")
	fl.StringVar(&f.now, "now", "", "run the load at this time (read in UTC unless it names a zone), like rowttl sql --now")
	addCompactFlags(cmd, &f.compact)
	addWaitFlag(cmd, &f.wait)
	cmd.MarkFlagRequired("table")
	return cmd
}

func runLoad(ctx context.Context, f loadFlags, file string, stdin io.Reader, stdout, stderr io.Writer) error {
	switch strings.ToLower(f.format) {
	case "", "csv":
	case "csv_with_names":
		f.o.SkipLines++
	case "csv_with_names_and_types":
		f.o.SkipLines += 2
	case load.FormatParquet:
		f.o.Format = load.FormatParquet
	default:
		return fmt.Errorf("--format %q: only csv, csv_with_names, csv_with_names_and_types and parquet are supported", f.format)
	}
	if err := checkWait(f.wait); err != nil {
		return err
	}
	if err := f.compact.check(); err != nil {
		return err
	}
	var clock nowClock
	if f.now != "" {
		t, err := clock.parseNow(f.now)
		if err != nil {
			return err
		}
		f.o.Now = t
	}
	in := stdin
	if file != "-" {
		fh, err := os.Open(file)
		if err != nil {
			return err
		}
		defer fh.Close()
		in = fh
	}
	dbName, name, err := tableArg(f.table)
	if err != nil {
		return err
	}
	db, err := openDBWaiting(ctx, f.dir, f.compact.options(&clock), f.wait, stderr)
	if errors.Is(err, table.ErrLocked) {
		return fmt.Errorf("%w; while it runs, load through its Stream Load: curl --location-trusted -u USER:PASSWORD -T %s http://HOST:8030/api/%s/%s/_stream_load", err, file, dbName, name)
	}
	if err != nil {
		return err
	}
	defer db.Close() // after a failure; closing twice is harmless
	tbl, err := db.Table(dbName, name)
	if err != nil {
		return err
	}
	var p load.Progress
	f.o.Progress = &p
	stop := func() {}
	if !f.noProgress {
		stop = showProgress(&p, stderr)
	}
	res := load.Run(ctx, tbl, in, f.o, nil)
	stop()
	if _, err := stdout.Write(res.JSON()); err != nil {
		return err
	}
	if !res.OK() {
		return &loadFailed{res: res}
	}
	payDebt(ctx, []*table.Table{tbl}, f.compact, stderr)
	// The load is durable already; a close error still deserves a word.
	return db.Close()
}

// Progress is shown once a load has run for progressDelay, then every
// progressEvery: rewritten in place on a terminal, one line each time
// otherwise. Variables so that a test can see the lines of a short job.
var (
	progressDelay = 3 * time.Second
	progressEvery = time.Second
	progressLines = 5 * time.Second
)

// showProgress prints the progress of a load on w until the returned stop
// is called.
func showProgress(p *load.Progress, w io.Writer) (stop func()) {
	return progressLoop(w, func(el time.Duration) string {
		rows := p.Rows()
		return fmt.Sprintf("load: %d rows, %.1f MB, %.0f rows/s, %s", rows, float64(p.Bytes())/1e6,
			float64(rows)/el.Seconds(), humanDuration(el))
	})
}

// progressLoop prints line(elapsed) on w once a job has run for
// progressDelay, then every progressEvery (in place on a terminal), and a
// last time when the returned stop is called.
func progressLoop(w io.Writer, lineOf func(el time.Duration) string) (stop func()) {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	every := progressLines
	if tty {
		every = progressEvery
	}
	start := time.Now()
	done := make(chan struct{})
	finished := make(chan struct{})
	printed := false
	line := func() string { return lineOf(time.Since(start)) }
	go func() {
		defer close(finished)
		timer := time.NewTimer(progressDelay)
		defer timer.Stop()
		for {
			select {
			case <-done:
				if printed {
					if tty {
						fmt.Fprintf(w, "\r%s\n", line())
					} else {
						fmt.Fprintln(w, line())
					}
				}
				return
			case <-timer.C:
				if tty {
					fmt.Fprintf(w, "\r%s", line())
				} else {
					fmt.Fprintln(w, line())
				}
				printed = true
				timer.Reset(every)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
