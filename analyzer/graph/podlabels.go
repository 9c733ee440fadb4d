package graph

import (
	"sort"
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
	x := &podLabelIndex{byPair: map[labelKey][]*Resource{}}
	for _, r := range g.OfKind("Rollout") {
		for k, v := range PodLabels(r) {
			lk := labelKey{r.Namespace, k, v}
			x.byPair[lk] = append(x.byPair[lk], r)
		}
	}
	return x
}

// PodLabels returns the labels of a Rollout's pod template (nil for other kinds).
func PodLabels(r *Resource) map[string]string {
	if ro := r.Rollout(); ro != nil {
		return ro.Spec.Template.Labels
	}
	return nil
}

// RolloutsSelectedBy returns the Rollouts of namespace ns whose pod template
// carries every pair of selector, in load order. Keys in ignore (such as
// rollouts-pod-template-hash, which Argo sets at runtime) are not required.
// An empty selector selects nothing here: Kubernetes treats a Service without
// selector as manually managed.
func (g *Graph) RolloutsSelectedBy(ns string, selector map[string]string, ignore ...string) []*Resource {
	skip := map[string]bool{}
	for _, k := range ignore {
		skip[k] = true
	}
	var smallest []*Resource
	found := false
	keys := make([]string, 0, len(selector))
	for k := range selector {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		list := g.podLabels.byPair[labelKey{ns, k, selector[k]}]
		if !found || len(list) < len(smallest) {
			smallest, found = list, true
		}
	}
	var out []*Resource
	for _, r := range smallest {
		labels := PodLabels(r)
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
