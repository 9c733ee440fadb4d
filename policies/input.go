package policies

import (
	"sync"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rolloutlint/rolloutlint/internal/parallel"
	"github.com/rolloutlint/rolloutlint/model/fastyaml"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

// The input document every policy sees (see docs/policies.md):
//
//	input.resources               every object in load order: {ref, apiVersion, file, object},
//	                              object only for the kinds the loaded policies need (kinds.go),
//	                              for built-in policies only the fields they read (fields.go)
//	input.kinds[kind]             the same items grouped by kind, in load order
//	input.objects[kind][ns][name] the first item with that identity
//	input.rollouts                each Rollout's resolved references (graph.RolloutRefs)
//	input.globals                 run-wide settings: {argocd, istioVersion, mode}
//
// A ref is {kind, namespace, name, index}; index is the load-order position,
// so a violation's ref designates one object even when the bundle defines it twice.

// bundleInput is the converted, graph-derived part of the input. It is built
// once per graph and shared by every policy and every concurrent evaluation;
// it is memoized on the graph, so it is released with the graph (a lint's
// input does not outlive the lint, and each webhook request's graph takes its
// input with it).
type bundleInput struct {
	once      sync.Once
	kset      kindSet    // the kinds whose objects are converted
	fields    *fieldTree // the fields of those objects that are converted
	templates bool       // whether the Rollouts' analysis templates are converted
	parts     inputParts // the per-object parts that are built (the others' items on demand)
	conv      *converted
}

// converted holds the parts of the input. The items, refs and references are
// OPA terms, built once. The indexes by kind and identity are plain Go maps
// over those terms: each evaluation wraps them in OPA lazy objects (see
// value), so only the entries a policy looks up are ever turned into OPA
// objects, and building them costs a map insert instead of an OPA object
// insert (a hash of the key per entry).
//
// Without the per-object parts (parts 0), a resource's ref is built when a
// Rollout's references name it, and its item when a policy looks it up
// (rolloutlint.resource): each at most once, by whichever goroutine gets
// there first, with the same value whichever it is.
type converted struct {
	resources *ast.Term      // array of items, in load order (partResources)
	kinds     map[string]any // kind → array value of that kind's items (partKinds)
	objects   map[string]any // kind → namespace → name → first item value (partObjects)
	rollouts  *ast.Term      // array of resolved references

	g      *graph.Graph
	ks     kindSet
	fields *fieldTree
	sel    *fastyaml.Fields
	refs   []atomic.Pointer[ast.Term] // by load-order index
	items  []atomic.Pointer[ast.Term]
	// mu guards vc, the converter of the items built on demand (during
	// evaluations, which may run at once).
	mu sync.Mutex
	vc *valueConverter
}

// len is the number of resources.
func (c *converted) len() int { return len(c.refs) }

// ref returns resource i's ref term, building it with vc if it is not yet.
func (c *converted) ref(vc *valueConverter, i int) *ast.Term {
	if t := c.refs[i].Load(); t != nil {
		return t
	}
	t := refTerm(vc, c.g.Resources[i])
	if c.refs[i].CompareAndSwap(nil, t) {
		return t
	}
	return c.refs[i].Load()
}

// item returns resource i's item, building it if it is not yet.
func (c *converted) item(i int) *ast.Term {
	if t := c.items[i].Load(); t != nil {
		return t
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.items[i].Load(); t != nil {
		return t
	}
	if c.vc == nil {
		c.vc = &valueConverter{strings: map[string]*ast.Term{}, numbers: map[int64]*ast.Term{}, composites: map[uint64]*ast.Term{}}
	}
	r := c.g.Resources[i]
	t := itemTerm(c.vc, r, c.ref(c.vc, i), c.ks.has(r.Kind), c.fields, c.sel)
	c.items[i].Store(t)
	return t
}

// graphInputsMemo holds a graph's converted inputs.
var graphInputsMemo = graph.NewMemo[*graphInputs]("policies.inputFor")

// graphInputs are the conversions of one graph. A lint converts once (every
// kind and field the loaded policies need); a policy loaded later that needs
// more gets a wider conversion.
type graphInputs struct {
	mu  sync.Mutex
	ins []*bundleInput
}

// inputFor returns the converted input for g with the objects of at least
// the kinds need, with at least the fields given, with the Rollouts'
// analysis templates if templates is set, and with at least the per-object
// parts given, converting it on first use. A conversion covers every kind,
// field and part the policies loaded so far need (declaredKinds,
// allDeclaredFields, declaredTemplates, allDeclaredParts), so all the
// policies of a lint share one. Callers racing on the same graph wait for
// one conversion.
func inputFor(g *graph.Graph, need kindSet, fields *fieldTree, templates bool, parts inputParts) *bundleInput {
	gi := graphInputsMemo.Get(g, func() *graphInputs { return &graphInputs{} })
	gi.mu.Lock()
	var in *bundleInput
	for _, e := range gi.ins {
		if e.kset.covers(need) && coversOf(e.fields, fields) && (e.templates || !templates) && e.parts.covers(parts) {
			in = e
			break
		}
	}
	if in == nil {
		in = &bundleInput{kset: declaredKinds().union(need), fields: unionOf(allDeclaredFields(), fields),
			templates: declaredTemplates.Load() || templates, parts: allDeclaredParts() | parts}
		gi.ins = append(gi.ins, in)
	}
	gi.mu.Unlock()
	in.once.Do(func() { in.conv = convert(g, in.kset, in.fields, in.templates, in.parts) })
	return in
}

// conversions counts graph conversions; tests use it to show the input is
// built once per lint, not once per policy.
var conversions struct {
	sync.Mutex
	n int
}

// value returns the full input for one evaluation: the converted bundle plus
// this run's globals. The root and the two indexes are OPA lazy objects over
// Go maps: a lookup such as input.objects.Service.shop["web"] converts only
// the maps on its way, and the converted parts are cached in the lazy objects
// of this evaluation. A lazy object is not safe for concurrent use (a lookup
// fills its cache), so each evaluation gets its own; the terms under them are
// immutable and shared. Only iterating over, comparing or hashing a lazy
// object converts it whole, and the input's arrays hold terms only: OPA hashes
// an array's elements when it builds the array, which would convert a lazy
// element at once.
//
// The parts the policies do not read (inputParts) are left out.
func (in *bundleInput) value(globals rules.Globals, mode rules.Mode) ast.Value {
	c := in.conv
	root := map[string]any{
		"rollouts": c.rollouts.Value,
		"globals": ast.NewObject(
			[2]*ast.Term{ast.StringTerm("argocd"), ast.BooleanTerm(globals.ArgoCD)},
			[2]*ast.Term{ast.StringTerm("istioVersion"), ast.StringTerm(globals.IstioVersion)},
			[2]*ast.Term{ast.StringTerm("mode"), ast.StringTerm(string(mode))},
		),
	}
	if c.resources != nil {
		root["resources"] = c.resources.Value
	}
	if c.kinds != nil {
		root["kinds"] = c.kinds
	}
	if c.objects != nil {
		root["objects"] = c.objects
	}
	return ast.LazyObject(root)
}

// convert builds the bundle part of the input. Only the objects of the kinds
// in ks are converted (the bulk of the work), and of those only the fields
// in fields; the items of other kinds keep their ref, apiVersion and file.
// The Rollouts' references hold their analysis templates only if templates
// is set. The per-object parts are built if parts names any of them (all
// three then: they share the items); without them, refs and items are built
// on demand (see converted).
// The refs, then the items and the Rollouts' references, are built on every
// CPU, each goroutine with its own converter (string terms are shared within
// a goroutine's work, which is what matters for memory), and placed by index,
// so the input does not depend on the number of CPUs.
func convert(g *graph.Graph, ks kindSet, fields *fieldTree, templates bool, parts inputParts) *converted {
	conversions.Lock()
	conversions.n++
	conversions.Unlock()

	// A small graph (a webhook review's few objects) is converted on this
	// goroutine by one converter, whose tables grow as needed; a bundle's on
	// every CPU, each goroutine's tables presized.
	small := len(g.Resources) < smallGraph
	var one *valueConverter
	newVC := func() *valueConverter {
		if !small {
			return sizedValueConverter(len(g.Resources))
		}
		if one == nil {
			one = &valueConverter{strings: map[string]*ast.Term{}, numbers: map[int64]*ast.Term{}, composites: map[uint64]*ast.Term{}}
		}
		return one
	}
	each := func(n, minPerWorker int, fn func(vc *valueConverter, i int)) {
		if small {
			vc := newVC()
			for i := range n {
				fn(vc, i)
			}
			return
		}
		parallel.ForWith(n, minPerWorker, newVC, fn)
	}
	out := &converted{g: g, ks: ks, fields: fields, sel: selectionOf(fields),
		refs: make([]atomic.Pointer[ast.Term], len(g.Resources)), items: make([]atomic.Pointer[ast.Term], len(g.Resources))}
	if parts != 0 {
		each(len(g.Resources), 256, func(vc *valueConverter, i int) {
			out.refs[i].Store(refTerm(vc, g.Resources[i]))
		})
		each(len(g.Resources), 64, func(vc *valueConverter, i int) {
			r := g.Resources[i]
			out.items[i].Store(itemTerm(vc, r, out.refs[i].Load(), ks.has(r.Kind), fields, out.sel))
		})
	}
	rolloutRefs := g.Refs().Rollouts
	rollouts := make([]*ast.Term, len(rolloutRefs))
	each(len(rolloutRefs), 32, func(vc *valueConverter, i int) {
		c := converter{g: g, in: out, vc: vc, templates: templates}
		rollouts[i] = c.rolloutTerm(rolloutRefs[i])
	})
	out.rollouts = ast.ArrayTerm(rollouts...)
	if parts == 0 {
		return out
	}

	items := make([]*ast.Term, len(g.Resources))
	byKind := map[string][]*ast.Term{}
	objects := map[string]any{}
	for i, r := range g.Resources {
		item := out.items[i].Load()
		items[i] = item
		byKind[r.Kind] = append(byKind[r.Kind], item)
		byNS, _ := objects[r.Kind].(map[string]any)
		if byNS == nil {
			byNS = map[string]any{}
			objects[r.Kind] = byNS
		}
		byName, _ := byNS[r.Namespace].(map[string]any)
		if byName == nil {
			byName = map[string]any{}
			byNS[r.Namespace] = byName
		}
		if _, dup := byName[r.Name]; !dup {
			byName[r.Name] = item.Value
		}
	}
	kinds := make(map[string]any, len(byKind))
	for k, ts := range byKind {
		kinds[k] = ast.NewArray(ts...)
	}
	out.resources, out.kinds, out.objects = ast.ArrayTerm(items...), kinds, objects
	return out
}

// smallGraph is the size below which a graph is converted on one goroutine
// with unsized tables: presizing them for a bundle cost a webhook review
// ~38 KB of maps, more than converting its few objects.
const smallGraph = 64

func itemTerm(vc *valueConverter, r *graph.Resource, ref *ast.Term, withObject bool, fields *fieldTree, sel *fastyaml.Fields) *ast.Term {
	if !withObject {
		return vc.slab.term(ast.NewObject(
			[2]*ast.Term{kRef, ref},
			[2]*ast.Term{kAPIVersion, vc.str(r.APIVersion)},
			[2]*ast.Term{kFile, vc.str(r.File)},
		))
	}
	var obj *ast.Term
	if fields.whole {
		// Whole objects (user policies) are not kept: a view's worth of
		// them could outgrow the webhook's memory limit.
		obj = objectTerm(vc, r, fields, sel)
	} else {
		obj, _ = r.Derived(objectTermKey{fields}, func() any { return objectTerm(vc, r, fields, sel) }).(*ast.Term)
	}
	return vc.slab.term(ast.NewObject(
		[2]*ast.Term{kRef, ref},
		[2]*ast.Term{kAPIVersion, vc.str(r.APIVersion)},
		[2]*ast.Term{kFile, vc.str(r.File)},
		[2]*ast.Term{kObject, obj},
	))
}

// objectTermKey is the key of a resource's object term with the given
// fields (graph.Resource.Derived): a cluster object the webhook joins into
// review after review is converted once per policy set, not in each. Only
// projections (the fields the built-in policies read) are kept so: about
// 1.1 KB an object of the generated corpus, 11 MB if every object of a
// 10,000-object view took part in a review.
type objectTermKey struct{ fields *fieldTree }

// objectTerm converts the fields of r's object.
func objectTerm(vc *valueConverter, r *graph.Resource, fields *fieldTree, sel *fastyaml.Fields) *ast.Term {
	var obj *ast.Term
	var err error
	r.WithObjectFields(sel, func(o map[string]any) { obj, err = vc.termFields(o, fields) })
	if err != nil {
		// Object holds only YAML-decoded data, so this does not happen;
		// keep the item (and its identity) usable if it ever does.
		obj = ast.ObjectTerm()
	}
	return obj
}

func refTerm(vc *valueConverter, r *graph.Resource) *ast.Term {
	return vc.slab.term(ast.NewObject(
		[2]*ast.Term{kKind, vc.str(r.Kind)},
		[2]*ast.Term{kNamespace, vc.str(r.Namespace)},
		[2]*ast.Term{kName, vc.str(r.Name)},
		[2]*ast.Term{kIndex, vc.slab.intTerm(r.Index())},
	))
}

// The field names of the input's own structure, one immutable term each, so
// the thousands of refs and references share them. They are named directly:
// looking each up by name cost a map lookup per field.
var (
	kRef               = ast.StringTerm("ref")
	kAPIVersion        = ast.StringTerm("apiVersion")
	kFile              = ast.StringTerm("file")
	kObject            = ast.StringTerm("object")
	kKind              = ast.StringTerm("kind")
	kNamespace         = ast.StringTerm("namespace")
	kName              = ast.StringTerm("name")
	kIndex             = ast.StringTerm("index")
	kRollout           = ast.StringTerm("rollout")
	kStrategy          = ast.StringTerm("strategy")
	kServices          = ast.StringTerm("services")
	kVirtualServices   = ast.StringTerm("virtualServices")
	kDestinationRule   = ast.StringTerm("destinationRule")
	kTemplates         = ast.StringTerm("templates")
	kRole              = ast.StringTerm("role")
	kPath              = ast.StringTerm("path")
	kTarget            = ast.StringTerm("target")
	kRoutes            = ast.StringTerm("routes")
	kStableSubset      = ast.StringTerm("stableSubset")
	kCanarySubset      = ast.StringTerm("canarySubset")
	kAdditionalSubsets = ast.StringTerm("additionalSubsets")
	kCluster           = ast.StringTerm("cluster")
	kUse               = ast.StringTerm("use")
	kStep              = ast.StringTerm("step")
	kImplicit          = ast.StringTerm("implicit")
	kVSPath            = ast.StringTerm("vsPath")
	kDestinations      = ast.StringTerm("destinations")
	kHost              = ast.StringTerm("host")
	kSubset            = ast.StringTerm("subset")
	kWeight            = ast.StringTerm("weight")
	kWeightSet         = ast.StringTerm("weightSet")
)

// converter builds the reference part of the input, reusing the resources' ref terms.
type converter struct {
	g  *graph.Graph
	in *converted      // the resources' refs
	vc *valueConverter // shares the terms of repeated strings (names, paths)
	// templates is whether a Rollout's references hold its analysis
	// templates: no built-in policy reads them, and they are a tenth of the
	// references' objects.
	templates bool
}

// ref returns the shared ref term of a resource, or nil.
func (c *converter) ref(r *graph.Resource) *ast.Term {
	if r == nil {
		return nil
	}
	return c.in.ref(c.vc, r.Index())
}

// str, num and strs return the shared terms of values; a bool's term is
// interned by OPA.
func (c *converter) str(s string) *ast.Term { return c.vc.str(s) }
func (c *converter) num(n int) *ast.Term    { return c.vc.num(int64(n)) }
func (c *converter) strs(v []string) *ast.Term {
	ts := make([]*ast.Term, len(v))
	for j, s := range v {
		ts[j] = c.vc.str(s)
	}
	return c.array(ts)
}

// field is one entry of an object the converter builds.
func field(k, v *ast.Term) [2]*ast.Term { return [2]*ast.Term{k, v} }

// obj builds an object term, leaving out the fields whose value is nil so
// Rego sees an absent field rather than null. The fields are typed terms,
// not boxed Go values: boxing cost an allocation per field.
func (c *converter) obj(fields ...[2]*ast.Term) *ast.Term {
	n := 0
	for _, f := range fields {
		if f[1] != nil {
			fields[n] = f
			n++
		}
	}
	return c.vc.slab.term(ast.NewObject(fields[:n]...))
}

// array is ast.ArrayTerm with the term from the slab, sharing OPA's empty
// array term: most lists of the references (additional subsets, a route's
// destinations when it is not found) are empty.
func (c *converter) array(ts []*ast.Term) *ast.Term {
	if len(ts) == 0 {
		return ast.InternedEmptyArray
	}
	return c.vc.slab.term(ast.NewArray(ts...))
}

// list returns a list of n terms for an array the converter builds.
func (c *converter) list(n int) []*ast.Term { return c.vc.slab.list(n) }

func (c *converter) rolloutTerm(rr *graph.RolloutRefs) *ast.Term {
	svcs := c.list(len(rr.Services))
	for i, s := range rr.Services {
		svcs[i] = c.obj(field(kRole, c.str(string(s.Role))), field(kName, c.str(s.Name)), field(kPath, c.str(s.Path)),
			field(kTarget, c.ref(s.Target)))
	}
	vss := c.list(len(rr.VirtualServices))
	for i := range rr.VirtualServices {
		vs := &rr.VirtualServices[i]
		routes := c.list(len(vs.Routes))
		for j := range vs.Routes {
			routes[j] = c.routeTerm(rr, vs, &vs.Routes[j])
		}
		vss[i] = c.obj(field(kRef, c.str(vs.Ref)), field(kName, c.str(vs.Name)), field(kNamespace, c.str(vs.Namespace)),
			field(kPath, c.str(vs.Path)), field(kTarget, c.ref(vs.Target)), field(kRoutes, c.array(routes)))
	}
	var dr *ast.Term
	if d := rr.DestinationRule; d != nil {
		dr = c.obj(field(kName, c.str(d.Name)), field(kNamespace, c.str(d.Namespace)), field(kPath, c.str(d.Path)),
			field(kTarget, c.ref(d.Target)), field(kStableSubset, c.str(d.StableSubset)),
			field(kCanarySubset, c.str(d.CanarySubset)), field(kAdditionalSubsets, c.strs(d.AdditionalSubsets)))
	}
	var templates *ast.Term // absent when no policy compiled reads it
	if c.templates {
		tpls := c.list(len(rr.Templates))
		for i, t := range rr.Templates {
			tpls[i] = c.obj(field(kName, c.str(t.Name)), field(kCluster, ast.InternedTerm(t.Cluster)), field(kUse, c.str(string(t.Use))),
				field(kStep, c.num(t.Step)), field(kPath, c.str(t.Path)), field(kTarget, c.ref(t.Target)))
		}
		templates = c.array(tpls)
	}
	strategy := "canary"
	if rr.Spec.Spec.Strategy.BlueGreen != nil {
		strategy = "blueGreen"
	}
	return c.obj(field(kRollout, c.ref(rr.Rollout)), field(kStrategy, c.str(strategy)), field(kServices, c.array(svcs)),
		field(kVirtualServices, c.array(vss)), field(kDestinationRule, dr), field(kTemplates, templates))
}

// routeTerm exports one managed route with its destinations classified as
// stable, canary or other, the way Argo Rollouts tells them apart: by subset
// for subset-level splitting, else by the Service the host resolves to.
func (c *converter) routeTerm(rr *graph.RolloutRefs, vs *graph.VSRef, rt *graph.RouteRef) *ast.Term {
	var dests []*ast.Term
	var vsPath *ast.Term // absent for a route not found in the VirtualService
	if rt.Index >= 0 && vs.Target != nil {
		paths := c.vc.routePaths(rt)
		vsPath = paths.route
		weightSet := routeWeightsSet(vs.Target, rt)
		ds := routeDestinations(vs.Target, rt)
		dests = c.list(len(ds))[:0]
		for j, d := range ds {
			dests = append(dests, c.obj(field(kIndex, c.num(j)), field(kPath, paths.destination(c.vc, j)),
				field(kHost, c.str(d.host)), field(kSubset, c.str(d.subset)), field(kWeight, c.num(int(d.weight))),
				field(kWeightSet, ast.InternedTerm(j < len(weightSet) && weightSet[j])),
				field(kRole, c.str(destinationRole(c.g, rr, vs.Target.Namespace, d)))))
		}
	}
	return c.obj(field(kKind, c.str(string(rt.Kind))), field(kName, c.str(rt.Name)), field(kPath, c.str(rt.Path)),
		field(kImplicit, ast.InternedTerm(rt.Implicit)), field(kIndex, c.num(rt.Index)), field(kVSPath, vsPath),
		field(kDestinations, c.array(dests)))
}

// routeKey names a route of a VirtualService: spec.<kind>[index].
type routeKey struct {
	kind  graph.RouteKind
	index int
}

// routePathTerms are the path terms of a route and of its destinations, the
// same in every VirtualService: a converter builds them once, not a string
// concatenation per destination.
type routePathTerms struct {
	route        *ast.Term   // spec.http[0]
	base         string      // spec.http[0].route
	destinations []*ast.Term // spec.http[0].route[j], as far as asked for
}

// routePaths returns the path terms of rt's route in its VirtualService.
func (c *valueConverter) routePaths(rt *graph.RouteRef) *routePathTerms {
	k := routeKey{rt.Kind, rt.Index}
	if p := c.routes[k]; p != nil {
		return p
	}
	if c.routes == nil {
		c.routes = map[routeKey]*routePathTerms{}
	}
	path := rt.VSPath()
	p := &routePathTerms{route: c.str(path), base: path + ".route"}
	c.routes[k] = p
	return p
}

// destination returns the path term of the route's j-th destination.
func (p *routePathTerms) destination(c *valueConverter, j int) *ast.Term {
	for len(p.destinations) <= j {
		p.destinations = append(p.destinations, c.str(graph.Index(p.base, len(p.destinations))))
	}
	return p.destinations[j]
}

// routeWeightsSet reports, for each entry of a VirtualService route's
// `route` list, whether it sets weight, read straight from the decoded object
// (a field path lookup per destination costs more than the rest of the
// reference conversion). Only the weights are decoded.
func routeWeightsSet(vs *graph.Resource, rt *graph.RouteRef) []bool {
	if w := vs.WeightsSet(); w != nil {
		return w.Route(rt.Kind, rt.Index) // recorded by the loader
	}
	return decodedWeightsSet(vs, rt)
}

// decodedWeightsSet is routeWeightsSet reading the weights from the document.
func decodedWeightsSet(vs *graph.Resource, rt *graph.RouteRef) []bool {
	var set []bool
	vs.WithObjectFields(routeWeights[rt.Kind], func(obj map[string]any) {
		spec, _ := obj["spec"].(map[string]any)
		routes, _ := spec[string(rt.Kind)].([]any)
		if rt.Index < 0 || rt.Index >= len(routes) {
			return
		}
		route, _ := routes[rt.Index].(map[string]any)
		entries, _ := route["route"].([]any)
		set = make([]bool, len(entries))
		for j := range entries {
			set[j] = hasKey(entries, j, "weight")
		}
	})
	return set
}

// routeWeights selects spec.<kind>[*].route[*].weight of a VirtualService
// for each route kind, built once: decodes read selections concurrently.
var routeWeights = func() map[graph.RouteKind]*fastyaml.Fields {
	weight := &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{"weight": nil}}
	route := &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{"route": {Any: weight}}}
	m := map[graph.RouteKind]*fastyaml.Fields{}
	for _, k := range []graph.RouteKind{graph.HTTP, graph.TLS, graph.TCP} {
		m[k] = &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{
			"spec": {Sub: map[string]*fastyaml.Fields{string(k): {Any: route}}},
		}}
	}
	return m
}()

