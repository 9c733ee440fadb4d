package rollout

import (
	"fmt"
	"sort"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// Selector reports a Rollout whose selector is missing, empty, invalid or does
// not select its own pod template.
var Selector = &rules.Rule{
	ID: "RL1005", Name: "selector-template-labels", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.Deployment, kinds.ReplicaSet, kinds.PodTemplate}, Tags: []string{"rollout"},
	Summary: "spec.selector is missing, empty or invalid, or does not match spec.template.metadata.labels.",
	Doc: rules.Doc{
		Why: `A Rollout without \'workloadRef\' owns its ReplicaSets through \'spec.selector\'. Argo Rollouts
rejects a missing selector ("Rollout has missing field '.spec.selector'"), an empty one
(it would select every pod of the namespace) and one that does not match the pod template's
labels (its new pods would not be its own). The Rollout is \'InvalidSpec\' and nothing is
deployed.

With \'workloadRef\' the selector may be left out: the controller then takes the referenced
Deployment's or ReplicaSet's (rollout/templateref.go Resolve). When the Rollout sets its own, the
controller validates it against the pod template it resolves from the referenced object
(ValidatePodTemplateSpecForReplicaSet on the resolved spec), so a Rollout selector that the
Deployment's template labels do not satisfy is reported too, when the bundle holds the Deployment.`,
		Bad: `
spec:
  selector:
    matchLabels: {app: checkout}
  template:
    metadata:
      labels: {app: check-out}
`,
		Good: `
spec:
  selector:
    matchLabels: {app: checkout}
  template:
    metadata:
      labels: {app: checkout}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			if ro.Spec.WorkloadRef != nil {
				checkWorkloadSelector(p, r, ro)
				return
			}
			sel := ro.Spec.Selector
			switch {
			case sel == nil:
				p.ReportDetail(r, "spec.selector", "Rollout "+ro.Name+" has no spec.selector",
					"Argo Rollouts marks it InvalidSpec. Select the pod template's labels, e.g. matchLabels: {app: "+ro.Name+"}.")
				return
			case len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0:
				p.ReportDetail(r, "spec.selector", "spec.selector of Rollout "+ro.Name+" is empty",
					"It would select every pod of the namespace; Argo Rollouts rejects it.")
				return
			}
			if len(sel.MatchExpressions) == 0 && plainMatch(sel.MatchLabels, ro.Spec.Template.Labels) {
				return // valid and matching: no selector to build
			}
			s, err := metav1.LabelSelectorAsSelector(sel)
			if err != nil {
				p.Report(r, "spec.selector", fmt.Sprintf("spec.selector of Rollout %s is invalid: %v", ro.Name, err))
				return
			}
			tl := ro.Spec.Template.Labels
			if s.Matches(labels.Set(tl)) {
				return
			}
			at := "spec.template.metadata.labels"
			if k := firstMismatch(sel, tl); k != "" {
				if _, ok := tl[k]; ok {
					at = graph.Key(at, k)
				}
			}
			p.ReportDetail(r, at, fmt.Sprintf("pod template labels %s do not match selector %s of Rollout %s", renderLabels(tl), s.String(), ro.Name),
				"Its ReplicaSets would not own their pods; Argo Rollouts marks the Rollout InvalidSpec.",
				rules.RelatedAt(r, "spec.selector", "the selector"))
		})
		return nil
	},
}

// plainMatch reports whether every matchLabels entry is one the template
// labels have, and key and value are plain label text (plainLabel), which
// LabelSelectorAsSelector accepts: the selector then matches the template
// without being built. Anything else is left to LabelSelectorAsSelector.
func plainMatch(ml, tl map[string]string) bool {
	for k, v := range ml {
		if t, ok := tl[k]; !ok || t != v || !plainLabel(k) || !plainLabel(v) {
			return false
		}
	}
	return true
}

// plainLabel reports whether s is 1 to 63 letters, digits, '-', '_' or '.',
// starting and ending with a letter or digit: a valid label name without
// prefix and a valid label value.
func plainLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// firstMismatch returns the first (sorted) matchLabels key whose value the
// template lacks or differs in, to point at it.
func firstMismatch(sel *metav1.LabelSelector, tl map[string]string) string {
	keys := make([]string, 0, len(sel.MatchLabels))
	for k := range sel.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if tl[k] != sel.MatchLabels[k] {
			return k
		}
	}
	return ""
}

// renderLabels renders a label map deterministically: {a: 1, b: 2}.
func renderLabels(m map[string]string) string {
	if len(m) == 0 {
		return "{}"
	}
	return "{" + strings.NewReplacer("=", ": ", ",", ", ").Replace(labels.Set(m).String()) + "}"
}

// checkWorkloadSelector checks a workloadRef Rollout's own selector against
// the pod template it resolves: the controller validates the two together
// (the referenced workload's selector is used only when the Rollout sets
// none).
func checkWorkloadSelector(p *rules.Pass, r *graph.Resource, ro *v1alpha1.Rollout) {
	sel := ro.Spec.Selector
	if sel == nil {
		return
	}
	w := resolveWorkloadRef(p.Graph, r, ro)
	if w == nil || w.target == nil {
		return
	}
	tl, ok := p.Graph.PodLabels(r)
	if !ok {
		return
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || s.Matches(labels.Set(tl)) {
		return // an invalid selector is reported for Rollouts without workloadRef only
	}
	p.ReportDetail(r, "spec.selector", fmt.Sprintf("selector %s of Rollout %s does not match the pod labels of its workloadRef %s %s",
		s.String(), ro.Name, w.target.Kind, w.target.Name),
		fmt.Sprintf("Its pod template has the labels %s; the controller validates the Rollout's selector against the resolved template and marks the Rollout InvalidSpec.", renderLabels(tl)),
		rules.RelatedAt(w.target, w.templatePath+".metadata.labels", fmt.Sprintf("pod template labels of %s %s", w.target.Kind, w.target.Name)))
}
