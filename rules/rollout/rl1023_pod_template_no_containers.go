package rollout

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// PodTemplateNoContainers reports Rollout and Experiment pod templates
// without containers.
var PodTemplateNoContainers = &rules.Rule{
	ID: "RL1023", Name: "pod-template-no-containers", Severity: rules.Error, Source: rules.SourceGo,
	Kinds:   []string{kinds.Rollout, kinds.Experiment, kinds.Deployment, kinds.ReplicaSet, kinds.PodTemplate},
	Tags:    []string{"rollout"},
	Summary: "A Rollout's pod template (its own, or the one its workloadRef resolves to) or an Experiment template has no containers.",
	Doc: rules.Doc{
		Why: `Argo Rollouts validates a Rollout's pod template the way Kubernetes validates a ReplicaSet's
(pkg/apis/rollouts/validation ValidateRolloutSpec → ValidatePodTemplateSpecForReplicaSet), after
resolving a \'workloadRef\' to the referenced Deployment's, ReplicaSet's or PodTemplate's template
(rollout/templateref.go). A template without \'spec.containers\' fails with
"spec.template.spec.containers: Required value": the Rollout is \'InvalidSpec\' and nothing is
deployed. A Rollout written by hand around an existing Deployment, with the template left
half-filled (labels only), is the usual cause; the CRD schema accepts it.

An Experiment's templates become ReplicaSets (experiments/replicaset.go); without containers the
API server rejects the ReplicaSet and the template's status is \'Error\'.`,
		Bad: `
spec:
  selector: {matchLabels: {app: checkout}}
  template:
    metadata: {labels: {app: checkout}}
    spec: {}
`,
		Good: `
  template:
    metadata: {labels: {app: checkout}}
    spec:
      containers:
      - name: checkout
        image: registry.example.com/checkout:1.4.0
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			if w := resolveWorkloadRef(p.Graph, r, ro); w != nil {
				if w.target == nil || w.templateMap() == nil {
					return // RL1024, or a template this check cannot see
				}
				spec, _ := w.templateMap()["spec"].(map[string]any)
				if cs, _ := spec["containers"].([]any); len(cs) > 0 {
					return
				}
				p.ReportDetail(r, "spec.workloadRef", fmt.Sprintf("the pod template of %s %s, which Rollout %s resolves, has no containers",
					w.target.Kind, w.target.Name, ro.Name), "Argo Rollouts validates it as a ReplicaSet's (containers: Required value) and marks the Rollout InvalidSpec.", rules.RelatedAt(w.target, w.templatePath, fmt.Sprintf("pod template of %s %s", w.target.Kind, w.target.Name)))
				return
			}
			if len(ro.Spec.Template.Spec.Containers) > 0 {
				return
			}
			p.ReportDetail(r, "spec.template.spec.containers", fmt.Sprintf("the pod template of Rollout %s has no containers", ro.Name),
				"Argo Rollouts validates it as a ReplicaSet's (spec.template.spec.containers: Required value) and marks the Rollout InvalidSpec.")
		})
		for _, r := range p.OfKind(kinds.Experiment) {
			ex := r.Experiment()
			if ex == nil {
				continue
			}
			for i, t := range ex.Spec.Templates {
				if len(t.Template.Spec.Containers) > 0 {
					continue
				}
				p.ReportDetail(r, graph.Index("spec.templates", i)+".template.spec.containers", fmt.Sprintf(
					"template %q of Experiment %s has no containers", t.Name, ex.Name), "The API server rejects its ReplicaSet and the template's status is Error.")
			}
		}
		return nil
	},
}
