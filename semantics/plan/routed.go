package plan

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
)

// routed plays a traffic-routed canary through the Argo Rollouts
// controller's reconciles, in the order one reconcile makes its writes
// (rollout/canary.go rolloutCanary): Services first, then traffic routing
// (header/mirror routes, DestinationRule subset labels, route weights), then
// the ReplicaSets (stable before canary; one scaled, the reconcile ends its
// ReplicaSet phase). Pods scaled up in one reconcile are available by the
// next one, the way the controller meets them when it is woken by the
// ReplicaSet's status. The order was checked against argo-rollouts v1.10.2
// on a real kube-apiserver (conformance/argo; docs/plan.md).
type routed struct {
	b     *builder
	c     *v1alpha1.CanaryStrategy
	steps []v1alpha1.CanaryStep
	r     int32 // spec.replicas

	dynamic  bool
	pingPong bool
	// canarySvc is the Service whose selector follows the canary: the canary
	// Service, or pong for ping-pong (ping serves the stable revision first).
	canarySvc *graph.ServiceRef
	stableSvc *graph.ServiceRef

	idx int // status.currentStepIndex
	// statusCanary and statusStable are status.canary.weights as the last
	// reconcile left them.
	statusCanary, statusStable int32
	// Pods available when the reconcile starts.
	stableAvail, canaryAvail int32
	promoted, aborted        bool
	drained                  bool // an abort left the canary only its last step to 0
	// wrote reports whether the reconcile changed anything.
	wrote bool
	// The labels the model moves, built once (setLabel copies them).
	canaryNew, canaryOld, stableNew *RevisionLabel
	subsetCanaryNew, subsetStable   [2]*RevisionLabel // old, new hash
	// snaps holds the model's state as each forward state left it, by
	// index in Plan.States: the abort path starts from one of them.
	snaps map[int]snap
}

// snap is what the model knows beyond the State itself.
type snap struct {
	idx                        int
	stableAvail, canaryAvail   int32
	statusCanary, statusStable int32
}

func newRouted(b *builder, c *v1alpha1.CanaryStrategy) *routed {
	s := &routed{b: b, c: c, steps: c.Steps, r: b.p.Replicas, dynamic: c.DynamicStableScale,
		statusStable: 100, stableAvail: b.p.Replicas, snaps: map[int]snap{}}
	if c.PingPong != nil && c.StableService == "" && c.CanaryService == "" {
		s.pingPong = true
		s.stableSvc, s.canarySvc = b.rr.Service(graph.RolePing), b.rr.Service(graph.RolePong)
	} else {
		s.stableSvc, s.canarySvc = b.stable, b.canaryS
	}
	s.canaryNew, s.canaryOld = b.serviceLabel(s.canarySvc, NewHash), b.serviceLabel(s.canarySvc, OldHash)
	s.stableNew = b.serviceLabel(s.stableSvc, NewHash)
	if b.dr != nil {
		s.subsetCanaryNew = [2]*RevisionLabel{nil, b.subsetLabel(b.dr.CanarySubset, NewHash)}
		s.subsetStable = [2]*RevisionLabel{b.subsetLabel(b.dr.StableSubset, OldHash), b.subsetLabel(b.dr.StableSubset, NewHash)}
	}
	return s
}

// fromLive starts the model from the live state l: the weights the status
// holds, the live ReplicaSets' pods taken as available.
func (s *routed) fromLive(l *Live) {
	s.statusCanary, s.statusStable = l.CanaryWeight, 100-l.CanaryWeight
	s.stableAvail, s.canaryAvail = s.b.cur.StableReplicas, s.b.cur.CanaryReplicas
}

// resume starts the forward path over from the live state when the live
// update is at the current step (resumeAt): the model takes the live
// weights and pods, the states before are dropped, and the live state is
// where the abort path starts. It reports whether it did.
func (s *routed) resume() bool {
	b := s.b
	if !b.resumeAt(s.idx) {
		return false
	}
	b.resume(len(s.steps))
	s.fromLive(b.from)
	clear(s.snaps)
	s.snaps[0] = snap{idx: s.idx, stableAvail: s.stableAvail, canaryAvail: s.canaryAvail, statusCanary: s.statusCanary, statusStable: s.statusStable}
	return true
}

