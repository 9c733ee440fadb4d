package analysis

import (
	"fmt"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

// MetricProvider reports metrics with no provider or more than one.
var MetricProvider = &rules.Rule{
	ID: "RL4021", Name: "metric-provider-count", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: templateKinds, Tags: tags,
	Summary: "A metric has no provider, or more than one (prometheus, web, job, datadog, plugin, ...).",
	Doc: rules.Doc{
		Why: `Each metric measures through exactly one provider. With none Argo Rollouts fails the run with "no
provider specified"; with two ("multiple providers specified") it is not clear which one a reader should
trust, and Argo rejects it too. Every entry under \'plugin\' counts as one provider.`,
		Bad: `
metrics:
  - name: error-rate
    provider:
      prometheus: {address: http://prometheus:9090, query: "..."}
      web: {url: http://checker/health}
`,
		Good: `
metrics:
  - name: error-rate
    provider:
      prometheus: {address: http://prometheus:9090, query: "..."}
`,
	},
	Since: "v0.1.0",
	// A template's findings depend on it and on lookups (its users) only.
	Sharded: true,
	Run: func(p *rules.Pass) error {
		templateSpecs(p, func(t *graph.Resource, spec *v1alpha1.AnalysisTemplateSpec) {
			for i := range spec.Metrics {
				m := &spec.Metrics[i]
				if oneProvider(&m.Provider) {
					continue // the common case: no names to list
				}
				mp := graph.Index("spec.metrics", i)
				names := providers(&m.Provider)
				switch {
				case len(names) == 0:
					p.ReportDetail(t, mp+".provider", fmt.Sprintf("metric %s has no provider", m.Name), "Argo Rollouts fails the run with \"no provider specified\".", users(p.Graph, t)...)
				case len(names) > 1:
					p.ReportDetail(t, mp+".provider", fmt.Sprintf("metric %s has %d providers (%s)", m.Name, len(names), strings.Join(names, ", ")),
						"Argo Rollouts fails the run with \"multiple providers specified\".", users(p.Graph, t)...)
				}
			}
		})
		return nil
	},
}
