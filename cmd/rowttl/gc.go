package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/rowttl/rowttl"
)

// A server under loads spends, at Go's default GOGC=100, about as much
// processor on the collector as on the loads (a trace of
// BenchmarkCountUnderLoads), and each collection's assists land on the
// latency of short statements. serve therefore lets the heap grow further
// between collections (--gogc, 400 by default) and bounds what that costs
// in memory with a soft limit (--memory-limit, debug.SetMemoryLimit) near
// which the collector runs as often as it must.

// defaultGOGC is serve's --gogc.
const defaultGOGC = 400

// gcSettings are serve's settings of the collector.
type gcSettings struct {
	percent int    // --gogc
	limit   string // --memory-limit: a size, "auto" or "0"
}

// applyGC sets the collector's target and soft memory limit for serve and
// describes them for the log. A flag not given leaves what the
// environment's GOGC or GOMEMLIMIT already set, as for any Go program.
// meminfo and cgroup name the files auto reads (/proc/meminfo,
// /sys/fs/cgroup/memory.max).
func applyGC(s gcSettings, percentSet, limitSet bool, getenv func(string) string, meminfo, cgroup string) (string, error) {
	// Everything is checked before anything is set: a refused serve
	// leaves the process as it found it.
	envPercent := !percentSet && getenv("GOGC") != ""
	envLimit := !limitSet && getenv("GOMEMLIMIT") != ""
	if !envPercent && s.percent < -1 {
		return "", rowttl.Errorf(rowttl.ErrInvalidArgument, "--gogc %d: give a percentage, or -1 to collect only near --memory-limit", s.percent)
	}
	var limit int64
	var how string
	if !envLimit {
		var err error
		if limit, how, err = memoryLimit(s.limit, meminfo, cgroup); err != nil {
			return "", err
		}
		if limit == 0 && !envPercent && s.percent == -1 {
			return "", rowttl.Errorf(rowttl.ErrInvalidArgument, "--gogc -1 needs a --memory-limit: the collector would never run")
		}
	}
	var parts []string
	if envPercent {
		parts = append(parts, "GOGC="+getenv("GOGC")+" (environment)")
	} else {
		debug.SetGCPercent(s.percent)
		parts = append(parts, "GOGC="+strconv.Itoa(s.percent))
	}
	switch {
	case envLimit:
		parts = append(parts, "memory limit GOMEMLIMIT="+getenv("GOMEMLIMIT")+" (environment)")
	case limit == 0:
		debug.SetMemoryLimit(math.MaxInt64)
		parts = append(parts, "no memory limit")
	default:
		debug.SetMemoryLimit(limit)
		parts = append(parts, "memory limit "+formatBytes(limit)+how)
	}
	return strings.Join(parts, ", "), nil
}

// memoryLimit returns the soft limit that --memory-limit v asks for (0:
// none) and, for auto, where it comes from: half of the memory the process
// may use (its cgroup's limit, else the machine's), none when unknown.
func memoryLimit(v, meminfo, cgroup string) (int64, string, error) {
	if !strings.EqualFold(strings.TrimSpace(v), "auto") {
		n, err := parseSize(v)
		if err != nil {
			return 0, "", rowttl.Errorf(rowttl.ErrInvalidArgument, "--memory-limit: %w", err)
		}
		return n, "", nil
	}
	if b, err := os.ReadFile(cgroup); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
			return n / 2, " (half of the cgroup's)", nil
		}
	}
	if f, err := os.Open(meminfo); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// MemTotal:       24683584 kB
			fields := strings.Fields(sc.Text())
			if len(fields) == 3 && fields[0] == "MemTotal:" && fields[2] == "kB" {
				if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil && kb > 0 {
					return kb << 10 / 2, " (half of the machine's)", nil
				}
			}
		}
	}
	return 0, "", nil
}

// sizeUnits are the suffixes parseSize takes, longest first.
var sizeUnits = []struct {
	suffix string
	shift  uint
}{
	{"kib", 10}, {"mib", 20}, {"gib", 30}, {"tib", 40},
	{"kb", 10}, {"mb", 20}, {"gb", 30}, {"tb", 40},
	{"k", 10}, {"m", 20}, {"g", 30}, {"t", 40},
	{"b", 0},
}

// parseSize reads a byte count: digits with an optional unit of powers of
// 1024 (512MiB, 4GiB, 2g; KB, MB, GB and TB mean the same, as in Doris).
func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	shift := uint(0)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, shift = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || t == "" || t[0] == '+' || t[0] == '-' {
		return 0, fmt.Errorf("bad size %q (digits and a unit: 512MiB, 4GiB; 0 for none)", s)
	}
	if n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n << shift, nil
}

// formatBytes writes n in the largest binary unit that keeps one decimal.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + " GiB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}
