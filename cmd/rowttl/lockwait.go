package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/table"
	"github.com/spf13/cobra"
)

// serveHolder is how `rowttl serve` names itself in the writer lock: a
// command that finds it there does not wait, since a server keeps its
// directory until it stops and takes the statements itself.
const serveHolder = "rowttl serve"

// defaultLockWait bounds how long a writing command waits for another
// command that holds the data directory (a script, a load, the compaction
// debt it pays before exiting: at most defaultCompactTimeout) to finish,
// so that commands started side by side run one after the other instead
// of all but one failing.
const defaultLockWait = time.Minute

// lockWaitNote is how long a command waits before it says on stderr whom it
// waits for: a brief wait behind another short command needs no words.
const lockWaitNote = time.Second

func addWaitFlag(cmd *cobra.Command, wait *time.Duration) {
	cmd.Flags().DurationVar(wait, "wait", defaultLockWait,
		"wait up to this long for another command holding the data directory to finish (never for rowttl serve, reached with --connect or Stream Load); 0: fail at once")
}

func checkWait(wait time.Duration) error {
	if wait < 0 {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "--wait %s: want 0 or more", wait)
	}
	return nil
}

// openDBWaiting opens dir as openDB does; while another command holds it,
// it tries again until wait has passed or ctx ends, and then returns the
// error that names the holder. A directory held by a server is not waited
// for.
func openDBWaiting(ctx context.Context, dir string, o *table.Options, wait time.Duration, stderr io.Writer) (*table.DB, error) {
	start := time.Now()
	deadline := start.Add(wait)
	delay, said := 2*time.Millisecond, false
	for {
		db, err := openDB(dir, o, stderr)
		if !errors.Is(err, table.ErrLocked) {
			return db, err
		}
		holder := table.Holder(dir)
		left := time.Until(deadline)
		if strings.HasSuffix(holder, "("+serveHolder+")") || left <= 0 {
			return nil, err
		}
		if !said && time.Since(start) >= lockWaitNote {
			fmt.Fprintf(stderr, "rowttl: waiting up to %s for %s to finish with %s\n", wait.Round(time.Second), holder, dir)
			said = true
		}
		t := time.NewTimer(min(delay, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (%w)", err, ctx.Err())
		case <-t.C:
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}
