package xds

import (
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
)

// RootNamespace is Istio's default config root namespace: a Sidecar there
// applies to namespaces that have none of their own (reference §9 row 10).
const RootNamespace = "istio-system"

// ExportToAnnotation is the Service annotation Istio reads as exportTo.
const ExportToAnnotation = "networking.istio.io/exportTo"

// Scope is the set of proxies a push reaches.
type Scope struct {
	// AllGateways: every gateway proxy is pushed.
	AllGateways bool `json:"allGateways"`
	// GatewayNamespaces: when not all, gateways in these namespaces can see the host.
	GatewayNamespaces []string `json:"gatewayNamespaces,omitempty"`
	// SidecarNamespaces are the namespaces whose sidecars are pushed; "*" is every namespace.
	SidecarNamespaces []string `json:"sidecarNamespaces"`
	// SidecarExcept are namespaces left out of "*" because their Sidecar does not import the object.
	SidecarExcept []string `json:"sidecarExcept,omitempty"`
}

// String renders a scope for the table.
func (s Scope) String() string {
	var gw string
	switch {
	case s.AllGateways:
		gw = "all gateways"
	case len(s.GatewayNamespaces) > 0:
		gw = "gateways in " + strings.Join(s.GatewayNamespaces, ",")
	default:
		gw = "no gateway"
	}
	var sc string
	switch {
	case len(s.SidecarNamespaces) == 1 && s.SidecarNamespaces[0] == "*":
		sc = "sidecars in all namespaces"
		if len(s.SidecarExcept) > 0 {
			sc += " except " + strings.Join(s.SidecarExcept, ",")
		}
	case len(s.SidecarNamespaces) > 0:
		sc = "sidecars in " + strings.Join(s.SidecarNamespaces, ",")
	default:
		sc = "no sidecar"
	}
	return gw + "; " + sc
}

// nsSet is a set of namespaces: every namespace but except, or the listed ones.
type nsSet struct {
	all    bool
	list   map[string]bool
	except map[string]bool
}

func (n nsSet) has(ns string) bool {
	if n.all {
		return !n.except[ns]
	}
	return n.list[ns]
}

func (n *nsSet) drop(ns string) {
	if n.all {
		n.except[ns] = true
	} else {
		delete(n.list, ns)
	}
}

func newSet() nsSet { return nsSet{list: map[string]bool{}, except: map[string]bool{}} }

// exportSet reads an exportTo list written in namespace own (empty = everywhere).
func exportSet(exportTo []string, own string) nsSet {
	s := newSet()
	if len(exportTo) == 0 {
		s.all = true
		return s
	}
	for _, e := range exportTo {
		switch e = strings.TrimSpace(e); e {
		case "*":
			s.all = true
		case ".":
			s.list[own] = true
		case "~", "":
		default:
			s.list[e] = true
		}
	}
	if s.all {
		s.list = map[string]bool{}
	}
	return s
}

// Scoper computes proxy scopes from the bundle's Sidecars, exportTo fields
// and VirtualService gateway bindings. Built once per graph.
type Scoper struct {
	g *graph.Graph
	// sidecars are namespace-wide Sidecars (no workloadSelector) by namespace.
	sidecars map[string][]*kinds.SidecarObject
	// parents are the VirtualServices that delegate to a VirtualService, by
	// the delegate's namespace/name.
	parents map[string][]*graph.Resource
	// seHosts are hosts of ServiceEntries whose endpoints are selected pods
	// (workloadSelector), with no Kubernetes Service of that name.
	seHosts map[string]bool
}

// NewScoper indexes the Sidecars of a graph.
func NewScoper(g *graph.Graph) *Scoper {
	s := &Scoper{g: g, sidecars: map[string][]*kinds.SidecarObject{}, parents: map[string][]*graph.Resource{}, seHosts: map[string]bool{}}
	for _, r := range g.OfKind(kinds.ServiceEntry) {
		se, _ := r.Typed.(*kinds.ServiceEntryObject)
		if se == nil || se.Spec.GetWorkloadSelector() == nil {
			continue
		}
		for _, h := range se.Spec.GetHosts() {
			if g.ServiceForHost(graph.FQDN(h, r.Namespace), "") == nil {
				s.seHosts[graph.FQDN(h, r.Namespace)] = true
			}
		}
	}
	for _, r := range g.OfKind(kinds.VirtualService) {
		vs := r.VirtualService()
		if vs == nil {
			continue
		}
		for _, h := range vs.Spec.GetHttp() {
			if d := h.GetDelegate(); d != nil && d.GetName() != "" {
				ns := d.GetNamespace()
				if ns == "" {
					ns = r.Namespace
				}
				k := ns + "/" + d.GetName()
				if !slices.Contains(s.parents[k], r) {
					s.parents[k] = append(s.parents[k], r)
				}
			}
		}
	}
	for _, r := range g.OfKind(kinds.Sidecar) {
		sc, _ := r.Typed.(*kinds.SidecarObject)
		if sc == nil || sc.Spec.GetWorkloadSelector() != nil {
			continue
		}
		s.sidecars[r.Namespace] = append(s.sidecars[r.Namespace], sc)
	}
	return s
}

