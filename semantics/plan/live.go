package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// PhaseLive is the state a Rollout is in in the cluster right now (the
// first state of a plan built by FromLive).
const PhaseLive Phase = "live"

// Live is where a canary Rollout stands in the cluster, read from its status
// and the objects Argo Rollouts writes (ReadLive): the state FromLive starts
// a plan from.
type Live struct {
	// Step is status.currentStepIndex: the step in progress, len(steps)
	// once every step is done.
	Step int `json:"step"`
	// Paused is spec.paused or a pause the controller set (a pause step,
	// an inconclusive analysis).
	Paused bool `json:"paused"`
	// Aborted is status.abort: an abort is in progress or done.
	Aborted bool `json:"aborted"`
	// StableHash and CanaryHash are status.stableRS and
	// status.currentPodHash; equal when no update is in progress.
	StableHash string `json:"stableHash"`
	CanaryHash string `json:"canaryHash"`
	// CanaryWeight is status.canary.weights.canary.weight.
	CanaryWeight int32 `json:"canaryWeight"`
	// Routes are the managed routes with the weights the live
	// VirtualServices hold.
	Routes []RouteState `json:"routes,omitempty"`
	// Managed are the header and mirror routes of the Rollout's
	// trafficRouting.managedRoutes present in the live VirtualServices.
	Managed []ManagedRoute `json:"managedRoutes,omitempty"`
	// Labels are the pod-template hashes the live Services' selectors and
	// DestinationRule subsets select (those that select one).
	Labels []RevisionLabel `json:"labels,omitempty"`
	// StableReplicas and CanaryReplicas are spec.replicas of the
	// ReplicaSets of the two hashes (0 when there is none).
	StableReplicas int32 `json:"stableReplicas"`
	CanaryReplicas int32 `json:"canaryReplicas"`
	// NewTemplate is set when the Rollout to plan has another pod template
	// than the live one: applying it starts a new revision, whose hash only
	// the controller knows.
	NewTemplate bool `json:"newTemplate"`
}

// symbolic names a live hash as the plan does: the stable revision's is
// OldHash, the canary's (an update in progress, planned on) NewHash; any
// other stays as it is.
func (l *Live) symbolic(hash string) string {
	switch {
	case hash == l.StableHash:
		return OldHash
	case hash == l.CanaryHash && l.InProgress() && !l.NewTemplate:
		return NewHash
	}
	return hash
}

// InProgress reports whether an update is under way (a canary revision
// other than the stable one).
func (l *Live) InProgress() bool { return l.CanaryHash != "" && l.CanaryHash != l.StableHash }

// ReadLive reads where the canary Rollout rr of g, a graph of live objects
// (the Rollout with its status, its VirtualServices, its ReplicaSets),
// stands. It fails for a Rollout the controller has not reconciled (no
// status) and for strategies other than canary.
func ReadLive(g *graph.Graph, rr *graph.RolloutRefs) (*Live, error) {
	ro := rr.Spec
	c := ro.Spec.Strategy.Canary
	if c == nil {
		return nil, fmt.Errorf("live Rollout %s/%s: only canary Rollouts are planned from the live state", rr.Rollout.Namespace, rr.Rollout.Name)
	}
	st := ro.Status
	if st.CurrentPodHash == "" {
		return nil, fmt.Errorf("live Rollout %s/%s has no status.currentPodHash: the Argo Rollouts controller has not reconciled it", rr.Rollout.Namespace, rr.Rollout.Name)
	}
	l := &Live{
		Paused: ro.Spec.Paused || len(st.PauseConditions) > 0, Aborted: st.Abort,
		StableHash: st.StableRS, CanaryHash: st.CurrentPodHash,
	}
	if l.StableHash == "" {
		l.StableHash = l.CanaryHash // the first revision: stable once it is available
	}
	switch {
	case !l.InProgress():
		l.Step = len(c.Steps)
	case st.CurrentStepIndex != nil:
		l.Step = min(max(0, int(*st.CurrentStepIndex)), len(c.Steps))
	}
	if w := st.Canary.Weights; w != nil {
		l.CanaryWeight = w.Canary.Weight
	}
	b := &builder{g: g, rr: rr, dr: rr.DestinationRule}
	if c.TrafficRouting != nil && c.TrafficRouting.Istio != nil {
		l.Routes = b.committedRoutes()
		l.Managed = liveManaged(rr, c.TrafficRouting.ManagedRoutes)
	}
	l.Labels = liveLabels(b, rr)
	for _, r := range g.OfKind(kinds.ReplicaSet) {
		if r.Namespace != rr.Rollout.Namespace || !ownedBy(r, rr.Rollout.Name) {
			continue
		}
		obj := r.Object()
		hash, _ := mapAt(obj, "metadata", "labels")[HashLabel].(string)
		n := int32(1)
		if v, ok := mapAt(obj, "spec")["replicas"]; ok {
			n = int32(toInt(v))
		}
		switch hash {
		case l.StableHash:
			l.StableReplicas = n
		case l.CanaryHash:
			l.CanaryReplicas = n
		}
	}
	return l, nil
}

