//go:build unix

package exec

import "syscall"

// cpuNanos is the CPU time the process has used, which a machine shared
// with other work disturbs less than wall time.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
