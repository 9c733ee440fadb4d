package rollout_test

import (
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// specRules returns the RL1xxx rules.
func specRules() []*rules.Rule {
	var out []*rules.Rule
	for _, r := range all.Rules() {
		if strings.HasPrefix(r.ID, "RL1") {
			out = append(out, r)
		}
	}
	return out
}

// TestCleanCorpusHasNoSpecFindings runs the Rollout spec rules over a
// generated bundle of correct host- and subset-level applications: none may
// fire (no false alarms on realistic, correct bundles).
func TestCleanCorpusHasNoSpecFindings(t *testing.T) {
	g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: 200, Seed: 7}), load.Options{})
	if n := len(g.OfKind("Rollout")); n != 200 {
		t.Fatalf("corpus has %d Rollouts", n)
	}
	res := analyzer.Run(g, analyzer.Options{Rules: specRules()})
	for _, d := range res.Diagnostics {
		t.Errorf("%s: %s %s", d.Pos, d.RuleID, d.Message)
	}
}

// BenchmarkSpecRules measures the RL1xxx rules alone over 1000 applications
// (about 5500 objects); loading is outside the timed loop.
func BenchmarkSpecRules(b *testing.B) {
	g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: 1000, Seed: 1, MistakeRate: 0.1}), load.Options{})
	rs := specRules()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		analyzer.Run(g, analyzer.Options{Rules: rs, Parallelism: 1})
	}
}
