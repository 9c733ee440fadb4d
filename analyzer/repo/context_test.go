package repo_test

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer/repo"
	"github.com/rolloutlint/rolloutlint/model/render/helmtest"
)

// TestLintContextStopsRendering: a lint whose context (the analyzer's, as
// a caller with a deadline sets it) ends while the companion hangs
// returns the context's error, and the companion is gone.
func TestLintContextStopsRendering(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("checks the process by signal 0")
	}
	pids := helmtest.Hang(t)
	dir := filepath.Join(repos, "mixed")
	var (
		rep *repo.Report
		err error
	)
	started := helmtest.UnderDeadline(t, pids, func(ctx context.Context) {
		opts := options(dir)
		opts.Analyzer.Context = ctx
		rep, err = repo.Lint([]string{dir}, opts)
	})
	if !errors.Is(err, context.DeadlineExceeded) || rep != nil {
		t.Errorf("Lint: %v, %v; want no report and the context's error", rep, err)
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
