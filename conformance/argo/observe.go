package argoconformance

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	istioutil "github.com/argoproj/argo-rollouts/utils/istio"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

const hashLabel = v1alpha1.DefaultRolloutUniqueLabelKey

// Symbolic hashes, as the plan prints them.
const (
	oldHashSym = "<stable-hash>"
	newHashSym = "<canary-hash>"
)

// observer turns a run's event log into Views. It knows the Rollout (as
// applied, in the live namespace), how live namespaces map back to the
// bundle's, and the two revisions' real hashes.
type observer struct {
	ro         *v1alpha1.Rollout
	nsBack     map[string]string
	stableHash string
	newHash    string
	events     []Event
}

// vsRef is a VirtualService the Rollout manages and the http routes of it.
type vsRef struct {
	ns, name string
	routes   []string // names; empty: the single route
}

func (o *observer) virtualServices() []vsRef {
	c := o.ro.Spec.Strategy.Canary
	if c == nil || c.TrafficRouting == nil || c.TrafficRouting.Istio == nil {
		return nil
	}
	var refs []v1alpha1.IstioVirtualService
	if vs := c.TrafficRouting.Istio.VirtualService; vs != nil {
		refs = append(refs, *vs)
	}
	refs = append(refs, c.TrafficRouting.Istio.VirtualServices...)
	var out []vsRef
	for _, r := range refs {
		ns, name := istioutil.GetVirtualServiceNamespaceName(r.Name)
		if ns == "" {
			ns = o.ro.Namespace
		}
		out = append(out, vsRef{ns: ns, name: name, routes: r.Routes})
	}
	return out
}

func (o *observer) managedNames() map[string]bool {
	out := map[string]bool{}
	if c := o.ro.Spec.Strategy.Canary; c != nil && c.TrafficRouting != nil {
		for _, m := range c.TrafficRouting.ManagedRoutes {
			out[m.Name] = true
		}
	}
	return out
}

// services are the Services whose selector Argo points at a revision.
func (o *observer) services() []string {
	var out []string
	if c := o.ro.Spec.Strategy.Canary; c != nil {
		out = append(out, c.StableService, c.CanaryService)
		if c.PingPong != nil {
			out = append(out, c.PingPong.PingService, c.PingPong.PongService)
		}
	}
	if bg := o.ro.Spec.Strategy.BlueGreen; bg != nil {
		out = append(out, bg.ActiveService, bg.PreviewService)
	}
	var keep []string
	for _, s := range out {
		if s != "" {
			keep = append(keep, s)
		}
	}
	return keep
}

func (o *observer) destinationRule() *v1alpha1.IstioDestinationRule {
	if c := o.ro.Spec.Strategy.Canary; c != nil && c.TrafficRouting != nil && c.TrafficRouting.Istio != nil {
		return c.TrafficRouting.Istio.DestinationRule
	}
	return nil
}

func (o *observer) sym(h string) string {
	switch h {
	case "":
		return "absent"
	case o.stableHash:
		return oldHashSym
	case o.newHash:
		return newHashSym
	}
	return h
}

// obj renders a live object in the bundle's namespace.
func (o *observer) obj(kind, ns, name string) Object {
	if b, ok := o.nsBack[ns]; ok {
		ns = b
	}
	if kind == "ReplicaSet" {
		for _, h := range []string{o.stableHash, o.newHash} {
			if h != "" && name == o.ro.Name+"-"+h {
				name = o.ro.Name + "-" + o.sym(h)
			}
		}
	}
	return Object{Kind: kind, Namespace: ns, Name: name}
}

// routeList is one route list of a VirtualService.
type liveRoute struct {
	index int // in spec.<kind>
	name  string
	raw   map[string]any
	dests []liveDest
}

type liveDest struct {
	host, subset string
	weight       int64
}

