package rollout

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// ExperimentTemplateInvalid reports Experiment templates (of Experiment
// objects and of Rollout experiment steps) the controller rejects.
var ExperimentTemplateInvalid = &rules.Rule{
	ID: "RL1026", Name: "experiment-template-invalid", Severity: rules.Error, Source: rules.SourceGo,
	Kinds:   []string{kinds.Rollout, kinds.Experiment, kinds.Deployment, kinds.ReplicaSet, kinds.PodTemplate},
	Tags:    []string{"rollout", "experiment"},
	Summary: "An Experiment template (of an Experiment or of a Rollout's experiment step) has no selector, an empty or non-matching one, a missing or repeated name, or minReadySeconds over the deadline.",
	Doc: rules.Doc{
		Why: `The controller checks an Experiment's templates before it starts (utils/conditions
VerifyExperimentSpec): each needs a \'selector\', not the empty one (it would select every pod of
the namespace), a non-empty \'name\' unique among the templates, and \'minReadySeconds\' no longer
than \'progressDeadlineSeconds\' (default 600). Otherwise the Experiment is \'InvalidSpec\' and, for
a Rollout step, the step fails. Each template then becomes a ReplicaSet whose selector must match
its pod labels: when it does not, the API server rejects the ReplicaSet and the template's status
is \'Error\'.

A Rollout's experiment step builds the templates from the Rollout's own pod template (canary or
stable, \'specRef\'), adds the step's \'metadata.labels\' to both the pod labels and the selector's
\'matchLabels\', and keeps the step's \'selector\' when it sets one (rollout/experiment.go). So a
step selector must match the Rollout's pod labels plus the step's labels; and a step selector
with only \'matchExpressions\' together with \'metadata.labels\' makes the controller write into a
nil \'matchLabels\' map: it panics on that step.`,
		Bad: `
- experiment:
    templates:
    - name: baseline
      specRef: stable
      selector: {matchLabels: {app: checkout, role: baseline}}   # pods get no role label
    - name: baseline                                              # repeated
      specRef: canary
`,
		Good: `
- experiment:
    templates:
    - name: baseline
      specRef: stable
      metadata: {labels: {role: baseline}}
    - name: canary
      specRef: canary
      metadata: {labels: {role: canary}}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		for _, r := range p.OfKind(kinds.Experiment) {
			ex := r.Experiment()
			if ex == nil {
				continue
			}
			deadline := int32(600)
			if ex.Spec.ProgressDeadlineSeconds != nil {
				deadline = *ex.Spec.ProgressDeadlineSeconds
			}
			seen := map[string]int{}
			for i := range ex.Spec.Templates {
				t := &ex.Spec.Templates[i]
				base := graph.Index("spec.templates", i)
				switch {
				case t.Name == "":
					p.ReportDetail(r, base, fmt.Sprintf("template %d of Experiment %s has no name", i, ex.Name), "The controller marks the Experiment InvalidSpec.")
				case seen[t.Name] > 0:
					p.ReportDetail(r, base+".name", fmt.Sprintf("template name %q of Experiment %s is repeated", t.Name, ex.Name), "The controller marks the Experiment InvalidSpec.", rules.RelatedAt(r, graph.Index("spec.templates", seen[t.Name]-1)+".name", "the first template of that name"))
				default:
					seen[t.Name] = i + 1
				}
				what := fmt.Sprintf("template %q of Experiment %s", t.Name, ex.Name)
				if t.Selector == nil {
					p.ReportDetail(r, base, fmt.Sprintf("%s has no selector", what), fmt.Sprintf("The controller marks the Experiment InvalidSpec (missing field .Spec.Templates[%d].Selector).", i))
				} else {
					checkSelector(p, r, base+".selector", what, t.Selector, t.Template.Labels)
				}
				if t.MinReadySeconds > deadline {
					p.ReportDetail(r, base+".minReadySeconds", fmt.Sprintf("minReadySeconds %d of template %q is longer than Experiment %s's progressDeadlineSeconds %d", t.MinReadySeconds, t.Name, ex.Name, deadline), "The controller marks the Experiment InvalidSpec.")
				}
			}
		}
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			seen := map[int]map[string]string{}
			eachStepTemplate(p.Graph, r, ro, func(st stepTemplate) {
				t := st.tmpl
				if seen[st.step] == nil {
					seen[st.step] = map[string]string{}
				}
				if first, dup := seen[st.step][t.Name]; dup && t.Name != "" {
					p.ReportDetail(r, st.path+".name", fmt.Sprintf("template name %q is repeated in step %d's experiment of Rollout %s", t.Name, st.step, ro.Name), "The controller marks the Experiment InvalidSpec and the step fails.", rules.RelatedAt(r, first, "the first template of that name"))
				} else {
					seen[st.step][t.Name] = st.path + ".name"
				}
				if t.SpecRef != v1alpha1.CanarySpecRef && t.SpecRef != v1alpha1.StableSpecRef {
					p.ReportDetail(r, st.path+".specRef", fmt.Sprintf("specRef %q of template %q in step %d of Rollout %s is neither canary nor stable", t.SpecRef, t.Name, st.step, ro.Name), "The controller fails to build the Experiment (\"Invalid template step SpecRef\").")
				}
				if t.Selector == nil {
					return // the ReplicaSet's own selector is used
				}
				if len(t.Selector.MatchLabels) == 0 && len(t.Metadata.Labels) > 0 {
					p.ReportDetail(r, st.path+".selector", fmt.Sprintf("selector of template %q in step %d of Rollout %s has no matchLabels but the step sets labels", t.Name, st.step, ro.Name), "The controller adds them to the selector's nil matchLabels map and panics.")
					return
				}
				if !st.ok {
					return
				}
				// The controller adds metadata.labels to matchLabels too.
				sel := t.Selector.DeepCopy()
				for k, v := range t.Metadata.Labels {
					sel.MatchLabels[k] = v
				}
				checkSelector(p, r, st.path+".selector", fmt.Sprintf("template %q in step %d of Rollout %s", t.Name, st.step, ro.Name), sel, st.labels)
			})
		})
		return nil
	},
}

// checkSelector reports an empty or non-matching template selector at path.
func checkSelector(p *rules.Pass, r *graph.Resource, path, what string, sel *metav1.LabelSelector, podLabels map[string]string) {
	if len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 {
		p.ReportDetail(r, path, fmt.Sprintf("%s has an empty selector, which would select every pod of the namespace", what), "The controller marks the Experiment InvalidSpec.")
		return
	}
	match, ok := selectorMatches(sel, podLabels)
	switch {
	case !ok:
		p.ReportDetail(r, path, fmt.Sprintf("the selector of %s is not a valid label selector", what), "Its ReplicaSet is rejected.")
	case !match:
		p.ReportDetail(r, path, fmt.Sprintf("the selector of %s does not match its pod labels %s", what, renderLabels(podLabels)), "The API server rejects its ReplicaSet (selector does not match template labels) and the template's status is Error.")
	}
}
