package traffic

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// labelSet is a selector or a subset's labels, with where it is written.
type labelSet struct {
	Res    *graph.Resource
	Path   string // field path of the map (spec.selector, spec.subsets[1].labels)
	Labels map[string]string
	// role is the Service's role (stable, canary, ...) or the subset's name.
	role string
	// Namespace is where the selected pods live.
	Namespace string
}

// What names the label set in messages: `stable Service ns/name selector` or
// `DestinationRule ns/name subset "canary" labels`.
func (ls labelSet) What() string {
	if ls.Res.Kind == "Service" {
		return fmt.Sprintf("%s Service %s/%s selector", strings.TrimSuffix(ls.role, "Service"), ls.Res.Namespace, ls.Res.Name)
	}
	return fmt.Sprintf("DestinationRule %s/%s subset %q labels", ls.Res.Namespace, ls.Res.Name, ls.role)
}

// sortedKeys returns a map's keys in order, for deterministic reports.
func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// labelSetsMemo holds every Rollout's label sets, which three rules walk.
// Read only.
var labelSetsMemo = graph.NewMemo[rolloutSets]("traffic.labelSets")

// rolloutSets is labelSets of the references of each of g.OfKind(Rollout),
// in that order (a slice, not a map: three rules look up every Rollout).
type rolloutSets struct {
	refs []*graph.RolloutRefs // nil for a Rollout without a typed spec
	sets [][]labelSet
	// owners lists, for each label set (a Service selector, a subset's
	// labels), the Rollouts whose sets include it, in Rollout order: the
	// rules that report a label set once, with the first Rollout to show
	// it, find that Rollout by lookup, whichever shard they scan.
	owners map[labelSetKey][]*graph.RolloutRefs
}

// labelSetKey identifies a label set: its object and the map's path.
type labelSetKey struct {
	res  *graph.Resource
	path string
}

// labelSetOwners returns the Rollouts whose label sets include ls, in
// Rollout order (see rolloutSets.owners). The slice is shared: do not
// modify it.
func labelSetOwners(g *graph.Graph, ls labelSet) []*graph.RolloutRefs {
	return allLabelSets(g).owners[labelSetKey{ls.Res, ls.Path}]
}

// rolloutLabelSets returns the Service selectors of a Rollout's Services and
// the labels of the stable and canary subsets of its managed DestinationRule,
// listed once per lint for every Rollout of g. The slice is shared: do not
// modify it.
func rolloutLabelSets(g *graph.Graph, rr *graph.RolloutRefs) []labelSet {
	all := allLabelSets(g)
	if i := rr.Rollout.KindPos(); i < len(all.refs) && all.refs[i] == rr {
		return all.sets[i]
	}
	return labelSets(rr) // not one of g's Rollouts
}

// allLabelSets lists every Rollout's label sets and their owners, once per
// lint.
func allLabelSets(g *graph.Graph) rolloutSets {
	return labelSetsMemo.Get(g, func() rolloutSets {
		n := len(g.OfKind(kinds.Rollout))
		m := rolloutSets{refs: make([]*graph.RolloutRefs, n), sets: make([][]labelSet, n),
			owners: make(map[labelSetKey][]*graph.RolloutRefs, 2*n)}
		for _, rr := range g.Refs().Rollouts {
			if i := rr.Rollout.KindPos(); i < n && g.OfKind(kinds.Rollout)[i] == rr.Rollout {
				m.refs[i], m.sets[i] = rr, labelSets(rr)
				for _, ls := range m.sets[i] {
					k := labelSetKey{ls.Res, ls.Path}
					m.owners[k] = append(m.owners[k], rr)
				}
			}
		}
		return m
	})
}

// labelSets lists rolloutLabelSets' sets of one Rollout.
func labelSets(rr *graph.RolloutRefs) []labelSet {
	var out []labelSet
	for _, s := range rr.Services {
		svc := s.Target
		// A Rollout has a handful of Services: a scan, not a set.
		if svc == nil || slices.ContainsFunc(out, func(ls labelSet) bool { return ls.Res == svc }) || svc.Service() == nil {
			continue
		}
		out = append(out, labelSet{Res: svc, Path: "spec.selector", Labels: svc.Service().Spec.Selector, Namespace: svc.Namespace, role: string(s.Role)})
	}
	if dr := rr.DestinationRule; dr != nil && dr.Target != nil && dr.Target.DestinationRule() != nil {
		for i, sub := range dr.Target.DestinationRule().Spec.GetSubsets() {
			if sub.GetName() != dr.StableSubset && sub.GetName() != dr.CanarySubset {
				continue
			}
			out = append(out, labelSet{Res: dr.Target, Path: graph.Index("spec.subsets", i) + ".labels", Labels: sub.GetLabels(), Namespace: rr.Rollout.Namespace, role: sub.GetName()})
		}
	}
	return out
}

// templateRelated points at the pod template labels: the Rollout's, or the
// workloadRef Deployment's.
func templateRelated(g *graph.Graph, rr *graph.RolloutRefs) rules.Related {
	if ref := rr.Spec.Spec.WorkloadRef; ref != nil {
		if w := g.Get(ref.Kind, rr.Rollout.Namespace, ref.Name); w != nil {
			return rules.RelatedAt(w, "spec.template.metadata.labels", fmt.Sprintf("%s %s pod template labels (workloadRef of Rollout %s)", ref.Kind, ref.Name, rr.Rollout.Name))
		}
	}
	return rules.RelatedAt(rr.Rollout, "spec.template.metadata.labels", "Rollout "+rr.Rollout.Name+" pod template labels")
}
