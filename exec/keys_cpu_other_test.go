//go:build !unix

package exec

// cpuNanos is 0 where the process's CPU time is not at hand.
func cpuNanos() int64 { return 0 }
