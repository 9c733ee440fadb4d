package analysis

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/analysisrun"
)

// ArgConflict reports an arg given two different values in one analysis.
var ArgConflict = &rules.Rule{
	ID: "RL4004", Name: "analysis-arg-conflict", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: templateKinds, Tags: tags,
	Summary: "An analysis arg is given twice with different values (two merged templates, or the Rollout's args list).",
	Doc: rules.Doc{
		Why: `When one analysis runs several templates, Argo Rollouts merges their args; the same arg with two
different default values fails with "Argument \'x\' specified multiple times with different values" and the
Rollout is marked \'InvalidSpec\'. The same name twice in a Rollout's \'args\' list is not an error for
Argo, but each one overwrites the previous and only the last value is used, which is rarely what the
first line meant.`,
		Bad: `
- analysis:
          templates: [{templateName: error-rate}, {templateName: latency}]   # both default window, 1m and 5m
          args:
          - {name: service, value: app-canary}
          - {name: service, value: app-stable}
`,
		Good: `
- analysis:
          templates: [{templateName: error-rate}, {templateName: latency}]
          args:
          - {name: service, value: app-canary}
          - {name: window, value: 5m}
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
			templateConflicts(c, run)
			rolloutConflicts(c, run)
		}
		c.flush()
		return nil
	},
}

// templateConflicts compares the default values of args the run's templates share.
func templateConflicts(c *collector, run *analysisrun.Run) {
	type first struct {
		t     *graph.Resource
		path  string
		value string
	}
	seen := map[string]first{}
	for _, t := range run.DistinctTemplates() {
		for i, a := range t.AnalysisTemplateSpec().Args {
			if a.Value == nil {
				continue
			}
			path := graph.Index("spec.args", i) + ".value"
			f, ok := seen[a.Name]
			if !ok {
				seen[a.Name] = first{t, path, *a.Value}
				continue
			}
			if f.value != *a.Value {
				c.add(rules.Diagnostic{Resource: t, Path: path,
					Message: fmt.Sprintf("arg %s defaults to %q here and to %q in %s", a.Name, *a.Value, f.value, templateName(f.t)),
					Detail: fmt.Sprintf("%s runs both templates; Argo Rollouts fails with \"Argument `%s` specified multiple times with different values\".",
						run.Describe(), a.Name),
					Related: []rules.Related{rules.RelatedAt(f.t, f.path, "the other default"), trigger(run, "merges both templates")}})
			}
		}
	}
}

// rolloutConflicts reports a name repeated in the Rollout's args list.
func rolloutConflicts(c *collector, run *analysisrun.Run) {
	if len(run.Templates) == 0 {
		return
	}
	firstAt := map[string]int{}
	for i, a := range run.Templates[0].Args {
		j, ok := firstAt[a.Name]
		if !ok {
			firstAt[a.Name] = i
			continue
		}
		prev := run.Templates[0].Args[j]
		if prev.Value == a.Value && (prev.ValueFrom == nil) == (a.ValueFrom == nil) {
			continue
		}
		c.add(rules.Diagnostic{Resource: run.Refs.Rollout, Path: graph.Index(run.ArgsPath, i) + ".name",
			Message: fmt.Sprintf("arg %s is passed twice with different values (%q, then %q)", a.Name, describeValue(prev.Value, prev.ValueFrom != nil), describeValue(a.Value, a.ValueFrom != nil)),
			Detail:  "Argo Rollouts uses only the last.",
			Related: []rules.Related{rules.RelatedAt(run.Refs.Rollout, graph.Index(run.ArgsPath, j), "the earlier value, which is overwritten")}})
	}
}

func describeValue(v string, from bool) string {
	if from {
		return "valueFrom"
	}
	return v
}
