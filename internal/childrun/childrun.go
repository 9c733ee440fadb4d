// Package childrun runs a command as a child process and reports what it
// cost: its wall time, and its user and system time and peak RSS from the
// child's rusage, which a shared host's other work does not add to. The
// benchmark tools (internal/tools/perfrun, internal/tools/scaleratio) time
// rolloutlint with it.
package childrun

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Sample is what one run of a command cost.
type Sample struct {
	// Wall is the time from start to exit.
	Wall time.Duration
	// User and Sys are the child's CPU time in user and system mode.
	User, Sys time.Duration
	// MaxRSSKB is the child's peak resident set size, in KiB.
	MaxRSSKB int64
}

// CPU is the child's user and system time together.
func (s Sample) CPU() time.Duration { return s.User + s.Sys }

// Run runs argv once, its standard output written to stdout (nil discards
// it). An exit status that ok accepts counts as a run (a lint exits 1 when
// it finds errors); any other failure is an error quoting the command's
// standard error.
func Run(argv []string, stdout io.Writer, ok func(status int) bool) (Sample, error) {
	if len(argv) == 0 {
		return Sample{}, errors.New("no command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = stdout
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || !ok(exit.ExitCode())) {
		return Sample{}, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	ru, isRusage := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !isRusage {
		return Sample{}, errors.New("no rusage for the child on this platform")
	}
	return Sample{Wall: wall, User: time.Duration(ru.Utime.Nano()), Sys: time.Duration(ru.Stime.Nano()), MaxRSSKB: ru.Maxrss}, nil
}

// Median returns the median of xs (0 for none).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
