package rollout

import (
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/rolloutlint/rolloutlint/model/graph"
)

// stepTemplate is one template of a Rollout's experiment step, as the
// controller turns it into an Experiment template (rollout/experiment.go
// GetExperimentFromTemplate).
type stepTemplate struct {
	tmpl *v1alpha1.RolloutExperimentTemplate
	step int
	path string // field path of the template in the Rollout
	// labels are the pod labels: the Rollout's pod template's (or the
	// workloadRef's), plus the step's metadata.labels; ok is false when they
	// cannot be known.
	labels map[string]string
	ok     bool
}

// eachStepTemplate calls fn for every template of every experiment step.
func eachStepTemplate(g *graph.Graph, r *graph.Resource, ro *v1alpha1.Rollout, fn func(t stepTemplate)) {
	c := ro.Spec.Strategy.Canary
	if c == nil {
		return
	}
	base, ok := g.PodLabels(r)
	for i, s := range c.Steps {
		if s.Experiment == nil {
			continue
		}
		for j := range s.Experiment.Templates {
			t := &s.Experiment.Templates[j]
			labels := map[string]string{}
			for k, v := range base {
				labels[k] = v
			}
			for k, v := range t.Metadata.Labels {
				labels[k] = v
			}
			fn(stepTemplate{tmpl: t, step: i, path: graph.Index(graph.Index(stepsPath, i)+".experiment.templates", j), labels: labels, ok: ok})
		}
	}
}

// selectorMatches reports whether a label selector selects labels; ok is
// false for an invalid selector.
func selectorMatches(sel *metav1.LabelSelector, lbls map[string]string) (match, ok bool) {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, false
	}
	return s.Matches(labels.Set(lbls)), true
}
