package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	networking "istio.io/api/networking/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pilot/test/xds"
	"istio.io/istio/pkg/config"
	"istio.io/istio/pkg/config/schema/gvk"
	"istio.io/istio/pkg/test"
)

// Timing of an EndpointSlice that follows a Service selector change.
const (
	TimingInside = "inside"
	TimingAfter  = "after"
)

// settle settings: the debounce of production istiod, and the quiet period
// after which a step counts as done (8× the debounce, reference).
var (
	debounce = 100 * time.Millisecond
	quiet    = 800 * time.Millisecond
)

// run plays one path of one Rollout's plan against a fresh istiod.
type run struct {
	t       test.Failer
	b       *bundle
	ro      *rolloutSpec
	pr      *planRollout
	timing  string
	proxies []proxySpec

	f     *xds.FakeDiscoveryServer
	kube  *kubeSide
	rec   *recorder
	view  *istiodView
	cfgs  map[string]config.Config // kind/ns/name → current config
	ctx   context.Context
	first planState
}

func cfgKey(kind, ns, name string) string { return kind + "/" + ns + "/" + name }

// setup starts istiod with the cluster as the start state leaves it.
func (r *run) setup(start planState) error {
	r.ctx = context.Background()
	r.kube = newKubeSide()
	r.rec = newRecorder()
	r.cfgs = map[string]config.Config{}
	r.first = start
	var objs []runtime.Object
	// Services with their selectors as the start state's labels say.
	for _, s := range r.b.services {
		svc := s.DeepCopy()
		for _, l := range start.Labels {
			if l.Object.Kind == "Service" && l.Object.Namespace == svc.Namespace && l.Object.Name == svc.Name {
				if svc.Spec.Selector == nil {
					svc.Spec.Selector = map[string]string{}
				}
				svc.Spec.Selector[hashLabel] = hashValues[l.Hash]
			}
		}
		if svc.Spec.ClusterIP == "" {
			r.kube.nextIP++
			svc.Spec.ClusterIP = fmt.Sprintf("10.96.%d.%d", r.kube.nextIP/250, r.kube.nextIP%250+1)
		}
		r.kube.services[key(svc.Namespace, svc.Name)] = svc
		objs = append(objs, svc)
	}
	// The client sidecar's own workload: a Service and a ready pod.
	for _, p := range r.proxies {
		if p.Kind != "sidecar" {
			continue
		}
		svc := &corev1.Service{}
		svc.Name, svc.Namespace = "tester", p.Namespace
		svc.Spec.Selector = map[string]string{"app": "tester"}
		svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(80), Protocol: corev1.ProtocolTCP}}
		r.kube.nextIP++
		svc.Spec.ClusterIP = fmt.Sprintf("10.96.%d.%d", r.kube.nextIP/250, r.kube.nextIP%250+1)
		r.kube.services[key(svc.Namespace, svc.Name)] = svc
		objs = append(objs, svc)
	}
	// Pods of both revisions, ready.
	for hash, n := range map[string]int{"<stable-hash>": start.StableReplicas, "<canary-hash>": start.CanaryReplicas} {
		for i := 0; i < n; i++ {
			p := r.kube.newPod(r.ro, hashValues[hash], true)
			r.kube.pods[key(p.obj.Namespace, p.obj.Name)] = p
			objs = append(objs, p.obj.DeepCopy())
		}
	}
	// Every proxy's own pod, named as its node ID says, so that istiod finds
	// it at connect (see proxySpec.PodName).
	for i, p := range r.proxies {
		pd := &corev1.Pod{}
		pd.Name, pd.Namespace, pd.Labels = p.PodName(), p.Namespace, p.Labels
		pd.Spec.ServiceAccountName, pd.Spec.NodeName = "default", "node-1"
		pd.Status.Phase, pd.Status.PodIP = corev1.PodRunning, r.proxies[i].IP
		pd.Status.PodIPs = []corev1.PodIP{{IP: pd.Status.PodIP}}
		setReady(pd, true)
		r.kube.pods[key(pd.Namespace, pd.Name)] = &pod{obj: pd, hash: "", ready: true, ports: map[string]int32{}}
		objs = append(objs, pd)
	}
	for n, svc := range r.kube.services {
		if len(svc.Spec.Selector) == 0 {
			continue
		}
		es := r.kube.slice(svc)
		r.kube.slices[n] = es
		objs = append(objs, es)
	}
	// Istio configs as the start state leaves them.
	var configs []config.Config
	for _, c := range r.b.configs {
		c = c.DeepCopy()
		r.cfgs[cfgKey(c.GroupVersionKind.Kind, c.Namespace, c.Name)] = c
	}
	for k, c := range r.cfgs {
		switch c.GroupVersionKind {
		case gvk.DestinationRule:
			c = r.drForLabels(c, start.Labels)
		case gvk.VirtualService:
			c = r.vsForState(c, start)
		}
		r.cfgs[k] = c
		configs = append(configs, c)
	}
	r.f = xds.NewFakeDiscoveryServer(r.t, xds.FakeOptions{KubernetesObjects: objs, Configs: configs, DebounceTime: debounce,
		EnableFakeXDSUpdater: true})
	r.kube.cs = r.f.KubeClient().Kube()
	view, err := newIstiodView(r.f)
	if err != nil {
		return err
	}
	r.view, r.kube.view = view, view
	// The view must read istiod's own pod informer, which holds the
	// proxies' pods by now; a separate informer would not order anything.
	for _, p := range r.proxies {
		if view.pods.Get(p.PodName(), p.Namespace) == nil {
			return fmt.Errorf("pod %s/%s is not in istiod's pod informer", p.Namespace, p.PodName())
		}
	}
	orig := r.f.Discovery.ProxyNeedsPush
	r.f.Discovery.ProxyNeedsPush = func(proxy *model.Proxy, req *model.PushRequest) (*model.PushRequest, bool) {
		out, ok := orig(proxy, req)
		r.rec.needsPush(proxy, req, ok)
		return out, ok
	}
	for _, p := range r.proxies {
		c, err := connect(p, r.f.BufListener.Dial, r.rec.response)
		if err != nil {
			return err
		}
		r.rec.clients[p.Name()] = c
		r.rec.byIP[p.IP] = p.Name()
		r.t.Cleanup(c.close)
	}
	if err := r.settle(); err != nil {
		return fmt.Errorf("initial sync: %w", err)
	}
	for name, c := range r.rec.clients {
		c.mu.Lock()
		n := len(c.held)
		c.mu.Unlock()
		if n < 2 {
			return fmt.Errorf("proxy %s received %d types at connect", name, n)
		}
	}
	r.rec.reset()
	return nil
}

