package cli_test

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/cmd/rolloutlint/cli"
	"github.com/rolloutlint/rolloutlint/model/render/helmtest"
)

// TestLintContextStopsTheCompanion: a lint whose Env.Context ends while
// the companion hangs fails (exit 2) with the context's error, and the
// companion is gone.
func TestLintContextStopsTheCompanion(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("checks the process by signal 0")
	}
	pids := helmtest.Hang(t)
	var (
		code      int
		out, errw bytes.Buffer
	)
	started := helmtest.UnderDeadline(t, pids, func(ctx context.Context) {
		out.Reset()
		errw.Reset()
		e := &cli.Env{In: strings.NewReader(""), Out: &out, Err: &errw, Dir: "../../../testdata/repos/mixed",
			Getenv: func(string) string { return "" }, Context: ctx}
		code = e.Run([]string{"lint", "charts/reviews"})
	})
	if code != cli.ExitFailure || errw.String() != "rolloutlint: stopped while rendering: context deadline exceeded\n" || out.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 with the context's error", code, out.String(), errw.String())
	}
	if len(started) != 1 {
		t.Errorf("companions %v started, want one", started)
	}
	for _, pid := range started {
		if helmtest.Running(pid) {
			t.Errorf("companion %d still runs", pid)
		}
	}
}

// TestLintHelmWarningsOnStderr: Helm's warnings, logged by the companion,
// reach the lint's stderr, and the lint is as without them.
func TestLintHelmWarningsOnStderr(t *testing.T) {
	plain := run(t, "../../../testdata/repos/mixed", "", "lint", "-f", "json", "charts/reviews")
	helmtest.Warn(t)
	warned := run(t, "../../../testdata/repos/mixed", "", "lint", "-f", "json", "charts/reviews")
	if warned.code != plain.code || warned.out != plain.out {
		t.Errorf("with warnings: exit %d and another output; want exit %d and the same", warned.code, plain.code)
	}
	if rest, ok := strings.CutPrefix(warned.err, plain.err); !ok || !strings.HasSuffix(rest, " warning: helmtest warns about reviews\n") ||
		strings.Count(rest, "\n") != 1 {
		t.Errorf("stderr %q, want %q and the warning, once (after the log's time)", warned.err, plain.err)
	}
}
