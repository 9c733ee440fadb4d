package istio

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// GatewayBypassesSplit reports gateway-bound VirtualServices that send ingress
// traffic to the bare host that a mesh VirtualService splits.
var GatewayBypassesSplit = &rules.Rule{
	ID: "RL3003", Name: "gateway-bypasses-mesh-split", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.VirtualService, kinds.Rollout}, Tags: []string{"istio"},
	Summary: "A gateway VirtualService routes to a bare host whose traffic a mesh VirtualService splits: ingress traffic bypasses the canary.",
	Doc: rules.Doc{
		Why: `A VirtualService applies only to the proxies it is bound to: one without \'gateways\' (or with
\'mesh\') programs the sidecars, one bound to a Gateway programs that gateway. When the ingress
gateway's VirtualService routes to \'host: reviews\' with no subset, the gateway sends the request
straight to all \'reviews\' endpoints: the subset or weighted split that a mesh VirtualService
defines for \'reviews\' is never consulted for ingress traffic. With Argo Rollouts this means the
canary weights apply only to east-west calls; users coming through the gateway hit stable and
canary pods in proportion to their replica counts, whatever step the rollout is at.
\'istioctl analyze\' warns about the subset form (IST0140) only against a live cluster.

Fix: route the gateway VirtualService to the subsets itself (and let the Rollout manage that
route too), or bind the splitting VirtualService to both the gateway and \'mesh\'.`,
		Bad: `
kind: VirtualService
metadata: {name: reviews-ingress}
spec:
  hosts: [reviews.example.com]
  gateways: [public]
  http:
  - route:
    - destination: {host: reviews}        # bare host: no subset
---
kind: VirtualService
metadata: {name: reviews}
spec:
  hosts: [reviews]
  http:
  - name: primary
    route:
    - destination: {host: reviews, subset: stable}
      weight: 90
    - destination: {host: reviews, subset: canary}
      weight: 10
`,
		Good: `
kind: VirtualService
metadata: {name: reviews}
spec:
  hosts: [reviews, reviews.example.com]
  gateways: [public, mesh]
  http:
  - name: primary
    route:
    - destination: {host: reviews, subset: stable}
      weight: 90
    - destination: {host: reviews, subset: canary}
      weight: 10
`,
	},
	Since: "v0.1.0",
	// A gateway-bound VirtualService's findings depend on it and on lookups
	// (the mesh subset destinations, the managers: memos) only.
	Sharded: true,
	Run: func(p *rules.Pass) error {
		g := p.Graph
		subsetDests := meshSubsetDests(g)
		managers := managersMemo.Get(g, func() map[*graph.Resource][]string { return rolloutsByVirtualService(g) })
		eachVirtualService(p, func(r *graph.Resource, vs *networkingVS) {
			b := bindings(vs)
			if len(b.Named) == 0 {
				return
			}
			for _, d := range destinationsOf(g, r, vs) {
				// A gateway route that splits traffic itself (as Argo does when
				// it manages that route too) does not bypass the canary.
				if d.Mirror || d.Split || d.Dest.GetSubset() != "" || d.Dest.GetHost() == "" {
					continue
				}
				host := d.Dest.GetHost()
				if md, ok := otherSubsetDest(subsetDests[d.FQDN], r); ok {
					p.ReportDetail(r, d.HostPath(), fmt.Sprintf("ingress traffic of %s in VirtualService %s bypasses the subset split of mesh VirtualService %s", d.Route(), objectName(r), objectName(md.VS)),
						fmt.Sprintf("It goes from gateways %s to host %q without a subset, while mesh VirtualService %s splits %q by subset (%q in %s).%s",
							strings.Join(b.Named, ", "), host, objectName(md.VS), host, md.Dest.GetSubset(), md.Route(), managedBy(managers, md.VS)),
						rules.RelatedAt(md.VS, md.Path()+".subset", fmt.Sprintf("mesh VirtualService %s routes %q to subset %q", objectName(md.VS), host, md.Dest.GetSubset())))
					continue
				}
				if mv, route, routePath := splittingMeshVS(g, host, r); mv != nil {
					p.ReportDetail(r, d.HostPath(), fmt.Sprintf("ingress traffic of %s in VirtualService %s bypasses the split of mesh VirtualService %s", d.Route(), objectName(r), objectName(mv)),
						fmt.Sprintf("It goes from gateways %s straight to host %q, while mesh VirtualService %s splits %q across several destinations in %s.%s",
							strings.Join(b.Named, ", "), host, objectName(mv), host, route, managedBy(managers, mv)),
						rules.RelatedAt(mv, routePath, fmt.Sprintf("mesh VirtualService %s splits %q here, for sidecars only", objectName(mv), host)))
				}
			}
		})
		return nil
	},
}

