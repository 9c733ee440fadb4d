package analysis

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/analysisrun"
)

// ArgUnresolved reports template args that end up without a value.
var ArgUnresolved = &rules.Rule{
	ID: "RL4002", Name: "analysis-arg-unresolved", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: templateKinds, Tags: tags,
	Summary: "An AnalysisTemplate arg has no value and the Rollout that runs the template does not supply it.",
	Doc: rules.Doc{
		Why: `Each arg an AnalysisTemplate declares needs a value: a default (\'value\' or \'valueFrom\' in the
template) or one the Rollout passes in the analysis' \'args\'. When neither gives one, Argo Rollouts marks
the Rollout \'InvalidSpec\' with "args.<name> was not resolved" and the analysis never runs. Args are
merged per analysis: the Rollout's value wins over the template default, a \'valueFrom\'
(\'podTemplateHashValue\', \'fieldRef\') counts as supplied, and a Rollout arg no template declares is
ignored (so a misspelled name leaves the real one unresolved).

The finding is on the template's arg and names every Rollout analysis that leaves it empty.`,
		Bad: `
kind: AnalysisTemplate
spec:
  args:
  - name: canary-svc
---
kind: Rollout
      steps:
      - analysis:
          templates: [{templateName: canary-health}]
          args: [{name: canary-service, value: app-canary}]   # misspelled
`,
		Good: `
steps:
      - analysis:
          templates: [{templateName: canary-health}]
          args: [{name: canary-svc, value: app-canary}]
`,
	},
	Since: "v0.1.0",
	// A run's or a query's findings depend on it and on lookups; a spot
	// several of them hit (a shared template) is merged across shards as
	// the collector merges it.
	Sharded:     true,
	MergeShards: mergeSameSpot,
	Run: func(p *rules.Pass) error {
		c := newCollector(p)
		for _, run := range scannedRuns(p) {
			for i := range run.Args {
				a, name := &run.Args[i], run.Args[i].Name
				if a.Resolved {
					continue
				}
				msg := fmt.Sprintf("args.%s has no value and Rollout %s does not supply it", name, run.Refs.Rollout.Name)
				if near := similarArg(run, name); near != "" {
					msg += fmt.Sprintf(" (it passes %q: a misspelling?)", near)
				}
				rel := []rules.Related{trigger(run, "passes no value for args."+name)}
				rel = append(rel, unresolvedUses(p.Graph, run, name)...)
				c.add(rules.Diagnostic{Resource: a.Template, Path: a.DeclPath() + ".name", Message: msg, Related: rel,
					Detail: fmt.Sprintf("Argo Rollouts fails with \"args.%s was not resolved\".", name)})
			}
		}
		// An AnalysisRun's args are final: one without value or valueFrom
		// stays unresolved (utils/analysis ResolveArgs).
		for _, r := range p.OfKind(kinds.AnalysisRun) {
			ar := r.AnalysisRun()
			if ar == nil {
				continue
			}
			for i, a := range ar.Spec.Args {
				if a.Value == nil && a.ValueFrom == nil {
					c.add(rules.Diagnostic{Resource: r, Path: graph.Index("spec.args", i) + ".name",
						Message: fmt.Sprintf("args.%s of AnalysisRun %s has no value: the run fails with \"args.%s was not resolved\"", a.Name, ar.Name, a.Name)})
				}
			}
		}
		c.flush()
		return nil
	},
}

// unresolvedUses points at the first placeholder of the arg in each query of
// the run: where the query would be sent with the tag left in.
func unresolvedUses(g *graph.Graph, run *analysisrun.Run, name string) []rules.Related {
	var out []rules.Related
	for _, q := range run.Queries {
		for _, ph := range q.Sub.Unresolved {
			if ph.Arg == name {
				pos := g.PosInScalar(q.Template, q.Path(), ph.Start, ph.End)
				out = append(out, rules.Related{File: pos.File, Line: pos.Line, Column: pos.Column,
					Message: fmt.Sprintf("{{%s}} stays unresolved in metric %s", ph.Tag, q.Metric.Name)})
				break
			}
		}
	}
	return out
}

// similarArg returns a Rollout arg of the run no template declares whose name
// is close to name, to point at a likely typo.
func similarArg(run *analysisrun.Run, name string) string {
	if len(run.Templates) == 0 {
		return ""
	}
	for _, ra := range run.Templates[0].Args {
		if run.Arg(ra.Name) == nil && similar(ra.Name, name) {
			return ra.Name
		}
	}
	return ""
}