func httpRoutes(vs *unstructured.Unstructured) []liveRoute {
	list, _, _ := unstructured.NestedSlice(vs.Object, "spec", "http")
	out := make([]liveRoute, 0, len(list))
	for i, r := range list {
		m, _ := r.(map[string]any)
		name, _ := m["name"].(string)
		lr := liveRoute{index: i, name: name, raw: m}
		ds, _ := m["route"].([]any)
		for _, d := range ds {
			dm, _ := d.(map[string]any)
			host, _, _ := unstructured.NestedString(dm, "destination", "host")
			subset, _, _ := unstructured.NestedString(dm, "destination", "subset")
			w, _, _ := unstructured.NestedInt64(dm, "weight")
			lr.dests = append(lr.dests, liveDest{host: host, subset: subset, weight: w})
		}
		out = append(out, lr)
	}
	return out
}

// unmanaged returns the http routes that are not header/mirror routes, the
// list the Rollout's route names and indexes refer to.
func (o *observer) unmanaged(vs *unstructured.Unstructured) []liveRoute {
	managed := o.managedNames()
	var out []liveRoute
	for _, r := range httpRoutes(vs) {
		if !managed[r.name] {
			out = append(out, r)
		}
	}
	return out
}

func (o *observer) view(objs Objects, phase string, step int) View {
	v := View{Phase: phase, Step: step, Fields: map[string]string{}}
	replicas := func(hash string) int64 {
		if rs := objs["ReplicaSet/"+o.ro.Namespace+"/"+o.ro.Name+"-"+hash]; rs != nil {
			n, found, _ := unstructured.NestedInt64(rs.Object, "spec", "replicas")
			if !found {
				n = 1
			}
			return n
		}
		return 0
	}
	v.Fields[keyPods] = fmt.Sprintf("%d/%d", replicas(o.stableHash), replicas(o.newHash))
	managed := o.managedNames()
	for _, ref := range o.virtualServices() {
		vs := objs["VirtualService/"+ref.ns+"/"+ref.name]
		if vs == nil {
			continue
		}
		key := o.obj("VirtualService", ref.ns, ref.name)
		un := o.unmanaged(vs)
		pick := func(r liveRoute, idx int) {
			var ds []string
			for _, d := range r.dests {
				ds = append(ds, destText(d.host, d.subset, int32(d.weight)))
			}
			v.Fields[routeKey(key, "http", r.name, idx)] = strings.Join(ds, ", ")
		}
		if len(ref.routes) == 0 && len(un) > 0 {
			pick(un[0], 0)
		}
		for _, name := range ref.routes {
			for i, r := range un {
				if r.name == name {
					pick(r, i)
				}
			}
		}
		var ms []ManagedRoute
		for _, r := range httpRoutes(vs) {
			if managed[r.name] {
				ms = append(ms, managedOf(r))
			}
		}
		if len(ms) > 0 {
			v.Fields[managedKey(key)] = managedText(ms)
		}
	}
	for _, s := range o.services() {
		svc := objs["Service/"+o.ro.Namespace+"/"+s]
		if svc == nil {
			continue
		}
		if h, ok, _ := unstructured.NestedString(svc.Object, "spec", "selector", hashLabel); ok {
			v.Fields[labelKey(o.obj("Service", o.ro.Namespace, s), selectorField)] = o.sym(h)
		}
	}
	if dr := o.destinationRule(); dr != nil {
		ns, name := istioutil.GetVirtualServiceNamespaceName(dr.Name)
		if ns == "" {
			ns = o.ro.Namespace
		}
		if live := objs["DestinationRule/"+ns+"/"+name]; live != nil {
			for i, s := range subsets(live) {
				if s.name != dr.StableSubsetName && s.name != dr.CanarySubsetName {
					continue
				}
				if s.hash != "" {
					v.Fields[labelKey(o.obj("DestinationRule", ns, name), subsetField(i))] = o.sym(s.hash)
				}
			}
		}
	}
	return v
}

const selectorField = `spec.selector["` + hashLabel + `"]`

func subsetField(i int) string { return fmt.Sprintf(`spec.subsets[%d].labels["%s"]`, i, hashLabel) }

type liveSubset struct{ name, hash string }

func subsets(dr *unstructured.Unstructured) []liveSubset {
	list, _, _ := unstructured.NestedSlice(dr.Object, "spec", "subsets")
	var out []liveSubset
	for _, s := range list {
		m, _ := s.(map[string]any)
		name, _ := m["name"].(string)
		h, _, _ := unstructured.NestedString(m, "labels", hashLabel)
		out = append(out, liveSubset{name: name, hash: h})
	}
	return out
}