// settle waits until istiod has committed every update and nothing was
// pushed or received for the quiet period.
func (r *run) settle() error {
	deadline := time.Now().Add(60 * time.Second)
	time.Sleep(2 * debounce)
	for time.Now().Before(deadline) {
		d := r.f.Discovery
		if r.rec.quietFor() >= quiet && d.InboundUpdates.Load() == d.CommittedUpdates.Load() {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("istiod did not settle within 60s")
}

// drForLabels sets each subset's hash label as the labels say.
func (r *run) drForLabels(c config.Config, ls []planLabel) config.Config {
	c = c.DeepCopy()
	dr := c.Spec.(*networking.DestinationRule)
	for _, l := range ls {
		if l.Object.Kind != "DestinationRule" || l.Object.Namespace != c.Namespace || l.Object.Name != c.Name {
			continue
		}
		if i, ok := subsetIndex(l.Field, dr); ok {
			if dr.Subsets[i].Labels == nil {
				dr.Subsets[i].Labels = map[string]string{}
			}
			dr.Subsets[i].Labels[hashLabel] = hashValues[l.Hash]
		}
	}
	return c
}

var subsetField = regexp.MustCompile(`^spec\.subsets\[(\d+|name=[^\]]+)\]`)

func subsetIndex(field string, dr *networking.DestinationRule) (int, bool) {
	m := subsetField.FindStringSubmatch(field)
	if m == nil {
		return 0, false
	}
	if name, ok := strings.CutPrefix(m[1], "name="); ok {
		for i, s := range dr.Subsets {
			if s.Name == name {
				return i, true
			}
		}
		return 0, false
	}
	i, err := strconv.Atoi(m[1])
	return i, err == nil && i < len(dr.Subsets)
}

// vsForState builds a managed VirtualService as Argo leaves it in a state:
// the committed spec, each managed route's destinations set to the state's,
// and the state's header/mirror routes in front.
func (r *run) vsForState(c config.Config, s planState) config.Config {
	base := r.baseConfig(c)
	base = base.DeepCopy()
	vs := base.Spec.(*networking.VirtualService)
	var canary *networking.Destination
	var primary []*networking.HTTPRouteDestination
	for _, rt := range s.Routes {
		if rt.VS.Namespace != base.Namespace || rt.VS.Name != base.Name {
			continue
		}
		var dests []*networking.HTTPRouteDestination
		var tdests []*networking.RouteDestination
		for _, d := range rt.Dests {
			if strings.HasPrefix(d.Host, "<experiment:") {
				continue
			}
			dst := &networking.Destination{Host: d.Host, Subset: d.Subset}
			if rt.Kind == "http" {
				for _, od := range vs.Http[rt.Index].Route {
					if od.Destination.Host == d.Host && od.Destination.Subset == d.Subset {
						dst = od.Destination
					}
				}
			}
			if d.Role == "canary" && canary == nil {
				canary = dst
			}
			dests = append(dests, &networking.HTTPRouteDestination{Destination: dst, Weight: d.Weight})
			tdests = append(tdests, &networking.RouteDestination{Destination: dst, Weight: d.Weight})
		}
		switch rt.Kind {
		case "http":
			vs.Http[rt.Index].Route = dests
			if primary == nil {
				primary = dests
			}
		case "tls":
			vs.Tls[rt.Index].Route = tdests
		case "tcp":
			vs.Tcp[rt.Index].Route = tdests
		}
	}
	var managed []*networking.HTTPRoute
	for _, m := range s.Managed {
		if canary == nil {
			continue
		}
		switch m.Type {
		case "header":
			hr := &networking.HTTPRoute{Name: m.Name, Route: []*networking.HTTPRouteDestination{{Destination: canary, Weight: 100}}}
			for _, mt := range r.headerMatch(m.Name) {
				hr.Match = append(hr.Match, mt)
			}
			managed = append(managed, hr)
		case "mirror":
			managed = append(managed, &networking.HTTPRoute{
				Name:             m.Name,
				Match:            []*networking.HTTPMatchRequest{{Uri: &networking.StringMatch{MatchType: &networking.StringMatch_Prefix{Prefix: "/"}}}},
				Route:            primary,
				Mirror:           canary,
				MirrorPercentage: &networking.Percent{Value: float64(m.Percentage)},
			})
		}
	}
	vs.Http = append(managed, vs.Http...)
	return base
}

// lastVSBatch is the last batch of a state that writes a VirtualService.
func lastVSBatch(s planState, vs planObject) int {
	last := 0
	for _, w := range s.Writes {
		if strings.HasPrefix(w.Kind, "vs-") && w.Object == vs && w.Batch > last {
			last = w.Batch
		}
	}
	return last
}

// weightField is a vs-weight write's field: spec.<kind>[route].route[dest].weight,
// the route index counting the managed routes in front, as the live object has it.
var weightField = regexp.MustCompile(`^spec\.(http|tls|tcp)\[(\d+)\]\.route\[(\d+)\]\.weight$`)

// vsForBatch applies one batch's writes on a VirtualService to its live
// config: weights set where the fields say, managed routes removed by name.
// A managed route added in a batch other than the state's last is refused
// (no plan writes one today; the harness would have to build it).
func vsForBatch(c config.Config, s planState, vs planObject, batch int) (config.Config, error) {
	c = c.DeepCopy()
	spec := c.Spec.(*networking.VirtualService)
	for _, w := range s.Writes {
		if w.Batch != batch || w.Object != vs {
			continue
		}
		switch w.Kind {
		case "vs-weight":
			m := weightField.FindStringSubmatch(w.Field)
			weight, err := strconv.Atoi(w.New)
			if m == nil || err != nil {
				return c, fmt.Errorf("vs-weight %s = %q: not a route weight", w.Field, w.New)
			}
			ri, _ := strconv.Atoi(m[2])
			di, _ := strconv.Atoi(m[3])
			var dest *int32
			switch m[1] {
			case "http":
				if ri < len(spec.Http) && di < len(spec.Http[ri].Route) {
					dest = &spec.Http[ri].Route[di].Weight
				}
			case "tls":
				if ri < len(spec.Tls) && di < len(spec.Tls[ri].Route) {
					dest = &spec.Tls[ri].Route[di].Weight
				}
			case "tcp":
				if ri < len(spec.Tcp) && di < len(spec.Tcp[ri].Route) {
					dest = &spec.Tcp[ri].Route[di].Weight
				}
			}
			if dest == nil {
				return c, fmt.Errorf("vs-weight %s: no such destination in the live VirtualService", w.Field)
			}
			if strconv.Itoa(int(*dest)) != w.Old {
				return c, fmt.Errorf("vs-weight %s: the live VirtualService has %d, the plan says %s", w.Field, *dest, w.Old)
			}
			*dest = int32(weight)
		case "vs-route-remove":
			name, _ := strings.CutPrefix(w.Old, "route ")
			kept := spec.Http[:0]
			for _, h := range spec.Http {
				if h.Name != name {
					kept = append(kept, h)
				}
			}
			spec.Http = kept
		default:
			return c, fmt.Errorf("%s in batch %d before the state's last VirtualService batch: not played by the harness", w.Kind, batch)
		}
	}
	return c, nil
}

// baseConfig is a config as the bundle commits it.
func (r *run) baseConfig(c config.Config) config.Config {
	for _, b := range r.b.configs {
		if b.GroupVersionKind == c.GroupVersionKind && b.Namespace == c.Namespace && b.Name == c.Name {
			return b
		}
	}
	return c
}

// headerMatch reads a setHeaderRoute's match from the Rollout's steps.
func (r *run) headerMatch(name string) []*networking.HTTPMatchRequest {
	c := r.ro.Spec.Strategy.Canary
	if c == nil {
		return nil
	}
	for _, st := range c.Steps {
		h := st.SetHeaderRoute
		if h == nil || h.Name != name {
			continue
		}
		var out []*networking.HTTPMatchRequest
		for _, m := range h.Match {
			sm := &networking.StringMatch{}
			switch {
			case m.HeaderValue.Prefix != "":
				sm.MatchType = &networking.StringMatch_Prefix{Prefix: m.HeaderValue.Prefix}
			case m.HeaderValue.Regex != "":
				sm.MatchType = &networking.StringMatch_Regex{Regex: m.HeaderValue.Regex}
			default:
				sm.MatchType = &networking.StringMatch_Exact{Exact: m.HeaderValue.Exact}
			}
			out = append(out, &networking.HTTPMatchRequest{Headers: map[string]*networking.StringMatch{m.HeaderName: sm}})
		}
		return out
	}
	return nil
}

// batchWork is what the later stages of a batch still have to do.
type batchWork struct {
	newPods, terminating []*pod
	lateSlices           map[string]bool
}

// playState applies one state's writes batch by batch, recording pushes.
// Each stage (a batch's writes with the EndpointSlices that follow them
// inside the debounce window; a late slice; pods turning ready; terminated
// pods deleted) is played in the order the controllers write, each write
// waiting until istiod has taken in the one before (istiodView).
func (r *run) playState(s planState) (StateObs, error) {
	obs := StateObs{Phase: s.Phase, Step: s.Step, Writes: []WriteRef{}, Pushes: []PushObs{}}
	maxBatch := 0
	for _, w := range s.Writes {
		obs.Writes = append(obs.Writes, WriteRef{Kind: w.Kind, Object: w.Object.String(), Field: w.Field, Old: w.Old, New: w.New, Batch: w.Batch})
		maxBatch = max(maxBatch, w.Batch)
	}
	for b := 1; b <= maxBatch; b++ {
		work := batchWork{lateSlices: map[string]bool{}}
		vsDone := map[string]bool{}
		m := r.view.mark()
		for _, w := range s.Writes {
			if w.Batch != b {
				continue
			}
			if err := r.apply(w, s, &work, vsDone); err != nil {
				return obs, fmt.Errorf("%s %s: %w", w.Kind, w.Object, err)
			}
		}
		if err := r.kube.syncSlices(r.ctx, work.lateSlices); err != nil {
			return obs, err
		}
		if err := r.stage(&obs, "write", b, m); err != nil {
			return obs, err
		}
		if len(work.lateSlices) > 0 {
			m := r.view.mark()
			if err := r.kube.syncSlices(r.ctx, nil); err != nil {
				return obs, err
			}
			if err := r.stage(&obs, "slice", b, m); err != nil {
				return obs, err
			}
		}
		if len(work.newPods) > 0 {
			m := r.view.mark()
			for _, p := range work.newPods {
				if err := r.kube.markReady(r.ctx, p); err != nil {
					return obs, err
				}
			}
			if err := r.kube.syncSlices(r.ctx, nil); err != nil {
				return obs, err
			}
			if err := r.stage(&obs, "ready", b, m); err != nil {
				return obs, err
			}
		}
		if len(work.terminating) > 0 {
			m := r.view.mark()
			for _, p := range work.terminating {
				if err := r.kube.deletePod(r.ctx, p); err != nil {
					return obs, err
				}
			}
			if err := r.kube.syncSlices(r.ctx, nil); err != nil {
				return obs, err
			}
			if err := r.stage(&obs, "deleted", b, m); err != nil {
				return obs, err
			}
		}
	}
	return obs, nil
}

// stage waits for istiod to settle, checks that the stage's updates reached
// it within one debounce window (from mark m on), and takes its pushes.
func (r *run) stage(obs *StateObs, stage string, batch int, m int) error {
	if err := r.settle(); err != nil {
		return err
	}
	if err := checkStage(stage, r.view.since(m)); err != nil {
		return err
	}
	ps, err := r.rec.take(stage, batch)
	obs.Pushes = append(obs.Pushes, ps...)
	return err
}

// update writes a config the way the API server does: the object keeps its
// creation timestamp (istiod orders merged DestinationRules by it).
func (r *run) update(c config.Config) error {
	if cur := r.f.Store().Get(c.GroupVersionKind, c.Name, c.Namespace); cur != nil {
		c.CreationTimestamp = cur.CreationTimestamp
	}
	_, err := r.f.Store().Update(c)
	return err
}

// apply performs one plan write.
func (r *run) apply(w planWrite, s planState, work *batchWork, vsDone map[string]bool) error {
	switch w.Kind {
	case "vs-weight", "vs-route-add", "vs-route-remove":
		k := cfgKey("VirtualService", w.Object.Namespace, w.Object.Name)
		if vsDone[k] {
			return nil
		}
		vsDone[k] = true
		c, ok := r.cfgs[k]
		if !ok {
			return fmt.Errorf("not in the bundle")
		}
		if w.Batch == lastVSBatch(s, w.Object) {
			c = r.vsForState(c, s)
		} else {
			// A reconcile before the state's last one on this
			// VirtualService (a promotion's full shift before the
			// reset): the state's routes are not yet what it holds.
			var err error
			if c, err = vsForBatch(c, s, w.Object, w.Batch); err != nil {
				return err
			}
		}
		r.cfgs[k] = c
		return r.update(c)
	case "dr-subset-label":
		k := cfgKey("DestinationRule", w.Object.Namespace, w.Object.Name)
		c, ok := r.cfgs[k]
		if !ok {
			return fmt.Errorf("not in the bundle")
		}
		c = r.drForLabels(c, []planLabel{{Object: w.Object, Field: w.Field, Hash: w.New}})
		r.cfgs[k] = c
		return r.update(c)
	case "service-selector":
		k := key(w.Object.Namespace, w.Object.Name)
		svc := r.kube.services[k]
		if svc == nil {
			return fmt.Errorf("not in the bundle")
		}
		svc = svc.DeepCopy()
		if svc.Spec.Selector == nil {
			svc.Spec.Selector = map[string]string{}
		}
		svc.Spec.Selector[hashLabel] = hashValues[w.New]
		if r.timing == TimingAfter {
			work.lateSlices[k] = true
		}
		return r.kube.updateService(r.ctx, svc)
	case "replicaset-scale":
		hash := ""
		for sym, v := range hashValues {
			if strings.HasSuffix(w.Object.Name, "-"+sym) {
				hash = v
			}
		}
		if hash == "" {
			return fmt.Errorf("ReplicaSet name %q names no revision", w.Object.Name)
		}
		old, err1 := strconv.Atoi(w.Old)
		nw, err2 := strconv.Atoi(w.New)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("replicas %q → %q", w.Old, w.New)
		}
		live := r.kube.revisionPods(r.ro.Metadata.Namespace, r.ro.Metadata.Name, hash)
		if len(live) != old {
			return fmt.Errorf("plan says %d replicas, harness has %d pods", old, len(live))
		}
		for i := old; i < nw; i++ {
			p := r.kube.newPod(r.ro, hash, false)
			if err := r.kube.createPod(r.ctx, p); err != nil {
				return err
			}
			work.newPods = append(work.newPods, p)
		}
		for i := old - 1; i >= nw; i-- { // newest first, as the ReplicaSet controller picks
			p := live[i]
			if err := r.kube.markTerminating(r.ctx, p); err != nil {
				return err
			}
			work.terminating = append(work.terminating, p)
		}
		return nil
	}
	return fmt.Errorf("unknown write kind %q", w.Kind)
}
