// Package visibility is Istio's config visibility, computed once per bundle
// and Istio version: which namespaces see a Service, ServiceEntry,
// VirtualService or DestinationRule (exportTo, the Service annotation
// networking.istio.io/exportTo and the mesh defaults), which DestinationRule
// applies to a host for a client namespace (client namespace, then the
// service's, then the root namespace), what a namespace's Sidecar imports
// (egress hosts), and in which namespaces the proxies of a Gateway run. Rules
// and the step plan's proxy scope share this one model, so that a finding and
// a predicted push agree.
//
// It follows istiod (pilot/pkg/model/push_context.go: initServiceRegistry,
// IsServiceVisible, initVirtualServices, setDestinationRules,
// destinationRule, VirtualServicesForGateway; pilot/pkg/model/sidecar.go:
// convertToSidecarScope, collectImportedServices, selectServices;
// pilot/pkg/model/virtualservice.go: SelectVirtualServices). Rules citing it
// say so in their documentation. What differs between the supported
// versions (see For):
//
//	behaviour                                   1.28            1.30            1.31
//	empty exportTo, mesh defaultService/        "." in it: own  the default     the default
//	  VirtualServiceExportTo set                namespace only; read as an      read as an
//	                                            else "*": all;  exportTo list   exportTo list
//	                                            else none
//	Sidecar egress host "~ns/host"              no namespace    no namespace    excludes host
//	                                            (imports none)  (imports none)  of ns ("~/": any)
//	VirtualService destination whose service    first visible   visible Kube-   visible Kube-
//	  is not in the sidecar's namespace         namespace, a-z  rnetes Service, rnetes Service,
//	                                                            else oldest SE  else oldest SE
//
// Common to all: "*" in an exportTo wins over everything, else "~" in it
// hides the Service, ServiceEntry or VirtualService from every namespace; a
// Service or ServiceEntry exported elsewhere only is not visible in its own
// namespace (a sidecar there imports it through no egress host, a gateway
// there routes to it not), except that a sidecar resolves a VirtualService
// destination to its own namespace's service of that host whatever its
// exportTo (collectImportedServices); a DestinationRule's mesh default
// counts only when it holds "." (setDestinationRules).
package visibility