// hasKey reports whether list[i] is a mapping that sets key.
func hasKey(list []any, i int, key string) bool {
	if i >= len(list) {
		return false
	}
	m, _ := list[i].(map[string]any)
	_, ok := m[key]
	return ok
}

type destination struct {
	host, subset string
	weight       int32
}

func routeDestinations(vs *graph.Resource, rt *graph.RouteRef) []destination {
	o := vs.VirtualService()
	if o == nil {
		return nil
	}
	var out []destination
	switch rt.Kind {
	case graph.HTTP:
		if rs := o.Spec.GetHttp(); rt.Index < len(rs) {
			for _, d := range rs[rt.Index].GetRoute() {
				out = append(out, destination{d.GetDestination().GetHost(), d.GetDestination().GetSubset(), d.GetWeight()})
			}
		}
	case graph.TLS:
		if rs := o.Spec.GetTls(); rt.Index < len(rs) {
			for _, d := range rs[rt.Index].GetRoute() {
				out = append(out, destination{d.GetDestination().GetHost(), d.GetDestination().GetSubset(), d.GetWeight()})
			}
		}
	case graph.TCP:
		if rs := o.Spec.GetTcp(); rt.Index < len(rs) {
			for _, d := range rs[rt.Index].GetRoute() {
				out = append(out, destination{d.GetDestination().GetHost(), d.GetDestination().GetSubset(), d.GetWeight()})
			}
		}
	}
	return out
}

func destinationRole(g *graph.Graph, rr *graph.RolloutRefs, ns string, d destination) string {
	if dr := rr.DestinationRule; dr != nil {
		switch d.subset {
		case "":
		case dr.StableSubset:
			return "stable"
		case dr.CanarySubset:
			return "canary"
		}
		return "other"
	}
	svc := g.ServiceForHost(d.host, ns)
	if svc == nil {
		return "other"
	}
	if s := rr.Service(graph.RoleStable); s != nil && s.Target == svc {
		return "stable"
	}
	if s := rr.Service(graph.RoleCanary); s != nil && s.Target == svc {
		return "canary"
	}
	return "other"
}

// Conversions returns how many graphs have been converted to policy input
// since the process started (tests and benchmarks use it to show the input is
// built once per lint).
func Conversions() int {
	conversions.Lock()
	defer conversions.Unlock()
	return conversions.n
}
