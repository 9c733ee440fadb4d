package plan

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	networkingv1 "istio.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// defaultScaleDownDelay is Argo's scaleDownDelaySeconds / abortScaleDownDelaySeconds
// default with traffic routing.
const defaultScaleDownDelay = 30

// builder accumulates the states of one plan.
type builder struct {
	g  *graph.Graph
	rr *graph.RolloutRefs
	p  *Plan

	cur State // the state the next step starts from
	// ownRoutes and ownLabels say whether cur's Routes and Labels are the
	// builder's own. Emitted states share them with cur, and the builder
	// copies a shared slice before it first changes it (copy-on-write), so
	// a step that leaves the routes or labels as they were costs no copy.
	ownRoutes, ownLabels bool
	// dests is scratch space for a route's next destinations.
	dests []Destination
	// noWrites skips recording the writes between states (StatesOf).
	noWrites bool

	stable  *graph.ServiceRef
	canaryS *graph.ServiceRef
	dr      *graph.DRRef
	batch   int
	// changes counts every change to the current state, written or not
	// (StatesOf records no writes): the reconcile model stops when a
	// reconcile changes nothing.
	changes int
	// live is set once the committed state is emitted: from then on a label
	// that appears is a write from "absent".
	live bool

	// from, when set, is the live state the plan starts from (FromLive).
	from *Live
	// mem, when set, is the Planner whose memory the plan is made in.
	mem *Planner
}

// Planner plans Rollout after Rollout in the same memory: the Plan its
// ForRollout returns, with its states and their writes, is valid until its
// next call. `plan` writes each Rollout's plan and drops it, and the writes
// of a large bundle's plans, allocated anew, were a third of what planning
// allocated. A Planner is not safe for concurrent use.
type Planner struct {
	// writes and states are the arrays emitted states' writes and plans'
	// state lists are cut from.
	writes []Write
	states []State
	// cur is the builder's buffer of the current state's writes.
	cur []Write
}

// ForRollout is ForRollout, in the Planner's memory: see Planner.
func (pl *Planner) ForRollout(g *graph.Graph, rr *graph.RolloutRefs) *Plan {
	pl.writes, pl.states = pl.writes[:0], pl.states[:0]
	return forRolloutIn(g, rr, false, nil, pl)
}

// cut returns a copy of s in *buf's spare capacity, growing *buf into a
// new array when it has too little (earlier copies keep the old one). The
// copy's capacity is its length: appending to it copies.
func cut[T any](buf *[]T, s []T) []T {
	if len(s) > cap(*buf)-len(*buf) {
		*buf = make([]T, 0, max(len(s), 2*cap(*buf), 64))
	}
	lo := len(*buf)
	*buf = append(*buf, s...)
	return (*buf)[lo:len(*buf):len(*buf)]
}

// stateList returns an empty list of capacity n for a plan's states.
func (b *builder) stateList(n int) []State {
	if b.mem == nil {
		return make([]State, 0, n)
	}
	m := b.mem
	if n > cap(m.states)-len(m.states) {
		m.states = make([]State, 0, max(n, 2*cap(m.states), 64))
	}
	lo := len(m.states)
	m.states = m.states[:lo+n]
	return m.states[lo : lo : lo+n]
}

// start makes st the current state, with the builder's writes buffer.
func (b *builder) start(st State) {
	b.cur = st
	if b.mem != nil {
		b.cur.Writes = b.mem.cur[:0]
	}
}

// resumeAt reports whether the plan starts over from the live state at
// step i (len(steps) once every step is done): an update in progress, the
// same pod template, the controller at step i.
func (b *builder) resumeAt(i int) bool {
	l := b.from
	return l != nil && !l.NewTemplate && l.InProgress() && l.Step == i
}

// resume starts the plan over from the live state: the states planned so
// far are dropped (they are the past), the current state becomes the live
// one and is emitted as the plan's first.
func (b *builder) resume(steps int) {
	b.p.States = b.p.States[:0]
	b.overlay(b.from)
	b.emit(&b.p.States, PhaseLive, -1, "spec.strategy.canary", liveAction(b.from, steps))
}

// startsFromLive reports whether the update to plan starts from the
// cluster as it is (a new pod template, or none in progress) rather than
// from the committed state.
func (b *builder) startsFromLive() bool {
	l := b.from
	return l != nil && (l.NewTemplate || !l.InProgress())
}

