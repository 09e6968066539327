package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Result is one measured workload: what `rowttl bench --json` and the DuckDB
// side print, one JSON object a line. The first seven fields are the
// comparison's contract; the others are optional detail.
type Result struct {
	Engine       string  `json:"engine"`
	Workload     string  `json:"workload"`
	Layout       string  `json:"layout"`
	Rows         int64   `json:"rows"`
	Seconds      float64 `json:"seconds"`
	BytesOnDisk  int64   `json:"bytes_on_disk"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`

	// Runs are the measured seconds of every run (Seconds is their median).
	Runs []float64 `json:"runs,omitempty"`
	// CPUSeconds is the median CPU time (user + system, all threads of the
	// process) of the measured runs: less sensitive than Seconds to other
	// work on a shared machine, and it shows how many cores a run used.
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
	// Answer is the workload's result in a form both engines print alike
	// (a count, a sum, a digest of the groups), so that a comparison can
	// tell that they computed the same thing.
	Answer string `json:"answer,omitempty"`
	// BytesBefore is the size on disk before a reclaim.
	BytesBefore int64 `json:"bytes_before,omitempty"`
	// LiveOnlyBytes is the size on disk of a table written with only the
	// rows alive at Now: what a perfect reclaim would leave.
	LiveOnlyBytes int64 `json:"live_only_bytes,omitempty"`
	// OpRows is the number of rows the workload wrote or read, for rates;
	// for the small-writes workloads, the number of writes.
	OpRows int64 `json:"op_rows,omitempty"`

	// The small-writes workloads: the median and 99th percentile latency of
	// one write, the writers running at once, and for
	// smallwrites_compaction the same latencies on the idle table (the
	// others are those during the compaction).
	P50Seconds     float64 `json:"p50_seconds,omitempty"`
	P99Seconds     float64 `json:"p99_seconds,omitempty"`
	IdleP50Seconds float64 `json:"idle_p50_seconds,omitempty"`
	IdleP99Seconds float64 `json:"idle_p99_seconds,omitempty"`
	Goroutines     int     `json:"goroutines,omitempty"`

	// The memtable workload: the rows that sat in memtables while Seconds
	// was measured, and the same read's seconds (wall and CPU, medians)
	// after their flush.
	MemtableRows      int64   `json:"memtable_rows,omitempty"`
	FlushedSeconds    float64 `json:"flushed_seconds,omitempty"`
	FlushedCPUSeconds float64 `json:"flushed_cpu_seconds,omitempty"`
}

// WriteJSON prints r as one JSON line.
func (r Result) WriteJSON(w io.Writer) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// ReadResults parses JSON lines, skipping lines that are not JSON objects.
func ReadResults(r io.Reader) ([]Result, error) {
	var out []Result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var res Result
		if err := json.Unmarshal([]byte(line), &res); err != nil {
			return out, fmt.Errorf("bad result line %q: %w", line, err)
		}
		out = append(out, res)
	}
	return out, sc.Err()
}

// Median returns the median of xs (the mean of the middle two for an even
// count), or 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// PeakRSS returns the process's peak resident set size (VmHWM of
// /proc/self/status) in bytes, or 0 where it cannot be read.
func PeakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				return 0
			}
			kb, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// ResetPeakRSS returns freed memory to the system and resets VmHWM to the
// current RSS (writing 5 to /proc/self/clear_refs), so that a workload run
// in a process that ran others before can still report its own peak. It
// reports whether the reset worked; a fresh process per workload (rowttl
// bench --isolate) does not depend on it.
func ResetPeakRSS() bool {
	runtime.GC()
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// Trial is one run of a workload: Setup and Teardown are not timed, nor
// what Run does through Untimed. Both engines' harnesses time their
// workloads with it (Measure), so that they measure the same way.
type Trial struct {
	Setup    func() error
	Run      func() (answer string, err error)
	Teardown func() error
	Untimed  *Untimed
}

// Untimed accumulates the wall and CPU seconds of work inside a timed run
// that the run must not be charged for: generating the rows of the next
// write of an upsert stream, which a harness holding every write in memory
// would not do, but whose memory would then weigh on the peak RSS.
type Untimed struct{ Wall, CPU float64 }

// Do runs f and adds its times.
func (u *Untimed) Do(f func()) {
	start, cpu0 := time.Now(), CPUTime()
	f()
	u.Wall += time.Since(start).Seconds()
	u.CPU += (CPUTime() - cpu0).Seconds()
}

// CPUTime returns the CPU time (user + system) the process has used so far.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Measure runs t warmup+nruns times and returns the median of the measured
// runs, every measured run, and the answer of the last run; cpu receives
// the median CPU time (all threads) of the measured runs when not nil.
func Measure(warmup, nruns int, cpu *float64, t Trial) (median float64, runs []float64, answer string, err error) {
	var cpus []float64
	for i := 0; i < warmup+nruns; i++ {
		if t.Setup != nil {
			if err := t.Setup(); err != nil {
				return 0, nil, "", err
			}
		}
		if t.Untimed != nil {
			*t.Untimed = Untimed{}
		}
		start, cpu0 := time.Now(), CPUTime()
		a, err := t.Run()
		d := time.Since(start).Seconds()
		c := (CPUTime() - cpu0).Seconds()
		if t.Untimed != nil {
			d -= t.Untimed.Wall
			c -= t.Untimed.CPU
		}
		if t.Teardown != nil {
			if terr := t.Teardown(); err == nil {
				err = terr
			}
		}
		if err != nil {
			return 0, nil, "", err
		}
		answer = a
		if i >= warmup {
			runs = append(runs, d)
			cpus = append(cpus, c)
		}
	}
	if cpu != nil {
		*cpu = Median(cpus)
	}
	return Median(runs), runs, answer, nil
}
