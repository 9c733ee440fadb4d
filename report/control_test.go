package report_test

import (
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/report"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// TestControlCharactersAreEscaped reports a finding on a file whose name
// holds a newline and an ANSI escape: text and GitHub output write them as
// \n and \x1b, so the name can neither start a line that reads as another
// finding nor recolour a terminal or a CI log. Both were written raw.
func TestControlCharactersAreEscaped(t *testing.T) {
	name := "a\nb\x1b[31mred.yaml"
	res := &analyzer.Result{Diagnostics: []rules.Diagnostic{{RuleID: "RL1001", Name: "set-weight-range", Severity: rules.Error,
		Message: "step 0: bad\x1b[2J", Pos: graph.Position{File: name, Line: 3, Column: 1},
		Related: []rules.Related{{File: name, Line: 1, Column: 1, Message: "here\x07"}}}}}
	res.Summary.Errors = 1
	for _, format := range []string{"text", "github"} {
		out := string(writeFormat(t, format, res, report.Options{AllRules: all.Rules()}))
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%s output holds a raw control character:\n%q", format, out)
		}
		if !strings.Contains(out, `a\nb\x1b[31mred.yaml`) {
			t.Errorf("%s output does not name the file with its escapes:\n%q", format, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "b") {
				t.Errorf("%s: the file name started a line: %q", format, line)
			}
		}
	}
}