// currentSetWeight is the last setWeight at or before the current step
// (GetCurrentSetWeight): 100 past the last step, 0 after an abort.
func (s *routed) currentSetWeight() int32 {
	if s.aborted {
		return 0
	}
	if s.idx >= len(s.steps) {
		return 100
	}
	return s.setWeightFrom(s.idx)
}

// setWeightFrom is the last setWeight at or before step i, 0 if none.
func (s *routed) setWeightFrom(i int) int32 {
	for ; i >= 0; i-- {
		if w := s.steps[i].SetWeight; w != nil {
			return *w
		}
	}
	return 0
}

// canaryScale is the setCanaryScale in force (UseSetCanaryScale): the last
// one at or before the current step, unless it is matchTrafficWeight; none
// after an abort with a scale-down delay.
func (s *routed) canaryScale() *v1alpha1.SetCanaryScale {
	if s.idx >= len(s.steps) || s.aborted && s.abortDelay() != 0 {
		return nil
	}
	for i := s.idx; i >= 0; i-- {
		if cs := s.steps[i].SetCanaryScale; cs != nil {
			if cs.MatchTrafficWeight {
				return nil
			}
			return cs
		}
	}
	return nil
}

// abortDelay is abortScaleDownDelaySeconds (default 30; with
// dynamicStableScale there is no delay unless it is set).
func (s *routed) abortDelay() int32 {
	if s.c.AbortScaleDownDelaySeconds != nil {
		return *s.c.AbortScaleDownDelaySeconds
	}
	if s.dynamic {
		return 0
	}
	return defaultScaleDownDelay
}

// desiredCanaryWeight is GetDesiredCanaryWeight: with dynamicStableScale an
// abort steps the canary down through the setWeight steps in reverse, as
// fast as the stable comes back.
func (s *routed) desiredCanaryWeight() int32 {
	if s.aborted && s.dynamic {
		canary := max(s.r-s.stableAvail, s.canaryAvail)
		for i := len(s.steps) - 1; i >= 0; i-- {
			if w := s.steps[i].SetWeight; w != nil && replicasFor(s.r, *w) < canary {
				return *w
			}
		}
		return 0
	}
	return s.currentSetWeight()
}

// replicaWeight is the weight GetCanaryReplicasOrWeight sizes the
// ReplicaSets by, and the explicit canary count of a setCanaryScale.
func (s *routed) replicaWeight() (*int32, int32) {
	if s.promoted {
		return nil, 100
	}
	if cs := s.canaryScale(); cs != nil {
		if cs.Replicas != nil {
			return cs.Replicas, 0
		}
		if cs.Weight != nil {
			return nil, *cs.Weight
		}
	}
	return nil, s.desiredCanaryWeight()
}

// counts is CalculateReplicaCountsForTrafficRoutedCanary: the canary's and
// the stable's desired pods, given the weights the status holds.
func (s *routed) counts(statusCanary, statusStable int32) (canary, stable int32) {
	n, w := s.replicaWeight()
	canary = replicasFor(s.r, w)
	if n != nil {
		canary = *n
	}
	if !s.dynamic {
		return canary, s.r
	}
	stable = max(replicasFor(s.r, 100-w), replicasFor(s.r, statusStable))
	if s.aborted {
		canary = max(replicasFor(s.r, statusCanary), canary)
	}
	return canary, stable
}

// atDesired is AtDesiredReplicaCountsForCanary: the canary at its count
// with every pod available (and, without dynamic scaling, the stable whole).
func (s *routed) atDesired() bool {
	canary, _ := s.counts(s.statusCanary, s.statusStable)
	return s.b.cur.CanaryReplicas == canary && s.canaryAvail == canary &&
		(s.dynamic || s.b.cur.StableReplicas == s.r)
}

