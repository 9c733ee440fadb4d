package istio

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/visibility"
)

// DuplicateMeshHost reports hosts claimed by more than one mesh-bound
// VirtualService visible in a common namespace.
var DuplicateMeshHost = &rules.Rule{
	ID: "RL3005", Name: "duplicate-mesh-virtualservice-host", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.VirtualService}, Tags: []string{"istio"},
	Summary: "Two mesh VirtualServices define the same host: sidecars apply only one of them.",
	Doc: rules.Doc{
		Why: `For the sidecars (the \'mesh\' gateway, which a VirtualService without \'gateways\' is bound to) one
host has one route table. When two VirtualServices visible in the same namespace list the same
host, Istio does not merge them: sidecars use one (in practice the oldest) and silently drop the
other's routes. Which one wins can change when an object is recreated, so a canary split, a
retry policy or a header route works in one cluster and not in the next. A Rollout managing the
losing VirtualService moves weights that no proxy applies.

Hosts are compared fully qualified (\'reviews\' in namespace \'shop\' is
\'reviews.shop.svc.cluster.local\'), and two VirtualServices conflict only when their \'exportTo\'
scopes share a namespace (an empty \'exportTo\' takes the mesh default
\'defaultVirtualServiceExportTo\' of the bundle's \'istio\' ConfigMap). VirtualServices bound only to
named gateways are not compared (Istio merges those per gateway). \'istioctl analyze\' has the same
check (IST0109).

A wildcard host overlapping another VirtualService's host (\'*.example.com\' and
\'api.example.com\'), visible together in a namespace, is a **warning**: sidecars route the exact
host by the more specific VirtualService only, so the wildcard one's routes do not apply to it.
Like IST0109, this is reported when at least one of the two is not exported to every namespace
(two public VirtualServices layering a specific host over a wildcard default are a common,
intended pattern).

Fix: merge the routes into one VirtualService per host, or narrow \'exportTo\'.`,
		Bad: `
kind: VirtualService
metadata: {name: reviews, namespace: shop}
spec:
  hosts: [reviews]
---
kind: VirtualService
metadata: {name: reviews-retries, namespace: shop}
spec:
  hosts: [reviews.shop.svc.cluster.local]   # same host, also mesh
`,
		Good: `
kind: VirtualService
metadata: {name: reviews, namespace: shop}
spec:
  hosts: [reviews]
  http:
  - name: primary
    retries: {attempts: 3}
    route: ...
`,
	},
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		g := p.Graph
		m := visibility.For(g, p.Globals.IstioVersion)
		cover := pairCover{}
		eachInFileOrder(g, kinds.VirtualService, func(r *graph.Resource) {
			o := r.VirtualService()
			if o == nil || !meshBound(&o.Spec) {
				return
			}
			vs := &o.Spec
			scope := m.VirtualServiceExport(r)
			for i, host := range vs.GetHosts() {
				if host == "" || host == "*" {
					continue
				}
				fq := graph.FQDN(host, r.Namespace)
				var names []string
				var related []rules.Related
				var others []*graph.Resource
				seen := map[*graph.Resource]bool{r: true}
				for _, o := range g.VirtualServicesForHost(host, r.Namespace) {
					ov := o.VirtualService()
					if seen[o] || sameObject(o, r) || ov == nil || !meshBound(&ov.Spec) {
						continue
					}
					seen[o] = true
					if !scope.Overlaps(m.VirtualServiceExport(o)) {
						continue
					}
					others = append(others, o)
					names = append(names, objectName(o))
					if len(related) < maxRelated {
						related = append(related, rules.PeerAt(o, hostPath(o, &ov.Spec, fq),
							fmt.Sprintf("VirtualService %s also defines %s for the mesh", objectName(o), fq)))
					}
				}
				if len(names) == 0 || !cover.add(fq, r, others) {
					continue // no conflict, or one a finding on an earlier object named
				}
				p.ReportDetail(r, graph.Index("spec.hosts", i),
					fmt.Sprintf("host %q of mesh VirtualService %s is also defined by VirtualService %s", host, objectName(r), strings.Join(names, ", ")),
					fmt.Sprintf("Sidecars apply only one VirtualService per host (%s) and silently drop the other's routes; merge them.", fq), related...)
			}
		})
		reportWildcardOverlaps(p, m)
		return nil
	},
}

// reportWildcardOverlaps reports mesh VirtualServices whose wildcard host
// covers another mesh VirtualService's host in a namespace both are visible
// in, unless both are exported everywhere (istioctl IST0109 compares a
// scoped VirtualService with the public ones by overlapping host).
func reportWildcardOverlaps(p *rules.Pass, m *visibility.Model) {
	type entry struct {
		vs   *graph.Resource
		host string
		i    int
	}
	bySuffix := map[string][]entry{} // ".example.com" → VirtualServices with a host ending in it
	var wild []entry
	eachInFileOrder(p.Graph, kinds.VirtualService, func(r *graph.Resource) {
		if !visibility.MeshBound(r) {
			return
		}
		for i, h := range m.VirtualServiceHosts(r) {
			if h == "" || h == "*" {
				continue
			}
			e := entry{r, h, i}
			if strings.HasPrefix(h, "*.") {
				wild = append(wild, e)
			}
			rest := strings.TrimPrefix(h, "*")
			for j := strings.IndexByte(rest, '.'); j >= 0; {
				bySuffix[rest[j:]] = append(bySuffix[rest[j:]], e)
				k := strings.IndexByte(rest[j+1:], '.')
				if k < 0 {
					break
				}
				j += k + 1
			}
		}
	})
	done := map[[2]*graph.Resource]bool{}
	for _, w := range wild {
		suffix := w.host[1:]
		for _, o := range bySuffix[suffix] {
			if o.vs == w.vs || sameObject(o.vs, w.vs) || o.host == w.host || !visibility.SubsetOf(o.host, w.host) {
				continue
			}
			we, oe := m.VirtualServiceExport(w.vs), m.VirtualServiceExport(o.vs)
			public := func(s visibility.Set) bool { return s.IsAll() && len(s.Except()) == 0 }
			if public(we) && public(oe) {
				continue
			}
			ns, ok := we.Common(oe)
			if !ok {
				continue
			}
			first, second := w, o
			if o.vs.Before(w.vs) {
				first, second = o, w
			}
			key := [2]*graph.Resource{first.vs, second.vs}
			if done[key] {
				continue
			}
			done[key] = true
			p.ReportDiag(rules.Diagnostic{Resource: first.vs, Path: graph.Index("spec.hosts", first.i), Severity: rules.Warning,
				Message: fmt.Sprintf("wildcard host %q of mesh VirtualService %s also covers host %q of VirtualService %s",
					w.host, objectName(w.vs), o.host, objectName(o.vs)),
				Detail: fmt.Sprintf("Both are visible in %s: for %s sidecars use %s's routes only (the more specific host wins), %s's do not apply to it.",
					visibility.Label(ns), o.host, objectName(o.vs), objectName(w.vs)),
				Related: []rules.Related{rules.RelatedAt(second.vs, graph.Index("spec.hosts", second.i), fmt.Sprintf("VirtualService %s defines %s", objectName(second.vs), second.host))}})
		}
	}
}
