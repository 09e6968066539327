package bench

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// duckdbWorkload maps a rowttl workload to the DuckDB workload it is
// compared with: DuckDB has one UNIQUE model, so both of rowttl's upsert
// and UNIQUE reclaim variants face the same PRIMARY KEY table.
func duckdbWorkload(w string) string {
	switch w {
	case "upsert_mow", "upsert_mor":
		return "upsert"
	case "upsert_mow_count", "upsert_mor_count":
		return "upsert_count"
	case "reclaim_mow", "reclaim_mor":
		return "reclaim_upsert"
	case "import_load":
		return "import"
	}
	return w
}

// CompareTable prints rowttl's and DuckDB's results side by side: one line
// per rowttl workload and layout with both timings, their ratio (rowttl /
// DuckDB, below 1 when rowttl is faster), bytes on disk, peak RSS and
// whether the answers agree. The last of several results for the same
// engine, workload and layout wins.
func CompareTable(w io.Writer, rs []Result) {
	type key struct{ engine, workload, layout string }
	last := map[key]Result{}
	var order []key
	var small, mem []Result
	for _, r := range rs {
		if strings.HasPrefix(r.Workload, "smallwrites") {
			small = append(small, r)
			continue
		}
		if strings.HasPrefix(r.Workload, MemtableWorkload("")) {
			mem = append(mem, r)
			continue
		}
		k := key{r.Engine, r.Workload, r.Layout}
		if _, ok := last[k]; !ok && r.Engine == Engine {
			order = append(order, k)
		}
		last[k] = r
	}
	if len(order) == 0 && (len(small) > 0 || len(mem) > 0) {
		SmallWritesTable(w, small)
		MemtableTable(w, mem)
		return
	}
	defer MemtableTable(w, mem)
	defer SmallWritesTable(w, small)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tlayout\trows\trowttl s\tduckdb s\tratio\tcpu rowttl\tcpu duckdb\tdisk rowttl\tdisk duckdb\tRSS rowttl\tRSS duckdb\tanswers\t")
	line := func(name string, r, d Result, haveD bool) {
		ds, ratio, dcpu, ddisk, drss, ans := "-", "-", "-", "-", "-", "-"
		if haveD {
			ds = fmt.Sprintf("%.3f", d.Seconds)
			dcpu = fmt.Sprintf("%.3f", d.CPUSeconds)
			if d.Seconds > 0 {
				ratio = fmt.Sprintf("%.2f", r.Seconds/d.Seconds)
			}
			ddisk, drss = HumanBytes(d.BytesOnDisk), HumanBytes(d.PeakRSSBytes)
			switch {
			case r.Answer == "" || d.Answer == "":
			case answersAgree(r.Answer, d.Answer):
				ans = "same"
			case strings.HasPrefix(r.Answer, ErrorAnswer):
				ans = "rowttl " + r.Answer
			case suiteAnswersAgree(r.Workload, r.Answer, d.Answer):
				ans = "same (ties in another order)"
			default:
				ans = "DIFFER: " + r.Answer + " vs " + d.Answer
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%s\t%s\t%.3f\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, r.Layout, r.Rows, r.Seconds, ds, ratio,
			r.CPUSeconds, dcpu, HumanBytes(r.BytesOnDisk), ddisk, HumanBytes(r.PeakRSSBytes), drss, ans)
	}
	var notes []string
	for _, k := range order {
		r := last[k]
		dw := duckdbWorkload(k.workload)
		d, ok := last[key{"duckdb", dw, k.layout}]
		if !ok && dw != k.workload {
			// upsert runs with one layout only.
			for dk, dr := range last {
				if dk.engine == "duckdb" && dk.workload == dw {
					d, ok = dr, true
					break
				}
			}
		}
		line(k.workload, r, d, ok)
		if k.workload == "load" {
			if da, ok := last[key{"duckdb", "load_arrow", k.layout}]; ok {
				line("load (duckdb arrow)", r, da, true)
			}
		}
		if k.workload == "reclaim" || dw == "reclaim_upsert" {
			n := fmt.Sprintf("%s %s: rowttl %s -> %s", k.workload, k.layout, HumanBytes(r.BytesBefore), HumanBytes(r.BytesOnDisk))
			if r.LiveOnlyBytes > 0 {
				n += fmt.Sprintf(" (%.2fx its live-only table of %s)", float64(r.BytesOnDisk)/float64(r.LiveOnlyBytes), HumanBytes(r.LiveOnlyBytes))
			}
			if ok {
				n += fmt.Sprintf("; duckdb %s -> %s", HumanBytes(d.BytesBefore), HumanBytes(d.BytesOnDisk))
				if d.LiveOnlyBytes > 0 {
					n += fmt.Sprintf(" (%.2fx its live-only database of %s)", float64(d.BytesOnDisk)/float64(d.LiveOnlyBytes), HumanBytes(d.LiveOnlyBytes))
				}
			}
			notes = append(notes, n)
		}
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	fmt.Fprintln(w, "ratio = rowttl seconds / duckdb seconds (below 1: rowttl faster); cpu = CPU seconds of a run, all threads (median)")
}

// answersAgree compares two answers; sums may differ in their last digit,
// as engines add in different orders.
func answersAgree(a, b string) bool {
	if a == b {
		return true
	}
	fa, fb := strings.Fields(a), strings.Fields(b)
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if fa[i] == fb[i] {
			continue
		}
		var x, y float64
		ka, va, _ := strings.Cut(fa[i], "=")
		kb, vb, _ := strings.Cut(fb[i], "=")
		if va == "" {
			va, vb = ka, kb
		} else if ka != kb {
			return false
		}
		var err error
		if x, err = strconv.ParseFloat(va, 64); err != nil {
			return false
		}
		if y, err = strconv.ParseFloat(vb, 64); err != nil {
			return false
		}
		if d := x - y; d > 1e-8*max(x, -x) || -d > 1e-8*max(x, -x) {
			return false
		}
	}
	return true
}

// HumanBytes renders a byte count for tables.
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// lastBy returns the last result of each key of rs, and the keys in the
// order of their first result.
func lastBy[K comparable](rs []Result, keyOf func(Result) K) (map[K]Result, []K) {
	last := map[K]Result{}
	var order []K
	for _, r := range rs {
		k := keyOf(r)
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = r
	}
	return last, order
}

// SmallWritesTable prints the small-writes results of every engine (rowttl,
// SQLite, DuckDB), one line per workload and engine, the last result of
// each winning, with each engine's rate beside rowttl's.
func SmallWritesTable(w io.Writer, rs []Result) {
	if len(rs) == 0 {
		return
	}
	type key struct{ workload, engine string }
	last, order := lastBy(rs, func(r Result) key { return key{r.Workload, r.Engine} })
	// Workloads in their order of first appearance, rowttl first in each.
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].workload != order[j].workload {
			return order[i].workload < order[j].workload
		}
		return order[i].engine == Engine && order[j].engine != Engine
	})
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "small writes\tengine\tgoroutines\twrites\trows/s\tp50 ms\tp99 ms\tidle p99 ms\trowttl rate / its\tanswer\t")
	rate := func(r Result) float64 {
		if r.Seconds <= 0 {
			return 0
		}
		return float64(r.OpRows) / r.Seconds
	}
	for _, k := range order {
		r := last[k]
		idle, ratio := "-", "-"
		if r.IdleP99Seconds > 0 {
			idle = fmt.Sprintf("%.2f", r.IdleP99Seconds*1e3)
		}
		if own, ok := last[key{k.workload, Engine}]; ok && k.engine != Engine && rate(r) > 0 {
			ratio = fmt.Sprintf("%.2f", rate(own)/rate(r))
		}
		rs := fmt.Sprintf("%.0f", rate(r))
		if r.IdleP99Seconds > 0 {
			rs = "-" // writes during a compaction: their count says how long it ran
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t\n", k.workload, k.engine, r.Goroutines, r.OpRows, rs,
			r.P50Seconds*1e3, r.P99Seconds*1e3, idle, ratio, r.Answer)
	}
	tw.Flush()
	for _, k := range order {
		if r := last[k]; r.IdleP99Seconds > 0 {
			fmt.Fprintf(w, "%s %s: p99 of a %d-row write during full compactions of %d rows (%.2f s in all) is %.1fx its idle p99\n",
				k.workload, k.engine, CompactionWriteRows, r.Rows, r.Seconds, r.P99Seconds/r.IdleP99Seconds)
		}
	}
}

