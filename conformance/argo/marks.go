package argoconformance

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}

// mark is a point of the event log a state is read at: the state holds
// every event up to and including RV, and its writes are the events after
// the previous mark.
type mark struct {
	phase string
	step  int
	rv    int64
}

// rolloutEvents returns the Rollout's own events, decoded.
func (o *observer) rolloutEvents() ([]int64, []*v1alpha1.Rollout, error) {
	var rvs []int64
	var ros []*v1alpha1.Rollout
	for _, e := range o.events {
		if e.Kind != "Rollout" || e.Obj.GetName() != o.ro.Name || e.Obj.GetNamespace() != o.ro.Namespace {
			continue
		}
		ro, err := rolloutOf(e)
		if err != nil {
			return nil, nil, err
		}
		rvs, ros = append(rvs, e.RV), append(ros, ro)
	}
	return rvs, ros, nil
}

// firstScaleDown returns the revision before the first event after rv that
// lowers the replicas of the ReplicaSet of hash, or -1.
func (o *observer) firstScaleDown(after int64, hash string) int64 {
	key := "ReplicaSet/" + o.ro.Namespace + "/" + o.ro.Name + "-" + hash
	prev := Replay(o.events, after)[key]
	cur := int64(0)
	if prev != nil {
		cur, _, _ = unstructured.NestedInt64(prev.Object, "spec", "replicas")
	}
	for _, e := range o.events {
		if e.RV <= after || e.Key() != key {
			continue
		}
		n, _, _ := unstructured.NestedInt64(e.Obj.Object, "spec", "replicas")
		if n < cur {
			return e.RV - 1
		}
		cur = n
	}
	return -1
}

// firstScaleTo returns the revision before the first event after rv that
// sets the replicas of the ReplicaSet of hash to n, or -1.
func (o *observer) firstScaleTo(after int64, hash string, n int64) int64 {
	key := "ReplicaSet/" + o.ro.Namespace + "/" + o.ro.Name + "-" + hash
	prev := Replay(o.events, after)[key]
	cur := int64(-1)
	if prev != nil {
		cur, _, _ = unstructured.NestedInt64(prev.Object, "spec", "replicas")
	}
	for _, e := range o.events {
		if e.RV <= after || e.Key() != key {
			continue
		}
		r, _, _ := unstructured.NestedInt64(e.Obj.Object, "spec", "replicas")
		if r == n && cur != n {
			return e.RV - 1
		}
		cur = r
	}
	return -1
}

// canaryMarks finds the states of a canary rollout in the log: before (the
// revision before the template update), start (the first status with the
// new pod hash), one per step (the first status whose currentStepIndex
// passes it), then promote (the revision before the old ReplicaSet is
// scaled down) and scale-down (the end). With abortRV > 0 the forward path
// stops at step abortStep, where the rollout was aborted, and the abort path
// follows: abort (the revision before the canary ReplicaSet goes to 0, or
// before the controller first reverts one of its abort writes) and
// scale-down (the end).
func (o *observer) canaryMarks(updateRV, abortRV, end int64, steps, abortStep int) (fwd, abort []mark, err error) {
	rvs, ros, err := o.rolloutEvents()
	if err != nil {
		return nil, nil, err
	}
	fwd = append(fwd, mark{"before", -1, updateRV - 1})
	stop := end
	if abortRV > 0 {
		stop = abortRV - 1
	}
	start := int64(-1)
	for i, ro := range ros {
		if rvs[i] > updateRV && rvs[i] <= stop && ro.Status.CurrentPodHash == o.newHash {
			start = rvs[i]
			break
		}
	}
	if start < 0 {
		return nil, nil, fmt.Errorf("no Rollout status names the new pod hash %s", o.newHash)
	}
	fwd = append(fwd, mark{"start", -1, start})
	last := start
	if abortRV > 0 {
		steps = abortStep + 1
	}
	for s := range steps {
		at := int64(-1)
		for i, ro := range ros {
			if rvs[i] > start && rvs[i] <= stop && ro.Status.CurrentStepIndex != nil && int(*ro.Status.CurrentStepIndex) > s {
				at = rvs[i]
				break
			}
		}
		if at < 0 && abortRV > 0 && s == abortStep {
			// Aborted while paused at this step: its state is the one the
			// abort found.
			at = abortRV - 1
		}
		if at < 0 {
			break
		}
		fwd = append(fwd, mark{"step", s, at})
		last = at
	}
	if abortRV > 0 {
		down := o.firstScaleTo(abortRV-1, o.newHash, 0)
		if r := o.firstRevert(abortRV-1, end); r >= 0 && (down < 0 || r < down) {
			down = r
		}
		if down < 0 {
			return fwd, []mark{{"abort", -1, end}}, nil
		}
		return fwd, []mark{{"abort", -1, down}, {"scale-down", -1, end}}, nil
	}
	// Promotion: the revisions from the Rollout naming the new ReplicaSet
	// stable; when the old ReplicaSet still has pods then, its scale-down
	// (after scaleDownDelaySeconds) starts the last state.
	promoted := end
	for i, ro := range ros {
		if rvs[i] > last && ro.Status.StableRS == o.newHash {
			promoted = rvs[i]
			break
		}
	}
	down := o.firstScaleDown(promoted, o.stableHash)
	if down < 0 {
		return append(fwd, mark{"promote", -1, end}), nil, nil
	}
	return append(fwd, mark{"promote", -1, down}, mark{"scale-down", -1, end}), nil, nil
}

