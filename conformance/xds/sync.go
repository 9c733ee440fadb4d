package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pilot/pkg/serviceregistry/util/xdsfake"
	"istio.io/istio/pilot/test/xds"
	"istio.io/istio/pkg/kube/kclient"
)

// istiodView follows what istiod has taken in of the harness's Kubernetes
// writes. The harness waits on it instead of sleeping, so that it plays the
// controllers' order the same way on a busy machine as on an idle one:
//
//   - a pod change is in istiod's pod informer (the store the EndpointSlice
//     handler reads a slice's pods from) and, when istiod's pod cache acts on
//     it (a pod turning ready, a ready pod terminating), the pod cache has
//     handled it, before the EndpointSlice that follows it is written;
//   - a Service or EndpointSlice write has reached istiod's registry (its
//     SvcUpdate / EDSUpdate call) before the next write.
//
// It also keeps the time of every update istiod received, so that a stage
// whose updates did not all arrive within one debounce window (a stalled
// machine) is detected and played again rather than recorded.
type istiodView struct {
	pods kclient.Client[*corev1.Pod] // istiod's own pod informer (shared)

	mu     sync.Mutex
	events []viewEvent
	counts map[string]int // kind + " " + id → events seen
}

// viewEvent is one update istiod received.
type viewEvent struct {
	at   time.Time
	kind string // the call istiod received (xds, eds, service) or "workload" (its pod cache)
	id   string
}

// waitTimeout bounds every wait; istiod that takes longer is stuck, not slow.
const waitTimeout = 30 * time.Second

// newIstiodView attaches to a fake discovery server started with
// EnableFakeXDSUpdater: every registry and config call istiod's push
// machinery receives goes through that updater, whose delegate (the
// DiscoveryServer) the view wraps to note each call as it is made.
func newIstiodView(f *xds.FakeDiscoveryServer) (*istiodView, error) {
	up, ok := f.XdsUpdater.(*xdsfake.Updater)
	if !ok || up.Delegate == nil {
		return nil, fmt.Errorf("istiod was started without the event-reporting XDS updater")
	}
	pods, err := istiodPods(f)
	if err != nil {
		return nil, err
	}
	v := &istiodView{pods: pods, counts: map[string]int{}}
	up.Delegate = &notingUpdater{XDSUpdater: up.Delegate, v: v}
	// Called by istiod's pod cache (after istiod's own workload handlers) once
	// it has handled a pod event that changes its workload instances.
	f.KubeRegistry.AppendWorkloadHandler(func(wi *model.WorkloadInstance, _ model.Event) {
		v.add("workload", wi.Namespace+"/"+wi.Name)
	})
	return v, nil
}

// istiodPods returns istiod's own pod informer. kclient shares one informer
// per type and selectors, so asking with the kube registry's selectors returns
// it; those differ by version (1.30 added status.phase!=Failed), and only the
// registry's informer has been started and synced.
func istiodPods(f *xds.FakeDiscoveryServer) (kclient.Client[*corev1.Pod], error) {
	c := f.KubeClient()
	for _, sel := range []string{"status.phase!=Failed", ""} {
		pods := kclient.NewFiltered[*corev1.Pod](c, kclient.Filter{ObjectFilter: c.ObjectFilter(), FieldSelector: sel})
		if pods.HasSynced() {
			return pods, nil
		}
	}
	return nil, fmt.Errorf("istiod's pod informer not found (its field selector changed?)")
}

// notingUpdater notes the updates istiod's registries and config handlers
// hand to the DiscoveryServer, then hands them on.
type notingUpdater struct {
	model.XDSUpdater
	v *istiodView
}

func (u *notingUpdater) ConfigUpdate(req *model.PushRequest) {
	var names []string
	for k := range req.ConfigsUpdated {
		names = append(names, k.Name)
	}
	sort.Strings(names)
	u.v.add("xds", strings.Join(names, ","))
	u.XDSUpdater.ConfigUpdate(req)
}

func (u *notingUpdater) EDSUpdate(shard model.ShardKey, host, ns string, eps []*model.IstioEndpoint) {
	u.v.add("eds", host)
	u.XDSUpdater.EDSUpdate(shard, host, ns, eps)
}

func (u *notingUpdater) SvcUpdate(shard model.ShardKey, host, ns string, ev model.Event) {
	u.v.add("service", host)
	u.XDSUpdater.SvcUpdate(shard, host, ns, ev)
}

func (v *istiodView) add(kind, id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.events = append(v.events, viewEvent{at: time.Now(), kind: kind, id: id})
	v.counts[kind+" "+id]++
}

// count is how many events of a kind for an id istiod has reported.
func (v *istiodView) count(kind, id string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.counts[kind+" "+id]
}

// mark is the position in the event log a stage starts at.
func (v *istiodView) mark() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.events)
}

// since returns the events from a mark on.
func (v *istiodView) since(m int) []viewEvent {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]viewEvent(nil), v.events[m:]...)
}

// waitFor polls cond until it holds.
func waitFor(what string, cond func() bool) error {
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("istiod did not show %s within %s", what, waitTimeout)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// waitEvent waits until istiod reported more than n events of kind for id.
func (v *istiodView) waitEvent(kind, id string, n int) error {
	return waitFor(fmt.Sprintf("%s %s", kind, id), func() bool { return v.count(kind, id) > n })
}

// waitPod waits until istiod's pod informer holds the pod as want says (nil:
// gone) and, when notify, until istiod's pod cache has handled the change.
func (v *istiodView) waitPod(ns, name string, want func(*corev1.Pod) bool, notify bool, n int) error {
	if err := waitFor("pod "+ns+"/"+name+" in its pod informer", func() bool { return want(v.pods.Get(name, ns)) }); err != nil {
		return err
	}
	if notify {
		return v.waitEvent("workload", ns+"/"+name, n)
	}
	return nil
}

// timingError is a stage whose updates did not reach istiod within one
// debounce window: the machine stalled, the run is played again.
type timingError struct {
	stage string
	gap   time.Duration
	after viewEvent
}

func (e *timingError) Error() string {
	return fmt.Sprintf("stage %s: %s without an update after %s %s (the debounce window is %s): the machine stalled",
		e.stage, e.gap.Round(time.Millisecond), e.after.kind, e.after.id, debounce)
}

// maxStageGap is the longest pause allowed between two updates of one stage.
// istiod merges updates less than a debounce window apart, but when its
// debounce loop is scheduled late, an update and the window's timer can be
// ready at once and either may win: 60% of the window keeps clear of that.
var maxStageGap = debounce * 6 / 10

// checkStage reports a stage whose consecutive updates are further apart than
// maxStageGap.
func checkStage(stage string, evs []viewEvent) error {
	for i := 1; i < len(evs); i++ {
		if gap := evs[i].at.Sub(evs[i-1].at); gap > maxStageGap {
			return &timingError{stage: stage, gap: gap, after: evs[i-1]}
		}
	}
	return nil
}