import (
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// Other stands for a namespace the bundle names nowhere. Every such namespace
// sees the same configuration, so one evaluation stands for all of them.
const Other = "\x00other"

// ExportToAnnotation is the Service annotation Istio reads as the Service's
// exportTo (a comma-separated list).
const ExportToAnnotation = "networking.istio.io/exportTo"

// DefaultRootNamespace is the mesh config root namespace when the bundle's
// mesh config does not set one.
const DefaultRootNamespace = "istio-system"

// Mesh is the part of Istio's MeshConfig visibility depends on.
type Mesh struct {
	RootNamespace                  string
	DefaultServiceExportTo         []string
	DefaultVirtualServiceExportTo  []string
	DefaultDestinationRuleExportTo []string
	// Source is the ConfigMap the values were read from, nil for Istio's
	// defaults (root namespace istio-system, everything exported to "*").
	Source *graph.Resource
}

// Service is a host a client can be routed to: a Kubernetes Service or a
// ServiceEntry host.
type Service struct {
	// Host is the fully qualified host (a ServiceEntry's as written).
	Host      string
	Namespace string
	Resource  *graph.Resource
	// Export is where the host is visible (exportTo, the Service annotation,
	// or the mesh default).
	Export Set
	// ExportPath is the field the export comes from ("" for the mesh default).
	ExportPath string
	Kubernetes bool
}

// Model is the visibility of one bundle.
type Model struct {
	g    *graph.Graph
	b    behaviour
	Mesh Mesh

	services  map[string][]*Service    // exact host → services
	wildcards []*Service               // ServiceEntry wildcard hosts
	byNS      map[string][]*Service    // services by namespace, load order
	drByHost  map[string][]*destRule   // exact resolved host → rules
	drWild    []*destRule              // rules of wildcard hosts
	drIndex   map[string]*nsRules      // per namespace, rules without workloadSelector by host
	sidecars  map[string]*sidecarScope // namespace-wide Sidecar by namespace
	root      *sidecarScope            // the root namespace's namespace-wide Sidecar
	gwProxies map[*graph.Resource]Proxies
	named     map[string]bool
	vsHosts   map[*graph.Resource][]string
	vsByHost  map[string][]*graph.Resource // exact resolved host → mesh and gateway VirtualServices
	// destinationOf lists, per destination host, the mesh VirtualServices
	// routing or mirroring to it (collectImportedServices adds those hosts
	// to the scope of sidecars importing the VirtualService).
	destinationOf map[string][]*graph.Resource
	// sidecarsFrom lists, per namespace, the namespaces whose own Sidecar
	// imports from it by name ("shop/..."); wildSidecars those with a "*/"
	// import (they may import from any namespace).
	sidecarsFrom map[string][]string
	wildSidecars []string
}

var models = graph.NewKeyedMemo[string, *Model]("visibility.For")

// DefaultVersion is the Istio version Of models, the default of
// --istio-version.
const DefaultVersion = "1.28"

// Of returns the visibility model of a graph under DefaultVersion.
func Of(g *graph.Graph) *Model { return For(g, DefaultVersion) }

// For returns the visibility model of a graph under an Istio version
// ("1.28", "1.30", "1.31"; "" is DefaultVersion; a patch release or a "v"
// prefix is accepted, an older minor version is modelled as 1.28 and a newer
// one as 1.31), built once per graph and behaviour.
func For(g *graph.Graph, version string) *Model {
	b := behaviourOf(version)
	return models.Get(g, b.version, func() *Model { return build(g, b) })
}

// behaviour is what an Istio version changes in visibility (see the table
// in the package documentation).
type behaviour struct {
	version string // the modelled version: "1.28", "1.30" or "1.31"
	// listDefaults: an empty exportTo of a Service, ServiceEntry or
	// VirtualService takes the mesh default as an exportTo list (1.30+).
	listDefaults bool
	// pickBest: a VirtualService destination without a service in the
	// sidecar's namespace resolves to a visible Kubernetes Service first
	// (PILOT_SIDECAR_PICK_BEST_SERVICE_NAMESPACE, default on since 1.30).
	pickBest bool
	// egressExclusion: a Sidecar egress host "~ns/host" excludes (1.31+).
	egressExclusion bool
}

func behaviourOf(version string) behaviour {
	v := strings.TrimPrefix(version, "v")
	if v == "" {
		v = DefaultVersion
	}
	minor := 0
	if rest, ok := strings.CutPrefix(v, "1."); ok {
		for _, c := range rest {
			if c < '0' || c > '9' {
				break
			}
			minor = minor*10 + int(c-'0')
		}
	}
	switch {
	case minor >= 31:
		return behaviour{version: "1.31", listDefaults: true, pickBest: true, egressExclusion: true}
	case minor == 30:
		return behaviour{version: "1.30", listDefaults: true, pickBest: true}
	}
	return behaviour{version: "1.28"}
}

// Version is the Istio version the model follows ("1.28", "1.30", "1.31").
func (m *Model) Version() string { return m.b.version }

func build(g *graph.Graph, b behaviour) *Model {
	// Sized for a bundle's usual one host per Service, DestinationRule and
	// VirtualService, so they do not grow step by step.
	svcs, drs, vss := len(g.OfKind(kinds.Service)), len(g.OfKind(kinds.DestinationRule)), len(g.OfKind(kinds.VirtualService))
	m := &Model{g: g, b: b, services: make(map[string][]*Service, svcs), byNS: map[string][]*Service{},
		drByHost: make(map[string][]*destRule, drs), drIndex: map[string]*nsRules{}, vsByHost: make(map[string][]*graph.Resource, vss), sidecarsFrom: map[string][]string{},
		destinationOf: make(map[string][]*graph.Resource, vss),
		sidecars:      map[string]*sidecarScope{}, gwProxies: map[*graph.Resource]Proxies{},
		named: map[string]bool{}, vsHosts: make(map[*graph.Resource][]string, vss)}
	m.Mesh = readMesh(g)
	m.named[m.Mesh.RootNamespace] = true
	last := ""
	for _, r := range g.Resources {
		// Neighbours in load order mostly share a namespace: one map
		// write per run of them.
		if r.Namespace != "" && r.Namespace != last {
			m.named[r.Namespace] = true
			last = r.Namespace
		}
	}
	// The Services, and the one-element host lists nearly all of them
	// have, are carved out of two arrays rather than allocated one by one
	// (neither array grows: one element per Service at most). A host list
	// is a window of capacity one, so that appending to it copies it.
	svcObjs := g.OfKind(kinds.Service)
	svcStore := make([]Service, 0, len(svcObjs))
	svcLists := make([]*Service, 0, len(svcObjs))
	for _, r := range svcObjs {
		svc := r.Service()
		if svc == nil {
			continue
		}
		var exp []string
		path := ""
		// An empty annotation is no exportTo (kube/conversion.go).
		if v, ok := r.Annotation(ExportToAnnotation); ok && v != "" {
			exp = strings.Split(v, ",")
			path = graph.Key("metadata.annotations", ExportToAnnotation)
		}
		svcStore = append(svcStore, Service{Host: graph.ServiceFQDN(r.Name, r.Namespace), Namespace: r.Namespace, Resource: r,
			Export: m.exportSet(exp, r.Namespace, m.Mesh.DefaultServiceExportTo), ExportPath: path, Kubernetes: true})
		s := &svcStore[len(svcStore)-1]
		m.nameAll(exp)
		if l, ok := m.services[s.Host]; ok {
			m.services[s.Host] = append(l, s)
		} else {
			svcLists = append(svcLists, s)
			n := len(svcLists)
			m.services[s.Host] = svcLists[n-1 : n : n]
		}
		m.byNS[s.Namespace] = append(m.byNS[s.Namespace], s)
	}
	for _, r := range g.OfKind(kinds.ServiceEntry) {
		se, _ := r.Typed.(*kinds.ServiceEntryObject)
		if se == nil {
			continue
		}
		exp := se.Spec.GetExportTo()
		m.nameAll(exp)
		path := ""
		if len(exp) > 0 {
			path = "spec.exportTo"
		}
		for _, h := range se.Spec.GetHosts() {
			if h == "*" {
				continue // istiod rejects a ServiceEntry host "*" (RL0003): it covers nothing
			}
			s := &Service{Host: h, Namespace: r.Namespace, Resource: r, Export: m.exportSet(exp, r.Namespace, m.Mesh.DefaultServiceExportTo), ExportPath: path}
			if wildcarded(h) {
				m.wildcards = append(m.wildcards, s)
			} else {
				m.services[h] = append(m.services[h], s)
			}
			m.byNS[s.Namespace] = append(m.byNS[s.Namespace], s)
		}
	}
	for _, r := range g.OfKind(kinds.DestinationRule) {
		o := r.DestinationRule()
		if o == nil || o.Spec.GetHost() == "" {
			continue
		}
		m.nameAll(o.Spec.GetExportTo())
		d := newDestRule(r, IstioFQDN(o.Spec.GetHost(), r.Namespace), o.Spec.GetExportTo(), o.Spec.GetWorkloadSelector() != nil)
		if ss := o.Spec.GetSubsets(); len(ss) > 0 {
			d.subsets = make([]string, 0, len(ss))
			for _, s := range ss {
				d.subsets = append(d.subsets, s.GetName())
			}
		}
		if wildcarded(d.host) {
			m.drWild = append(m.drWild, d)
		} else {
			m.drByHost[d.host] = append(m.drByHost[d.host], d)
		}
		if !d.selector {
			idx := m.drIndex[r.Namespace]
			if idx == nil {
				idx = &nsRules{exact: map[string][]*destRule{}}
				m.drIndex[r.Namespace] = idx
			}
			if wildcarded(d.host) {
				idx.wild = append(idx.wild, d)
			} else {
				idx.exact[d.host] = append(idx.exact[d.host], d)
			}
		}
	}
	// Every VirtualService's hosts are a window of one array.
	nHosts := 0
	for _, r := range g.OfKind(kinds.VirtualService) {
		if vs := r.VirtualService(); vs != nil {
			nHosts += len(vs.Spec.GetHosts())
		}
	}
	hostStore := make([]string, 0, nHosts)
	for _, r := range g.OfKind(kinds.VirtualService) {
		if vs := r.VirtualService(); vs != nil {
			m.nameAll(vs.Spec.GetExportTo())
			start := len(hostStore)
			for _, h := range vs.Spec.GetHosts() {
				fq := IstioFQDN(h, r.Namespace)
				hostStore = append(hostStore, fq)
				if !slices.Contains(m.vsByHost[fq], r) {
					m.vsByHost[fq] = append(m.vsByHost[fq], r)
				}
			}
			m.vsHosts[r] = hostStore[start:len(hostStore):len(hostStore)]
			if MeshBound(r) {
				// The routes of a VirtualService mostly name one host (a
				// split's stable and canary): a host seen just before is
				// skipped, and a name is made a string only for a new key.
				var buf [128]byte
				prev, started := "", false
				eachDestinationHost(vs, func(d string) {
					if started && d == prev {
						return
					}
					prev, started = d, true
					fq := appendIstioFQDN(buf[:0], d, r.Namespace)
					if l := m.destinationOf[string(fq)]; !slices.Contains(l, r) {
						m.destinationOf[string(fq)] = append(l, r)
					}
				})
			}
		}
	}
	m.indexSidecars()
	// Gateways are few: their proxies are located once here, so that the
	// model is read-only once built (rules read it concurrently).
	if gws := g.OfKind(kinds.Gateway); len(gws) > 0 {
		idx := indexWorkloads(g, selectorLabels(gws...))
		for _, r := range gws {
			m.gwProxies[r] = m.gatewayProxies(r, idx)
		}
	}
	return m
}

func (m *Model) nameAll(exportTo []string) {
	for _, e := range exportTo {
		if e = strings.TrimSpace(e); e != "" && e != "*" && e != "." && e != "~" {
			m.named[e] = true
		}
	}
}

// readMesh reads the mesh config from the bundle's Istio ConfigMap (named
// "istio", or "istio-<revision>", key "mesh"), preferring one in the root
// namespace it names; without one, Istio's defaults apply.
func readMesh(g *graph.Graph) Mesh {
	def := Mesh{RootNamespace: DefaultRootNamespace}
	var cands []*graph.Resource
	for _, r := range g.OfKind(kinds.ConfigMap) {
		if r.Name == "istio" || strings.HasPrefix(r.Name, "istio-") && !strings.Contains(r.Name, "sidecar") {
			if data, _ := r.Object()["data"].(map[string]any); data != nil {
				if _, ok := data["mesh"].(string); ok {
					cands = append(cands, r)
				}
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		return cands[i].Name == "istio" && cands[j].Name != "istio"
	})
	for _, r := range cands {
		text, _ := r.Object()["data"].(map[string]any)["mesh"].(string)
		var mc struct {
			RootNamespace                  string   `yaml:"rootNamespace"`
			DefaultServiceExportTo         []string `yaml:"defaultServiceExportTo"`
			DefaultVirtualServiceExportTo  []string `yaml:"defaultVirtualServiceExportTo"`
			DefaultDestinationRuleExportTo []string `yaml:"defaultDestinationRuleExportTo"`
		}
		if err := yaml.Unmarshal([]byte(text), &mc); err != nil {
			continue // a mesh config that does not parse is istiod's to reject
		}
		root := mc.RootNamespace
		if root == "" {
			root = r.Namespace // istiod's root defaults to its own namespace
		}
		return Mesh{RootNamespace: root, DefaultServiceExportTo: mc.DefaultServiceExportTo,
			DefaultVirtualServiceExportTo:  mc.DefaultVirtualServiceExportTo,
			DefaultDestinationRuleExportTo: mc.DefaultDestinationRuleExportTo, Source: r}
	}
	return def
}

// IstioFQDN resolves a host written in an Istio object of namespace ns the
// way istiod does (ResolveShortnameToFQDN): a name without a dot gets the
// namespace and the cluster domain; any other name is taken as written.
func IstioFQDN(host, ns string) string {
	if host == "" || host == "*" || strings.Contains(host, ".") {
		return host
	}
	return graph.ServiceFQDN(host, ns)
}

// appendIstioFQDN appends IstioFQDN(host, ns) to dst.
func appendIstioFQDN(dst []byte, host, ns string) []byte {
	if host == "" || host == "*" || strings.Contains(host, ".") {
		return append(dst, host...)
	}
	return graph.AppendServiceFQDN(dst, host, ns)
}

// Namespaces lists the namespaces worth evaluating one at a time: every
// namespace the bundle names (objects, exportTo lists, Sidecar imports, the
// root namespace), sorted, then Other for all the rest.
func (m *Model) Namespaces() []string {
	out := sortedKeys(m.named)
	return append(out, Other)
}

// Named reports whether the bundle names the namespace somewhere.
func (m *Model) Named(ns string) bool { return m.named[ns] }

// Label renders a namespace for messages (Other as "any other namespace").
func Label(ns string) string {
	if ns == Other {
		return "namespaces the bundle does not name"
	}
	return "namespace " + ns
}

// Services returns the services of a host: Kubernetes Services and exact
// ServiceEntry hosts, else the ServiceEntry wildcards covering it, in load
// order.
func (m *Model) Services(host string) []*Service {
	if s := m.services[host]; len(s) > 0 {
		return s
	}
	var out []*Service
	for _, w := range m.wildcards {
		if SubsetOf(host, w.Host) {
			out = append(out, w)
		}
	}
	return out
}

// Visible reports whether the service is exported to namespace ns.
func (s *Service) Visible(ns string) bool { return s.Export.Has(ns) }

// VisibleService returns the service of host a proxy in namespace ns uses
// for a VirtualService destination (collectImportedServices): the host's
// service in ns itself if there is one, whatever its exportTo (a Kubernetes
// Service before ServiceEntries, else the oldest), else one exported to ns —
// before 1.30 of the first namespace in alphabetical order, since then a
// Kubernetes Service (of the first namespace in alphabetical order when
// several are: istiod takes any), else the oldest ServiceEntry, load order
// standing for creation order — or nil when none is visible.
func (m *Model) VisibleService(host, ns string) *Service {
	svcs := m.Services(host)
	var best *Service
	for _, s := range svcs {
		if s.Namespace == ns {
			return s // Services lists Kubernetes Services first, then in load order
		}
		if !s.Visible(ns) {
			continue
		}
		switch {
		case best == nil:
			best = s
		case m.b.pickBest:
			if s.Kubernetes && (!best.Kubernetes || s.Namespace < best.Namespace) {
				best = s
			}
		case s.Namespace < best.Namespace:
			best = s
		}
	}
	return best
}

// VirtualServiceExport is where a VirtualService is visible: its exportTo, or
// the mesh default ("." meaning its own namespace).
func (m *Model) VirtualServiceExport(r *graph.Resource) Set {
	vs := r.VirtualService()
	if vs == nil {
		return Set{}
	}
	return m.exportSet(vs.Spec.GetExportTo(), r.Namespace, m.Mesh.DefaultVirtualServiceExportTo)
}

// VirtualServiceHosts are a VirtualService's hosts as istiod resolves them.
func (m *Model) VirtualServiceHosts(r *graph.Resource) []string { return m.vsHosts[r] }

// MeshBound reports whether a VirtualService applies to sidecars: no gateways
// listed, or the reserved "mesh" among them.
func MeshBound(r *graph.Resource) bool {
	vs := r.VirtualService()
	if vs == nil {
		return false
	}
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

// Applies reports whether the sidecars of namespace ns apply a mesh
// VirtualService: it is exported there and their Sidecar imports one of its
// hosts from its namespace.
func (m *Model) Applies(r *graph.Resource, ns string) bool {
	return MeshBound(r) && m.ImportsVirtualService(ns, r)
}

// Candidates lists the namespaces where the outcome of routing a mesh
// VirtualService's traffic to the hosts can differ from that of a namespace
// the bundle does not name: the VirtualService's own, the root namespace,
// those named by its exportTo, by the hosts' services (theirs and their
// exportTo) and DestinationRules (theirs and their exportTo), and those
// whose own Sidecar imports from the VirtualService's namespace; then
// Other, which stands for every other namespace. The list depends on the
// objects of the VirtualService and its hosts only, never on the size of
// the bundle.
func (m *Model) Candidates(r *graph.Resource, hosts ...string) []string {
	set := map[string]bool{r.Namespace: true, m.Mesh.RootNamespace: true}
	addAll := func(nss []string) {
		for _, ns := range nss {
			set[ns] = true
		}
	}
	export := m.VirtualServiceExport(r)
	addAll(export.Members())
	addAll(export.Except())
	addAll(m.sidecarsFrom[r.Namespace])
	addAll(m.wildSidecars)
	for _, h := range hosts {
		for _, s := range m.Services(h) {
			set[s.Namespace] = true
			addAll(s.Export.Members())
			addAll(s.Export.Except())
		}
		for _, d := range m.rulesFor(h) {
			set[d.res.Namespace] = true
			for _, e := range d.exportTo {
				if e != "*" && e != "." && e != "~" {
					set[e] = true
				}
			}
		}
	}
	out := sortedKeys(set)
	return append(out, Other)
}

// rulesFor returns the DestinationRules whose host covers host. The slice
// may be the model's own: do not modify it.
func (m *Model) rulesFor(host string) []*destRule {
	out := m.drByHost[host]
	copied := false
	for _, d := range m.drWild {
		if SubsetOf(host, d.host) {
			if !copied {
				out, copied = append([]*destRule(nil), out...), true
			}
			out = append(out, d)
		}
	}
	return out
}

// SidecarNamespaces is the set of namespaces whose sidecars apply a mesh
// VirtualService. It costs one check per namespace with a Sidecar of its own;
// rules that only need the outcome in some namespaces use Applies with
// Candidates instead.
func (m *Model) SidecarNamespaces(r *graph.Resource) Set {
	if !MeshBound(r) {
		return Set{}
	}
	out := Set{ns: map[string]bool{}}
	if m.Applies(r, Other) {
		out.all = true
	}
	check := func(ns string) {
		if ns == Other {
			return
		}
		in := m.Applies(r, ns)
		switch {
		case out.all && !in:
			out.ns[ns] = true
		case !out.all && in:
			out.ns[ns] = true
		}
	}
	for ns := range m.sidecars {
		check(ns)
	}
	for _, ns := range m.Candidates(r, m.vsHosts[r]...) {
		check(ns)
	}
	return out
}

// VirtualServicesForHost returns the VirtualServices listing host (fully
// qualified as istiod resolves it) in spec.hosts, in load order.
func (m *Model) VirtualServicesForHost(host string) []*graph.Resource { return m.vsByHost[host] }

// ServicesIn returns the services (Kubernetes Services and ServiceEntry
// hosts) of a namespace, in load order.
func (m *Model) ServicesIn(ns string) []*Service { return m.byNS[ns] }

// ServicesOrAssumed is Services, or, for a cluster-local host
// (name.ns.svc.cluster.local) the bundle has no Service of, the Kubernetes
// Service that name implies, exported by the mesh default: the step plan
// predicts pushes for Services kept outside the bundle too.
func (m *Model) ServicesOrAssumed(host string) []*Service {
	if s := m.Services(host); len(s) > 0 {
		return s
	}
	ns, ok := clusterLocalNamespace(host)
	if !ok {
		return nil
	}
	return []*Service{{Host: host, Namespace: ns, Export: m.exportSet(nil, ns, m.Mesh.DefaultServiceExportTo), Kubernetes: true}}
}

// HostInScope reports whether the sidecars of namespace ns have host in
// their scope: a service of the host imported by their egress hosts (any
// visible one without a Sidecar), or the destination of a VirtualService
// they import (collectImportedServices).
func (m *Model) HostInScope(ns, host string) bool {
	for _, s := range m.ServicesOrAssumed(host) {
		if m.ImportsService(ns, s) {
			return true
		}
	}
	visible := false
	for _, s := range m.ServicesOrAssumed(host) {
		if s.Namespace == ns || s.Visible(ns) {
			visible = true
		}
	}
	if !visible {
		return false
	}
	for _, r := range m.destinationOf[host] {
		if m.Applies(r, ns) {
			return true
		}
	}
	return false
}

// HostCandidates lists the namespaces where a host's scope can differ from
// that of a namespace the bundle does not name: the extra namespaces given,
// the root namespace, those of the host's services and their exportTo, of
// its DestinationRules and their exportTo, of the mesh VirtualServices
// routing to it (see Candidates), and of Sidecars importing from the
// services' namespaces or from any; then Other.
func (m *Model) HostCandidates(host string, extra ...string) []string {
	set := map[string]bool{m.Mesh.RootNamespace: true}
	for _, ns := range extra {
		set[ns] = true
	}
	for _, r := range m.destinationOf[host] {
		for _, ns := range m.Candidates(r, host) {
			set[ns] = true
		}
	}
	for _, s := range m.ServicesOrAssumed(host) {
		set[s.Namespace] = true
		for _, ns := range s.Export.Members() {
			set[ns] = true
		}
		for _, ns := range s.Export.Except() {
			set[ns] = true
		}
		for _, ns := range m.sidecarsFrom[s.Namespace] {
			set[ns] = true
		}
	}
	for _, ns := range m.wildSidecars {
		set[ns] = true
	}
	for _, d := range m.rulesFor(host) {
		set[d.res.Namespace] = true
		for _, e := range d.exportTo {
			if e != "*" && e != "." && e != "~" {
				set[e] = true
			}
		}
	}
	delete(set, Other)
	return append(sortedKeys(set), Other)
}

// NamespacesWhere is the set of namespaces for which pred holds, pred being
// evaluated at the candidates (Other standing for every namespace not named
// among them) and at every namespace with a Sidecar of its own.
func (m *Model) NamespacesWhere(pred func(ns string) bool, candidates ...string) Set {
	out := Set{ns: map[string]bool{}}
	if pred(Other) {
		out.all = true
	}
	check := func(ns string) {
		if ns == Other {
			return
		}
		if in := pred(ns); out.all != in {
			out.ns[ns] = true
		}
	}
	for ns := range m.sidecars {
		check(ns)
	}
	for _, ns := range candidates {
		check(ns)
	}
	return out
}

// eachDestinationHost calls fn with each host a VirtualService routes and
// mirrors to, in document order.
func eachDestinationHost(vs *kinds.VirtualServiceObject, fn func(host string)) {
	for _, h := range vs.Spec.GetHttp() {
		for _, d := range h.GetRoute() {
			fn(d.GetDestination().GetHost())
		}
		if mi := h.GetMirror(); mi != nil {
			fn(mi.GetHost())
		}
		for _, mi := range h.GetMirrors() {
			fn(mi.GetDestination().GetHost())
		}
	}
	for _, t := range vs.Spec.GetTls() {
		for _, d := range t.GetRoute() {
			fn(d.GetDestination().GetHost())
		}
	}
	for _, t := range vs.Spec.GetTcp() {
		for _, d := range t.GetRoute() {
			fn(d.GetDestination().GetHost())
		}
	}
}
