package graph

import (
	"slices"

	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// labelKey is one label pair in one namespace.
type labelKey struct {
	Namespace, Key, Value string
}

// podLabelIndex maps a label pair to the Rollouts whose pod template carries
// it, so that "which Rollouts does this selector select" costs the size of the
// smallest posting list, not a scan of every Rollout.
type podLabelIndex struct {
	byPair map[labelKey][]*Resource
}

func buildPodLabelIndex(g *Graph) *podLabelIndex {
	rollouts := g.OfKind(kinds.Rollout)
	// Sized for two distinct label pairs per Rollout (an app label and a
	// version or track one), so that the map does not grow step by step.
	x := &podLabelIndex{byPair: make(map[labelKey][]*Resource, 2*len(rollouts))}
	pairLists := newLists[*Resource](2 * len(rollouts))
	for _, r := range rollouts {
		labels, _ := g.PodLabels(r)
		for k, v := range labels {
			lk := labelKey{r.Namespace, k, v}
			addTo(pairLists, x.byPair, lk, r)
		}
	}
	return x
}

// PodLabels returns the labels of a Rollout's pods: its template's, or, with
// spec.workloadRef, those of the referenced Deployment's template when the
// bundle holds it. ok is false when they cannot be known (a workloadRef to an
// object outside the bundle), so callers do not judge selectors against an
// empty set.
func (g *Graph) PodLabels(r *Resource) (labels map[string]string, ok bool) {
	ro := r.Rollout()
	if ro == nil {
		return nil, false
	}
	ref := ro.Spec.WorkloadRef
	if ref == nil {
		return ro.Spec.Template.Labels, true
	}
	w := g.Get(ref.Kind, r.Namespace, ref.Name)
	if w == nil {
		return nil, false
	}
	spec, _ := w.Object()["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	md, _ := tmpl["metadata"].(map[string]any)
	raw, _ := md["labels"].(map[string]any)
	labels = make(map[string]string, len(raw))
	for k, v := range raw {
		if s, isStr := v.(string); isStr {
			labels[k] = s
		}
	}
	return labels, true
}

// RolloutsSelectedBy returns the Rollouts of namespace ns whose pod template
// carries every pair of selector, in load order. Keys in ignore (such as
// rollouts-pod-template-hash, which Argo sets at runtime) are not required.
// An empty selector selects nothing here: Kubernetes treats a Service without
// selector as manually managed.
func (g *Graph) RolloutsSelectedBy(ns string, selector map[string]string, ignore ...string) []*Resource {
	var smallest []*Resource
	found := false
	var buf [8]string // a selector has a few labels: the keys stay on the stack
	keys := buf[:0]
	for k := range selector {
		if !slices.Contains(ignore, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		list := g.podLabels.byPair[labelKey{ns, k, selector[k]}]
		if !found || len(list) < len(smallest) {
			smallest, found = list, true
		}
	}
	if len(keys) == 1 {
		// The posting list of the only pair is the answer: checking its
		// Rollouts against the pair again would read their labels (for a
		// workloadRef, decode the workload) for nothing.
		return slices.Clone(smallest)
	}
	var out []*Resource
	for _, r := range smallest {
		labels, _ := g.PodLabels(r)
		ok := true
		for _, k := range keys {
			if v, has := labels[k]; !has || v != selector[k] {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}
