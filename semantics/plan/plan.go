// Package plan turns a Rollout into the ordered cluster states Argo Rollouts
// drives it through (canary start, every step, promotion, scale-down, and the
// abort path), with the route weights, replica counts and revision labels of
// each state and the API writes that lead from one state to the next.
//
// The semantics follow /work/shared/reference/argo-rollouts.md §2c (weights,
// clamping, header/mirror routes) and §3 (selector and subset label
// injection), and istio-xds-push-model.md §10 (step → write mapping). Nothing
// here knows about Istio's reaction; package xds maps the writes to pushes.
package plan

import (
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
)

// Symbolic ReplicaSet hashes: the revision running before the update and the
// one being rolled out. Real hashes are only known in the cluster.
const (
	OldHash = "<stable-hash>"
	NewHash = "<canary-hash>"
)

// ExperimentHash is the symbolic pod-template hash of an experiment
// template's ReplicaSet: the experiment controller computes it from the
// template it builds (experiments/replicaset.go newReplicaSetFromTemplate).
func ExperimentHash(template string) string { return "<experiment-hash:" + template + ">" }

// Revision is the symbolic revision of the update a plan rolls out (the
// Rollout's rollout.argoproj.io/revision annotation), part of the names of
// an experiment's objects.
const Revision = "<revision>"

// HashLabel is the label Argo Rollouts injects into Service selectors and
// DestinationRule subsets.
const HashLabel = "rollouts-pod-template-hash"

// Phase is where in the rollout a state sits.
type Phase string

// Phases, in the order a rollout goes through them.
const (
	PhaseBefore    Phase = "before"     // the bundle as committed, stable revision only
	PhaseStart     Phase = "start"      // new ReplicaSet created, canary/preview selector switched
	PhaseStep      Phase = "step"       // one canary step
	PhasePromote   Phase = "promote"    // stable/active switched to the new revision
	PhaseScaleDown Phase = "scale-down" // old ReplicaSet scaled to 0 after the delay
	PhaseAbort     Phase = "abort"      // abort: traffic back to stable
)

// Split is how traffic is divided between revisions.
type Split string

// Splits.
const (
	SplitHost   Split = "host"   // VirtualService routes to stable and canary Services
	SplitSubset Split = "subset" // VirtualService routes to DestinationRule subsets
	SplitNone   Split = "none"   // no Istio traffic routing: replica counts only
)

// Role is the part a route destination plays.
type Role string

// Destination roles, after Argo's processRoutes order.
const (
	RoleStable     Role = "stable"
	RoleCanary     Role = "canary"
	RoleExperiment Role = "experiment"
	RoleAdditional Role = "additional"
	RoleForeign    Role = "foreign" // not Argo's: deleted by the controller at the first weight write
)

// Plan is one Rollout's sequence of states.
type Plan struct {
	Rollout  Object `json:"rollout"`
	Strategy string `json:"strategy"` // canary | blueGreen
	Split    Split  `json:"split"`
	Replicas int32  `json:"replicas"`
	// States run from the committed state through promotion and scale-down.
	States []State `json:"states"`
	// Abort is the abort path taken from the state with the highest canary weight.
	Abort []State `json:"abort,omitempty"`
	// AbortFrom is the index in States the abort path starts from.
	AbortFrom int `json:"abortFrom"`
	// Live is the live state the plan starts from (FromLive), nil for a
	// plan of the committed state.
	Live *Live `json:"live,omitempty"`

	// Resource is the Rollout in the bundle.
	Resource *graph.Resource `json:"-"`
	// Refs are the Rollout's resolved references.
	Refs *graph.RolloutRefs `json:"-"`
}

// State is the cluster as one step leaves it.
type State struct {
	Phase Phase `json:"phase"`
	// Step is the canary step index, or -1.
	Step int `json:"step"`
	// Path is the Rollout field the state comes from (the step, or the strategy).
	Path   string `json:"path"`
	Action string `json:"action"`
	// Weight is the canary traffic weight Argo aims at (setWeight so far).
	Weight int32        `json:"weight"`
	Routes []RouteState `json:"routes,omitempty"`
	// Managed lists the header/mirror routes Argo has added to the VirtualService.
	Managed []ManagedRoute `json:"managedRoutes,omitempty"`
	// StableReplicas and CanaryReplicas are the desired pods of the stable
	// (old) and canary (new) ReplicaSets; after promotion "stable" is the old
	// revision still waiting for scale-down.
	StableReplicas int32 `json:"stableReplicas"`
	CanaryReplicas int32 `json:"canaryReplicas"`
	// Labels says which selector or subset points at which revision.
	Labels []RevisionLabel `json:"labels,omitempty"`
	// Writes are the API writes that lead into this state, in Argo's order.
	Writes []Write `json:"writes,omitempty"`
}

