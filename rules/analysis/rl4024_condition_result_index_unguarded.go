package analysis

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

var (
	resultIndex = regexp.MustCompile(`\bresult\s*\[\s*[0-9]+\s*\]`)
	lenGuard    = regexp.MustCompile(`\blen\s*\(\s*result\s*\)`)
)

// ResultIndexUnguarded reports conditions that index result without a length check.
var ResultIndexUnguarded = &rules.Rule{
	ID: "RL4024", Name: "condition-result-index-unguarded", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: templateKinds, Tags: tags,
	Summary: "successCondition or failureCondition indexes result[0] without checking len(result) > 0.",
	Doc: rules.Doc{
		Why: `A Prometheus vector query that matches no series returns an empty result. A condition that indexes
\'result[0]\' then fails to evaluate ("reflect: slice index out of range"), the measurement is an Error,
and after \'consecutiveErrorLimit\' errors the analysis fails and the rollout aborts, exactly when
metrics are missing rather than bad. Guard the index: \'len(result) > 0 && result[0] < 0.05\', or use
\'all(result, {# < 0.05})\' / \'default(result[0], 0)\'.`,
		Bad: `
successCondition: result[0] < 0.05
`,
		Good: `
successCondition: len(result) > 0 && result[0] < 0.05
`,
	},
	Since: "v0.1.0",
	// A template's findings depend on it and on lookups (its users) only; the
	// conditions already matched are a cache, not a set of findings.
	Sharded: true,
	Run: func(p *rules.Pass) error {
		// Templates copied for every Rollout repeat a few conditions: each
		// text is matched once.
		unguarded := map[string][]int{}
		templateSpecs(p, func(t *graph.Resource, spec *v1alpha1.AnalysisTemplateSpec) {
			for i, m := range spec.Metrics {
				for _, f := range []struct{ name, cond string }{{"successCondition", m.SuccessCondition}, {"failureCondition", m.FailureCondition}} {
					if f.cond == "" {
						continue
					}
					loc, ok := unguarded[f.cond]
					if !ok {
						loc = unguardedIndex(f.cond)
						unguarded[f.cond] = loc
					}
					if loc == nil {
						continue
					}
					path := graph.Index("spec.metrics", i) + "." + f.name
					p.ReportDiag(rules.Diagnostic{Resource: t, Path: path, Pos: p.Graph.PosInScalar(t, path, loc[0], loc[1]),
						Message: fmt.Sprintf("metric %s: %s indexes %s without checking len(result) > 0", m.Name, f.name, f.cond[loc[0]:loc[1]]),
						Detail:  "When the query returns no data the evaluation errors and the analysis fails.", Related: users(p.Graph, t)})
				}
			}
		})
		return nil
	},
}

// unguardedIndex returns where cond indexes result without a length check
// or default, nil when it does not.
func unguardedIndex(cond string) []int {
	loc := resultIndex.FindStringIndex(cond)
	if loc == nil || lenGuard.MatchString(cond) || strings.Contains(cond, "default(") {
		return nil
	}
	return loc
}
