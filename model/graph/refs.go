package graph

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	networkingv1 "istio.io/api/networking/v1"

	"github.com/rolloutlint/rolloutlint/internal/parallel"
	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// RouteKind is the VirtualService route list a route lives in.
type RouteKind string

// The three VirtualService route lists Argo Rollouts can manage.
const (
	HTTP RouteKind = "http"
	TLS  RouteKind = "tls"
	TCP  RouteKind = "tcp"
)

// ServiceRole is the part a Service plays for a Rollout.
type ServiceRole string

// Service roles, named after the Rollout fields that hold them.
const (
	RoleStable  ServiceRole = "stableService"
	RoleCanary  ServiceRole = "canaryService"
	RolePing    ServiceRole = "pingService"
	RolePong    ServiceRole = "pongService"
	RoleActive  ServiceRole = "activeService"
	RolePreview ServiceRole = "previewService"
)

// ServiceRef is a Rollout's reference to a Service.
type ServiceRef struct {
	Role   ServiceRole
	Name   string
	Path   string    // field path in the Rollout
	Target *Resource // nil when the Service is not in the bundle
}

// RouteRef is a VirtualService route a Rollout manages.
type RouteRef struct {
	Kind RouteKind
	// Name is the route name the Rollout gave (http), or "" for an implicit
	// route (no `routes` list) and for tls/tcp routes matched by port.
	Name string
	// Path is where the Rollout names the route; for an implicit route, the
	// virtualService reference itself.
	Path string
	// Implicit is true when the Rollout listed no routes of this kind and Argo
	// picks the single (or first unnamed) route.
	Implicit bool
	// Index is the route's index in the VirtualService's list of this kind, or
	// -1 when the route does not exist (or the VS is missing).
	Index int
	// Port and SNIHosts are the tls/tcp match keys the Rollout gave.
	Port     int64
	SNIHosts []string
	// Absent is set when the VirtualService has no section of this kind at
	// all (no spec.http key, say): Argo Rollouts then skips validating and
	// patching routes of this kind, so a route listed for it is unused.
	Absent bool
}

// VSPath is the field path of the route in the VirtualService, e.g. spec.http[2].
func (rt RouteRef) VSPath() string {
	return fmt.Sprintf("spec.%s[%d]", rt.Kind, rt.Index)
}

// VSRef is a Rollout's reference to a VirtualService.
type VSRef struct {
	Ref       string // as written: name, name.namespace or an FQDN form
	Name      string
	Namespace string
	Path      string // field path of the name in the Rollout
	Target    *Resource
	Routes    []RouteRef
}

// DRRef is a Rollout's reference to a DestinationRule (subset-level split).
type DRRef struct {
	Name              string
	Namespace         string
	Path              string
	Target            *Resource
	StableSubset      string
	CanarySubset      string
	AdditionalSubsets []string
}

// AnalysisUse says where a Rollout runs an analysis.
type AnalysisUse string

// Analysis uses, after the Rollout fields that start them.
const (
	UseStep          AnalysisUse = "step"
	UseBackground    AnalysisUse = "background"
	UsePrePromotion  AnalysisUse = "prePromotion"
	UsePostPromotion AnalysisUse = "postPromotion"
	UseExperiment    AnalysisUse = "experiment"
)

// TemplateRef is a Rollout's reference to an (Cluster)AnalysisTemplate.
type TemplateRef struct {
	Name    string
	Cluster bool
	Use     AnalysisUse
	Step    int    // step index for step and experiment uses, else -1
	Path    string // field path of templateName in the Rollout
	// ArgsPath is the field path of the args list that applies.
	ArgsPath string
	Args     []v1alpha1.AnalysisRunArgument
	Target   *Resource
}

// RolloutRefs is everything one Rollout points at, resolved.
type RolloutRefs struct {
	Rollout         *Resource
	Spec            *v1alpha1.Rollout
	Services        []ServiceRef
	VirtualServices []VSRef
	DestinationRule *DRRef
	Templates       []TemplateRef
}