// RouteState is one managed VirtualService route with its destination weights.
type RouteState struct {
	VS    Object          `json:"virtualService"`
	Kind  graph.RouteKind `json:"kind"`
	Index int             `json:"index"`
	Name  string          `json:"name,omitempty"`
	Dests []Destination   `json:"destinations"`
}

// Destination is one weighted destination of a route.
type Destination struct {
	Host   string `json:"host"`
	Subset string `json:"subset,omitempty"`
	Role   Role   `json:"role"`
	Weight int32  `json:"weight"`
	// Clamped is true when Argo's computed weight was negative and set to 0.
	Clamped bool `json:"clamped,omitempty"`
	// Index is the destination's index in the committed route, or -1 when Argo appends it.
	Index int `json:"index"`
}

// ManagedRoute is a header or mirror route Argo adds to a VirtualService.
type ManagedRoute struct {
	Name string `json:"name"`
	Type string `json:"type"` // header | mirror
	// Percentage is the mirrored share (mirror routes).
	Percentage int32 `json:"percentage,omitempty"`

	match string // the route's match, as words: a change rewrites the route
}

// RevisionLabel is a selector or subset label and the revision it selects.
type RevisionLabel struct {
	Object Object `json:"object"`
	Field  string `json:"field"`
	Hash   string `json:"hash"`
}

// WriteKind classifies an API write by what Istio sees.
type WriteKind string

// Write kinds.
const (
	WriteVSWeight        WriteKind = "vs-weight"        // a destination weight of a managed route
	WriteVSRouteAdd      WriteKind = "vs-route-add"     // a header/mirror route added
	WriteVSRouteRemove   WriteKind = "vs-route-remove"  // a header/mirror route removed
	WriteServiceSelector WriteKind = "service-selector" // rollouts-pod-template-hash in a Service selector
	WriteDRSubsetLabel   WriteKind = "dr-subset-label"  // rollouts-pod-template-hash in a DR subset
	WriteScale           WriteKind = "replicaset-scale" // ReplicaSet replicas: EndpointSlices follow
	WriteServiceCreate   WriteKind = "service-create"   // a Service the experiment controller creates for a template
	WriteServiceDelete   WriteKind = "service-delete"   // that Service deleted once its pods are gone
)

// Write is one field Argo Rollouts changes.
type Write struct {
	Kind   WriteKind `json:"kind"`
	Object Object    `json:"object"`
	Field  string    `json:"field"`
	Old    string    `json:"old"`
	New    string    `json:"new"`
	// RouteKind is the route list of a VirtualService write (tcp/tls weights live in LDS).
	RouteKind graph.RouteKind `json:"routeKind,omitempty"`
	// Hosts are the FQDNs whose endpoints change because of the write.
	Hosts []string `json:"hosts,omitempty"`
	// Batch groups the writes of one reconcile: Argo issues them back to back,
	// well inside Istio's 100 ms debounce window.
	Batch int `json:"batch"`
	// Hash is the rollouts-pod-template-hash of the pods an experiment
	// template's ReplicaSet scales or its Service selects (ExperimentHash);
	// empty for the stable and canary ReplicaSets, whose names carry it.
	Hash string `json:"hash,omitempty"`

	// Resource is the written object when it is in the bundle.
	Resource *graph.Resource `json:"-"`
}

// Build returns the plan of every Rollout of the graph, in load order.
func Build(g *graph.Graph) []*Plan {
	var out []*Plan
	for _, rr := range g.Refs().Rollouts {
		if p := ForRollout(g, rr); p != nil {
			out = append(out, p)
		}
	}
	return out
}

// Each returns the plans of Build on demand: n is the number of Rollouts,
// and at(i) plans the i-th (nil when Build leaves it out), so that a large
// bundle's states need not all be in memory at once and several Rollouts can
// be planned at the same time (planreport.Write). at may be called
// concurrently.
func Each(g *graph.Graph) (n int, at func(i int) *Plan) {
	rrs := g.Refs().Rollouts
	return len(rrs), func(i int) *Plan { return ForRollout(g, rrs[i]) }
}

// EachIn is Each planning in a Planner of the caller's (nil: ForRollout):
// the plan at(i, pl) returns is valid until pl plans again.
func EachIn(g *graph.Graph) (n int, at func(i int, pl *Planner) *Plan) {
	rrs := g.Refs().Rollouts
	return len(rrs), func(i int, pl *Planner) *Plan {
		if pl == nil {
			return ForRollout(g, rrs[i])
		}
		return pl.ForRollout(g, rrs[i])
	}
}

// ForRollout returns the plan of one Rollout, or nil when it has no strategy
// (or uses workloadRef only, where the pod template is elsewhere).
func ForRollout(g *graph.Graph, rr *graph.RolloutRefs) *Plan {
	return forRollout(g, rr, false)
}