// serviceLabel is the hash key of a Service selector pointing at a revision.
func (b *builder) serviceLabel(ref *graph.ServiceRef, hash string) *RevisionLabel {
	if ref == nil {
		return nil
	}
	return &RevisionLabel{
		Object: Object{Kind: "Service", Namespace: b.rr.Rollout.Namespace, Name: ref.Name},
		Field:  `spec.selector["` + HashLabel + `"]`, Hash: hash,
	}
}

// subsetLabel is the hash label of a DestinationRule subset pointing at a
// revision; the subset's index when the DestinationRule is in the bundle.
func (b *builder) subsetLabel(subset, hash string) *RevisionLabel {
	if b.dr == nil || subset == "" {
		return nil
	}
	field := fmt.Sprintf(`spec.subsets[name=%s].labels["%s"]`, subset, HashLabel)
	if b.dr.Target != nil {
		if dr := b.dr.Target.DestinationRule(); dr != nil {
			for i, s := range dr.Spec.GetSubsets() {
				if s.GetName() == subset {
					field = fmt.Sprintf(`spec.subsets[%d].labels["%s"]`, i, HashLabel)
				}
			}
		}
	}
	return &RevisionLabel{Object: Object{Kind: "DestinationRule", Namespace: b.dr.Namespace, Name: b.dr.Name}, Field: field, Hash: hash}
}

// setLabel moves a revision label in the current state and records the write.
func (b *builder) setLabel(l *RevisionLabel) {
	if l == nil {
		return
	}
	for i := range b.cur.Labels {
		x := &b.cur.Labels[i]
		if x.Object == l.Object && x.Field == l.Field {
			if x.Hash == l.Hash {
				return
			}
			if !b.noWrites {
				kind := WriteServiceSelector
				if l.Object.Kind == kinds.DestinationRule {
					kind = WriteDRSubsetLabel
				}
				b.cur.Writes = append(b.cur.Writes, Write{Kind: kind, Object: l.Object, Field: l.Field, Old: x.Hash, New: l.Hash, Batch: b.batch,
					Resource: b.g.Get(l.Object.Kind, l.Object.Namespace, l.Object.Name), Hosts: b.hostsOf(l)})
			}
			b.ownedLabels()[i].Hash = l.Hash
			b.changes++
			return
		}
	}
	if b.live {
		b.changes++
		if !b.noWrites {
			kind := WriteServiceSelector
			if l.Object.Kind == "DestinationRule" {
				kind = WriteDRSubsetLabel
			}
			b.cur.Writes = append(b.cur.Writes, Write{Kind: kind, Object: l.Object, Field: l.Field, Old: "absent", New: l.Hash, Batch: b.batch,
				Resource: b.g.Get(l.Object.Kind, l.Object.Namespace, l.Object.Name), Hosts: b.hostsOf(l)})
		}
	}
	b.cur.Labels = append(b.ownedLabels(), *l)
}

// ownedLabels returns cur's labels, copied first when an emitted state shares them.
func (b *builder) ownedLabels() []RevisionLabel {
	if !b.ownLabels {
		b.cur.Labels = slices.Clone(b.cur.Labels)
		b.ownLabels = true
	}
	return b.cur.Labels
}

// ownedRoutes returns cur's routes, copied first when an emitted state shares
// them. The copy shares each route's destinations, which are replaced, never
// changed in place.
func (b *builder) ownedRoutes() []RouteState {
	if !b.ownRoutes {
		b.cur.Routes = slices.Clone(b.cur.Routes)
		b.ownRoutes = true
	}
	return b.cur.Routes
}

// restart makes s, an emitted state, the current state again (the abort
// paths start from an earlier state); its slices stay shared with s.
func (b *builder) restart(s State) {
	buf := b.cur.Writes[:0]
	b.cur = s
	b.cur.Writes = buf
	b.ownRoutes, b.ownLabels = false, false
	b.batch = 1
}

// hostsOf returns the FQDN whose endpoints a label decides.
func (b *builder) hostsOf(l *RevisionLabel) []string {
	if l.Object.Kind == kinds.Service {
		return []string{graph.ServiceFQDN(l.Object.Name, l.Object.Namespace)}
	}
	if b.dr != nil && b.dr.Target != nil {
		if dr := b.dr.Target.DestinationRule(); dr != nil && dr.Spec.GetHost() != "" {
			return []string{graph.FQDN(dr.Spec.GetHost(), b.dr.Target.Namespace)}
		}
	}
	return nil
}

