package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rowttl/rowttl/bench"
	"github.com/spf13/cobra"
)

// benchFlags are the flags of `rowttl bench`.
type benchFlags struct {
	rows        int64
	layouts     string
	workloads   string
	runs        int
	warmup      int
	json        bool
	dir         string
	seed        uint64
	isolate     bool
	clean       bool
	cpuProfile  string
	traceDir    string
	pageRows    int
	segmentRows int64
	zstdLevel   int
	compare     string
	child       bool
	writes      int
	memRows     int64
}

func benchCommand() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark the engine on a generated events table (load, scans, reclaim, upserts)",
		Long: `bench generates a deterministic events table (id, event_time, user_id,
amount, message and a direct-mode __TTL__: 10% NULL, 50% expired at the
benchmark's now) and times workloads through the public Go API, each after a
warm-up, reporting the median of --runs runs:

  load     Arrow batches into a DUPLICATE direct-mode table (one version)
  count    rows alive at now
  sum      sum(amount) over live rows
  groupby  user_id, sum(amount) over live rows (hash aggregation)
  project  every column of the live rows, streamed as Arrow
  reclaim  full compaction; bytes on disk before/after and the size of a
           table holding only the live rows; then the same on UNIQUE
           merge-on-write and merge-on-read tables fed the upsert stream
           (reclaim_mow, reclaim_mor), which must drop superseded versions
           too
  upsert   rows/2 upserts over rows/10 keys in 10 writes into UNIQUE
           merge-on-write and merge-on-read tables, then count
  import   the live rows with their expirations, in a Parquet file laid
           out as export writes it, into a fresh table through SQL:
           INSERT INTO events (...) SELECT * FROM local(...); then
           import_load, the same file through rowttl load's path
  smallwrites  durable one-row writes (--writes of them) from 1 and 16
           goroutines into a fresh table: rows/s, p50/p99 latency; then the
           p99 of 10-row writes into the events table during full
           compactions of it, beside its idle p99
  memtable count, sum and the SQL suite over a copy of the events table
           whose newest rows/10 rows (at most 1,000,000; --memtable-rows
           sets them) sit in memtables,
           written as durable 1000-row writes, then the same after a
           flush: both times and their ratio (memtable_count, ...)
  q01..q12 the SQL suite (bench.Suite), run through a SQL session as
           "rowttl sql" runs it, over events and a 1M-row users table;
           "suite" names them all

Without --workloads every workload runs.

With --isolate (the default) every workload runs in a fresh child process
of this binary, so the peak RSS reported (VmHWM) is the workload's own. The
prepared tables are kept in --dir and reused by later runs with the same
rows, layout and seed (--clean removes them at the end). Progress goes to
standard error; standard output gets a table, or JSON lines with --json.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runBench(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	fl := cmd.Flags()
	fl.Int64Var(&f.rows, "rows", 2_000_000, "rows of the events table")
	fl.StringVar(&f.layouts, "layout", "random", "expiration layout: random, correlated, or both comma-separated")
	fl.StringVar(&f.workloads, "workloads", "all", "comma-separated workloads ("+strings.Join(bench.Workloads, ",")+", suite, all)")
	fl.IntVar(&f.runs, "runs", 3, "measured runs per workload (the median is reported)")
	fl.IntVar(&f.warmup, "warmup", 1, "warm-up runs per workload, not measured")
	fl.BoolVar(&f.json, "json", false, "print JSON lines instead of a table")
	fl.StringVar(&f.dir, "dir", filepath.Join(os.TempDir(), "rowttl-bench"), "directory for the benchmark's tables")
	fl.Uint64Var(&f.seed, "seed", bench.DefaultSeed, "seed of the data generator")
	fl.BoolVar(&f.isolate, "isolate", true, "run every workload in a fresh child process (per-workload peak RSS)")
	fl.BoolVar(&f.clean, "clean", false, "remove the prepared tables at the end")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile per workload into this directory")
	fl.StringVar(&f.traceDir, "trace", "", "write an execution trace of smallwrites_compaction's first round into this directory")
	fl.IntVar(&f.pageRows, "page-rows", 0, "rows per segment page (0: the engine's default)")
	fl.Int64Var(&f.segmentRows, "segment-rows", 0, "rows per segment file (0: the engine's default)")
	fl.IntVar(&f.zstdLevel, "zstd-level", 0, "zstd level of segment pages (0: the engine's default, -1: no compression at all, LZ4 included)")
	fl.StringVar(&f.compare, "compare", "", "print rowttl and DuckDB side by side from a file of JSON lines of both (bench/compare.sh), and run nothing")
	fl.IntVar(&f.writes, "writes", bench.DefaultSmallWrites, "single-row writes of the smallwrites workload")
	fl.Int64Var(&f.memRows, "memtable-rows", 0, "rows the memtable workload keeps in memtables (0: rows/10, at most 1,000,000)")
	fl.BoolVar(&f.child, "child", false, "internal: run the given workloads in this process and print JSON lines")
	_ = fl.MarkHidden("child")
	return cmd
}

func (f benchFlags) options(layout bench.Layout, progress io.Writer) bench.Options {
	warm := f.warmup
	if warm == 0 {
		warm = -1 // bench.Options: 0 means one warm-up run
	}
	return bench.Options{
		Dir: f.dir, Rows: f.rows, Layout: layout, Seed: f.seed,
		Runs: f.runs, Warmup: warm, Progress: progress, Writes: f.writes,
		MemtableRows: f.memRows, TraceDir: f.traceDir, PageRows: f.pageRows, SegmentRows: f.segmentRows, ZstdLevel: f.zstdLevel,
		SQL: benchSQL, Load: benchLoad,
	}
}

func runBench(ctx context.Context, stdout, stderr io.Writer, f benchFlags) error {
	if f.compare != "" {
		in, err := os.Open(f.compare)
		if err != nil {
			return err
		}
		defer in.Close()
		rs, err := bench.ReadResults(in)
		if err != nil {
			return err
		}
		bench.CompareTable(stdout, rs)
		return nil
	}
	for _, c := range []error{atLeast("rows", f.rows, 1), atLeast("runs", f.runs, 1), atLeast("warmup", f.warmup, 0),
		atLeast("page-rows", f.pageRows, 0), atLeast("segment-rows", f.segmentRows, 0), atLeast("writes", f.writes, 1),
		atLeast("memtable-rows", f.memRows, 0)} {
		if c != nil {
			return c
		}
	}
	var layouts []bench.Layout
	for _, s := range strings.Split(f.layouts, ",") {
		l, err := bench.ParseLayout(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		layouts = append(layouts, l)
	}
	if f.child {
		return runBenchChild(ctx, stdout, stderr, f, layouts)
	}
	workloads, err := bench.ParseWorkloads(f.workloads)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return err
	}
	var all []bench.Result
	emit := func(rs []bench.Result) error {
		for _, r := range rs {
			if f.json {
				if err := r.WriteJSON(stdout); err != nil {
					return err
				}
			}
			all = append(all, r)
		}
		return nil
	}
	for _, layout := range layouts {
		o := f.options(layout, stderr)
		if needsPrepared(workloads) {
			if f.isolate {
				if _, err := runBenchIn(ctx, stderr, f, layout, "prepare"); err != nil {
					return err
				}
			} else if err := bench.Prepare(ctx, o); err != nil {
				return err
			}
		}
		for _, w := range workloads {
			var rs []bench.Result
			var err error
			if f.isolate {
				rs, err = runBenchIn(ctx, stderr, f, layout, w)
			} else {
				rs, err = runWorkload(ctx, f, o, w)
			}
			if err != nil {
				return err
			}
			if err := emit(rs); err != nil {
				return err
			}
		}
		if f.clean {
			if err := os.RemoveAll(o.BaseDir()); err != nil {
				return err
			}
		}
	}
	if !f.json {
		printBenchTable(stdout, all, f.isolate)
	}
	return nil
}

// needsPrepared reports whether a workload reads the prepared tables.
func needsPrepared(workloads []string) bool {
	for _, w := range workloads {
		if w != "load" && w != "upsert" {
			return true
		}
	}
	return false
}

// runWorkload runs one workload in this process, with a CPU profile when
// asked, and peak RSS reset first where the kernel allows.
func runWorkload(ctx context.Context, f benchFlags, o bench.Options, w string) ([]bench.Result, error) {
	bench.ResetPeakRSS()
	if f.cpuProfile != "" {
		if err := os.MkdirAll(f.cpuProfile, 0o755); err != nil {
			return nil, err
		}
		pf, err := os.Create(filepath.Join(f.cpuProfile, fmt.Sprintf("%s-%s.pprof", w, o.Layout)))
		if err != nil {
			return nil, err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	return bench.Run(ctx, o, w)
}

// runBenchIn runs one workload (or "prepare") in a child process of this
// binary and returns the results it printed.
func runBenchIn(ctx context.Context, stderr io.Writer, f benchFlags, layout bench.Layout, w string) ([]bench.Result, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"bench", "--child",
		"--workloads", w, "--layout", string(layout),
		"--rows", strconv.FormatInt(f.rows, 10),
		"--runs", strconv.Itoa(f.runs), "--warmup", strconv.Itoa(f.warmup),
		"--dir", f.dir, "--seed", strconv.FormatUint(f.seed, 10),
		"--page-rows", strconv.Itoa(f.pageRows),
		"--segment-rows", strconv.FormatInt(f.segmentRows, 10),
		"--zstd-level", strconv.Itoa(f.zstdLevel),
		"--writes", strconv.Itoa(f.writes),
		"--memtable-rows", strconv.FormatInt(f.memRows, 10),
	}
	if f.cpuProfile != "" {
		args = append(args, "--cpuprofile", f.cpuProfile)
	}
	if f.traceDir != "" {
		args = append(args, "--trace", f.traceDir)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("bench %s (%s) in a child process: %w", w, layout, err)
	}
	return bench.ReadResults(&out)
}

// runBenchChild is the child side of --isolate.
func runBenchChild(ctx context.Context, stdout, stderr io.Writer, f benchFlags, layouts []bench.Layout) error {
	for _, layout := range layouts {
		o := f.options(layout, stderr)
		for _, w := range strings.Split(f.workloads, ",") {
			if w == "prepare" {
				if err := bench.Prepare(ctx, o); err != nil {
					return err
				}
				continue
			}
			rs, err := runWorkload(ctx, f, o, w)
			if err != nil {
				return err
			}
			for _, r := range rs {
				if err := r.WriteJSON(stdout); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// maxAnswer is the width of the answer column of the table for a person.
const maxAnswer = 72

// printBenchTable prints the results for a person.
func printBenchTable(w io.Writer, rs []bench.Result, isolated bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tlayout\trows\tseconds\tcpu s\tMrows/s\ton disk\tpeak RSS\tanswer\t")
	for _, r := range rs {
		rate := "-"
		if r.OpRows > 0 && r.Seconds > 0 {
			rate = fmt.Sprintf("%.1f", float64(r.OpRows)/r.Seconds/1e6)
		}
		disk := bench.HumanBytes(r.BytesOnDisk)
		answer := r.Answer
		if strings.HasPrefix(r.Workload, "reclaim") {
			disk = bench.HumanBytes(r.BytesBefore) + " -> " + disk
			if r.LiveOnlyBytes > 0 {
				answer += fmt.Sprintf(" (%.2fx the live-only %s)", float64(r.BytesOnDisk)/float64(r.LiveOnlyBytes), bench.HumanBytes(r.LiveOnlyBytes))
			}
		}
		if r.P99Seconds > 0 {
			rate = "-"
			answer = bench.SmallWriteSummary(r) + ", " + answer
		}
		long := r.P99Seconds > 0
		if r.FlushedSeconds > 0 {
			if len(answer) > maxAnswer {
				answer = answer[:maxAnswer-3] + "..."
			}
			answer = bench.MemtableSummary(r) + ", " + answer
			long = true
		}
		if len(answer) > maxAnswer && !long {
			// The JSON lines keep it whole.
			answer = answer[:maxAnswer-3] + "..."
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%.3f\t%s\t%s\t%s\t%s\t\n",
			r.Workload, r.Layout, r.Rows, r.Seconds, r.CPUSeconds, rate, disk, bench.HumanBytes(r.PeakRSSBytes), answer)
	}
	tw.Flush()
	if !isolated {
		fmt.Fprintln(w, "(peak RSS measured in one process, reset between workloads where the kernel allows)")
	}
}