// MemtableTable prints the memtable workload's results: each read over the
// memtables, after their flush, and the ratio, the last result of each
// read and layout winning.
func MemtableTable(w io.Writer, rs []Result) {
	if len(rs) == 0 {
		return
	}
	type key struct{ workload, layout string }
	last, order := lastBy(rs, func(r Result) key { return key{r.Workload, r.Layout} })
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "memtable\tlayout\trows\tin memtables\tmemtable s\tflushed s\tratio\tcpu ratio\tanswer\t")
	worst := 0.0
	for _, k := range order {
		r := last[k]
		ratio := MemtableRatio(r)
		worst = max(worst, ratio)
		ans := r.Answer
		if len(ans) > 40 {
			ans = ans[:37] + "..."
		}
		cpu := "-"
		if r.CPUSeconds > 0 && r.FlushedCPUSeconds > 0 {
			cpu = fmt.Sprintf("%.2f", r.CPUSeconds/r.FlushedCPUSeconds)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.4f\t%.4f\t%.2f\t%s\t%s\t\n", k.workload, k.layout, r.Rows, r.MemtableRows, r.Seconds, r.FlushedSeconds, ratio, cpu, ans)
	}
	tw.Flush()
	fmt.Fprintf(w, "ratio = seconds with the newest rows in memtables / seconds after their flush (worst %.2fx); cpu ratio the same of CPU seconds (medians of runs alternating between the two)\n", worst)
}