// Service returns the reference of a role, or nil.
func (rr *RolloutRefs) Service(role ServiceRole) *ServiceRef {
	for i := range rr.Services {
		if rr.Services[i].Role == role {
			return &rr.Services[i]
		}
	}
	return nil
}

// RouteKey identifies one route of one VirtualService.
type RouteKey struct {
	VS    ObjectKey
	Kind  RouteKind
	Index int
}

// RouteUse is one Rollout's claim on a route.
type RouteUse struct {
	Refs  *RolloutRefs
	VS    *VSRef
	Route *RouteRef
}

// References holds every resolved reference of the bundle plus reverse indexes.
type References struct {
	Rollouts      []*RolloutRefs
	byRollout     map[*Resource]*RolloutRefs
	routeUsers    map[RouteKey][]RouteUse
	serviceUsers  map[*Resource][]*RolloutRefs
	drUsers       map[*Resource][]*RolloutRefs
	templateUsers map[*Resource][]TemplateUse
}

// TemplateUse is one Rollout's use of a template.
type TemplateUse struct {
	Refs *RolloutRefs
	Ref  *TemplateRef
}

// ForRollout returns the references of a Rollout resource, or nil.
func (x *References) ForRollout(r *Resource) *RolloutRefs { return x.byRollout[r] }

// RouteUsers returns the Rollouts managing a route, in load order.
func (x *References) RouteUsers(k RouteKey) []RouteUse { return x.routeUsers[k] }

// RouteKeys returns every managed route, sorted, so callers iterate deterministically.
func (x *References) RouteKeys() []RouteKey {
	keys := make([]RouteKey, 0, len(x.routeUsers))
	for k := range x.routeUsers {
		keys = append(keys, k)
	}
	sortRouteKeys(keys)
	return keys
}

// SharedRouteKeys returns the routes more than one Rollout use manages,
// sorted as RouteKeys: a rule about shared routes need not sort (or visit)
// the many routes a single Rollout manages.
func (x *References) SharedRouteKeys() []RouteKey {
	var keys []RouteKey
	for k, users := range x.routeUsers {
		if len(users) > 1 {
			keys = append(keys, k)
		}
	}
	sortRouteKeys(keys)
	return keys
}

// sortRouteKeys sorts keys by VirtualService (namespace, name), kind and
// index.
func sortRouteKeys(keys []RouteKey) {
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.VS != b.VS {
			if a.VS.Namespace != b.VS.Namespace {
				return a.VS.Namespace < b.VS.Namespace
			}
			return a.VS.Name < b.VS.Name
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Index < b.Index
	})
}

// ServiceUsers returns the Rollouts that reference a Service.
func (x *References) ServiceUsers(svc *Resource) []*RolloutRefs { return x.serviceUsers[svc] }

// DestinationRuleUsers returns the Rollouts that manage a DestinationRule.
func (x *References) DestinationRuleUsers(dr *Resource) []*RolloutRefs { return x.drUsers[dr] }

// TemplateUsers returns the Rollouts (and the references) that run a template.
func (x *References) TemplateUsers(t *Resource) []TemplateUse { return x.templateUsers[t] }

