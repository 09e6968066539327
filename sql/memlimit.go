package sql

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// fallbackMemory is the machine's memory assumed when /proc/meminfo cannot
// be read.
const fallbackMemory = 8 << 30

// defaultMemLimit is exec_mem_limit's default, as in Doris a share of the
// machine: a quarter of its RAM.
func defaultMemLimit() int64 {
	return machineMemory() / 4
}

// machineMemory reads MemTotal from /proc/meminfo.
func machineMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return fallbackMemory
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			fields := strings.Fields(rest)
			if len(fields) >= 1 {
				if kb, err := strconv.ParseInt(fields[0], 10, 64); err == nil && kb > 0 {
					return kb << 10
				}
			}
		}
	}
	return fallbackMemory
}