// StatesOf returns the plan of one Rollout like ForRollout but without the
// writes that lead from one state to the next: every State.Writes is nil.
// Checks of the states themselves (routes, labels, replicas, header and
// mirror routes) use it to skip about half the cost of planning; xds.Predict
// needs the writes and must be given ForRollout's plan.
func StatesOf(g *graph.Graph, rr *graph.RolloutRefs) *Plan {
	return forRollout(g, rr, true)
}

func forRollout(g *graph.Graph, rr *graph.RolloutRefs, noWrites bool) *Plan {
	return forRolloutFrom(g, rr, noWrites, nil)
}

// forRolloutFrom plans from the committed state, or from live when set.
func forRolloutFrom(g *graph.Graph, rr *graph.RolloutRefs, noWrites bool, live *Live) *Plan {
	return forRolloutIn(g, rr, noWrites, live, nil)
}

// forRolloutIn is forRolloutFrom in a Planner's memory (mem nil: its own).
func forRolloutIn(g *graph.Graph, rr *graph.RolloutRefs, noWrites bool, live *Live, mem *Planner) *Plan {
	ro := rr.Spec
	p := &Plan{
		Rollout:  Object{Kind: "Rollout", Namespace: rr.Rollout.Namespace, Name: rr.Rollout.Name},
		Replicas: 1, Resource: rr.Rollout, Refs: rr,
	}
	if ro.Spec.Replicas != nil {
		p.Replicas = *ro.Spec.Replicas
	}
	b := &builder{g: g, rr: rr, p: p, noWrites: noWrites, from: live, mem: mem}
	if mem != nil {
		// Not dests: whether it is nil decides whether a route left with
		// no destination lists them as null or [].
		defer func() { mem.cur = b.cur.Writes[:0] }()
	}
	switch {
	case ro.Spec.Strategy.Canary != nil:
		p.Strategy = "canary"
		b.canary(ro.Spec.Strategy.Canary)
	case ro.Spec.Strategy.BlueGreen != nil:
		p.Strategy = "blueGreen"
		p.Split = SplitNone
		b.blueGreen(ro.Spec.Strategy.BlueGreen)
	default:
		return nil
	}
	return p
}

// CanaryWeight returns the summed weight of canary destinations across the
// state's routes (the largest route, when routes differ), or the target weight
// without traffic routing.
func (s *State) CanaryWeight() int32 {
	if len(s.Routes) == 0 {
		return s.Weight
	}
	var best int32
	for _, rt := range s.Routes {
		var w int32
		for _, d := range rt.Dests {
			if d.Role == RoleCanary {
				w += d.Weight
			}
		}
		best = max(best, w)
	}
	return best
}

// FindDest returns the destination of a route with the same host, subset and
// role, or nil.
func (rt *RouteState) FindDest(d Destination) *Destination {
	for i := range rt.Dests {
		x := &rt.Dests[i]
		if x.Host == d.Host && x.Subset == d.Subset && x.Role == d.Role {
			return x
		}
	}
	return nil
}

// StableWeight is Argo's stable share of a managed route (processRoutes):
// 100 − canary − experiment weights − additional-subset weights, clamped at 0
// because Istio rejects negative weights. clamped reports the clamp, which
// leaves the route's weights summing to more than 100.
func StableWeight(canary, experiments, additional int32) (weight int32, clamped bool) {
	w := 100 - canary - experiments - additional
	if w < 0 {
		return 0, true
	}
	return w, false
}

// ReplicasForWeight is Argo's trafficWeightToReplicas: the pods of a
// ReplicaSet that carries weight% of traffic, rounded up so that any
// non-zero weight gets a pod.
func ReplicasForWeight(total, weight int32) int32 { return replicasFor(total, weight) }

func replicasFor(total, weight int32) int32 {
	if weight <= 0 || total <= 0 {
		return 0
	}
	if weight >= 100 {
		return total
	}
	return int32((int64(total)*int64(weight) + 99) / 100)
}

// experimentWeights returns the weighted experiment templates of a step, sorted by
// template name (the order Argo appends experiment destinations in).
func experimentWeights(s *v1alpha1.CanaryStep) []v1alpha1.RolloutExperimentTemplate {
	if s == nil || s.Experiment == nil {
		return nil
	}
	var out []v1alpha1.RolloutExperimentTemplate
	for _, t := range s.Experiment.Templates {
		if t.Weight != nil {
			out = append(out, t)
		}
	}
	sortTemplates(out)
	return out
}

// Object names a Kubernetes object a plan reads or writes.
type Object struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// String renders Kind/namespace/name.
func (o Object) String() string { return o.Kind + "/" + o.Namespace + "/" + o.Name }

// plans memoizes ForGraph.
var plans = graph.NewMemo[[]*Plan]("plan.ForGraph")

// ForGraph returns Build(g), computed once per graph and shared by every caller.
func ForGraph(g *graph.Graph) []*Plan {
	return plans.Get(g, func() []*Plan { return Build(g) })
}
