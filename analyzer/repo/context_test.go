package repo_test

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"testing"
	"time"

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
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	dir := filepath.Join(repos, "mixed")
	opts := options(dir)
	opts.Analyzer.Context = ctx
	type lintResult struct {
		rep *repo.Report
		err error
	}
	done := make(chan lintResult, 1)
	go func() {
		rep, err := repo.Lint([]string{dir}, opts)
		done <- lintResult{rep, err}
	}()
	var got lintResult
	select {
	case got = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the lint went on past its deadline")
	}
	if !errors.Is(got.err, context.DeadlineExceeded) || got.rep != nil {
		t.Errorf("Lint: %v, %v; want no report and the context's error", got.rep, got.err)
	}
	started := pids()
	if len(started) != 1 {
		t.Errorf("companions %v started, want one", started)
	}
	for _, pid := range started {
		if helmtest.Running(pid) {
			t.Errorf("companion %d still runs", pid)
		}
	}
}
