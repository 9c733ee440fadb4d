//go:build !unix

package proccpu

import (
	"os"
	"time"
)

// Self is 0 here: the CPU time is not read on this system, and benchmarks
// report wall time only.
func Self() time.Duration { return 0 }

// PeakRSS is not known on this system.
func PeakRSS(*os.ProcessState) (uint64, bool) { return 0, false }
