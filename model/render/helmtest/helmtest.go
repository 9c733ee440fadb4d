// Package helmtest gives a test binary the rolloutlint-helm companion: the
// binary itself. A package whose tests render charts calls Main from its
// TestMain; the charts are then rendered the way rolloutlint renders them,
// by a companion process over helmrpc, with no binary to build first.
//
// A test can make the companions it starts misbehave (Hang, Crash), log a
// warning (Warn) or claim a release (Release), to check how rolloutlint
// copes.
package helmtest

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rolloutlint/rolloutlint/model/render/helmengine"
	"github.com/rolloutlint/rolloutlint/model/render/helmrpc"
)

// Environment variables by which a test sets what the companions it
// starts do (they inherit the test's environment).
const (
	envMode    = "ROLLOUTLINT_HELMTEST_MODE"
	envPIDs    = "ROLLOUTLINT_HELMTEST_PIDS"
	envVersion = "ROLLOUTLINT_HELMTEST_VERSION"
)

// Main serves as rolloutlint-helm when the test binary is run as
// `BINARY serve` (how rolloutlint starts the companion); otherwise it
// points $ROLLOUTLINT_HELM at the test binary and runs the tests.
func Main(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == helmrpc.ServeCommand {
		os.Exit(serve())
	}
	exe, err := os.Executable()
	if err != nil {
		_, _ = fmt.Fprintln(os.Stderr, "helmtest: finding the test binary:", err)
		os.Exit(1)
	}
	if err := os.Setenv(helmrpc.EnvPath, exe); err != nil {
		_, _ = fmt.Fprintln(os.Stderr, "helmtest:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// serve is the companion, in the mode the test set.
func serve() int {
	if f := os.Getenv(envPIDs); f != "" {
		if err := appendLine(f, strconv.Itoa(os.Getpid())); err != nil {
			_, _ = fmt.Fprintln(os.Stderr, "helmtest:", err)
			return 1
		}
	}
	helmrpc.LogTo(os.Stderr)
	handle := helmengine.Render
	switch os.Getenv(envMode) {
	case "hang":
		handle = func(*helmrpc.Request) *helmrpc.Response { select {} }
	case "crash":
		handle = func(*helmrpc.Request) *helmrpc.Response {
			_, _ = fmt.Fprintln(os.Stderr, "fatal error: helmtest crashes")
			line := strings.Repeat("x", 99) + "\n"
			for range 20000 { // 2 MB of stack, as a runtime crash may write
				_, _ = os.Stderr.WriteString(line)
			}
			_, _ = fmt.Fprintln(os.Stderr, "the end of the crash")
			os.Exit(2)
			return nil
		}
	case "warn":
		handle = func(req *helmrpc.Request) *helmrpc.Response {
			log.Printf("warning: helmtest warns about %s", filepath.Base(req.ChartDir))
			return helmengine.Render(req)
		}
	}
	v := os.Getenv(envVersion)
	if v == "" {
		v = "test"
	}
	if err := helmrpc.Serve(os.Stdin, os.Stdout, handle, helmrpc.ServeOptions{Version: v}); err != nil {
		_, _ = fmt.Fprintln(os.Stderr, "helmtest:", err)
		return 1
	}
	return 0
}

func appendLine(file, line string) error {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("recording the companion's PID: %w", err)
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		_ = f.Close()
		return fmt.Errorf("recording the companion's PID: %w", err)
	}
	return f.Close()
}

// Hang makes the companions the test starts (after this call, until it
// ends) take requests and never answer them; the function returned lists
// the PIDs of those that started. The test must not run in parallel.
func Hang(t testing.TB) (pids func() []int) {
	t.Helper()
	t.Setenv(envMode, "hang")
	return recordPIDs(t)
}

// Crash makes the companions the test starts exit with status 2 at their
// first request, writing "fatal error: helmtest crashes", 2 MB and "the
// end of the crash" to their standard error.
func Crash(t testing.TB) {
	t.Helper()
	t.Setenv(envMode, "crash")
}

// Warn makes the companions the test starts render as usual, logging
// "warning: helmtest warns about DIR" (the chart directory's name) for
// each chart, as Helm logs its warnings.
func Warn(t testing.TB) {
	t.Helper()
	t.Setenv(envMode, "warn")
}

// Release makes the companions the test starts say they are of version v.
func Release(t testing.TB, v string) {
	t.Helper()
	t.Setenv(envVersion, v)
}

func recordPIDs(t testing.TB) func() []int {
	t.Helper()
	file := filepath.Join(t.TempDir(), "pids")
	t.Setenv(envPIDs, file)
	return func() []int {
		b, err := os.ReadFile(file)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		var out []int
		for _, f := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("a companion recorded %q as its PID", f)
			}
			out = append(out, pid)
		}
		return out
	}
}

// Running tells whether process pid runs (or exited and was not reaped).
func Running(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// UnderDeadline calls lint with a context whose deadline passes while the
// companions hang (the test called Hang, which gave pids), and returns the
// PIDs of the companions that call started. When none had started by the
// deadline (a slow start: a race build on a busy machine), it calls lint
// again with a longer one.
func UnderDeadline(t testing.TB, pids func() []int, lint func(ctx context.Context)) []int {
	t.Helper()
	for _, d := range []time.Duration{500 * time.Millisecond, 2 * time.Second, 8 * time.Second} {
		before := len(pids())
		ctx, cancel := context.WithTimeout(context.Background(), d)
		done := make(chan struct{})
		go func() {
			defer close(done)
			lint(ctx)
		}()
		select {
		case <-done:
		case <-time.After(d + time.Minute):
			t.Fatalf("the lint went on a minute past its deadline of %s", d)
		}
		cancel()
		if started := pids()[before:]; len(started) > 0 {
			return started
		}
	}
	t.Fatal("no companion started, with deadlines up to 8s")
	return nil
}