// For returns the scope of one config update.
func (s *Scoper) For(kind ConfigKind, w plan.Write, allGateways bool) Scope {
	switch kind {
	case KindVirtualService:
		return s.virtualService(w.Resource, allGateways)
	case KindDestinationRule:
		return s.destinationRule(w.Resource, allGateways)
	default:
		var out *Scope
		for _, h := range w.Hosts {
			sc := s.Host(h)
			if out == nil {
				out = &sc
			} else {
				u := out.Union(sc)
				out = &u
			}
		}
		if out == nil {
			return Scope{}
		}
		return *out
	}
}

// MeshBound reports whether a VirtualService applies to sidecars: no gateways
// listed, or the reserved "mesh" among them (reference §3 SelectVirtualServices).
func MeshBound(vs *kinds.VirtualServiceObject) bool {
	gws := vs.Spec.GetGateways()
	if len(gws) == 0 {
		return true
	}
	for _, g := range gws {
		if g == "mesh" {
			return true
		}
	}
	return false
}

// WorkloadEntryHost reports whether a host's endpoints are pods a
// ServiceEntry selects (no Kubernetes Service, so no EndpointSlice).
func (s *Scoper) WorkloadEntryHost(fqdn string) bool { return s != nil && s.seHosts[fqdn] }

// Parents are the VirtualServices that delegate to r: istiod indexes a
// delegate under its root, so a change of the delegate is a change of the
// root too (key and scope, conformance scenario delegate).
func (s *Scoper) Parents(r *graph.Resource) []*graph.Resource {
	if r == nil {
		return nil
	}
	return s.parents[r.Namespace+"/"+r.Name]
}

func (s *Scoper) virtualService(r *graph.Resource, allGateways bool) Scope {
	out := Scope{AllGateways: allGateways}
	if r == nil || r.VirtualService() == nil {
		out.SidecarNamespaces = []string{"*"}
		return out
	}
	if ps := s.Parents(r); len(ps) > 0 {
		// A delegate has no hosts or gateways of its own: it reaches what its roots reach.
		var u *Scope
		for _, p := range ps {
			ps := s.virtualService(p, allGateways)
			if u == nil {
				u = &ps
			} else {
				x := u.Union(ps)
				u = &x
			}
		}
		return *u
	}
	vs := r.VirtualService()
	if !MeshBound(vs) {
		return out
	}
	set := exportSet(vs.Spec.GetExportTo(), r.Namespace)
	var hosts []string
	for _, h := range vs.Spec.GetHosts() {
		hosts = append(hosts, graph.FQDN(h, r.Namespace))
	}
	s.filterEgress(&set, r.Namespace, hosts)
	return withSidecars(out, set)
}

func (s *Scoper) destinationRule(r *graph.Resource, allGateways bool) Scope {
	out := Scope{AllGateways: allGateways}
	if r == nil || r.DestinationRule() == nil {
		out.SidecarNamespaces = []string{"*"}
		return out
	}
	dr := r.DestinationRule()
	host := graph.FQDN(dr.Spec.GetHost(), r.Namespace)
	set := exportSet(dr.Spec.GetExportTo(), r.Namespace)
	hostScope := s.hostSet(host)
	set = intersect(set, hostScope)
	s.filterEgress(&set, hostNamespace(host, r.Namespace), []string{host})
	return withSidecars(out, set)
}

// Host is S(host) of reference §9: sidecars and gateways that can see a
// service through its exportTo and the Sidecars' egress hosts.
func (s *Scoper) Host(fqdn string) Scope {
	set := s.hostSet(fqdn)
	out := Scope{}
	if set.all {
		out.AllGateways = true
	} else {
		out.GatewayNamespaces = sortedKeys(set.list)
	}
	s.filterEgress(&set, hostNamespace(fqdn, ""), []string{fqdn})
	return withSidecars(out, set)
}

func (s *Scoper) hostSet(fqdn string) nsSet {
	svc := s.g.ServiceForHost(fqdn, "")
	if svc == nil {
		return exportSet(nil, "")
	}
	var exp []string
	if v, ok := svc.Annotation(ExportToAnnotation); ok {
		exp = strings.Split(v, ",")
	}
	return exportSet(exp, svc.Namespace)
}

