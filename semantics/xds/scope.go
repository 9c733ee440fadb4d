package xds

import (
	"slices"
	"sync"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/visibility"
)

// RootNamespace is Istio's default config root namespace: a Sidecar there
// applies to namespaces that have none of their own (reference §9 row 10).
// The bundle's mesh config may name another (visibility.Mesh).
const RootNamespace = visibility.DefaultRootNamespace

// ExportToAnnotation is the Service annotation Istio reads as exportTo.
const ExportToAnnotation = visibility.ExportToAnnotation

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
func (s Scope) String() string { return string(s.Append(nil)) }

// Append appends String's text to dst: the text plan formats write it for
// every push, without the strings String would make.
func (s Scope) Append(dst []byte) []byte {
	switch {
	case s.AllGateways:
		dst = append(dst, "all gateways"...)
	case len(s.GatewayNamespaces) > 0:
		dst = appendJoin(append(dst, "gateways in "...), s.GatewayNamespaces, ",")
	default:
		dst = append(dst, "no gateway"...)
	}
	dst = append(dst, "; "...)
	switch {
	case len(s.SidecarNamespaces) == 1 && s.SidecarNamespaces[0] == "*":
		dst = append(dst, "sidecars in all namespaces"...)
		if len(s.SidecarExcept) > 0 {
			dst = appendJoin(append(dst, " except "...), s.SidecarExcept, ",")
		}
	case len(s.SidecarNamespaces) > 0:
		dst = appendJoin(append(dst, "sidecars in "...), s.SidecarNamespaces, ",")
	default:
		dst = append(dst, "no sidecar"...)
	}
	return dst
}

// appendJoin appends strings.Join(l, sep) to dst.
func appendJoin(dst []byte, l []string, sep string) []byte {
	for i, x := range l {
		if i > 0 {
			dst = append(dst, sep...)
		}
		dst = append(dst, x...)
	}
	return dst
}

// Scoper computes proxy scopes from the bundle's visibility model
// (semantics/visibility: exportTo, the Service annotation and the mesh
// defaults, DestinationRule precedence, namespace-wide Sidecar egress
// hosts) and the VirtualServices' gateway bindings. Built once per graph.
type Scoper struct {
	g *graph.Graph
	m *visibility.Model
	// parents are the VirtualServices that delegate to a VirtualService, by
	// the delegate's namespace/name.
	parents map[string][]*graph.Resource
	// seHosts are hosts of ServiceEntries whose endpoints are selected pods
	// (workloadSelector), with no Kubernetes Service of that name.
	seHosts map[string]bool
	// scopes caches the sidecar scopes of VirtualServices and
	// DestinationRules and the whole scopes of hosts: a plan asks for the
	// same objects at every step, and the Scoper is shared by concurrent
	// predictions. A map under a lock, not a sync.Map, so that a lookup
	// boxes nothing.
	mu     sync.RWMutex
	scopes map[setKey]Scope
}

// setKey names one cached scope: the object (nil for a host) and the host.
type setKey struct {
	r    *graph.Resource
	host string
}

// cached returns the scope under k, computing it the first time. Cached
// scopes are shared: their lists must not be modified (Union makes new ones).
func (s *Scoper) cached(k setKey, compute func() Scope) Scope {
	s.mu.RLock()
	v, ok := s.scopes[k]
	s.mu.RUnlock()
	if ok {
		return v
	}
	v = compute()
	s.mu.Lock()
	if old, ok := s.scopes[k]; ok {
		v = old
	} else {
		s.scopes[k] = v
	}
	s.mu.Unlock()
	return v
}

// NewScoper is NewScoperFor under the default Istio version.
func NewScoper(g *graph.Graph) *Scoper { return NewScoperFor(g, DefaultVersion) }

// NewScoperFor indexes the delegates and workload-selecting ServiceEntries
// of a graph; visibility comes from the graph's visibility model under the
// Istio version (visibility.For).
func NewScoperFor(g *graph.Graph, version string) *Scoper {
	s := &Scoper{g: g, m: visibility.For(g, version), parents: map[string][]*graph.Resource{}, seHosts: map[string]bool{}, scopes: map[setKey]Scope{}}
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
		return s.hosts(w.Hosts)
	}
}

// hosts is the union of the hosts' scopes.
func (s *Scoper) hosts(hs []string) Scope {
	if len(hs) == 0 {
		return Scope{}
	}
	out := s.Host(hs[0])
	for _, h := range hs[1:] {
		out = out.Union(s.Host(h))
	}
	return out
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
	if !MeshBound(r.VirtualService()) {
		return out
	}
	// The sidecars whose scope imports the VirtualService (push_context.go
	// initVirtualServices, virtualservice.go SelectVirtualServices).
	return withSidecarsOf(out, s.cached(setKey{r: r}, func() Scope { return withSidecars(Scope{}, s.m.SidecarNamespaces(r)) }))
}

func (s *Scoper) destinationRule(r *graph.Resource, allGateways bool) Scope {
	out := Scope{AllGateways: allGateways}
	if r == nil || r.DestinationRule() == nil {
		out.SidecarNamespaces = []string{"*"}
		return out
	}
	host := visibility.IstioFQDN(r.DestinationRule().Spec.GetHost(), r.Namespace)
	// A sidecar depends on the rule when its scope holds the host and the
	// rule is the one that applies to the host for its namespace
	// (sidecar.go selectDestinationRules, push_context.go destinationRule).
	return withSidecarsOf(out, s.cached(setKey{r: r, host: host}, func() Scope {
		return withSidecars(Scope{}, s.m.NamespacesWhere(func(ns string) bool {
			if !s.m.HostInScope(ns, host) {
				return false
			}
			return s.m.DestinationRule(host, ns, s.m.ServiceNamespace(host, ns)).Has(r)
		}, s.m.HostCandidates(host, r.Namespace)...))
	}))
}

// Host is S(host) of reference §9: sidecars and gateways that can see a
// service through its exportTo and the Sidecars' egress hosts. The scope is
// computed once per host and shared: its lists must not be modified.
func (s *Scoper) Host(fqdn string) Scope {
	return s.cached(setKey{host: fqdn}, func() Scope {
		out := Scope{}
		exp := visibility.Everywhere()
		if svcs := s.m.ServicesOrAssumed(fqdn); len(svcs) > 0 {
			exp = svcs[0].Export
		}
		if exp.IsAll() {
			out.AllGateways = true
		} else {
			out.GatewayNamespaces = exp.Members()
		}
		return withSidecars(out, s.m.NamespacesWhere(func(ns string) bool { return s.m.HostInScope(ns, fqdn) }, s.m.HostCandidates(fqdn)...))
	})
}

// withSidecarsOf is sc with the sidecar namespaces of o.
func withSidecarsOf(sc Scope, o Scope) Scope {
	sc.SidecarNamespaces, sc.SidecarExcept = o.SidecarNamespaces, o.SidecarExcept
	return sc
}

func withSidecars(sc Scope, set visibility.Set) Scope {
	if set.IsAll() {
		sc.SidecarNamespaces = []string{"*"}
		sc.SidecarExcept = set.Except()
	} else {
		sc.SidecarNamespaces = set.Members()
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
	if len(a)+len(b) == 0 {
		return nil
	}
	out := make([]string, 0, len(a)+len(b))
	out = append(append(out, a...), b...)
	slices.Sort(out)
	return slices.Clip(slices.Compact(out))
}
