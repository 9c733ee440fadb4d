package analysis

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

// MetricIndefinite reports metrics that never finish in analyses that must.
var MetricIndefinite = &rules.Rule{
	ID: "RL4023", Name: "metric-runs-indefinitely", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: templateKinds, Tags: tags,
	Summary: "A metric with an interval and no count runs forever, but a step or pre/post-promotion analysis must finish.",
	Doc: rules.Doc{
		Why: `A metric with \'interval\' and no \'count\' (or \'count: 0\') measures until the run is stopped. That is
what a background analysis (\'strategy.canary.analysis\') wants, but a step analysis and blue-green
pre- and post-promotion analyses wait for the run to finish: Argo Rollouts marks such a Rollout
\'InvalidSpec\' ("has metric ... which runs indefinitely"). Give the metric a count, or run the template
as background analysis.`,
		Bad: `
steps:
      - analysis:
          templates: [{templateName: error-rate}]   # metric: interval 1m, no count
`,
		Good: `
metrics:
  - name: error-rate
    interval: 1m
    count: 5
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
			switch run.Use {
			case graph.UseStep, graph.UsePrePromotion, graph.UsePostPromotion:
			default:
				continue
			}
			for _, t := range run.DistinctTemplates() {
				for i := range t.AnalysisTemplateSpec().Metrics {
					m := &t.AnalysisTemplateSpec().Metrics[i]
					if _, known := intValue(m.Count); m.Count != nil && !known {
						continue // resolved only at run time
					}
					if m.EffectiveCount() != nil {
						continue
					}
					c.add(rules.Diagnostic{Resource: t, Path: graph.Index("spec.metrics", i) + ".interval",
						Message: fmt.Sprintf("metric %s never finishes (interval %s, no count)", m.Name, m.Interval),
						Detail: fmt.Sprintf("%s waits for it to finish; Argo Rollouts marks Rollout %s InvalidSpec. Give the metric a count.",
							run.Describe(), run.Refs.Rollout.Name),
						Related: []rules.Related{trigger(run, "waits for this template")}})
				}
			}
		}
		c.flush()
		return nil
	},
}
