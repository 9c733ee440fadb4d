// Package istio holds the RL3xxx rules: Istio hygiene inside the bundle that
// offline `istioctl analyze` skips or gets wrong (hosts, ports, gateways,
// duplicate VirtualServices and DestinationRules, ingress bypassing a split).
package istio

import (
	"slices"
	"strings"

	networkingv1 "istio.io/api/networking/v1"

	"fmt"
	"sort"

	"github.com/rolloutlint/rolloutlint/internal/textdist"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// meshGateway is the reserved gateway name for the sidecars of the mesh.
const meshGateway = "mesh"

// destination is one route destination (or mirror) of a VirtualService.
type destination struct {
	VS     *graph.Resource
	Dest   *networkingv1.Destination
	Mirror bool
	// Split is true when the destination's route sends traffic to more than
	// one destination (a weighted split, for example one Argo manages).
	Split bool
	// FQDN is graph.FQDN of the host in the VirtualService's namespace,
	// resolved once for the rules that compare hosts.
	FQDN string

	// Pos and the route's name locate the destination: its field path and
	// route name are built only when a rule reports, so listing every
	// destination allocates no strings for them.
	pos       graph.DestinationPos
	routeName string // the http route's name, or ""
}

// Path is the field path of the destination object, e.g.
// spec.http[0].route[1].destination.
func (d destination) Path() string { return d.pos.Path() }

// Route is the human name of the destination's route, e.g.
// `http route "primary"` or `tcp[0]`.
func (d destination) Route() string { return routeName(string(d.pos.Kind), d.pos.Route, d.routeName) }

// HostPath is the field path of the destination's host.
func (d destination) HostPath() string { return d.Path() + ".host" }

// networkingVS is the Istio VirtualService spec.
type networkingVS = networkingv1.VirtualService

// eachVirtualService calls fn for every typed VirtualService the pass scans
// (the bundle's, or a shard's: rules.Pass.OfKind).
func eachVirtualService(p *rules.Pass, fn func(r *graph.Resource, vs *networkingv1.VirtualService)) {
	for _, r := range p.OfKind(kinds.VirtualService) {
		if o := r.VirtualService(); o != nil {
			fn(r, &o.Spec)
		}
	}
}

// destinationsMemo holds every VirtualService's destinations, which six
// rules walk: listed once per lint instead of once per rule. Read only.
var destinationsMemo = graph.NewMemo[vsDestinations]("istio.destinations")

// vsDestinations is destinations of each of g.OfKind(VirtualService), in
// that order (nil for one without a typed spec).
type vsDestinations struct {
	vss   []*graph.Resource
	dests [][]destination
}

// destinationsOf returns destinations(r, vs) for a VirtualService r of g
// whose spec is vs, from the memo. The slice is shared: do not modify it.
func destinationsOf(g *graph.Graph, r *graph.Resource, vs *networkingv1.VirtualService) []destination {
	all := destinationsMemo.Get(g, func() vsDestinations {
		vss := g.OfKind(kinds.VirtualService)
		d := vsDestinations{vss: vss, dests: make([][]destination, len(vss))}
		for i, r := range vss {
			if o := r.VirtualService(); o != nil {
				d.dests[i] = destinations(r, &o.Spec)
			}
		}
		return d
	})
	if i := r.KindPos(); i < len(all.vss) && all.vss[i] == r && r.VirtualService() != nil {
		return all.dests[i]
	}
	return destinations(r, vs) // not one of g's VirtualServices
}

// destinations lists a VirtualService's route and mirror destinations in
// document order.
func destinations(r *graph.Resource, vs *networkingv1.VirtualService) []destination {
	var out []destination
	// A split's destinations mostly share one host: its FQDN is made once.
	lastHost, lastFQDN := "", ""
	add := func(d *networkingv1.Destination, kind graph.RouteKind, route int, name string, field graph.DestinationField, entry int, split bool) {
		if d != nil {
			if h := d.GetHost(); len(out) == 0 || h != lastHost {
				lastHost, lastFQDN = h, graph.FQDN(h, r.Namespace)
			}
			out = append(out, destination{VS: r, Dest: d, Mirror: field != graph.InRoute, Split: split, FQDN: lastFQDN,
				pos: graph.DestinationPos{Kind: kind, Route: route, Field: field, Entry: entry}, routeName: name})
		}
	}
	for i, h := range vs.GetHttp() {
		name := h.GetName()
		for j, rd := range h.GetRoute() {
			add(rd.GetDestination(), graph.HTTP, i, name, graph.InRoute, j, len(h.GetRoute()) > 1)
		}
		add(h.GetMirror(), graph.HTTP, i, name, graph.InMirror, 0, false)
		for j, m := range h.GetMirrors() {
			add(m.GetDestination(), graph.HTTP, i, name, graph.InMirrors, j, false)
		}
	}
	for i, t := range vs.GetTls() {
		for j, rd := range t.GetRoute() {
			add(rd.GetDestination(), graph.TLS, i, "", graph.InRoute, j, len(t.GetRoute()) > 1)
		}
	}
	for i, t := range vs.GetTcp() {
		for j, rd := range t.GetRoute() {
			add(rd.GetDestination(), graph.TCP, i, "", graph.InRoute, j, len(t.GetRoute()) > 1)
		}
	}
	return out
}

// routeName names a route for messages: `http route "primary"`, or `tcp[0]`
// when it has no name.
func routeName(kind string, i int, name string) string {
	if name != "" {
		return kind + " route \"" + name + "\""
	}
	return graph.Index(kind, i)
}

// gatewayRefs is how a VirtualService is bound: to the mesh sidecars, and to
// which named gateways (as written).
type gatewayRefs struct {
	Mesh  bool
	Named []string
}

// meshBound is bindings(vs).Mesh without listing the named gateways.
func meshBound(vs *networkingv1.VirtualService) bool {
	gws := vs.GetGateways()
	return len(gws) == 0 || slices.Contains(gws, meshGateway)
}

// gatewayBound is len(bindings(vs).Named) > 0 without listing them.
func gatewayBound(vs *networkingv1.VirtualService) bool {
	return slices.ContainsFunc(vs.GetGateways(), func(gw string) bool { return gw != meshGateway })
}

// bindings returns the VirtualService's binding: no `gateways` means the mesh
// only; `mesh` in the list adds the sidecars to the named gateways.
func bindings(vs *networkingv1.VirtualService) gatewayRefs {
	gws := vs.GetGateways()
	if len(gws) == 0 {
		return gatewayRefs{Mesh: true}
	}
	var b gatewayRefs
	for _, gw := range gws {
		if gw == meshGateway {
			b.Mesh = true
		} else {
			b.Named = append(b.Named, gw)
		}
	}
	return b
}

// gatewayKey resolves a gateway reference written in a VirtualService of
// namespace ns the way istiod does: `name` and `./name` are in ns,
// `namespace/name` names its namespace, and the legacy `name.namespace` (or
// `name.namespace.svc.cluster.local`) form takes the second label as the
// namespace.
func gatewayKey(ref, ns string) (name, namespace string) {
	if before, after, ok := strings.Cut(ref, "/"); ok {
		if before == "." {
			return after, ns
		}
		return after, before
	}
	if i := strings.IndexByte(ref, '.'); i >= 0 {
		rest := ref[i+1:]
		if j := strings.IndexByte(rest, '.'); j >= 0 {
			rest = rest[:j]
		}
		return ref[:i], rest
	}
	return ref, ns
}

// sameObject reports whether a and b are the same object: the same resource,
// or two definitions of one kind/namespace/name (the later apply replaces the
// earlier; that is reported by the tool rules, not as two objects here).
func sameObject(a, b *graph.Resource) bool {
	return a == b || a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name
}

// objectName is `namespace/name`, the way messages name objects.
func objectName(r *graph.Resource) string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// namespacesMemo holds namespacesWith's sets: built once per lint, not once
// per rule and shard (a sharded rule's pass runs once per shard). Read only.
var namespacesMemo = graph.NewKeyedMemo[string, map[string]bool]("istio.namespaces")

// namespacesWith returns the set of namespaces holding objects of a kind.
// The map is shared: do not modify it.
func namespacesWith(g *graph.Graph, kind string) map[string]bool {
	return namespacesMemo.Get(g, kind, func() map[string]bool {
		out := map[string]bool{}
		for _, ns := range g.Namespaces(kind) {
			out[ns] = true
		}
		return out
	})
}

// clusterLocalService splits a fully qualified `name.ns.svc.cluster.local`
// host into its Service name and namespace.
func clusterLocalService(fqdn string) (name, namespace string, ok bool) {
	rest, found := strings.CutSuffix(fqdn, ".svc."+graph.ClusterDomain)
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// serviceEntriesFor returns the ServiceEntries declaring host (as written or
// fully qualified), else the wildcard entry (`*.example.com`) with the longest
// matching suffix.
func serviceEntriesFor(g *graph.Graph, host, fqdn string, wildcards map[string]*graph.Resource) []*graph.Resource {
	if ses := g.ServiceEntriesForHost(host); len(ses) > 0 {
		return ses
	}
	if ses := g.ServiceEntriesForHost(fqdn); len(ses) > 0 {
		return ses
	}
	for i := strings.IndexByte(fqdn, '.'); i >= 0; {
		if se := wildcards[fqdn[i:]]; se != nil {
			return []*graph.Resource{se}
		}
		j := strings.IndexByte(fqdn[i+1:], '.')
		if j < 0 {
			break
		}
		i += j + 1
	}
	return nil
}

// wildcardsMemo holds wildcardServiceEntries' index, which three sharded
// rules read once per shard: built once per lint. Read only.
var wildcardsMemo = graph.NewMemo[map[string]*graph.Resource]("istio.wildcardServiceEntries")

// wildcardServiceEntries indexes the wildcard hosts of every ServiceEntry by
// suffix (`*.example.com` → `.example.com`); the first entry in load order wins.
// The map is shared: do not modify it.
func wildcardServiceEntries(g *graph.Graph) map[string]*graph.Resource {
	return wildcardsMemo.Get(g, func() map[string]*graph.Resource { return buildWildcards(g) })
}

// buildWildcards builds wildcardServiceEntries' index.
func buildWildcards(g *graph.Graph) map[string]*graph.Resource {
	out := map[string]*graph.Resource{}
	for _, r := range g.OfKind(kinds.ServiceEntry) {
		spec, _ := r.Object()["spec"].(map[string]any)
		hosts, _ := spec["hosts"].([]any)
		for _, h := range hosts {
			if s, ok := h.(string); ok && strings.HasPrefix(s, "*.") {
				if _, dup := out[s[1:]]; !dup {
					out[s[1:]] = r
				}
			}
		}
	}
	return out
}

// relatedObject points at an object's metadata.name.
func relatedObject(r *graph.Resource, msg string) rules.Related {
	return rules.RelatedAt(r, "metadata.name", msg)
}

// quoteList renders names as `"a", "b"`.
func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// routeEntry is one http/tls/tcp route with its weighted destinations. Its
// name and path are built only for a finding.
type routeEntry struct {
	kind     graph.RouteKind
	index    int
	httpName string // the http route's name, "" for others
	dests    []graph.Destination
}

// name names the route for messages (routeName).
func (e routeEntry) name() string { return routeName(string(e.kind), e.index, e.httpName) }

// path is the route's field path, e.g. spec.http[0].
func (e routeEntry) path() string { return graph.Index("spec."+string(e.kind), e.index) }

// routesMemo holds every VirtualService's routes, which two rules walk.
// Read only.
var routesMemo = graph.NewMemo[vsRoutes]("istio.routes")

// vsRoutes is routes of each of g.OfKind(VirtualService), in that order.
type vsRoutes struct {
	vss    []*graph.Resource
	routes [][]routeEntry
}

// routesOf returns routes(vs) for a VirtualService r of g whose spec is vs,
// from the memo. The slice is shared: do not modify it.
func routesOf(g *graph.Graph, r *graph.Resource, vs *networkingVS) []routeEntry {
	all := routesMemo.Get(g, func() vsRoutes {
		vss := g.OfKind(kinds.VirtualService)
		m := vsRoutes{vss: vss, routes: make([][]routeEntry, len(vss))}
		for i, r := range vss {
			if o := r.VirtualService(); o != nil {
				m.routes[i] = routes(&o.Spec)
			}
		}
		return m
	})
	if i := r.KindPos(); i < len(all.vss) && all.vss[i] == r && r.VirtualService() != nil {
		return all.routes[i]
	}
	return routes(vs) // not one of g's VirtualServices
}

// routes lists a VirtualService's http, tls and tcp routes in order.
func routes(vs *networkingVS) []routeEntry {
	n := len(vs.GetHttp()) + len(vs.GetTls()) + len(vs.GetTcp())
	if n == 0 {
		return nil
	}
	out := make([]routeEntry, 0, n)
	for _, kind := range []graph.RouteKind{graph.HTTP, graph.TLS, graph.TCP} {
		for i := 0; i < graph.RouteCount(vs, kind); i++ {
			name := ""
			if kind == graph.HTTP {
				name = vs.GetHttp()[i].GetName()
			}
			out = append(out, routeEntry{kind: kind, index: i, httpName: name, dests: graph.RouteDestinations(vs, kind, i)})
		}
	}
	return out
}

// destLabel names a destination as host[/subset][:port].
func destLabel(d graph.Destination) string {
	s := d.Host
	if d.Subset != "" {
		s += "/" + d.Subset
	}
	if d.Port != 0 {
		s += fmt.Sprintf(":%d", d.Port)
	}
	return s
}

// servicesByNamespace groups the bundle's Services by namespace, in load order.
func servicesByNamespace(g *graph.Graph) map[string][]*graph.Resource {
	out := map[string][]*graph.Resource{}
	for _, s := range g.OfKind(kinds.Service) {
		out[s.Namespace] = append(out[s.Namespace], s)
	}
	return out
}

// nearestName returns the resource whose name is within edit distance 2 of
// name (the closest, first in load order on ties), or nil.
func nearestName(name string, candidates []*graph.Resource) *graph.Resource {
	type scored struct {
		r *graph.Resource
		d int
	}
	var best []scored
	for _, c := range candidates {
		if d, ok := textdist.Within(name, c.Name, 2); ok {
			best = append(best, scored{c, d})
		}
	}
	if len(best) == 0 {
		return nil
	}
	sort.SliceStable(best, func(i, j int) bool { return best[i].d < best[j].d })
	return best[0].r
}

// maxRelated caps the related locations of one finding.
const maxRelated = 10

// hostPath returns the path of the hosts entry of vs that names fqdn.
func hostPath(r *graph.Resource, vs *networkingVS, fqdn string) string {
	for i, h := range vs.GetHosts() {
		if graph.FQDN(h, r.Namespace) == fqdn {
			return graph.Index("spec.hosts", i)
		}
	}
	return "spec.hosts"
}

// eachInFileOrder calls fn for every object of a kind in file order, the
// order findings are sorted in.
func eachInFileOrder(g *graph.Graph, kind string, fn func(r *graph.Resource)) {
	rs := append([]*graph.Resource(nil), g.OfKind(kind)...)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Before(rs[j]) })
	for _, r := range rs {
		fn(r)
	}
}

// pairCover remembers, per host, which pairs of objects a finding already
// named, so that objects in conflict over a host are reported once: on the
// first of them in file order, naming all the others, instead of once from
// each side.
type pairCover map[string]map[[2]*graph.Resource]bool

// add records a finding on r naming others over host, and reports whether
// the finding is needed: whether some pair of r with one of others was not
// named by an earlier finding.
func (c pairCover) add(host string, r *graph.Resource, others []*graph.Resource) bool {
	pairs := c[host]
	if pairs == nil {
		pairs = map[[2]*graph.Resource]bool{}
		c[host] = pairs
	}
	needed := false
	for _, o := range others {
		if !pairs[[2]*graph.Resource{r, o}] {
			needed = true
		}
	}
	if !needed {
		return false
	}
	group := append([]*graph.Resource{r}, others...)
	for _, a := range group {
		for _, b := range group {
			pairs[[2]*graph.Resource{a, b}] = true
		}
	}
	return true
}
