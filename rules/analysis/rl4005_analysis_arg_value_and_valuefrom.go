package analysis

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// ArgValueAndValueFrom reports a template arg with both value and valueFrom.
var ArgValueAndValueFrom = &rules.Rule{
	ID: "RL4005", Name: "analysis-arg-value-and-valuefrom", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: templateKinds, Tags: tags,
	Summary: "An AnalysisTemplate arg sets both value and valueFrom.",
	Doc: rules.Doc{
		Why: `An arg takes its value from \'value\' or from \'valueFrom\' (a secret or a field), not both. Argo
Rollouts rejects a Rollout whose step or pre/post-promotion analysis uses such a template ("arg 'x' has
both Value and ValueFrom fields"), and which of the two a background run would use is not what a
reader of the template can tell.`,
		Bad: `
spec:
  args:
  - name: api-token
    value: dummy
    valueFrom:
      secretKeyRef: {name: datadog, key: token}
`,
		Good: `
spec:
  args:
  - name: api-token
    valueFrom:
      secretKeyRef: {name: datadog, key: token}
`,
	},
	Since: "v0.1.0",
	// A template's findings depend on it and on lookups (its users) only.
	Sharded: true,
	Run: func(p *rules.Pass) error {
		templateSpecs(p, func(t *graph.Resource, spec *v1alpha1.AnalysisTemplateSpec) {
			for i, a := range spec.Args {
				if a.Value != nil && a.ValueFrom != nil {
					path := graph.Index("spec.args", i)
					effect := "Argo Rollouts rejects the template in step and pre/post-promotion analysis"
					if t.Kind == kinds.AnalysisRun {
						effect = "the analysis controller uses valueFrom and ignores value"
					}
					p.ReportDiag(rules.Diagnostic{Resource: t, Path: path + ".valueFrom",
						Message: fmt.Sprintf("arg %s of %s has both value %q and valueFrom", a.Name, templateName(t), *a.Value),
						Detail:  "Keep one: " + effect + ".",
						Related: append([]rules.Related{rules.RelatedAt(t, path+".value", "the value")}, users(p.Graph, t)...)})
				}
			}
		})
		return nil
	},
}
