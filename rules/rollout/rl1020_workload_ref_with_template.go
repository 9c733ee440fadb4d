package rollout

import (
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// WorkloadRefAndTemplate reports a Rollout with both workloadRef and a pod
// template.
var WorkloadRefAndTemplate = &rules.Rule{
	ID: "RL1020", Name: "workload-ref-with-template", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout"},
	Summary: "spec.workloadRef and spec.template are both set.",
	Doc: rules.Doc{
		Why: `A Rollout either carries its own pod template or borrows one from a Deployment through
\'workloadRef\'. With both, Argo Rollouts cannot tell which one to run and rejects the
Rollout ("template must be empty for workload reference rollout"); it stays \'InvalidSpec\'.
Usually the template was left over from converting a Deployment.`,
		Bad: `
spec:
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: app}
  template:
    metadata: {labels: {app: app}}
`,
		Good: `
spec:
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: app}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			if ro.Spec.WorkloadRef == nil {
				return
			}
			if t, _ := r.ValueAt("spec.template"); !nonEmpty(t) {
				return // absent, {} or null: nothing to conflict with
			}
			p.ReportDetail(r, "spec.template", "Rollout "+ro.Name+" sets both workloadRef (Deployment "+ro.Spec.WorkloadRef.Name+") and a pod template",
				"Remove spec.template: the referenced workload provides it.",
				rules.RelatedAt(r, "spec.workloadRef", "workloadRef"))
		})
		return nil
	},
}

// nonEmpty reports whether a decoded value is a non-empty mapping or list.
func nonEmpty(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return len(t) > 0
	case []any:
		return len(t) > 0
	}
	return false
}