// trafficWeight is the weight reconcileTrafficRouting sets; ok is false when
// the stable has too few pods for the rest of the traffic
// (checkReplicasAvailable), which ends the traffic phase.
func (s *routed) trafficWeight() (w int32, ok bool) {
	switch {
	case s.promoted && s.pingPong:
		// The roles swap: pong, which took all traffic, is the stable now.
		w = 100
	case s.promoted:
		w = 0
	case s.aborted:
		w = s.abortWeight()
	case s.canaryAvail == 0:
		w = 0
	case s.idx >= len(s.steps):
		w = s.setWeightFrom(len(s.steps) - 1)
		if s.canaryAvail >= s.r && s.b.cur.CanaryReplicas >= s.r {
			w = 100
		}
	case !s.atDesired():
		w = s.setWeightFrom(s.idx - 1)
	default:
		w = s.currentSetWeight()
	}
	// After promotion the stable is the new ReplicaSet.
	avail := s.stableAvail
	if s.promoted {
		avail = s.canaryAvail
	}
	return w, avail >= (100-w)*s.r/100
}

// abortWeight is calculateDesiredWeightOnAbortOrStableRollback.
func (s *routed) abortWeight() int32 {
	if !s.dynamic || s.r == 0 {
		return 0
	}
	desired := s.desiredCanaryWeight()
	expected := max(0, 100-(100*s.stableAvail)/s.r)
	cur := s.statusCanary
	if desired <= 0 {
		return min(expected, cur)
	}
	if (100*s.stableAvail)/s.r < 100-desired {
		return cur
	}
	return min(desired, cur)
}

// reconcile plays one reconcile and reports whether the current step is
// complete at its end.
func (s *routed) reconcile() bool {
	b := s.b
	b.batch++
	changed := b.changes
	step := s.step()

	// Services (reconcilePingAndPongService, reconcileStableAndCanaryService).
	switch {
	case s.pingPong && !s.promoted:
		// No availability check: pong follows the new revision at once.
		b.setLabel(s.canaryNew)
	case !s.pingPong:
		if s.promoted {
			b.setLabel(s.stableNew)
		}
		if s.canaryAvail > 0 {
			b.setLabel(s.canaryNew)
		}
	}

	// Traffic routing (reconcileTrafficRouting).
	w, ok := s.trafficWeight()
	switch {
	case s.promoted:
		b.clearManaged()
	case s.aborted:
		if !s.pingPong && (!s.dynamic || w == 0) {
			b.setLabel(s.canaryOld)
		}
		b.clearManaged()
	case s.canaryAvail == 0:
		b.clearManaged()
	}
	if ok {
		if step != nil && !s.aborted && !s.promoted {
			s.routes(step)
		}
		if b.dr != nil {
			b.setLabel(s.subsetCanaryNew[1])
			stable := 0
			if s.promoted {
				stable = 1
			}
			b.setLabel(s.subsetStable[stable])
		}
		var exps []v1alpha1.RolloutExperimentTemplate
		if step != nil && !s.aborted {
			exps = experimentWeights(step)
		}
		b.applyWeights(w, exps)
		prevStable := s.statusStable
		s.statusCanary, s.statusStable = w, 100-w
		for _, t := range exps {
			s.statusStable -= *t.Weight
		}
		// ReplicaSets (reconcileCanaryReplicaSets): the stable is sized by
		// the weights the reconcile started with, the canary by the new ones.
		s.replicaSets(prevStable)
	} else {
		s.replicaSets(s.statusStable)
	}
	s.wrote = b.changes != changed
	complete := s.completed(step)
	s.stableAvail, s.canaryAvail = b.cur.StableReplicas, b.cur.CanaryReplicas
	return complete
}

// replicaSets scales the stable (dynamic scaling only) or else the canary.
func (s *routed) replicaSets(statusStable int32) {
	b := s.b
	canary, stable := s.counts(s.statusCanary, statusStable)
	if s.promoted {
		return // the old ReplicaSet's scale-down is its own state
	}
	if s.dynamic && b.cur.StableReplicas != stable {
		b.scaleOne(true, stable)
		return
	}
	if s.aborted {
		// With a scale-down delay the canary is held until the delay ends;
		// with dynamicStableScale and none it follows the traffic down.
		// Its last step to 0 is the abort path's last state.
		if s.abortDelay() != 0 {
			return
		}
		if canary == 0 {
			s.drained = true
			return
		}
	}
	if b.cur.CanaryReplicas != canary {
		b.scaleOne(false, canary)
	}
}