// revisionHosts returns the hosts whose endpoints include a revision's pods in
// the current state: Services whose hash label selects it, or the
// DestinationRule host (its Service selects every revision). Sorted, each once.
func (b *builder) revisionHosts(hash string) []string {
	out := []string{}
	for _, l := range b.cur.Labels {
		if l.Object.Kind == kinds.Service && l.Hash == hash {
			out = append(out, graph.ServiceFQDN(l.Object.Name, l.Object.Namespace))
		}
		if l.Object.Kind == kinds.DestinationRule {
			out = append(out, b.hostsOf(&l)...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// scale records ReplicaSet replica changes.
func (b *builder) scale(stable, canary int32, stableHash, canaryHash string) {
	ns, name := b.rr.Rollout.Namespace, b.rr.Rollout.Name
	if canary != b.cur.CanaryReplicas {
		b.changes++
	}
	if stable != b.cur.StableReplicas {
		b.changes++
	}
	if canary != b.cur.CanaryReplicas && !b.noWrites {
		b.cur.Writes = append(b.cur.Writes, Write{
			Kind: WriteScale, Object: Object{Kind: "ReplicaSet", Namespace: ns, Name: name + "-" + canaryHash},
			Field: "spec.replicas", Old: itoa(b.cur.CanaryReplicas), New: itoa(canary), Batch: b.batch,
			Hosts: b.revisionHosts(canaryHash),
		})
	}
	b.cur.CanaryReplicas = canary
	if stable != b.cur.StableReplicas && !b.noWrites {
		b.cur.Writes = append(b.cur.Writes, Write{
			Kind: WriteScale, Object: Object{Kind: "ReplicaSet", Namespace: ns, Name: name + "-" + stableHash},
			Field: "spec.replicas", Old: itoa(b.cur.StableReplicas), New: itoa(stable), Batch: b.batch,
			Hosts: b.revisionHosts(stableHash),
		})
	}
	b.cur.StableReplicas = stable
}

// scaleOne scales the old (stable) or the new (canary) ReplicaSet alone.
func (b *builder) scaleOne(stable bool, n int32) {
	if stable {
		b.scale(n, b.cur.CanaryReplicas, OldHash, NewHash)
	} else {
		b.scale(b.cur.StableReplicas, n, OldHash, NewHash)
	}
}

// itoa formats a replica count or weight in decimal.
func itoa(n int32) string { return strconv.FormatInt(int64(n), 10) }

// emit closes the current state and starts the next one from it. The emitted
// state and the next share routes, labels and managed routes until the
// builder changes them (see ownedRoutes); the writes are copied out at their
// exact size and the builder reuses its buffer for the next state's.
func (b *builder) emit(list *[]State, phase Phase, step int, path, action string) {
	b.cur.Phase, b.cur.Step, b.cur.Path, b.cur.Action = phase, step, path, action
	// Number the reconciles that wrote something 1, 2, ... (no-op batches
	// vanish). Batches only grow within a state, so a change of batch from
	// one write to the next is a new reconcile.
	prev, next := 0, 0
	for i := range b.cur.Writes {
		w := &b.cur.Writes[i]
		if i == 0 || w.Batch != prev {
			next++
		}
		prev, w.Batch = w.Batch, next
	}
	s := b.cur
	s.Writes = nil
	if len(b.cur.Writes) > 0 {
		if b.mem != nil {
			s.Writes = cut(&b.mem.writes, b.cur.Writes)
		} else {
			s.Writes = slices.Clone(b.cur.Writes)
		}
	}
	*list = append(*list, s)
	b.cur.Writes = b.cur.Writes[:0]
	b.ownRoutes, b.ownLabels = false, false
	b.batch = 1
}

func (b *builder) canary(c *v1alpha1.CanaryStrategy) {
	p := b.p
	b.stable, b.canaryS = b.rr.Service(graph.RoleStable), b.rr.Service(graph.RoleCanary)
	b.dr = b.rr.DestinationRule
	istio := c.TrafficRouting != nil && c.TrafficRouting.Istio != nil
	switch {
	case istio && b.dr != nil:
		p.Split = SplitSubset
	case istio:
		p.Split = SplitHost
	default:
		p.Split = SplitNone
	}
	// Before, start, one state per step, promotion and scale-down; the abort
	// path has two. Sized up front: no spare capacity to keep alive.
	p.States = b.stateList(len(c.Steps) + 4)
	// The committed state: stable everywhere.
	b.batch = 1
	b.start(State{StableReplicas: p.Replicas})
	var sim *routed
	if istio {
		sim = newRouted(b, c)
	}
	if sim != nil && sim.pingPong {
		// Ping serves the stable revision; pong selects none until the
		// update (the controller labels it then).
		b.setLabel(b.serviceLabel(sim.stableSvc, OldHash))
	} else {
		b.setLabel(b.serviceLabel(b.stable, OldHash))
		b.setLabel(b.serviceLabel(b.canaryS, OldHash))
	}
	if b.dr != nil {
		b.setLabel(b.subsetLabel(b.dr.StableSubset, OldHash))
		b.setLabel(b.subsetLabel(b.dr.CanarySubset, OldHash))
	}
	if istio {
		b.cur.Routes = b.committedRoutes()
	}
	abandoned := int32(0) // pods of a live canary a new template leaves behind
	if b.startsFromLive() {
		l := b.from
		if l.InProgress() {
			// The canary Service and subset still select the revision the
			// live update was rolling out (its real hash).
			svc := b.canaryS
			if sim != nil {
				svc = sim.canarySvc
			}
			b.setLabel(b.serviceLabel(svc, l.CanaryHash))
			if b.dr != nil {
				b.setLabel(b.subsetLabel(b.dr.CanarySubset, l.CanaryHash))
			}
		}
		b.overlay(l)
		if l.InProgress() {
			// Its pods go; the new revision starts from the live weights.
			abandoned, b.cur.CanaryReplicas = b.cur.CanaryReplicas, 0
		}
		if sim != nil {
			sim.fromLive(l)
		}
		b.emit(&p.States, PhaseLive, -1, "spec.strategy.canary", liveAction(l, len(c.Steps)))
	} else {
		b.emit(&p.States, PhaseBefore, -1, "spec.strategy.canary", "committed state")
	}
	b.live = true
	if abandoned > 0 && !b.noWrites {
		// The revision the live update was rolling out is scaled down.
		ns, name := b.rr.Rollout.Namespace, b.rr.Rollout.Name
		b.cur.Writes = append(b.cur.Writes, Write{Kind: WriteScale, Object: Object{Kind: "ReplicaSet", Namespace: ns, Name: name + "-" + b.from.CanaryHash},
			Field: "spec.replicas", Old: itoa(abandoned), New: "0", Batch: b.batch})
	}

	if sim != nil {
		// Canary start: the new ReplicaSet, at 0 pods; selectors and subset
		// labels follow in the steps' reconciles.
		b.emit(&p.States, PhaseStart, -1, "spec.strategy.canary", "canary start: new ReplicaSet at 0")
		at := sim.play()
		if at < 0 {
			return
		}
		p.AbortFrom = at
		p.Abort = b.stateList(2)
		sim.abort(at)
		return
	}

	b.basicCanary(c)
}

// basicCanary plays a canary without traffic routing: the weights are pod
// counts (basicCanarySplit). This path is not checked against the
// controller (conformance/argo covers Istio traffic routing only).
func (b *builder) basicCanary(c *v1alpha1.CanaryStrategy) {
	p := b.p
	// Canary start: new ReplicaSet, canary selector → new hash.
	b.setLabel(b.serviceLabel(b.canaryS, NewHash))
	b.emit(&p.States, PhaseStart, -1, "spec.strategy.canary", "canary start")

	var weight int32
	maxW, maxAt := int32(-1), -1
	pauseW, pauseAt := int32(-1), -1
	resumed := false // the plan starts from the live state (abort from there)
	for i := range c.Steps {
		if b.resumeAt(i) {
			b.resume(len(c.Steps))
			resumed = true
			if b.from.Aborted {
				break
			}
		}
		s := &c.Steps[i]
		if s.SetWeight != nil {
			weight = *s.SetWeight
		}
		st, cn := basicCanarySplit(p.Replicas, weight, c.MaxSurge)
		b.scale(b.cur.StableReplicas, cn, OldHash, NewHash)
		b.batch++
		b.scale(st, cn, OldHash, NewHash)
		b.cur.Weight = weight
		b.emit(&p.States, PhaseStep, i, graph.Index("spec.strategy.canary.steps", i), describeStep(s))
		cw := p.States[len(p.States)-1].CanaryWeight()
		if cw > maxW {
			maxW, maxAt = cw, len(p.States)-1
		}
		if s.Pause != nil && cw >= pauseW {
			pauseW, pauseAt = cw, len(p.States)-1
		}
	}
	if pauseAt >= 0 {
		maxAt = pauseAt
	}
	if !resumed && b.resumeAt(len(c.Steps)) {
		b.resume(len(c.Steps))
		resumed = true
	}
	if resumed {
		maxAt = 0 // the abort path starts from the live state
	}

	if !resumed || !b.from.Aborted {
		// Promotion: the new ReplicaSet at full size, the stable selector →
		// new hash, the old ReplicaSet to 0 (no scale-down delay without
		// routing).
		b.scale(b.cur.StableReplicas, p.Replicas, OldHash, NewHash)
		b.batch++
		b.setLabel(b.serviceLabel(b.stable, NewHash))
		b.cur.Weight = 100
		b.scale(0, p.Replicas, OldHash, NewHash)
		b.emit(&p.States, PhasePromote, -1, "spec.strategy.canary", "promote: new at full size, old to 0")
	}

	// Abort from the pause with the most canary pods: the stable back to
	// full size and the canary to 0, then the canary selector back.
	if maxAt < 0 {
		return
	}
	p.AbortFrom = maxAt
	p.Abort = b.stateList(2)
	b.restart(p.States[maxAt])
	b.cur.Weight = 0
	b.scale(p.Replicas, 0, OldHash, NewHash)
	b.emit(&p.Abort, PhaseAbort, -1, "spec.strategy.canary", "abort: stable back to full size, canary to 0")
	b.setLabel(b.serviceLabel(b.canaryS, OldHash))
	b.emit(&p.Abort, PhaseScaleDown, -1, "spec.strategy.canary", "canary → stable hash")
}

func (b *builder) blueGreen(bg *v1alpha1.BlueGreenStrategy) {
	p := b.p
	active, preview := b.rr.Service(graph.RoleActive), b.rr.Service(graph.RolePreview)
	p.States = b.stateList(4) // before, start, promote, scale-down
	p.Abort = b.stateList(1)
	b.batch = 1
	b.start(State{StableReplicas: p.Replicas})
	b.setLabel(b.serviceLabel(active, OldHash))
	b.setLabel(b.serviceLabel(preview, OldHash))
	b.emit(&p.States, PhaseBefore, -1, "spec.strategy.blueGreen", "committed state")

	b.live = true
	// The preview Service moves to the new ReplicaSet as soon as it exists,
	// then the ReplicaSet comes up (previewReplicaCount, else full size).
	n := p.Replicas
	if bg.PreviewReplicaCount != nil {
		n = *bg.PreviewReplicaCount
	}
	b.setLabel(b.serviceLabel(preview, NewHash))
	b.batch++
	b.scale(p.Replicas, n, OldHash, NewHash)
	b.emit(&p.States, PhaseStart, -1, "spec.strategy.blueGreen", "preview → new hash, new ReplicaSet up")
	p.AbortFrom = len(p.States) - 1
	start := p.States[len(p.States)-1]

	b.scale(p.Replicas, p.Replicas, OldHash, NewHash)
	b.batch++
	b.setLabel(b.serviceLabel(active, NewHash))
	b.cur.Weight = 100
	b.emit(&p.States, PhasePromote, -1, "spec.strategy.blueGreen", "promote: new at full size, active → new hash")
	delay := int32(defaultScaleDownDelay)
	if bg.ScaleDownDelaySeconds != nil {
		delay = *bg.ScaleDownDelaySeconds
	}
	b.scale(0, p.Replicas, OldHash, NewHash)
	b.emit(&p.States, PhaseScaleDown, -1, "spec.strategy.blueGreen", fmt.Sprintf("old ReplicaSet to 0 after %ds", delay))

	// Abort before promotion: the active Service never moved; the new
	// ReplicaSet goes to 0 after abortScaleDownDelaySeconds and the preview
	// Service keeps selecting it (argo-rollouts v1.10.2 as observed).
	b.restart(start)
	abortDelay := int32(defaultScaleDownDelay)
	if bg.AbortScaleDownDelaySeconds != nil {
		abortDelay = *bg.AbortScaleDownDelaySeconds
	}
	b.scale(p.Replicas, 0, OldHash, NewHash)
	b.emit(&p.Abort, PhaseAbort, -1, "spec.strategy.blueGreen", fmt.Sprintf("abort: new ReplicaSet to 0 after %ds, preview unchanged", abortDelay))
}

// basicCanarySplit approximates Argo's pod-count split without traffic routing:
// each side rounded up (10 replicas at 15% → 2 canary + 9 stable), the total
// capped at replicas + maxSurge.
func basicCanarySplit(r, w int32, maxSurge *intstr.IntOrString) (stable, canary int32) {
	canary = replicasFor(r, w)
	stable = replicasFor(r, 100-w)
	surge := replicasFor(r, 25)
	if maxSurge != nil {
		if v, err := intstr.GetScaledValueFromIntOrPercent(maxSurge, int(r), true); err == nil {
			surge = int32(v)
		}
	}
	if canary+stable > r+surge {
		stable = max(0, r+surge-canary)
	}
	return stable, canary
}

// committedRoutes reads the managed routes as the bundle commits them.
func (b *builder) committedRoutes() []RouteState {
	var out []RouteState
	for _, vs := range b.rr.VirtualServices {
		if vs.Target == nil || vs.Target.VirtualService() == nil {
			continue
		}
		spec := &vs.Target.VirtualService().Spec
		key := Object{Kind: "VirtualService", Namespace: vs.Target.Namespace, Name: vs.Target.Name}
		for _, rt := range vs.Routes {
			if rt.Index < 0 {
				continue
			}
			rs := RouteState{VS: key, Kind: rt.Kind, Index: rt.Index, Name: rt.Name}
			for j, d := range routeDests(spec, rt.Kind, rt.Index) {
				host, subset := d.GetDestination().GetHost(), d.GetDestination().GetSubset()
				rs.Dests = append(rs.Dests, Destination{Host: host, Subset: subset, Role: b.role(host, subset), Weight: d.GetWeight(), Index: j})
			}
			if rs.Name == "" && rt.Kind == graph.HTTP {
				rs.Name = spec.GetHttp()[rt.Index].GetName()
			}
			out = append(out, rs)
		}
	}
	return out
}

// routeDests returns a route's weighted destinations whatever its list.
func routeDests(spec *networkingv1.VirtualService, kind graph.RouteKind, i int) []*networkingv1.HTTPRouteDestination {
	switch kind {
	case graph.HTTP:
		if i < len(spec.GetHttp()) {
			return spec.GetHttp()[i].GetRoute()
		}
	case graph.TLS:
		if i < len(spec.GetTls()) {
			return asHTTPDests(spec.GetTls()[i].GetRoute())
		}
	case graph.TCP:
		if i < len(spec.GetTcp()) {
			return asHTTPDests(spec.GetTcp()[i].GetRoute())
		}
	}
	return nil
}

func asHTTPDests(rs []*networkingv1.RouteDestination) []*networkingv1.HTTPRouteDestination {
	out := make([]*networkingv1.HTTPRouteDestination, len(rs))
	for i, r := range rs {
		out[i] = &networkingv1.HTTPRouteDestination{Destination: r.GetDestination(), Weight: r.GetWeight()}
	}
	return out
}

// role classifies a destination the way Argo's processRoutes does: canary
// first, then stable, then additional subsets; anything else is deleted.
func (b *builder) role(host, subset string) Role {
	short := graph.ShortHost(host)
	c := b.rr.Spec.Spec.Strategy.Canary
	if pp := c.PingPong; pp != nil && c.StableService == "" && c.CanaryService == "" {
		// Ping-pong: ping serves the stable revision, pong the canary.
		switch {
		case pp.PingService != "" && short == pp.PingService:
			return RoleStable
		case pp.PongService != "" && short == pp.PongService:
			return RoleCanary
		}
	}
	switch {
	case c.CanaryService != "" && short == c.CanaryService, b.dr != nil && subset != "" && subset == b.dr.CanarySubset:
		return RoleCanary
	case c.StableService != "" && short == c.StableService, b.dr != nil && subset != "" && subset == b.dr.StableSubset:
		return RoleStable
	}
	if b.dr != nil && subset != "" {
		for _, a := range b.dr.AdditionalSubsets {
			if a == subset {
				return RoleAdditional
			}
		}
	}
	return RoleForeign
}

// applyWeights sets every managed route to canary weight w: stable gets
// 100 − w − experiment − additional, clamped at 0; additional subsets keep
// their weight; foreign destinations are deleted; experiment destinations
// are appended (sorted by template), host the template's Service, and
// removed when the step is over. step is the index of the experiment step.
func (b *builder) applyWeights(w int32, exps []v1alpha1.RolloutExperimentTemplate, step int) {
	var expSum int32
	for _, t := range exps {
		expSum += *t.Weight
	}
	for ri := range b.cur.Routes {
		rt := &b.cur.Routes[ri]
		var additional int32
		for _, d := range rt.Dests {
			if d.Role == RoleAdditional {
				additional += d.Weight
			}
		}
		stable, clamped := StableWeight(w, expSum, additional)
		next := b.dests[:0]
		for _, d := range rt.Dests {
			switch d.Role {
			case RoleCanary:
				d.Weight = w
			case RoleStable:
				d.Weight, d.Clamped = stable, clamped
			case RoleAdditional:
			default: // experiment (re-added below when still running) or foreign: deleted
				continue
			}
			next = append(next, d)
		}
		for _, t := range exps {
			next = append(next, Destination{Host: ExperimentServiceName(b.rr.Rollout.Name, step, &t), Role: RoleExperiment, Weight: *t.Weight, Index: -1})
		}
		b.dests = next
		if !b.noWrites {
			b.diffRoute(rt, next)
		}
		if !slices.Equal(next, rt.Dests) { // else the route stays shared with the emitted states
			b.ownedRoutes()[ri].Dests = slices.Clone(next)
			b.changes++
			if !b.noWrites && rt.Kind == graph.HTTP {
				b.mirrorsFollow(rt.VS)
			}
		}
	}
}

// mirrorsFollow records the rewrite of a VirtualService's mirror routes
// after its weights changed: a mirror route carries a copy of the weighted
// route's destinations, and the controller's weight update rewrites it in
// the same write (argo-rollouts v1.10.2 as observed).
func (b *builder) mirrorsFollow(vs Object) {
	for _, m := range b.cur.Managed {
		if m.Type == "mirror" {
			b.cur.Writes = append(b.cur.Writes, Write{Kind: WriteVSRouteAdd, Object: vs, Field: "spec.http", Old: "route " + m.Name,
				New: "route " + m.Name + " (destinations follow the weights)", RouteKind: graph.HTTP, Batch: b.batch, Resource: b.g.Get(vs.Kind, vs.Namespace, vs.Name)})
		}
	}
}

// diffRoute records one write per destination weight that changes.
// Destinations match by host, subset and role (the last of duplicates); a
// route has a handful, so linear scans beat building maps.
func (b *builder) diffRoute(rt *RouteState, next []Destination) {
	at := b.liveIndex(rt)
	for _, d := range next {
		o, had := lastDest(rt.Dests, d)
		switch {
		case !had:
			b.vsWrite(rt, WriteVSWeight, fmt.Sprintf("spec.%s[%d].route[+]", rt.Kind, at), "absent", destText(d))
		case o.Weight != d.Weight:
			b.vsWrite(rt, WriteVSWeight, fmt.Sprintf("spec.%s[%d].route[%d].weight", rt.Kind, at, d.Index), itoa(o.Weight), itoa(d.Weight))
		}
	}
	for j, d := range rt.Dests {
		if _, kept := lastDest(next, d); !kept {
			i := d.Index
			if i < 0 { // appended by the controller (an experiment's): where it sits now
				i = j
			}
			b.vsWrite(rt, WriteVSWeight, fmt.Sprintf("spec.%s[%d].route[%d]", rt.Kind, at, i), destText(d), "removed")
		}
	}
}

// liveIndex is a route's index in the VirtualService as the controller
// leaves it: it puts the header/mirror routes it manages first (orderRoutes),
// so an http route moves down by the number present.
func (b *builder) liveIndex(rt *RouteState) int {
	if rt.Kind == graph.HTTP {
		return rt.Index + len(b.cur.Managed)
	}
	return rt.Index
}

// lastDest returns the last destination of ds with d's host, subset and role.
func lastDest(ds []Destination, d Destination) (Destination, bool) {
	for i := len(ds) - 1; i >= 0; i-- {
		if x := ds[i]; x.Host == d.Host && x.Subset == d.Subset && x.Role == d.Role {
			return x, true
		}
	}
	return Destination{}, false
}

// vsWrite records a write to a managed VirtualService route.
func (b *builder) vsWrite(rt *RouteState, kind WriteKind, field, old, new string) {
	b.cur.Writes = append(b.cur.Writes, Write{Kind: kind, Object: rt.VS, Field: field, Old: old, New: new, RouteKind: rt.Kind, Batch: b.batch,
		Resource: b.g.Get(rt.VS.Kind, rt.VS.Namespace, rt.VS.Name)})
}

func destText(d Destination) string {
	s := d.Host
	if d.Subset != "" {
		s += "/" + d.Subset
	}
	return fmt.Sprintf("%s %d", s, d.Weight)
}

// setManaged adds (on) or removes a header/mirror route on every managed VS.
func (b *builder) setManaged(m ManagedRoute, on bool, desc string) {
	idx := -1
	for i, x := range b.cur.Managed {
		if x.Name == m.Name {
			idx = i
		}
	}
	m.match = desc
	if on && idx >= 0 && b.cur.Managed[idx] == m {
		return // the controller re-creates the same route: no write
	}
	for _, vs := range b.vsKeys() {
		switch {
		case b.noWrites:
		case on:
			old := "absent"
			if idx >= 0 {
				old = "route " + m.Name
			}
			b.cur.Writes = append(b.cur.Writes, Write{Kind: WriteVSRouteAdd, Object: vs, Field: "spec.http", Old: old, New: fmt.Sprintf("route %s (%s)", m.Name, desc), RouteKind: graph.HTTP, Batch: b.batch, Resource: b.g.Get(vs.Kind, vs.Namespace, vs.Name)})
		case idx >= 0:
			b.cur.Writes = append(b.cur.Writes, Write{Kind: WriteVSRouteRemove, Object: vs, Field: "spec.http", Old: "route " + m.Name, New: "removed", RouteKind: graph.HTTP, Batch: b.batch, Resource: b.g.Get(vs.Kind, vs.Namespace, vs.Name)})
		}
	}
	if idx >= 0 || on {
		b.changes++
	}
	if idx >= 0 {
		b.cur.Managed = append(b.cur.Managed[:idx:idx], b.cur.Managed[idx+1:]...)
	}
	if on {
		// Clipped, so that append copies instead of writing into an array
		// emitted states share.
		b.cur.Managed = append(slices.Clip(b.cur.Managed), m)
	}
}

// clearManaged removes every header/mirror route (promotion and abort).
func (b *builder) clearManaged() {
	if len(b.cur.Managed) == 0 {
		return
	}
	for _, m := range append([]ManagedRoute(nil), b.cur.Managed...) {
		b.setManaged(m, false, "")
	}
}

// vsKeys are the managed VirtualServices present in the bundle, deduplicated.
func (b *builder) vsKeys() []Object {
	var out []Object
	seen := map[Object]bool{}
	for _, rt := range b.cur.Routes {
		if !seen[rt.VS] && rt.Kind == graph.HTTP {
			seen[rt.VS] = true
			out = append(out, rt.VS)
		}
	}
	return out
}

// describeStep is the human description of a canary step.
func describeStep(s *v1alpha1.CanaryStep) string {
	var parts []string
	if s.SetWeight != nil {
		parts = append(parts, fmt.Sprintf("setWeight %d", *s.SetWeight))
	}
	if s.SetCanaryScale != nil {
		cs := s.SetCanaryScale
		switch {
		case cs.MatchTrafficWeight:
			parts = append(parts, "setCanaryScale matchTrafficWeight")
		case cs.Replicas != nil:
			parts = append(parts, fmt.Sprintf("setCanaryScale replicas %d", *cs.Replicas))
		case cs.Weight != nil:
			parts = append(parts, fmt.Sprintf("setCanaryScale weight %d", *cs.Weight))
		}
	}
	if s.SetHeaderRoute != nil {
		parts = append(parts, "setHeaderRoute "+s.SetHeaderRoute.Name)
	}
	if s.SetMirrorRoute != nil {
		parts = append(parts, "setMirrorRoute "+s.SetMirrorRoute.Name)
	}
	if s.Pause != nil {
		if s.Pause.Duration == nil {
			parts = append(parts, "pause (until promoted)")
		} else {
			parts = append(parts, "pause "+s.Pause.Duration.String())
		}
	}
	if s.Analysis != nil {
		parts = append(parts, "analysis")
	}
	if s.Experiment != nil {
		parts = append(parts, "experiment")
	}
	if s.Plugin != nil {
		parts = append(parts, "plugin "+s.Plugin.Name)
	}
	if len(parts) == 0 {
		return "(no action)"
	}
	return strings.Join(parts, ", ")
}

// headerDesc describes a header route's match for writes.
func headerDesc(h *v1alpha1.SetHeaderRoute) string {
	var ms []string
	for _, m := range h.Match {
		v := ""
		if m.HeaderValue != nil {
			switch {
			case m.HeaderValue.Exact != "":
				v = "=" + m.HeaderValue.Exact
			case m.HeaderValue.Prefix != "":
				v = "^=" + m.HeaderValue.Prefix
			case m.HeaderValue.Regex != "":
				v = "~=" + m.HeaderValue.Regex
			}
		}
		ms = append(ms, m.HeaderName+v)
	}
	return "header " + strings.Join(ms, ",") + " → canary 100"
}

func sortTemplates(ts []v1alpha1.RolloutExperimentTemplate) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
}