func managedOf(r liveRoute) ManagedRoute {
	m := ManagedRoute{Name: r.name, Type: "header"}
	if _, ok := r.raw["mirror"]; ok {
		m.Type = "mirror"
		m.Percentage = 100
		if p, ok, _ := unstructured.NestedFieldNoCopy(r.raw, "mirrorPercentage", "value"); ok {
			switch x := p.(type) {
			case float64:
				m.Percentage = int32(x)
			case int64:
				m.Percentage = int32(x)
			}
		}
	}
	return m
}

// timedWrite is a write and the revision that made it.
type timedWrite struct {
	rv int64
	w  Write
}

// writes returns the writes the events in (from, to] made, in order.
func (o *observer) writes(from, to int64) []timedWrite {
	var out []timedWrite
	prev := Replay(o.events, from)
	vsNames := map[string]bool{}
	for _, ref := range o.virtualServices() {
		vsNames[ref.ns+"/"+ref.name] = true
	}
	svcNames := map[string]bool{}
	for _, s := range o.services() {
		svcNames[o.ro.Namespace+"/"+s] = true
	}
	drKey := ""
	if dr := o.destinationRule(); dr != nil {
		ns, name := istioutil.GetVirtualServiceNamespaceName(dr.Name)
		if ns == "" {
			ns = o.ro.Namespace
		}
		drKey = ns + "/" + name
	}
	for _, e := range o.events {
		if e.RV <= from {
			continue
		}
		if e.RV > to {
			break
		}
		old := prev[e.Key()]
		if e.Type == watch.Deleted {
			delete(prev, e.Key())
			continue
		}
		prev[e.Key()] = e.Obj
		nsName := e.Obj.GetNamespace() + "/" + e.Obj.GetName()
		var ws []Write
		switch {
		case e.Kind == "ReplicaSet" && strings.HasPrefix(e.Obj.GetName(), o.ro.Name+"-"):
			ws = o.scaleWrites(old, e.Obj)
		case e.Kind == "Service" && svcNames[nsName]:
			oh, _, _ := unstructuredString(old, "spec", "selector", hashLabel)
			nh, _, _ := unstructuredString(e.Obj, "spec", "selector", hashLabel)
			if oh != nh {
				ws = []Write{{Kind: "service-selector", Object: o.obj("Service", e.Obj.GetNamespace(), e.Obj.GetName()), Field: selectorField, Old: o.sym(oh), New: o.sym(nh)}}
			}
		case e.Kind == "DestinationRule" && nsName == drKey:
			ws = o.subsetWrites(old, e.Obj)
		case e.Kind == "VirtualService" && vsNames[nsName]:
			ws = o.vsWrites(old, e.Obj)
		}
		for _, w := range ws {
			out = append(out, timedWrite{rv: e.RV, w: w})
		}
	}
	return out
}

func unstructuredString(u *unstructured.Unstructured, fields ...string) (string, bool, error) {
	if u == nil {
		return "", false, nil
	}
	return unstructured.NestedString(u.Object, fields...)
}

func (o *observer) scaleWrites(old, nw *unstructured.Unstructured) []Write {
	get := func(u *unstructured.Unstructured) int64 {
		if u == nil {
			return 0
		}
		n, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		if !found {
			return 1
		}
		return n
	}
	a, b := get(old), get(nw)
	if a == b {
		return nil
	}
	return []Write{{Kind: "replicaset-scale", Object: o.obj("ReplicaSet", nw.GetNamespace(), nw.GetName()), Field: "spec.replicas", Old: fmt.Sprint(a), New: fmt.Sprint(b)}}
}