// liveLabels reads the hashes the Rollout's Services select
// (spec.selector) and its DestinationRule's stable and canary subsets
// (labels), named as the plan names them.
func liveLabels(b *builder, rr *graph.RolloutRefs) []RevisionLabel {
	var out []RevisionLabel
	for _, role := range []graph.ServiceRole{graph.RoleStable, graph.RoleCanary, graph.RolePing, graph.RolePong} {
		ref := rr.Service(role)
		if ref == nil || ref.Target == nil {
			continue
		}
		if hash, _ := mapAt(ref.Target.Object(), "spec", "selector")[HashLabel].(string); hash != "" {
			out = append(out, *b.serviceLabel(ref, hash))
		}
	}
	if dr := rr.DestinationRule; dr != nil && dr.Target != nil && dr.Target.DestinationRule() != nil {
		for _, sub := range dr.Target.DestinationRule().Spec.GetSubsets() {
			if name := sub.GetName(); name == dr.StableSubset || name == dr.CanarySubset {
				if hash := sub.GetLabels()[HashLabel]; hash != "" {
					out = append(out, *b.subsetLabel(name, hash))
				}
			}
		}
	}
	return out
}

// liveManaged returns the managed routes (by name, in the order of
// managedRoutes) that the live VirtualServices hold: a mirror route has a
// mirror, a header route has none.
func liveManaged(rr *graph.RolloutRefs, names []v1alpha1.MangedRoutes) []ManagedRoute {
	var out []ManagedRoute
	for _, n := range names {
	found:
		for _, vs := range rr.VirtualServices {
			if vs.Target == nil || vs.Target.VirtualService() == nil {
				continue
			}
			for _, h := range vs.Target.VirtualService().Spec.GetHttp() {
				if h.GetName() != n.Name {
					continue
				}
				m := ManagedRoute{Name: n.Name, Type: "header"}
				if h.GetMirror() != nil {
					m.Type, m.Percentage = "mirror", 100
					if p := h.GetMirrorPercentage(); p != nil {
						m.Percentage = int32(p.GetValue())
					}
				}
				out = append(out, m)
				break found
			}
		}
	}
	return out
}

// ownedBy reports whether a ReplicaSet's controller is the Rollout name.
func ownedBy(r *graph.Resource, name string) bool {
	refs, _ := mapAt(r.Object(), "metadata")["ownerReferences"].([]any)
	for _, x := range refs {
		m, _ := x.(map[string]any)
		if m["kind"] == kinds.Rollout && m["name"] == name {
			return true
		}
	}
	return false
}

func mapAt(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		m, _ = m[p].(map[string]any)
	}
	return m
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}

// FromLive is ForRollout starting from the live state l instead of the
// committed one: its first state is the live one (PhaseLive), then the
// steps that remain from l.Step with the writes and weights Argo Rollouts
// makes from there, promotion and scale-down; the abort path starts from
// the live state. With an abort in progress the plan is the live state and
// the abort path. With l.NewTemplate the plan is that of the new revision
// the update starts, from the live weights and replicas. The real hashes
// replace the symbolic ones (the new revision's stays symbolic). Blue-green
// Rollouts, and Rollouts without a strategy, give nil.
func FromLive(g *graph.Graph, rr *graph.RolloutRefs, l *Live) *Plan {
	if rr.Spec.Spec.Strategy.Canary == nil {
		return nil
	}
	p := forRolloutFrom(g, rr, false, l)
	if p == nil {
		return nil
	}
	p.Live = l
	stable, canary := l.StableHash, l.CanaryHash
	if l.NewTemplate || !l.InProgress() {
		canary = NewHash // the update starts a revision of its own
	}
	renameHashes(p.States, stable, canary)
	renameHashes(p.Abort, stable, canary)
	return p
}

// liveAction describes the live state in words.
func liveAction(l *Live, steps int) string {
	var parts []string
	switch {
	case l.Aborted:
		parts = append(parts, "aborted")
	case !l.InProgress():
		parts = append(parts, "no update in progress")
	case l.Step >= steps:
		parts = append(parts, "every step done")
	default:
		parts = append(parts, fmt.Sprintf("at step %d of %d", l.Step, steps))
	}
	if l.Paused {
		parts = append(parts, "paused")
	}
	if l.NewTemplate {
		parts = append(parts, "new pod template to apply")
	}
	return "live: " + strings.Join(parts, ", ")
}

