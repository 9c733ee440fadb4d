package visibility

import (
	"slices"
	"sort"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// sidecarScope is a namespace-wide Sidecar's egress imports: for each
// namespace ("*" for any), the hosts imported and, from 1.31, the hosts
// excluded ("~ns/host", "~/host" for any namespace).
type sidecarScope struct {
	res *graph.Resource
	// all is set when the Sidecar has no egress listener: it imports "*/*".
	all     bool
	hosts   map[string][]string // namespace ("." resolved per client) → hosts
	exclude map[string][]string
}

// indexSidecars keeps, per namespace, the first namespace-wide Sidecar (no
// workloadSelector) in load order. istiod applies one Sidecar per namespace
// (the oldest); Sidecars with a workloadSelector apply to the pods they
// select and are left out of namespace-wide scopes.
func (m *Model) indexSidecars() {
	for _, r := range m.g.OfKind(kinds.Sidecar) {
		sc, _ := r.Typed.(*kinds.SidecarObject)
		if sc == nil || sc.Spec.GetWorkloadSelector() != nil {
			continue
		}
		if _, dup := m.sidecars[r.Namespace]; dup {
			continue
		}
		s := &sidecarScope{res: r, hosts: map[string][]string{}, exclude: map[string][]string{}}
		if len(sc.Spec.GetEgress()) == 0 {
			s.all = true
		}
		for _, eg := range sc.Spec.GetEgress() {
			for _, h := range eg.GetHosts() {
				ns, name, ok := strings.Cut(h, "/")
				if !ok || strings.Contains(name, "/") {
					continue // istiod rejects the host ("must be of form namespace/dnsName")
				}
				rest, excl := strings.CutPrefix(ns, "~")
				if excl && !m.b.egressExclusion {
					// Before 1.31 "~" is no prefix: "~/host" names a
					// namespace "~" (none is), "~ns/host" istiod rejects.
					continue
				}
				if excl {
					if rest == "" {
						rest = "*"
					}
					s.exclude[rest] = append(s.exclude[rest], name)
					continue
				}
				switch ns {
				case "*":
					if !slices.Contains(m.wildSidecars, r.Namespace) {
						m.wildSidecars = append(m.wildSidecars, r.Namespace)
					}
				case ".":
				default:
					m.named[ns] = true
					if !slices.Contains(m.sidecarsFrom[ns], r.Namespace) {
						m.sidecarsFrom[ns] = append(m.sidecarsFrom[ns], r.Namespace)
					}
				}
				s.hosts[ns] = append(s.hosts[ns], name)
			}
		}
		if s.all && !slices.Contains(m.wildSidecars, r.Namespace) {
			m.wildSidecars = append(m.wildSidecars, r.Namespace)
		}
		m.sidecars[r.Namespace] = s
	}
	m.root = m.sidecars[m.Mesh.RootNamespace]
}

// Sidecar returns the namespace-wide Sidecar that shapes the scope of the
// sidecars in namespace ns: the namespace's own, else the root namespace's,
// else nil (istiod's default scope imports everything visible).
func (m *Model) Sidecar(ns string) *graph.Resource {
	if s := m.scopeOf(ns); s != nil {
		return s.res
	}
	return nil
}

func (m *Model) scopeOf(ns string) *sidecarScope {
	if s, ok := m.sidecars[ns]; ok && ns != Other {
		return s
	}
	return m.root
}

// classification returns the imported and excluded hosts for config
// namespace of, seen by a proxy of namespace client.
func (s *sidecarScope) classification(of, client string) (hosts, excluded []string) {
	for ns, hs := range s.hosts {
		if ns == of || ns == "." && of == client {
			hosts = append(hosts, hs...)
		}
	}
	for ns, hs := range s.exclude {
		if ns == of || ns == "." && of == client {
			excluded = append(excluded, hs...)
		}
	}
	return hosts, excluded
}

// importsVSHost applies VSMatches: an exact import, or, when either side is a
// wildcard, overlapping names.
func importsVSHost(imported []string, h string) bool {
	for _, i := range imported {
		if i == h || (wildcarded(i) || wildcarded(h)) && Matches(h, i) {
			return true
		}
	}
	return false
}

// importsServiceHost applies Matches for services: an exact import, or a
// wildcard import covering the host.
func importsServiceHost(imported []string, h string) bool {
	for _, i := range imported {
		if i == h || (wildcarded(i) || wildcarded(h)) && SubsetOf(h, i) {
			return true
		}
	}
	return false
}

func excludedHost(excluded []string, h string) bool {
	for _, e := range excluded {
		if SubsetOf(h, e) {
			return true
		}
	}
	return false
}

// ImportsVirtualService reports whether the sidecars of namespace client
// apply a mesh VirtualService: it is exported there and one of its hosts is
// imported from the VirtualService's namespace (SelectVirtualServices).
func (m *Model) ImportsVirtualService(client string, r *graph.Resource) bool {
	if !m.VirtualServiceExport(r).Has(client) {
		return false
	}
	s := m.scopeOf(client)
	if s == nil || s.all {
		return true
	}
	nsHosts, nsExcl := s.classification(r.Namespace, client)
	anyHosts, anyExcl := s.classification("*", client)
	for _, h := range m.vsHosts[r] {
		if !importsVSHost(nsHosts, h) && !importsVSHost(anyHosts, h) {
			continue
		}
		if excludedHost(nsExcl, h) || excludedHost(anyExcl, h) {
			continue
		}
		return true
	}
	return false
}

// ImportsService reports whether the sidecars of namespace client import a
// service through their egress hosts (selectServices); the service must be
// exported to them.
func (m *Model) ImportsService(client string, svc *Service) bool {
	if !svc.Visible(client) {
		return false
	}
	s := m.scopeOf(client)
	if s == nil || s.all {
		return true
	}
	nsHosts, nsExcl := s.classification(svc.Namespace, client)
	anyHosts, anyExcl := s.classification("*", client)
	if excludedHost(nsExcl, svc.Host) || excludedHost(anyExcl, svc.Host) {
		return false
	}
	return importsServiceHost(nsHosts, svc.Host) || importsServiceHost(anyHosts, svc.Host)
}

// Proxies are the namespaces where a Gateway's proxies run.
type Proxies struct {
	Namespaces []string
	// Assumed is set when no workload of the bundle carries the Gateway's
	// selector labels and the Gateway's own namespace is assumed.
	Assumed bool
	// Workloads are the bundle's workloads the selector matched.
	Workloads []*graph.Resource
}

// gatewayWorkloadKinds are the kinds whose pod templates can run gateway proxies.
var gatewayWorkloadKinds = []string{kinds.Deployment, kinds.DaemonSet, kinds.StatefulSet, kinds.ReplicaSet, kinds.Rollout}

// GatewayProxies returns where the proxies of an Istio Gateway run: the
// namespaces of the bundle's workloads whose pod template labels carry the
// Gateway's selector (istiod matches the selector in every namespace unless
// PILOT_SCOPE_GATEWAY_TO_NAMESPACE is set), else the Gateway's own namespace,
// assumed. A Gateway API Gateway's proxies run in its own namespace.
func (m *Model) GatewayProxies(gw *graph.Resource) Proxies {
	if p, ok := m.gwProxies[gw]; ok {
		return p
	}
	return m.gatewayProxies(gw, indexWorkloads(m.g, selectorLabels(gw)))
}

func (m *Model) gatewayProxies(gw *graph.Resource, idx workloadIndex) Proxies {
	if gw.Group == kinds.GroupGatewayAPI {
		return Proxies{Namespaces: []string{gw.Namespace}}
	}
	o := gw.Gateway()
	if o == nil || len(o.Spec.GetSelector()) == 0 {
		return Proxies{Namespaces: []string{gw.Namespace}, Assumed: true}
	}
	sel := o.Spec.GetSelector()
	// Candidates come from the selector label carried by the fewest
	// workloads, then are checked against the whole selector.
	var cands []*workload
	first := true
	for k, v := range sel {
		if l := idx[label{k, v}]; first || len(l) < len(cands) {
			cands, first = l, false
		}
	}
	seen := map[string]bool{}
	var p Proxies
	for _, w := range cands {
		if !carries(w.labels, sel) {
			continue
		}
		p.Workloads = append(p.Workloads, w.res)
		if !seen[w.res.Namespace] {
			seen[w.res.Namespace] = true
			p.Namespaces = append(p.Namespaces, w.res.Namespace)
		}
	}
	if len(p.Namespaces) == 0 {
		return Proxies{Namespaces: []string{gw.Namespace}, Assumed: true}
	}
	sort.Strings(p.Namespaces)
	return p
}

// workload is one pod template of the bundle with its labels.
type workload struct {
	res    *graph.Resource
	labels map[string]string
}

// label is one pod template label.
type label struct{ key, value string }

// workloadIndex finds workloads by one pod template label.
type workloadIndex map[label][]*workload

// selectorLabels lists the labels of the Istio Gateways' selectors: the only
// ones gatewayProxies looks workloads up by.
func selectorLabels(gws ...*graph.Resource) map[label]bool {
	out := map[label]bool{}
	for _, gw := range gws {
		if o := gw.Gateway(); o != nil && gw.Group != kinds.GroupGatewayAPI {
			for k, v := range o.Spec.GetSelector() {
				out[label{k, v}] = true
			}
		}
	}
	return out
}

// indexWorkloads reads every workload's pod template labels once, in load
// order of kinds and objects, and indexes the workloads by those of their
// labels that are wanted (indexing them all would cost an entry per label
// of every workload for the few that gateway selectors name).
func indexWorkloads(g *graph.Graph, wanted map[label]bool) workloadIndex {
	idx := workloadIndex{}
	if len(wanted) == 0 {
		return idx
	}
	// Selectors usually name one or two labels: a workload is then checked
	// by looking those up among its labels, not each of its labels up
	// among them.
	list := make([]label, 0, len(wanted))
	for l := range wanted {
		list = append(list, l)
	}
	for _, kind := range gatewayWorkloadKinds {
		for _, r := range g.OfKind(kind) {
			var labels map[string]string
			if kind == kinds.Rollout {
				l, ok := g.PodLabels(r)
				if !ok {
					continue
				}
				labels = l
			} else {
				labels = templateLabels(r)
			}
			var w *workload
			add := func(l label) {
				if w == nil {
					w = &workload{res: r, labels: labels}
				}
				idx[l] = append(idx[l], w)
			}
			if len(list) <= len(labels) {
				for _, l := range list {
					if v, ok := labels[l.key]; ok && v == l.value {
						add(l)
					}
				}
				continue
			}
			for k, v := range labels {
				if l := (label{k, v}); wanted[l] {
					add(l)
				}
			}
		}
	}
	return idx
}

func carries(labels, sel map[string]string) bool {
	for k, v := range sel {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func templateLabels(r *graph.Resource) map[string]string {
	spec, _ := r.Object()["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	md, _ := tmpl["metadata"].(map[string]any)
	raw, _ := md["labels"].(map[string]any)
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// VisibleToGateway returns the service of host a gateway proxy of namespace
// ns can route to (DefaultSidecarScopeForGateway: the services exported to
// its namespace), or nil.
func (m *Model) VisibleToGateway(host, ns string) *Service {
	for _, s := range m.Services(host) {
		if s.Visible(ns) {
			return s
		}
	}
	return nil
}

// InternalGatewaySuffix is what istiod puts in the names of the Istio
// Gateways it generates for each listener of a Gateway API Gateway
// (<gateway>~istio-autogenerated-k8s-gateway~<listener>).
const InternalGatewaySuffix = "~istio-autogenerated-k8s-gateway~"

// GatewayRef is one gateway a VirtualService binds, resolved.
type GatewayRef struct {
	Ref       string // as written
	Path      string // field path
	Namespace string
	Name      string
	// Istio is the Istio Gateway of that name, KubernetesGateway the Gateway
	// API Gateway (either may be nil).
	Istio, KubernetesGateway *graph.Resource
	// Internal is set for a reference to an istiod-generated Gateway name.
	Internal bool
}

// ResolveGatewayName resolves a gateway reference written in a
// VirtualService of namespace ns the way istiod does (resolveGatewayName):
// "name" is in ns, "./name" too, "ns/name" names its namespace, and the
// legacy "name.ns[.svc.cluster.local]" takes the second label.
func ResolveGatewayName(ref, ns string) (namespace, name string) {
	if before, after, ok := strings.Cut(ref, "/"); ok {
		if before == "." {
			return ns, after
		}
		return before, after
	}
	if i := strings.IndexByte(ref, '.'); i >= 0 {
		rest := ref[i+1:]
		if j := strings.IndexByte(rest, '.'); j >= 0 {
			rest = rest[:j]
		}
		return rest, ref[:i]
	}
	return ns, ref
}

// Gateways lists the named gateways a VirtualService binds in spec.gateways,
// resolved against the bundle.
func (m *Model) Gateways(r *graph.Resource) []GatewayRef {
	vs := r.VirtualService()
	if vs == nil {
		return nil
	}
	var out []GatewayRef
	for i, ref := range vs.Spec.GetGateways() {
		if ref == "mesh" || ref == "" {
			continue
		}
		ns, name := ResolveGatewayName(ref, r.Namespace)
		gr := GatewayRef{Ref: ref, Path: graph.Index("spec.gateways", i), Namespace: ns, Name: name,
			Internal: strings.Contains(name, InternalGatewaySuffix)}
		for _, gw := range m.g.All(kinds.Gateway, ns, name) {
			switch gw.Group {
			case kinds.GroupIstio:
				if gr.Istio == nil {
					gr.Istio = gw
				}
			case kinds.GroupGatewayAPI:
				if gr.KubernetesGateway == nil {
					gr.KubernetesGateway = gw
				}
			}
		}
		out = append(out, gr)
	}
	return out
}

// Place is where a VirtualService's routes are applied: the sidecars of a
// namespace (Gateway nil; Namespace may be Other), or the proxies of a bound
// Istio Gateway in a namespace.
type Place struct {
	Namespace string
	Gateway   *graph.Resource
	// Assumed is set when the Gateway's proxies are only assumed to run in
	// its namespace (see GatewayProxies).
	Assumed bool
}

// Places lists where a VirtualService's routes to the hosts are applied:
// the candidate namespaces (see Candidates) whose sidecars apply it, then
// the proxies of its bound Istio Gateways in the namespaces it is visible
// in.
func (m *Model) Places(r *graph.Resource, hosts ...string) []Place {
	vs := r.VirtualService()
	if vs == nil {
		return nil
	}
	var out []Place
	if MeshBound(r) {
		cands := m.Candidates(r, hosts...)
		out = make([]Place, 0, len(cands)+len(vs.Spec.GetGateways()))
		for _, ns := range cands {
			if m.Applies(r, ns) {
				out = append(out, Place{Namespace: ns})
			}
		}
	}
	var export Set
	exportRead := false
	// The gateways as Gateways resolves them, without the field paths.
	for _, ref := range vs.Spec.GetGateways() {
		if ref == "mesh" || ref == "" {
			continue
		}
		gw := m.istioGateway(ResolveGatewayName(ref, r.Namespace))
		if gw == nil {
			continue
		}
		if !exportRead {
			export, exportRead = m.VirtualServiceExport(r), true
		}
		px := m.GatewayProxies(gw)
		for _, ns := range px.Namespaces {
			if export.Has(ns) {
				out = append(out, Place{Namespace: ns, Gateway: gw, Assumed: px.Assumed})
			}
		}
	}
	return out
}

// istioGateway returns the first Istio Gateway of the bundle named ns/name,
// or nil (GatewayRef.Istio).
func (m *Model) istioGateway(ns, name string) *graph.Resource {
	for _, gw := range m.g.All(kinds.Gateway, ns, name) {
		if gw.Group == kinds.GroupIstio {
			return gw
		}
	}
	return nil
}

// ServiceFor returns the service of host a place's proxies route to: for
// sidecars VisibleService, for gateway proxies VisibleToGateway.
func (m *Model) ServiceFor(host string, pl Place) *Service {
	if pl.Gateway != nil {
		return m.VisibleToGateway(host, pl.Namespace)
	}
	return m.VisibleService(host, pl.Namespace)
}

// DestinationRuleAt is the DestinationRule configuration the proxies of a
// place get for host.
func (m *Model) DestinationRuleAt(host string, pl Place) Effective {
	svcNS := ""
	if s := m.ServiceFor(host, pl); s != nil {
		svcNS = s.Namespace
	} else if ns, ok := clusterLocalNamespace(host); ok {
		svcNS = ns
	}
	return m.DestinationRule(host, pl.Namespace, svcNS)
}