func (o *observer) subsetWrites(old, nw *unstructured.Unstructured) []Write {
	key := o.obj("DestinationRule", nw.GetNamespace(), nw.GetName())
	before := map[string]string{}
	had := map[string]bool{}
	if old != nil {
		for _, s := range subsets(old) {
			before[s.name], had[s.name] = s.hash, true
		}
	}
	var out []Write
	kept := map[string]bool{}
	for i, s := range subsets(nw) {
		kept[s.name] = true
		if before[s.name] != s.hash {
			out = append(out, Write{Kind: "dr-subset-label", Object: key, Field: subsetField(i), Old: o.sym(before[s.name]), New: o.sym(s.hash)})
		}
	}
	var gone []string
	for name := range had {
		if !kept[name] {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	for _, name := range gone {
		out = append(out, Write{Kind: "dr-subset-remove", Object: key, Field: "spec.subsets[name=" + name + "]", Old: "present", New: "removed"})
	}
	return out
}

func (o *observer) vsWrites(old, nw *unstructured.Unstructured) []Write {
	key := o.obj("VirtualService", nw.GetNamespace(), nw.GetName())
	managed := o.managedNames()
	var oldRoutes []liveRoute
	if old != nil {
		oldRoutes = httpRoutes(old)
	}
	var out []Write
	// Weighted routes: matched by name, or by position among the
	// non-managed routes when unnamed.
	var oldUn, newUn []liveRoute
	for _, r := range oldRoutes {
		if !managed[r.name] {
			oldUn = append(oldUn, r)
		}
	}
	for _, r := range httpRoutes(nw) {
		if !managed[r.name] {
			newUn = append(newUn, r)
		}
	}
	for k, r := range newUn {
		var prev *liveRoute
		for j := range oldUn {
			if (r.name != "" && oldUn[j].name == r.name) || (r.name == "" && oldUn[j].name == "" && j == k) {
				prev = &oldUn[j]
			}
		}
		if prev != nil {
			out = append(out, destWrites(key, r.index, prev.dests, r.dests)...)
		}
	}
	// Header and mirror routes: added, replaced or removed.
	oldManaged := map[string]liveRoute{}
	for _, r := range oldRoutes {
		if managed[r.name] {
			oldManaged[r.name] = r
		}
	}
	seen := map[string]bool{}
	for _, r := range httpRoutes(nw) {
		if !managed[r.name] {
			continue
		}
		seen[r.name] = true
		p, had := oldManaged[r.name]
		switch {
		case !had:
			out = append(out, Write{Kind: "vs-route-add", Object: key, Field: "spec.http", Old: "absent", New: "route " + r.name})
		case fmt.Sprint(p.raw) != fmt.Sprint(r.raw):
			out = append(out, Write{Kind: "vs-route-add", Object: key, Field: "spec.http", Old: "route " + r.name, New: "route " + r.name})
		}
	}
	var gone []string
	for name := range oldManaged {
		if !seen[name] {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	for _, name := range gone {
		out = append(out, Write{Kind: "vs-route-remove", Object: key, Field: "spec.http", Old: "route " + name, New: "removed"})
	}
	return out
}

// destWrites returns the destination changes of one route as the plan
// words them: a weight change per destination in the new order, then
// appended and removed destinations.
func destWrites(vs Object, route int, old, nw []liveDest) []Write {
	find := func(ds []liveDest, d liveDest) (int, bool) {
		for i := len(ds) - 1; i >= 0; i-- {
			if ds[i].host == d.host && ds[i].subset == d.subset {
				return i, true
			}
		}
		return -1, false
	}
	var out []Write
	w := func(field, o, n string) {
		out = append(out, Write{Kind: "vs-weight", Object: vs, Field: field, Old: o, New: n})
	}
	for j, d := range nw {
		i, had := find(old, d)
		switch {
		case !had:
			w(fmt.Sprintf("spec.http[%d].route[+]", route), "absent", destText(d.host, d.subset, int32(d.weight)))
		case old[i].weight != d.weight:
			w(fmt.Sprintf("spec.http[%d].route[%d].weight", route, j), fmt.Sprint(old[i].weight), fmt.Sprint(d.weight))
		}
	}
	for i, d := range old {
		if _, kept := find(nw, d); !kept {
			w(fmt.Sprintf("spec.http[%d].route[%d]", route, i), destText(d.host, d.subset, int32(d.weight)), "removed")
		}
	}
	return out
}

// rolloutAt decodes the Rollout of an event.
func rolloutOf(e Event) (*v1alpha1.Rollout, error) {
	var ro v1alpha1.Rollout
	if err := fromUnstructured(e.Obj, &ro); err != nil {
		return nil, err
	}
	return &ro, nil
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