// overlay makes the builder's current state the live one: the live weights
// on the routes the plan manages (matched by VirtualService, route and
// destination), the live ReplicaSet sizes, no writes.
func (b *builder) overlay(l *Live) {
	routes := b.ownedRoutes()
	for i := range routes {
		rt := &routes[i]
		if rt.Kind == graph.HTTP {
			// Planned from the live VirtualService itself, a route's index
			// counts the managed routes Argo put before it; the model adds
			// them (liveIndex).
			rt.Index -= b.managedBefore(rt)
		}
		lr := findRoute(l, rt)
		if lr == nil {
			continue
		}
		dests := make([]Destination, len(rt.Dests))
		copy(dests, rt.Dests)
		for j := range dests {
			if d := lr.FindDest(dests[j]); d != nil {
				dests[j].Weight = d.Weight
				dests[j].Clamped = false
			}
		}
		rt.Dests = dests
	}
	b.cur.Managed = b.liveManaged(l)
	for _, ll := range l.Labels {
		for i, x := range b.cur.Labels {
			if x.Object == ll.Object && x.Field == ll.Field {
				b.ownedLabels()[i].Hash = l.symbolic(ll.Hash)
			}
		}
	}
	b.cur.StableReplicas, b.cur.CanaryReplicas = l.StableReplicas, l.CanaryReplicas
	b.cur.Weight = l.CanaryWeight
	if w := b.cur.CanaryWeight(); len(b.cur.Routes) > 0 {
		b.cur.Weight = w
	}
	b.cur.Writes = b.cur.Writes[:0]
}

// findRoute returns the live route of a route of the plan: by name, else by
// index, shifted by the managed routes Argo puts before the others.
func findRoute(l *Live, rt *RouteState) *RouteState {
	index := rt.Index
	if rt.Kind == graph.HTTP {
		index += len(l.Managed)
	}
	for i := range l.Routes {
		lr := &l.Routes[i]
		if lr.VS != rt.VS || lr.Kind != rt.Kind {
			continue
		}
		if rt.Name != "" && lr.Name == rt.Name || rt.Name == "" && lr.Index == index {
			return lr
		}
	}
	return nil
}

// liveManaged returns the live header and mirror routes as the plan's
// steps set them: the match of the last step at or before the live one
// that set each (a route the plan would re-create unchanged is no write),
// in the order those steps come (the order the controller added them, and
// removes them in).
func (b *builder) liveManaged(l *Live) []ManagedRoute {
	if len(l.Managed) == 0 {
		return nil
	}
	steps := b.rr.Spec.Spec.Strategy.Canary.Steps
	out := make([]ManagedRoute, 0, len(l.Managed))
	setAt := make(map[string]int, len(l.Managed))
	for _, m := range l.Managed {
		setAt[m.Name] = -1
		for i := min(l.Step, len(steps)-1); i >= 0; i-- {
			if h := steps[i].SetHeaderRoute; h != nil && h.Name == m.Name && m.Type == "header" {
				m.match, setAt[m.Name] = headerDesc(h), i
				break
			}
			if mr := steps[i].SetMirrorRoute; mr != nil && mr.Name == m.Name && m.Type == "mirror" {
				m.match, setAt[m.Name] = fmt.Sprintf("mirror %d%% to canary", m.Percentage), i
				break
			}
		}
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool { return setAt[out[i].Name] < setAt[out[j].Name] })
	return out
}

// managedBefore counts the routes before rt in its VirtualService of the
// bundle that are named in the Rollout's managedRoutes: the controller's,
// present when the VirtualService is the live one.
func (b *builder) managedBefore(rt *RouteState) int {
	tr := b.rr.Spec.Spec.Strategy.Canary.TrafficRouting
	if tr == nil || len(tr.ManagedRoutes) == 0 {
		return 0
	}
	n := 0
	for _, vs := range b.rr.VirtualServices {
		if vs.Target == nil || vs.Target.VirtualService() == nil || vs.Target.Namespace != rt.VS.Namespace || vs.Target.Name != rt.VS.Name {
			continue
		}
		http := vs.Target.VirtualService().Spec.GetHttp()
		for j := 0; j < rt.Index && j < len(http); j++ {
			for _, m := range tr.ManagedRoutes {
				if http[j].GetName() == m.Name {
					n++
				}
			}
		}
		break
	}
	return n
}

// renameHashes puts the real pod-template hashes in place of the symbolic
// ones, in labels, writes and ReplicaSet names.
func renameHashes(states []State, stable, canary string) {
	r := strings.NewReplacer(OldHash, stable, NewHash, canary)
	for i := range states {
		s := &states[i]
		if len(s.Labels) > 0 {
			labels := make([]RevisionLabel, len(s.Labels))
			for j, l := range s.Labels {
				l.Hash = r.Replace(l.Hash)
				labels[j] = l
			}
			s.Labels = labels
		}
		for j := range s.Writes {
			w := &s.Writes[j]
			w.Object.Name, w.Old, w.New = r.Replace(w.Object.Name), r.Replace(w.Old), r.Replace(w.New)
		}
	}
}