// resolve resolves every Rollout's references and indexes them the other
// way round; with concurrent, the Rollouts are resolved on parallel workers
// (they only read the graph) and indexed in load order after.
func resolve(g *Graph, concurrent bool) *References {
	// Sized for the usual bundle: a Rollout with its own Services,
	// DestinationRule, route and template, so they do not grow step by step.
	n := len(g.OfKind(kinds.Rollout))
	x := &References{
		byRollout:     make(map[*Resource]*RolloutRefs, n),
		routeUsers:    make(map[RouteKey][]RouteUse, n),
		serviceUsers:  make(map[*Resource][]*RolloutRefs, 2*n),
		drUsers:       make(map[*Resource][]*RolloutRefs, n),
		templateUsers: make(map[*Resource][]TemplateUse, n),
	}
	if n > 0 {
		x.Rollouts = make([]*RolloutRefs, 0, n)
	}
	rollouts := g.OfKind(kinds.Rollout)
	resolved := make([]*RolloutRefs, len(rollouts))
	resolveOne := func(i int) {
		r := rollouts[i]
		ro := r.Rollout()
		if ro == nil {
			return
		}
		rr := &RolloutRefs{Rollout: r, Spec: ro}
		resolveServices(g, rr)
		resolveTraffic(g, rr)
		resolveTemplates(g, rr)
		resolved[i] = rr
	}
	if concurrent {
		parallel.For(len(rollouts), 256, resolveOne)
	} else {
		for i := range rollouts {
			resolveOne(i)
		}
	}
	refLists := newLists[*RolloutRefs](3 * n) // a Rollout's Services and DestinationRule
	routeLists := newLists[RouteUse](n)
	templateLists := newLists[TemplateUse](n)
	for _, rr := range resolved {
		if rr == nil {
			continue
		}
		r := rr.Rollout
		x.Rollouts = append(x.Rollouts, rr)
		x.byRollout[r] = rr
		for i, s := range rr.Services {
			if s.Target != nil && !targetIn(rr.Services[:i], s.Target) {
				addTo(refLists, x.serviceUsers, s.Target, rr)
			}
		}
		if rr.DestinationRule != nil && rr.DestinationRule.Target != nil {
			addTo(refLists, x.drUsers, rr.DestinationRule.Target, rr)
		}
		for i := range rr.VirtualServices {
			vs := &rr.VirtualServices[i]
			if vs.Target == nil {
				continue
			}
			for j := range vs.Routes {
				rt := &vs.Routes[j]
				if rt.Index < 0 {
					continue
				}
				k := RouteKey{VS: ObjectKey{Kind: "VirtualService", Namespace: vs.Target.Namespace, Name: vs.Target.Name}, Kind: rt.Kind, Index: rt.Index}
				addTo(routeLists, x.routeUsers, k, RouteUse{Refs: rr, VS: vs, Route: rt})
			}
		}
		for i := range rr.Templates {
			t := &rr.Templates[i]
			if t.Target != nil {
				addTo(templateLists, x.templateUsers, t.Target, TemplateUse{Refs: rr, Ref: t})
			}
		}
	}
	return x
}

// targetIn reports whether one of refs (a Rollout's few Services) points at
// target.
func targetIn(refs []ServiceRef, target *Resource) bool {
	for _, s := range refs {
		if s.Target == target {
			return true
		}
	}
	return false
}

func resolveServices(g *Graph, rr *RolloutRefs) {
	ns := rr.Rollout.Namespace
	add := func(role ServiceRole, name, path string) {
		if name == "" {
			return
		}
		rr.Services = append(rr.Services, ServiceRef{Role: role, Name: name, Path: path, Target: g.Get(kinds.Service, ns, name)})
	}
	st := rr.Spec.Spec.Strategy
	if c := st.Canary; c != nil {
		add(RoleStable, c.StableService, "spec.strategy.canary.stableService")
		add(RoleCanary, c.CanaryService, "spec.strategy.canary.canaryService")
		if c.PingPong != nil {
			add(RolePing, c.PingPong.PingService, "spec.strategy.canary.pingPong.pingService")
			add(RolePong, c.PingPong.PongService, "spec.strategy.canary.pingPong.pongService")
		}
	}
	if b := st.BlueGreen; b != nil {
		add(RoleActive, b.ActiveService, "spec.strategy.blueGreen.activeService")
		add(RolePreview, b.PreviewService, "spec.strategy.blueGreen.previewService")
	}
}

