//go:build unix

package webhook

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the test process has used (user + system, every
// thread, the garbage collector's included). On the shared machine, where
// wall time depends on what else runs, it is the steadier measure of cost.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
}