// filterEgress removes namespaces whose Sidecar does not import any of the
// hosts (declared in namespace hostNS). A root-namespace Sidecar covers every
// namespace without its own.
func (s *Scoper) filterEgress(set *nsSet, hostNS string, hosts []string) {
	for ns, scs := range s.sidecars {
		if ns == RootNamespace {
			continue
		}
		if set.has(ns) && !imports(scs, ns, hostNS, hosts) {
			set.drop(ns)
		}
	}
	if root, ok := s.sidecars[RootNamespace]; ok && set.all && !imports(root, RootNamespace, hostNS, hosts) {
		// Only namespaces with their own importing Sidecar keep the object.
		keep := newSet()
		for ns, scs := range s.sidecars {
			if ns != RootNamespace && !set.except[ns] && imports(scs, ns, hostNS, hosts) {
				keep.list[ns] = true
			}
		}
		// "." in the mesh default means the proxy's own namespace, so the
		// host's namespace may still import it.
		if _, own := s.sidecars[hostNS]; !own && hostNS != "" && !set.except[hostNS] && imports(root, hostNS, hostNS, hosts) {
			keep.list[hostNS] = true
		}
		*set = keep
	}
}

// imports reports whether a namespace's Sidecar egress hosts (ns/dnsName)
// select one of the hosts.
func imports(scs []*kinds.SidecarObject, sidecarNS, hostNS string, hosts []string) bool {
	for _, sc := range scs {
		if len(sc.Spec.GetEgress()) == 0 {
			return true
		}
		for _, eg := range sc.Spec.GetEgress() {
			for _, eh := range eg.GetHosts() {
				ns, dns, ok := strings.Cut(eh, "/")
				if !ok {
					continue
				}
				// "*/" imports from every namespace, "<ns>/" from that one, "./" from the Sidecar's own.
				importsNS := ns == "*" || ns == hostNS || ns == "." && sidecarNS == hostNS
				if !importsNS {
					continue
				}
				for _, h := range hosts {
					if dns == "*" || dns == h {
						return true
					}
					if ok, _ := path.Match(dns, h); ok && strings.HasPrefix(dns, "*") {
						return true
					}
				}
			}
		}
	}
	return false
}

func hostNamespace(fqdn, def string) string {
	parts := strings.Split(fqdn, ".")
	if len(parts) >= 3 && parts[2] == "svc" {
		return parts[1]
	}
	return def
}

func intersect(a, b nsSet) nsSet {
	switch {
	case a.all && b.all:
		out := newSet()
		out.all = true
		for k := range a.except {
			out.except[k] = true
		}
		for k := range b.except {
			out.except[k] = true
		}
		return out
	case a.all:
		a, b = b, a
	}
	out := newSet()
	for k := range a.list {
		if b.has(k) {
			out.list[k] = true
		}
	}
	return out
}

func withSidecars(sc Scope, set nsSet) Scope {
	if set.all {
		sc.SidecarNamespaces = []string{"*"}
		sc.SidecarExcept = sortedKeys(set.except)
	} else {
		sc.SidecarNamespaces = sortedKeys(set.list)
	}
	return sc
}

// Union is the set of proxies reached by either scope.
func (s Scope) Union(o Scope) Scope {
	out := Scope{AllGateways: s.AllGateways || o.AllGateways}
	if !out.AllGateways {
		out.GatewayNamespaces = unionStrings(s.GatewayNamespaces, o.GatewayNamespaces)
	}
	sAll := len(s.SidecarNamespaces) == 1 && s.SidecarNamespaces[0] == "*"
	oAll := len(o.SidecarNamespaces) == 1 && o.SidecarNamespaces[0] == "*"
	switch {
	case sAll && oAll:
		out.SidecarNamespaces = []string{"*"}
		for _, e := range s.SidecarExcept {
			for _, f := range o.SidecarExcept {
				if e == f {
					out.SidecarExcept = append(out.SidecarExcept, e)
				}
			}
		}
	case sAll || oAll:
		all, other := s, o
		if oAll {
			all, other = o, s
		}
		out.SidecarNamespaces = []string{"*"}
		for _, e := range all.SidecarExcept {
			if !contains(other.SidecarNamespaces, e) {
				out.SidecarExcept = append(out.SidecarExcept, e)
			}
		}
	default:
		out.SidecarNamespaces = unionStrings(s.SidecarNamespaces, o.SidecarNamespaces)
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func unionStrings(a, b []string) []string {
	set := map[string]bool{}
	for _, x := range a {
		set[x] = true
	}
	for _, x := range b {
		set[x] = true
	}
	if len(set) == 0 {
		return nil
	}
	out := sortedKeys(set)
	sort.Strings(out)
	return out
}
