package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"time"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/table"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// nowClock is the clock a command opens the data directory with: the
// wall clock until --now fixes it, so that the compaction the command
// runs judges expiry at the same now as its statements or its load.
type nowClock struct{ fixed atomic.Pointer[time.Time] }

func (c *nowClock) Now() time.Time {
	if t := c.fixed.Load(); t != nil {
		return *t
	}
	return time.Now()
}

// parseNow reads a --now value as rowttl sql does (in UTC unless it names
// a zone) and fixes c at it.
func (c *nowClock) parseNow(text string) (time.Time, error) {
	t, err := sql.ParseNow(text)
	if err != nil {
		return time.Time{}, fmt.Errorf("--now: %w", err)
	}
	c.fixed.Store(&t)
	return t, nil
}

// defaultCompactTimeout bounds how long a command that wrote keeps
// starting compactions before it exits.
const defaultCompactTimeout = 30 * time.Second

// compactFlags are the flags of the commands that pay the compaction debt
// of their writes before they exit.
type compactFlags struct {
	skip    bool
	timeout time.Duration
}

func addCompactFlags(cmd *cobra.Command, f *compactFlags) {
	fl := cmd.Flags()
	fl.BoolVar(&f.skip, "no-compact", false, "run no compaction, neither in the background nor before exiting")
	fl.DurationVar(&f.timeout, "compact-timeout", defaultCompactTimeout,
		"start no compaction after this long before exiting (the one under way finishes; 0: none)")
}

// options are the table options of a command opening the data directory
// with these flags, at clock.
func (f compactFlags) options(clock *nowClock) *table.Options {
	return &table.Options{Clock: clock.Now, DisableAutoCompaction: f.skip}
}

func (f compactFlags) check() error {
	if f.timeout < 0 {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "--compact-timeout %s: want 0 or more", f.timeout)
	}
	return nil
}

// compactionNote is the hint printed when the time cap stopped compaction
// with work still due.
const compactionNote = "the next command that writes goes on (or raise --compact-timeout)"

// payDebt runs, before a command that wrote exits, the auto-compaction the
// tables have due (table.CompactDue), so that a table fed only by one-shot
// processes is compacted as one fed by a long-running one. Starting stops
// after f.timeout; Ctrl-C cancels the compaction under way and leaves the
// rest for the next command, as does a failure, which is reported on
// stderr: the command's writes are durable already, so neither changes
// its outcome. On a terminal it shows what it does once it takes more
// than a moment.
func payDebt(ctx context.Context, tables []*table.Table, f compactFlags, stderr io.Writer) {
	if f.skip || f.timeout == 0 || len(tables) == 0 {
		return
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	until := time.Now().Add(f.timeout)
	var tty io.Writer
	if fh, ok := stderr.(*os.File); ok && term.IsTerminal(int(fh.Fd())) {
		tty = stderr
	}
	var total atomic.Int64
	var current atomic.Pointer[string]
	stopTicker := statusTicker(tty, func(el time.Duration) string {
		name := ""
		if p := current.Load(); p != nil {
			name = " " + *p
		}
		return fmt.Sprintf("compacting%s: %d done, %s, Ctrl-C skips", name, total.Load(), humanDuration(el))
	})
	defer stopTicker()
	for _, tbl := range tables {
		name := tbl.Name()
		current.Store(&name)
		_, capped, err := tbl.CompactDue(ctx, until, func(int) { total.Add(1) })
		switch {
		case ctx.Err() != nil:
			stopTicker()
			fmt.Fprintf(stderr, "rowttl: compaction interrupted (%d compactions ran); %s\n", total.Load(), compactionNote)
			return
		case err != nil:
			stopTicker()
			fmt.Fprintf(stderr, "rowttl: compaction of %s: %v; %s\n", name, err, compactionNote)
			return
		case capped:
			stopTicker()
			fmt.Fprintf(stderr, "rowttl: compaction stopped at --compact-timeout %s with work still due (%d compactions ran); %s\n",
				f.timeout, total.Load(), compactionNote)
			return
		}
	}
}