// blueGreenMarks finds the states of a blue-green rollout: before, start
// (the pause before promotion, or the revision before the active Service
// moves when the rollout promotes itself), promote (the revision before the
// old ReplicaSet is scaled down) and scale-down (the end); with an abort,
// the abort state is the end.
func (o *observer) blueGreenMarks(updateRV, abortRV, end int64) (fwd, abort []mark, err error) {
	rvs, ros, err := o.rolloutEvents()
	if err != nil {
		return nil, nil, err
	}
	fwd = append(fwd, mark{"before", -1, updateRV - 1})
	start := int64(-1)
	for i, ro := range ros {
		if rvs[i] > updateRV && ro.Status.CurrentPodHash == o.newHash && len(ro.Status.PauseConditions) > 0 {
			start = rvs[i]
			break
		}
	}
	if start < 0 && o.ro.Spec.Strategy.BlueGreen.PreviewReplicaCount != nil {
		// No pause: the state before the new ReplicaSet grows past
		// previewReplicaCount on its way to promotion.
		key := "ReplicaSet/" + o.ro.Namespace + "/" + o.ro.Name + "-" + o.newHash
		for _, e := range o.events {
			if e.RV > updateRV && e.Key() == key {
				if n, _, _ := unstructured.NestedInt64(e.Obj.Object, "spec", "replicas"); n > int64(*o.ro.Spec.Strategy.BlueGreen.PreviewReplicaCount) {
					start = e.RV - 1
					break
				}
			}
		}
	}
	if start < 0 {
		// No pause: the state before the active Service switches.
		active := o.ro.Spec.Strategy.BlueGreen.ActiveService
		for _, e := range o.events {
			if e.RV > updateRV && e.Kind == "Service" && e.Obj.GetName() == active {
				if h, _, _ := unstructured.NestedString(e.Obj.Object, "spec", "selector", hashLabel); h == o.newHash {
					start = e.RV - 1
					break
				}
			}
		}
	}
	if start < 0 {
		return nil, nil, fmt.Errorf("blue-green: no pause and no active Service switch to %s", o.newHash)
	}
	fwd = append(fwd, mark{"start", -1, start})
	if abortRV > 0 {
		return fwd, []mark{{"abort", -1, end}}, nil
	}
	down := o.firstScaleDown(start, o.stableHash)
	if down < 0 {
		return append(fwd, mark{"promote", -1, end}), nil, nil
	}
	return append(fwd, mark{"promote", -1, down}, mark{"scale-down", -1, end}), nil, nil
}

// firstRevert returns the revision before the first write in (after, end]
// that sets a field back to the value an earlier write of that span took
// it from, or -1: the controller going back on itself (the canary selector
// flapping after an abort, argo-rollouts#3078) starts the next state.
func (o *observer) firstRevert(after, end int64) int64 {
	type key struct{ kind, obj, field string }
	from := map[key]string{}
	for _, tw := range o.writes(after, end) {
		k := key{tw.w.Kind, tw.w.Object.String(), tw.w.Field}
		if f, ok := from[k]; ok && tw.w.New == f {
			return tw.rv - 1
		}
		if _, ok := from[k]; !ok {
			from[k] = tw.w.Old
		}
	}
	return -1
}

// views renders the states at the marks; prev is the revision the first
// mark's writes start after.
func (o *observer) views(marks []mark, prev int64) []View {
	var out []View
	for _, m := range marks {
		v := o.view(Replay(o.events, m.rv), m.phase, m.step)
		if m.phase != "before" {
			var ws []Write
			for _, tw := range o.writes(prev, m.rv) {
				ws = append(ws, tw.w)
			}
			v.Writes = RenderWrites(ws)
		}
		out = append(out, v)
		prev = m.rv
	}
	return out
}
