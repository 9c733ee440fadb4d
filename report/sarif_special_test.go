//go:build unix

package report_test

import (
	"bytes"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/report"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// TestSARIFDoesNotReadSpecialFiles writes a SARIF report whose finding is
// on a named pipe (RL0011, as a directory lint reports one): the writer
// hashes the lines of regular files only. It used to open the pipe to hash
// its lines and wait for a writer forever.
func TestSARIFDoesNotReadSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.yaml"), 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	res := &analyzer.Result{Diagnostics: []rules.Diagnostic{{RuleID: "RL0011", Name: "not-linted", Severity: rules.Warning,
		Message: "not linted: named pipe", Pos: graph.Position{File: "pipe.yaml", Line: 1, Column: 1, EndLine: 1, EndColumn: 1}}}}
	w, err := report.Lookup("sarif")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		var buf bytes.Buffer
		done <- w(&buf, res, report.Options{Dir: dir, SARIFRoot: dir, AllRules: all.Rules()})
	}()
	select { // a hang detector: the write takes milliseconds
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the SARIF writer is still reading the named pipe after a minute")
	}
}
