package rollout

import (
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// ExperimentTemplateInvalid reports TODO: what the rule finds.
var ExperimentTemplateInvalid = &rules.Rule{
	ID: "RL1026", Name: "experiment-template-invalid", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout"},
	Summary: "TODO: one line saying what the rule finds.",
	Doc: rules.Doc{
		Why: `TODO: what goes wrong at runtime when the rule fires (what Argo Rollouts or
Istio does with this input), and how to fix it. Markdown; write a backtick as \'.`,
		Bad: `
TODO: a YAML example that makes the rule fire
`,
		Good: `
TODO: the same example fixed
`,
	},
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		for _, r := range p.Graph.OfKind(kinds.Rollout) {
			ro := r.Rollout()
			if ro == nil {
				continue
			}
			// TODO: replace this example check with the rule's own.
			if n := ro.Spec.Replicas; n != nil && *n == 0 {
				p.Reportf(r, "spec.replicas", "Rollout %s has spec.replicas 0 (example check of RL1026: replace it)", ro.Name)
			}
		}
		return nil
	},
}