// routes sets or removes the step's header and mirror routes.
func (s *routed) routes(st *v1alpha1.CanaryStep) {
	b := s.b
	if h := st.SetHeaderRoute; h != nil {
		b.setManaged(ManagedRoute{Name: h.Name, Type: "header"}, len(h.Match) > 0, headerDesc(h))
	}
	if m := st.SetMirrorRoute; m != nil {
		mr := ManagedRoute{Name: m.Name, Type: "mirror", Percentage: 100}
		if m.Percentage != nil {
			mr.Percentage = *m.Percentage
		}
		b.setManaged(mr, len(m.Match) > 0, fmt.Sprintf("mirror %d%% to canary", mr.Percentage))
	}
}

func (s *routed) step() *v1alpha1.CanaryStep {
	if s.idx < len(s.steps) {
		return &s.steps[s.idx]
	}
	return nil
}

// completed is completedCurrentCanaryStep with the availability the
// reconcile started with. A pause is done once the reconcile changed
// nothing: that is where the rollout rests until the pause ends.
func (s *routed) completed(st *v1alpha1.CanaryStep) bool {
	switch {
	case st == nil:
		return false
	case st.Pause != nil:
		return !s.wrote
	case st.SetCanaryScale != nil, st.SetWeight != nil:
		return s.atDesired()
	}
	// Header/mirror routes complete at once; analysis, experiment and plugin
	// steps are taken to pass.
	return true
}

// settle reconciles until nothing changes (bounded: a model that does not
// converge is a bug, not a hang).
func (s *routed) settle() {
	for range 20 {
		s.reconcile()
		if !s.wrote {
			return
		}
	}
}

// play runs the forward path: one state per step, promotion and the old
// ReplicaSet's scale-down. It returns the index of the state the abort path
// starts from.
func (s *routed) play() int {
	b, p := s.b, s.b.p
	maxW, maxAt := int32(-1), -1
	pauseW, pauseAt := int32(-1), -1
	resumed := false
	for s.idx < len(s.steps) {
		if s.resume() {
			resumed = true
			if b.from.Aborted {
				return 0 // the live state, and the abort path from it
			}
		}
		i := s.idx
		for range 20 {
			if s.reconcile() {
				break
			}
		}
		s.idx++
		b.cur.Weight = s.setWeightFrom(i)
		b.emit(&p.States, PhaseStep, i, graph.Index("spec.strategy.canary.steps", i), describeStep(&s.steps[i]))
		s.snaps[len(p.States)-1] = snap{idx: i, stableAvail: s.stableAvail, canaryAvail: s.canaryAvail, statusCanary: s.statusCanary, statusStable: s.statusStable}
		if s.steps[i].Pause == nil {
			s.snaps[len(p.States)-1] = snap{idx: i + 1, stableAvail: s.stableAvail, canaryAvail: s.canaryAvail, statusCanary: s.statusCanary, statusStable: s.statusStable}
		}
		cw := p.States[len(p.States)-1].CanaryWeight()
		if cw > maxW {
			maxW, maxAt = cw, len(p.States)-1
		}
		if s.steps[i].Pause != nil && cw >= pauseW {
			pauseW, pauseAt = cw, len(p.States)-1
		}
	}
	if !resumed && s.resume() {
		resumed = true
		if b.from.Aborted {
			return 0
		}
	}
	// Promotion: the canary at full size and full traffic, the Rollout
	// names it stable (shouldFullPromote), then the stable selector / subset
	// label moves and the routes go back to stable 100.
	for range 20 {
		ready := s.canaryAvail >= s.r
		s.reconcile()
		if ready {
			break
		}
	}
	s.promoted = true
	s.settle()
	b.cur.Weight = 100
	b.emit(&p.States, PhasePromote, -1, "spec.strategy.canary", "promote: canary 100%, stable → new, routes reset")
	if b.cur.StableReplicas > 0 {
		b.batch++
		b.scaleOne(true, 0)
		what := fmt.Sprintf("old ReplicaSet to 0 after %ds", s.scaleDownDelay())
		if s.dynamic {
			what = "old ReplicaSet to 0 (dynamicStableScale: at once)"
		}
		b.emit(&p.States, PhaseScaleDown, -1, "spec.strategy.canary", what)
	}
	// The abort path starts where the rollout rests with the most canary
	// traffic: the last pause with the most (an abort elsewhere races the
	// controller through the step); without pauses, the state with the most.
	// From a live state it starts there: the abort from here.
	if resumed {
		return 0
	}
	if pauseAt >= 0 {
		return pauseAt
	}
	return maxAt
}

