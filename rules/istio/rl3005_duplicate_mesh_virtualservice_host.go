package istio

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
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
scopes share a namespace. VirtualServices bound only to named gateways are not compared (Istio
merges those per gateway). \'istioctl analyze\' has the same check (IST0109).

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
		cover := pairCover{}
		eachInFileOrder(g, kinds.VirtualService, func(r *graph.Resource) {
			o := r.VirtualService()
			if o == nil || !bindings(&o.Spec).Mesh {
				return
			}
			vs := &o.Spec
			scope := exportScopeOf(vs.GetExportTo(), r.Namespace)
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
					if seen[o] || sameObject(o, r) || ov == nil || !bindings(&ov.Spec).Mesh {
						continue
					}
					seen[o] = true
					if !scope.overlaps(exportScopeOf(ov.Spec.GetExportTo(), o.Namespace)) {
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
		return nil
	},
}
