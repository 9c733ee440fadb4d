package policies_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/internal/proccpu"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/policies"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// bySource splits the registry into its Go and Rego rules.
func bySource() (goRules, regoRules []*rules.Rule) {
	for _, r := range all.Rules() {
		if r.Source == rules.SourceRego {
			regoRules = append(regoRules, r)
		} else {
			goRules = append(goRules, r)
		}
	}
	return goRules, regoRules
}

func corpusGraph(n int) *graph.Graph {
	return load.Inputs(corpus.Generate(corpus.Options{Rollouts: n, MistakeRate: 0.1, Seed: 7}), load.Options{})
}

// TestInputConvertedOncePerLint runs every rule (six Rego policies among
// them) over one graph and checks the graph was converted to policy input once.
func TestInputConvertedOncePerLint(t *testing.T) {
	_, rego := bySource()
	if len(rego) < 6 {
		t.Fatalf("%d Rego rules in the registry, want the six GitOps rules", len(rego))
	}
	g := corpusGraph(20)
	before := policies.Conversions()
	res := analyzer.Run(g, analyzer.Options{Rules: all.Rules(), Mode: rules.ModeCLI})
	if got := policies.Conversions() - before; got != 1 {
		t.Errorf("graph converted %d times in one lint, want 1", got)
	}
	for _, d := range res.Active() {
		if d.RuleID == "RL0009" {
			t.Errorf("a rule broke on the corpus: %s", d.Message)
		}
	}
	// A second lint of the same graph reuses the conversion.
	analyzer.Run(g, analyzer.Options{Rules: rego, Mode: rules.ModeCLI})
	if got := policies.Conversions() - before; got != 1 {
		t.Errorf("graph converted %d times over two lints, want 1", got)
	}
}

// BenchmarkRules1000 compares, over a 1,000-Rollout bundle (about 5,500
// objects), the Go rules with the Rego policies. "rego" includes converting a
// fresh graph to policy input, as every lint does once; "rego-eval" reuses the
// converted input, so it is the policies' evaluation alone. Run with:
//
//	go test ./policies/ -run '^$' -bench Rules1000 -benchtime 5x
func BenchmarkRules1000(b *testing.B) {
	goRules, regoRules := bySource()
	run := func(b *testing.B, rs []*rules.Rule, fresh bool) {
		g := corpusGraph(1000)
		analyzer.Run(g, analyzer.Options{Rules: rs, Mode: rules.ModeCLI})
		var cpu time.Duration
		b.ResetTimer()
		for b.Loop() {
			if fresh {
				b.StopTimer()
				g = corpusGraph(1000)
				runtime.GC() // do not bill the old graph's collection to the rules
				b.StartTimer()
			}
			c0 := proccpu.Self()
			analyzer.Run(g, analyzer.Options{Rules: rs, Mode: rules.ModeCLI, Parallelism: 1})
			cpu += proccpu.Self() - c0
		}
		// CPU time is steadier than wall time on a shared machine.
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
	b.Run("go", func(b *testing.B) { run(b, goRules, false) })
	b.Run("rego", func(b *testing.B) { run(b, regoRules, true) })
	b.Run("rego-eval", func(b *testing.B) { run(b, regoRules, false) })
}