// otherSubsetDest picks the first subset destination of another
// VirtualService. Sharing a gateway does not help: a gateway applies the
// VirtualService matching the request's authority and never chains a second
// one for the destination host.
func otherSubsetDest(ds []destination, self *graph.Resource) (destination, bool) {
	for _, d := range ds {
		if !sameObject(d.VS, self) {
			return d, true
		}
	}
	return destination{}, false
}

// splittingMeshVS returns a mesh-bound VirtualService other than self that
// lists host in its hosts and splits one of its routes across several
// destinations, with that route's name.
func splittingMeshVS(g *graph.Graph, host string, self *graph.Resource) (vs *graph.Resource, route, path string) {
	for _, mv := range g.VirtualServicesForHost(host, self.Namespace) {
		o := mv.VirtualService()
		if sameObject(mv, self) || o == nil || !meshBound(&o.Spec) {
			continue
		}
		for i, h := range o.Spec.GetHttp() {
			if len(h.GetRoute()) > 1 {
				return mv, routeName("http", i, h.GetName()), graph.Index("spec.http", i) + ".route"
			}
		}
		for i, t := range o.Spec.GetTcp() {
			if len(t.GetRoute()) > 1 {
				return mv, routeName("tcp", i, ""), graph.Index("spec.tcp", i) + ".route"
			}
		}
		for i, t := range o.Spec.GetTls() {
			if len(t.GetRoute()) > 1 {
				return mv, routeName("tls", i, ""), graph.Index("spec.tls", i) + ".route"
			}
		}
	}
	return nil, "", ""
}

// meshSubsetDestsMemo holds the mesh VirtualServices' destinations that
// pick a subset, by FQDN of their host, over the whole graph.
var meshSubsetDestsMemo = graph.NewMemo[map[string][]destination]("istio.meshSubsetDestinations")

func meshSubsetDests(g *graph.Graph) map[string][]destination {
	return meshSubsetDestsMemo.Get(g, func() map[string][]destination {
		out := map[string][]destination{}
		for _, r := range g.OfKind(kinds.VirtualService) {
			o := r.VirtualService()
			if o == nil || !meshBound(&o.Spec) {
				continue
			}
			for _, d := range destinationsOf(g, r, &o.Spec) {
				if d.Dest.GetSubset() != "" && !d.Mirror {
					out[d.FQDN] = append(out[d.FQDN], d)
				}
			}
		}
		return out
	})
}

// managersMemo holds rolloutsByVirtualService of the graph.
var managersMemo = graph.NewMemo[map[*graph.Resource][]string]("istio.rolloutsByVirtualService")

// rolloutsByVirtualService maps each VirtualService to the Rollouts that
// manage it, from the graph's resolved references.
func rolloutsByVirtualService(g *graph.Graph) map[*graph.Resource][]string {
	out := map[*graph.Resource][]string{}
	for _, rr := range g.Refs().Rollouts {
		for _, v := range rr.VirtualServices {
			if v.Target != nil {
				out[v.Target] = append(out[v.Target], objectName(rr.Rollout))
			}
		}
	}
	return out
}

// managedBy says which Rollouts drive a VirtualService's weights, if any,
// as a sentence following another.
func managedBy(m map[*graph.Resource][]string, vs *graph.Resource) string {
	if names := m[vs]; len(names) > 0 {
		return fmt.Sprintf(" Rollout %s manages that split, so its canary steps never reach ingress traffic.", strings.Join(names, ", "))
	}
	return ""
}