// stepZeroLoop warns of a header/mirror route set by step 0: an abort sends
// the controller back to step 0, which re-applies the route after the abort
// removed it, on every reconcile, without end (seen with v1.10.2; the
// conformance scenarios start with a pause to stay clear of it).
func (s *routed) stepZeroLoop() string {
	if len(s.steps) == 0 {
		return ""
	}
	st := &s.steps[0]
	switch {
	case st.SetHeaderRoute != nil && len(st.SetHeaderRoute.Match) > 0:
		return fmt.Sprintf("; then step 0's header route %s is re-added and removed on every reconcile, without end", st.SetHeaderRoute.Name)
	case st.SetMirrorRoute != nil && len(st.SetMirrorRoute.Match) > 0:
		return fmt.Sprintf("; then step 0's mirror route %s is re-added and removed on every reconcile, without end", st.SetMirrorRoute.Name)
	}
	return ""
}

func (s *routed) scaleDownDelay() int32 {
	if s.c.ScaleDownDelaySeconds != nil {
		return *s.c.ScaleDownDelaySeconds
	}
	return defaultScaleDownDelay
}

// abort plays the abort path from a forward state: traffic back to the
// stable (the canary selector first, header/mirror routes removed), then,
// after abortScaleDownDelaySeconds, the canary at 0. Meanwhile the
// controller flips the canary Service's selector back to the canary on
// every reconcile while canary pods are available (argo-rollouts#3078, open
// in v1.10.2); the plan shows one flip back and the final switch. The
// DestinationRule's canary subset keeps the canary hash.
func (s *routed) abort(at int) {
	b, p := s.b, s.b.p
	b.restart(p.States[at])
	sn := s.snaps[at]
	s.idx, s.aborted, s.promoted = sn.idx, true, false
	s.stableAvail, s.canaryAvail = sn.stableAvail, sn.canaryAvail
	s.statusCanary, s.statusStable = sn.statusCanary, sn.statusStable
	b.batch = 0
	for range 20 {
		s.reconcile()
		if !s.wrote || s.drained || !s.dynamic && s.statusCanary == 0 {
			break
		}
	}
	b.cur.Weight = 0
	if s.dynamic && s.abortDelay() != 0 && b.cur.StableReplicas < s.r {
		// The canary waits for a full stable to start its delay, the stable
		// waits for the canary to shrink: the abort stalls
		// (argo-rollouts#4898, open in v1.10.2).
		b.cur.Weight = s.statusCanary
		b.emit(&p.Abort, PhaseAbort, -1, "spec.strategy.canary", fmt.Sprintf("abort stalls: canary keeps %d%% and %d pods (dynamicStableScale with abortScaleDownDelaySeconds, argo-rollouts#4898)", s.statusCanary, b.cur.CanaryReplicas))
		return
	}
	b.emit(&p.Abort, PhaseAbort, -1, "spec.strategy.canary", "abort: traffic back to stable"+s.stepZeroLoop())
	if b.cur.CanaryReplicas == 0 {
		return
	}
	b.batch = 0
	if s.abortDelay() != 0 && !s.pingPong && s.canarySvc != nil {
		// The flip back (argo-rollouts#3078).
		b.batch++
		b.setLabel(s.canaryNew)
	}
	b.batch++
	b.scaleOne(false, 0)
	if !s.pingPong {
		b.batch++
		b.setLabel(s.canaryOld)
	}
	what := fmt.Sprintf("canary to 0 after %ds", s.abortDelay())
	if s.abortDelay() == 0 {
		what = "canary to 0"
	}
	if s.abortDelay() != 0 && !s.pingPong && s.canarySvc != nil {
		what += "; meanwhile the canary selector flips back each reconcile (argo-rollouts#3078)"
	}
	b.emit(&p.Abort, PhaseScaleDown, -1, "spec.strategy.canary", what)
}