func resolveTraffic(g *Graph, rr *RolloutRefs) {
	c := rr.Spec.Spec.Strategy.Canary
	if c == nil || c.TrafficRouting == nil || c.TrafficRouting.Istio == nil {
		return
	}
	istio := c.TrafficRouting.Istio
	ns := rr.Rollout.Namespace
	const base = "spec.strategy.canary.trafficRouting.istio"
	addVS := func(v *v1alpha1.IstioVirtualService, path string) {
		if v == nil || v.Name == "" {
			return
		}
		name, vsNS := SplitNamespacedName(v.Name, ns)
		ref := VSRef{Ref: v.Name, Name: name, Namespace: vsNS, Path: path + ".name", Target: g.Get(kinds.VirtualService, vsNS, name)}
		var spec *networkingv1.VirtualService
		var present func(RouteKind) bool
		if ref.Target != nil {
			if o := ref.Target.VirtualService(); o != nil {
				spec = &o.Spec
				// Asked only for a kind the Rollout names routes of: Exists
				// decodes the document again.
				t := ref.Target
				present = func(k RouteKind) bool { return RouteCount(spec, k) > 0 || t.Exists("spec."+string(k)) }
			}
		}
		ref.Routes = resolveRoutes(v, path, spec, present)
		rr.VirtualServices = append(rr.VirtualServices, ref)
	}
	addVS(istio.VirtualService, base+".virtualService")
	for i := range istio.VirtualServices {
		addVS(&istio.VirtualServices[i], Index(base+".virtualServices", i))
	}
	if d := istio.DestinationRule; d != nil && d.Name != "" {
		// Argo Rollouts looks the DestinationRule up by its name as written,
		// in the Rollout's namespace (istio.go getDestinationRule): unlike
		// the VirtualService reference there is no name.namespace form.
		rr.DestinationRule = &DRRef{
			Name: d.Name, Namespace: ns, Path: base + ".destinationRule.name",
			Target:       g.Get(kinds.DestinationRule, ns, d.Name),
			StableSubset: d.StableSubsetName, CanarySubset: d.CanarySubsetName,
			AdditionalSubsets: d.AdditionalSubsetNames,
		}
	}
}

// resolveRoutes finds the VirtualService routes a reference manages, following
// Argo Rollouts: named http routes by name; with no names, the only route or
// the first unnamed one; tls/tcp routes by port (and SNI hosts), or the first
// route when none are listed.
func resolveRoutes(v *v1alpha1.IstioVirtualService, path string, spec *networkingv1.VirtualService, present func(RouteKind) bool) []RouteRef {
	absent := func(k RouteKind) bool { return spec != nil && !present(k) }
	var out []RouteRef
	var http []*networkingv1.HTTPRoute
	var tls []*networkingv1.TLSRoute
	var tcp []*networkingv1.TCPRoute
	if spec != nil {
		http, tls, tcp = spec.GetHttp(), spec.GetTls(), spec.GetTcp()
	}
	for i, name := range v.Routes {
		idx := -1
		for j, h := range http {
			if h.GetName() == name {
				idx = j
				break
			}
		}
		out = append(out, RouteRef{Kind: HTTP, Name: name, Path: path + ".routes[" + strconv.Itoa(i) + "]", Index: idx, Absent: absent(HTTP)})
	}
	implicitHTTP := len(v.Routes) == 0 && (len(http) > 0 || spec == nil && len(v.TLSRoutes) == 0 && len(v.TCPRoutes) == 0)
	if implicitHTTP {
		idx := -1
		if len(http) == 1 {
			idx = 0
		} else {
			for j, h := range http {
				if h.GetName() == "" {
					idx = j
					break
				}
			}
		}
		out = append(out, RouteRef{Kind: HTTP, Path: path + ".name", Implicit: true, Index: idx})
	}
	for i, t := range v.TLSRoutes {
		idx := -1
		for j, r := range tls {
			if tlsMatches(r, t) {
				idx = j
				break
			}
		}
		out = append(out, RouteRef{Kind: TLS, Path: Index(path+".tlsRoutes", i), Index: idx, Port: t.Port, SNIHosts: t.SNIHosts, Absent: absent(TLS)})
	}
	if len(v.TLSRoutes) == 0 && len(tls) > 0 {
		out = append(out, RouteRef{Kind: TLS, Path: path + ".name", Implicit: true, Index: 0})
	}
	for i, t := range v.TCPRoutes {
		idx := -1
		for j, r := range tcp {
			if tcpMatches(r, t) {
				idx = j
				break
			}
		}
		out = append(out, RouteRef{Kind: TCP, Path: Index(path+".tcpRoutes", i), Index: idx, Port: t.Port, Absent: absent(TCP)})
	}
	if len(v.TCPRoutes) == 0 && len(tcp) > 0 {
		out = append(out, RouteRef{Kind: TCP, Path: path + ".name", Implicit: true, Index: 0})
	}
	return out
}

