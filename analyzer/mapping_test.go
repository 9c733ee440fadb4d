package analyzer_test

import (
	"os"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// TestFollowsFromDecoding: an invalid quantity makes the typed Rollout
// unusable; the RL0003 finding says why, and what the other rules would
// find on the partial object (RL1013 "no strategy") is not reported.
func TestFollowsFromDecoding(t *testing.T) {
	data, err := os.ReadFile("testdata/invalid-quantity.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res := analyzer.Run(bundle(t, "rollout.yaml", string(data)), analyzer.Options{Rules: all.Rules(), Mode: rules.ModeCLI})
	got := active(res)
	if len(got) != 1 || !strings.HasPrefix(got[0], "RL0003@rollout.yaml:4:9 Rollout could not be decoded: quantities") {
		t.Errorf("findings: %q", got)
	}
}

// mapTo moves every position in a file named "rendered" to line*10 of
// "user.yaml", with one related location.
type mapTo struct{}

func (mapTo) MapPos(p graph.Position) (graph.Position, []graph.Location) {
	return graph.Position{File: "user.yaml", Line: p.Line * 10, Column: 1, EndLine: p.Line * 10, EndColumn: 2},
		[]graph.Location{{Pos: graph.Position{File: "values.yaml", Line: 1, Column: 1}, Message: "from values"}}
}

// TestMapperAppliedBeforeSuppression: a finding on a rendered object is
// moved into the user's file, gets the mapper's related location, and a
// suppression comment in the user's file covers it.
func TestMapperAppliedBeforeSuppression(t *testing.T) {
	g := bundle(t, "user.yaml", strings.Repeat("\n", 138)+"# rolloutlint:ignore RL1001 -- known\nx: 1\n")
	rendered := bundle(t, "rendered", rollout)
	rendered.Files[0].Rendered = true
	g = graph.New("default", rendered.Resources, append(rendered.Files, g.Files...), nil)
	g.Mapper = mapTo{}
	res := analyzer.Run(g, analyzer.Options{Rules: all.Rules(), Mode: rules.ModeCLI, Enable: []string{"RL1001"}, Disable: []string{"RL1*,RL2*,RL3*,RL4*,RL5*,RL6*"}})
	for _, d := range res.Diagnostics {
		if d.RuleID != "RL1001" {
			t.Errorf("unexpected %s at %s: %s", d.RuleID, d.Pos, d.Message)
			continue
		}
		if d.Pos.File != "user.yaml" {
			t.Errorf("%s at %s: not mapped", d.RuleID, d.Pos)
		}
		if len(d.Related) == 0 || d.Related[len(d.Related)-1].File != "values.yaml" {
			t.Errorf("%s: related %v, want the mapper's", d.RuleID, d.Related)
		}
	}
	// steps[0] (rendered line 14) maps to user.yaml:140, which the
	// directive on line 139 covers; steps[1] maps to 150 and stays.
	if got := active(res); len(got) != 1 || !strings.HasPrefix(got[0], "RL1001@user.yaml:150:1 step 1") || res.Summary.Suppressed != 1 {
		t.Errorf("active %q, %d suppressed; want steps[1] at user.yaml:150 and 1 suppressed", got, res.Summary.Suppressed)
	}
	if res.Summary.Files != 1 {
		t.Errorf("summary counts %d files, want the 1 user file", res.Summary.Files)
	}
}
