package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/table"
	"github.com/spf13/cobra"
)

// errCheckFailed is returned when any table failed its check; main turns it
// into exit status 1.
var errCheckFailed = errors.New("check found problems")

func checkCommand() *cobra.Command {
	var dir, only string
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Verify the tables of a data directory: manifest, files and checksums",
		Long: `check verifies every table under a data directory (laid out as
<dir>/<database>/<table>/), or the single table when --dir is a table
directory: it replays the manifest, opens every segment file the live
rowsets list (a missing or resized file is an error) and verifies every
page checksum. It prints one line per table,

  ok db.t: N rowsets, M rows
  ok db.t: N rowsets, M rows; segment files no record lists: F, lost+found/G
  FAIL db.t: <error>

and exits with status 1 when any table fails. Segment files that no
manifest record lists (the files of a write in flight at a crash, for one)
are not a failure: an open moves them to the table's lost+found/, where they
are listed too, for someone to look at. A manifest that lost records it had
published (cut short, or an older copy) is one. It changes nothing: it opens
tables read-only (no torn-tail cut, no orphan clean-up, no compaction, no
writer lock), so it runs alongside a process that owns the directory (rowttl
serve), which keeps the files being checked until check lets go. A
directory that is not a rowttl data directory is refused as such.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCheck(cmd.Context(), cmd.OutOrStdout(), dir, only)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", defaultDir, "data directory, or one table's directory")
	cmd.Flags().StringVar(&only, "table", "", "check only this table, as [DB.]TABLE")
	return cmd
}

// checkTarget is one table directory to check.
type checkTarget struct {
	name string // db.table
	dir  string
}

func runCheck(ctx context.Context, out io.Writer, dir, only string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	targets, err := findTables(dir)
	if err != nil {
		return err
	}
	if only != "" {
		db, name, err := tableArg(only)
		if err != nil {
			return err
		}
		only = db + "." + name
		var picked []checkTarget
		for _, tg := range targets {
			if tg.name == only {
				picked = append(picked, tg)
			}
		}
		if len(picked) == 0 {
			fmt.Fprintf(out, "FAIL %s: no such table under %s\n", only, dir)
			return fmt.Errorf("%w: table %s not found", errCheckFailed, only)
		}
		targets = picked
	}
	if len(targets) == 0 {
		fmt.Fprintf(out, "no tables under %s\n", dir)
		return nil
	}
	failed := 0
	for _, tg := range targets {
		rowsets, rows, unlisted, err := checkTable(ctx, tg.dir)
		if err != nil {
			failed++
			kind := ""
			if errors.Is(err, rowttl.ErrCorruption) {
				// The message says what is wrong with which file; the
				// prefix says that it is damage, not a refusal.
				kind = "corruption: "
			}
			fmt.Fprintf(out, "FAIL %s: %s%v\n", tg.name, kind, err)
			continue
		}
		fmt.Fprintf(out, "ok %s: %d rowsets, %d rows", tg.name, rowsets, rows)
		if len(unlisted) > 0 {
			fmt.Fprintf(out, "; segment files no record lists: %s", strings.Join(unlisted, ", "))
		}
		fmt.Fprintln(out)
	}
	if failed > 0 {
		return fmt.Errorf("%w: %d of %d tables failed", errCheckFailed, failed, len(targets))
	}
	return nil
}

// isTableDir reports whether dir holds a table (a CURRENT file).
func isTableDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "CURRENT"))
	return err == nil
}

// hasTableFiles reports whether dir holds files only a table has (a
// manifest, CURRENT, segments): a table, maybe one that lost its CURRENT.
func hasTableFiles(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		n := e.Name()
		if n == "CURRENT" || strings.HasPrefix(n, "MANIFEST-") || strings.HasSuffix(n, ".seg") {
			return true
		}
	}
	return false
}

// findTables lists the tables of a data directory, or dir itself when it is
// a table directory. A directory that is not a data directory is refused
// (it is not checked as if its subdirectories were damaged tables). Names
// starting with '.' (a table being created or dropped) are skipped; a
// directory in a database that holds a table's files but no CURRENT is
// listed, so that its check fails; other directories are not rowttl's.
func findTables(dir string) ([]checkTarget, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	if isTableDir(dir) {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		name := filepath.Base(filepath.Dir(abs)) + "." + filepath.Base(abs)
		return []checkTarget{{name: name, dir: dir}}, nil
	}
	if err := table.ClassifyDataDir(dir); err != nil {
		return nil, err
	}
	var out []checkTarget
	dbs, err := subdirs(dir)
	if err != nil {
		return nil, err
	}
	for _, db := range dbs {
		tables, err := subdirs(filepath.Join(dir, db))
		if err != nil {
			return nil, err
		}
		for _, t := range tables {
			if p := filepath.Join(dir, db, t); hasTableFiles(p) {
				out = append(out, checkTarget{name: db + "." + t, dir: p})
			}
		}
	}
	return out, nil
}

// subdirs returns the sorted names of dir's subdirectories, hidden ones
// excepted.
func subdirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// checkTable opens one table read-only and verifies it; it returns the
// number of live rowsets and of rows in their files, and the segment files
// that no record lists.
func checkTable(ctx context.Context, dir string) (int, int64, []string, error) {
	if !isTableDir(dir) {
		return 0, 0, nil, rowttl.Errorf(rowttl.ErrCorruption, "%s has no CURRENT file: not a table, or its manifest is lost", dir)
	}
	tbl, err := table.Open(dir, &table.Options{ReadOnly: true, DisableAutoCompaction: true})
	if err != nil {
		return 0, 0, nil, err
	}
	defer tbl.Close()
	if err := tbl.Check(); err != nil {
		return 0, 0, nil, err
	}
	infos, err := tbl.Rowsets(ctx, time.Now())
	if err != nil {
		return 0, 0, nil, err
	}
	var rows int64
	for _, r := range infos {
		rows += r.Rows
	}
	return len(infos), rows, tbl.LostFound(), nil
}
