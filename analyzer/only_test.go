package analyzer

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

// Only keeps findings in the given files and findings elsewhere whose related
// locations point into them, and drops the rest.
func TestOnlyKeepsFindingsRelatedToGivenFiles(t *testing.T) {
	at := func(file string) graph.Position {
		return graph.Position{File: file, Line: 1, Column: 1, EndLine: 1, EndColumn: 2}
	}
	res := &Result{Diagnostics: []rules.Diagnostic{
		{RuleID: "RL2001", Severity: rules.Error, Pos: at("rollout.yaml"), Related: []rules.Related{{File: "vs.yaml", Line: 3, Column: 1}}},
		{RuleID: "RL1001", Severity: rules.Error, Pos: at("rollout.yaml")},
		{RuleID: "RL3001", Severity: rules.Warning, Pos: at("vs.yaml")},
	}}
	got := res.Only(map[string]bool{"vs.yaml": true}, func(s string) string { return s })
	if len(got.Diagnostics) != 2 || got.Diagnostics[0].RuleID != "RL2001" || got.Diagnostics[1].RuleID != "RL3001" {
		t.Fatalf("Only kept %+v", got.Diagnostics)
	}
	if got.Summary.Errors != 1 || got.Summary.Warnings != 1 {
		t.Errorf("summary %+v", got.Summary)
	}
}
