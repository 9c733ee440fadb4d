package analysis

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/analysisrun"
)

// MetricDuplicate reports metric names used twice in one AnalysisRun.
var MetricDuplicate = &rules.Rule{
	ID: "RL4022", Name: "metric-name-duplicate", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: templateKinds, Tags: tags,
	Summary: "Two metrics of one template, or of two templates one analysis runs together, have the same name.",
	Doc: rules.Doc{
		Why: `Metric names key the measurements of an AnalysisRun. Two metrics with the same name in one template
fail the run ("duplicate name"); two templates merged into one analysis whose metrics share a name make
Argo Rollouts mark the Rollout \'InvalidSpec\' ("two metrics have the same name"). Give every metric a
name unique across the templates an analysis runs together.`,
		Bad: `
- analysis:
          templates:
          - templateName: error-rate      # has a metric named "errors"
          - templateName: latency         # also has a metric named "errors"
`,
		Good: `
- analysis:
          templates:
          - templateName: error-rate      # metric "error-rate"
          - templateName: latency         # metric "latency-p95"
`,
	},
	Since: "v0.1.0",
	// A run's or a query's findings depend on it and on lookups; a spot
	// several of them hit (a shared template) is merged across shards as
	// the collector merges it.
	Sharded:     true,
	MergeShards: mergeSameSpot,
	Run: func(p *rules.Pass) error {
		templateSpecs(p, func(t *graph.Resource, spec *v1alpha1.AnalysisTemplateSpec) {
			if len(spec.Metrics) < 2 {
				return
			}
			first := map[string]int{}
			for i, m := range spec.Metrics {
				if j, ok := first[m.Name]; ok {
					p.ReportDetail(t, graph.Index("spec.metrics", i)+".name",
						fmt.Sprintf("metric name %q is used twice in %s", m.Name, templateName(t)), "Argo Rollouts fails the run with \"duplicate name\".",
						rules.RelatedAt(t, graph.Index("spec.metrics", j)+".name", "the first metric of that name"))
					continue
				}
				first[m.Name] = i
			}
		})
		c := newCollector(p)
		for _, run := range scannedRuns(p) {
			acrossTemplates(c, run)
		}
		c.flush()
		return nil
	},
}

func acrossTemplates(c *collector, run *analysisrun.Run) {
	ts := run.DistinctTemplates()
	if len(ts) < 2 {
		return // a name used twice in one template is the per-template check's
	}
	type owner struct {
		t      *graph.Resource
		metric int
	}
	seen := map[string]owner{}
	for _, t := range ts {
		local := map[string]bool{}
		for i, m := range t.AnalysisTemplateSpec().Metrics {
			if o, ok := seen[m.Name]; ok && o.t != t {
				c.add(rules.Diagnostic{Resource: t, Path: metricNamePath(i),
					Message: fmt.Sprintf("metric name %q is also used by %s", m.Name, templateName(o.t)),
					Detail: fmt.Sprintf("%s runs it together with %s; Argo Rollouts fails with \"two metrics have the same name\".",
						run.Describe(), templateName(t)),
					Related: []rules.Related{rules.RelatedAt(o.t, metricNamePath(o.metric), "the other metric"), trigger(run, "runs both templates")}})
			}
			if !local[m.Name] {
				local[m.Name] = true
				if _, ok := seen[m.Name]; !ok {
					seen[m.Name] = owner{t, i}
				}
			}
		}
	}
}

// metricNamePath is spec.metrics[i].name.
func metricNamePath(i int) string { return graph.Index("spec.metrics", i) + ".name" }
