package main

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/rowttl/rowttl"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		err  bool
	}{
		{"0", 0, false},
		{"1024", 1024, false},
		{"512MiB", 512 << 20, false},
		{"4GiB", 4 << 30, false},
		{" 2 g ", 2 << 30, false},
		{"100KB", 100 << 10, false},
		{"1tb", 1 << 40, false},
		{"7b", 7, false},
		{"", 0, true},
		{"MiB", 0, true},
		{"-1", 0, true},
		{"+5", 0, true},
		{"1.5GiB", 0, true},
		{"5 PiB", 0, true},
		{"9223372036854775807k", 0, true},
	} {
		got, err := parseSize(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "512MiB", "4 GiB", "1tb", "-3", "", "9223372036854775807", "8589934592g"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("parseSize(%q) = %d", s, n)
		}
		// A size read back from its bytes is the same size.
		if m, err := parseSize(strconv.FormatInt(n, 10)); err != nil || m != n {
			t.Fatalf("parseSize(%d) = %d, %v", n, m, err)
		}
	})
}

// TestApplyGC checks serve's collector settings: the defaults, the flags,
// the environment when a flag is not given, auto from a cgroup's limit or
// the machine's memory, and the refusals.
func TestApplyGC(t *testing.T) {
	prevPercent := debug.SetGCPercent(100)
	prevLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	})
	dir := t.TempDir()
	meminfo := filepath.Join(dir, "meminfo")
	cgroup := filepath.Join(dir, "memory.max")
	if err := os.WriteFile(meminfo, []byte("MemFree:  100 kB\nMemTotal:       8388608 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	env := func(k string) string { return map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}[k] }
	for _, c := range []struct {
		name                 string
		s                    gcSettings
		percentSet, limitSet bool
		getenv               func(string) string
		cgroup               string // contents of memory.max; none when empty
		note                 string
		percent              int
		limit                int64
	}{
		{"defaults, machine", gcSettings{defaultGOGC, "auto"}, false, false, noEnv, "", "GOGC=400, memory limit 4.0 GiB (half of the machine's)", 400, 4 << 30},
		{"defaults, cgroup", gcSettings{defaultGOGC, "auto"}, false, false, noEnv, "1073741824\n", "GOGC=400, memory limit 512.0 MiB (half of the cgroup's)", 400, 512 << 20},
		{"cgroup without a limit", gcSettings{defaultGOGC, "auto"}, false, false, noEnv, "max\n", "GOGC=400, memory limit 4.0 GiB (half of the machine's)", 400, 4 << 30},
		{"flags", gcSettings{200, "3GiB"}, true, true, noEnv, "", "GOGC=200, memory limit 3.0 GiB", 200, 3 << 30},
		{"no limit", gcSettings{150, "0"}, true, true, noEnv, "", "GOGC=150, no memory limit", 150, math.MaxInt64},
		{"only the limit", gcSettings{-1, "2g"}, true, true, noEnv, "", "GOGC=-1, memory limit 2.0 GiB", -1, 2 << 30},
		{"environment", gcSettings{defaultGOGC, "auto"}, false, false, env, "", "GOGC=50 (environment), memory limit GOMEMLIMIT=1GiB (environment)", 100, math.MaxInt64},
		{"flags over environment", gcSettings{300, "1MiB"}, true, true, env, "", "GOGC=300, memory limit 1.0 MiB", 300, 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			os.Remove(cgroup)
			if c.cgroup != "" {
				if err := os.WriteFile(cgroup, []byte(c.cgroup), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			note, err := applyGC(c.s, c.percentSet, c.limitSet, c.getenv, meminfo, cgroup)
			if err != nil {
				t.Fatal(err)
			}
			if note != c.note {
				t.Errorf("note %q, want %q", note, c.note)
			}
			if p := debug.SetGCPercent(100); p != c.percent {
				t.Errorf("GOGC %d, want %d", p, c.percent)
			}
			if l := debug.SetMemoryLimit(-1); l != c.limit {
				t.Errorf("memory limit %d, want %d", l, c.limit)
			}
		})
	}
	for _, c := range []struct {
		s    gcSettings
		want string
	}{
		{gcSettings{-2, "auto"}, "--gogc -2: give a percentage"},
		{gcSettings{100, "lots"}, `--memory-limit: bad size "lots"`},
		{gcSettings{-1, "0"}, "--gogc -1 needs a --memory-limit"},
	} {
		_, err := applyGC(c.s, true, true, noEnv, meminfo, filepath.Join(dir, "none"))
		if !errors.Is(err, rowttl.ErrInvalidArgument) || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("applyGC(%+v) = %v, want ErrInvalidArgument %q", c.s, err, c.want)
		}
	}
}