// tlsMatches applies Argo's rule: the route's matches name exactly one distinct
// port, equal to the reference's, and the same set of SNI hosts.
func tlsMatches(r *networkingv1.TLSRoute, t v1alpha1.TLSRoute) bool {
	ports := map[uint32]bool{}
	snis := map[string]bool{}
	for _, m := range r.GetMatch() {
		ports[m.GetPort()] = true
		for _, s := range m.GetSniHosts() {
			snis[s] = true
		}
	}
	if len(ports) != 1 || !ports[uint32(t.Port)] {
		return false
	}
	want := map[string]bool{}
	for _, s := range t.SNIHosts {
		want[s] = true
	}
	if len(want) != len(snis) {
		return false
	}
	for s := range want {
		if !snis[s] {
			return false
		}
	}
	return true
}

func tcpMatches(r *networkingv1.TCPRoute, t v1alpha1.TCPRoute) bool {
	ports := map[uint32]bool{}
	for _, m := range r.GetMatch() {
		ports[m.GetPort()] = true
	}
	return len(ports) == 1 && ports[uint32(t.Port)]
}

func resolveTemplates(g *Graph, rr *RolloutRefs) {
	ns := rr.Rollout.Namespace
	lookup := func(name string, cluster bool) *Resource {
		if cluster {
			return g.Get(kinds.ClusterAnalysisTemplate, "", name)
		}
		return g.Get(kinds.AnalysisTemplate, ns, name)
	}
	addGroup := func(a *v1alpha1.RolloutAnalysis, use AnalysisUse, step int, base string) {
		if a == nil {
			return
		}
		if len(a.Templates) == 0 {
			return
		}
		args := base + ".args" // shared by the group's templates
		for i, t := range a.Templates {
			// One concatenation, as Index(base+".templates", i)+".templateName".
			p := base + ".templates[" + strconv.Itoa(i) + "].templateName"
			rr.Templates = append(rr.Templates, TemplateRef{
				Name: t.TemplateName, Cluster: t.IsClusterScope(), Use: use, Step: step, Path: p,
				ArgsPath: args, Args: a.Args, Target: lookup(t.TemplateName, t.IsClusterScope()),
			})
		}
	}
	st := rr.Spec.Spec.Strategy
	if c := st.Canary; c != nil {
		if c.Analysis != nil {
			addGroup(&c.Analysis.RolloutAnalysis, UseBackground, -1, "spec.strategy.canary.analysis")
		}
		for i, s := range c.Steps {
			if s.Analysis == nil && s.Experiment == nil {
				continue // most steps: no path to build
			}
			base := Index("spec.strategy.canary.steps", i)
			if s.Analysis != nil {
				addGroup(s.Analysis, UseStep, i, base+".analysis")
			}
			if s.Experiment != nil {
				for j, a := range s.Experiment.Analyses {
					p := base + ".experiment.analyses[" + strconv.Itoa(j) + "]"
					rr.Templates = append(rr.Templates, TemplateRef{
						Name: a.TemplateName, Cluster: a.IsClusterScope(), Use: UseExperiment, Step: i,
						Path: p + ".templateName", ArgsPath: p + ".args", Args: a.Args,
						Target: lookup(a.TemplateName, a.IsClusterScope()),
					})
				}
			}
		}
	}
	if b := st.BlueGreen; b != nil {
		addGroup(b.PrePromotionAnalysis, UsePrePromotion, -1, "spec.strategy.blueGreen.prePromotionAnalysis")
		addGroup(b.PostPromotionAnalysis, UsePostPromotion, -1, "spec.strategy.blueGreen.postPromotionAnalysis")
	}
}
