//go:build unix

package proccpu

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// Self is the CPU time (user + system, garbage collection included) this
// process has used; 0 where it cannot be read.
func Self() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
}

// PeakRSS is the peak resident memory, in bytes, of a child that has
// exited, and whether it is known.
func PeakRSS(ps *os.ProcessState) (uint64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0, false
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return uint64(ru.Maxrss), true // bytes there, kilobytes elsewhere
	}
	return uint64(ru.Maxrss) << 10, true
}
