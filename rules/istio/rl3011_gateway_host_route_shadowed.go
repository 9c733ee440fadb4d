package istio

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// GatewayHostShadowed reports a host that two VirtualServices bind to the
// same Gateway when one of them ends with a catch-all route.
var GatewayHostShadowed = &rules.Rule{
	ID: "RL3011", Name: "gateway-host-route-shadowed", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.VirtualService, kinds.Gateway}, Tags: []string{"istio"},
	Summary: "Two VirtualServices bind the same host to one Gateway and one has a catch-all route: the other's routes may never match.",
	Doc: rules.Doc{
		Why: `On a Gateway, Istio merges the http routes of every VirtualService bound to it for the same
host into one list, ordered by the VirtualServices' creation time. A route without \'match\' matches
every request, so when the older VirtualService has one, none of the newer VirtualService's routes
for that host is ever reached: ingress traffic ignores them (and a Rollout managing them shifts
weights no request sees). Which object is older depends on the cluster's history, so the same
manifests behave differently in two clusters. \'istioctl analyze\' checks duplicate hosts only for
\'mesh\' (istio/istio#37500).

Reported when at least one of the VirtualServices sharing a host on a Gateway has a catch-all
http route. Gateway references are resolved (\'name\' in the VirtualService namespace,
\'namespace/name\'), hosts compared fully qualified.

Fix: keep one VirtualService per host and Gateway, or give every route of the shared host a
\'match\' so that the order does not matter.`,
		Bad: `
kind: VirtualService
metadata: {name: shop}
spec:
  hosts: [shop.example.com]
  gateways: [istio-system/public]
  http:
  - route: [{destination: {host: frontend}}]          # catch-all
---
kind: VirtualService
metadata: {name: checkout}
spec:
  hosts: [shop.example.com]
  gateways: [istio-system/public]
  http:
  - match: [{uri: {prefix: /checkout}}]
    route: [{destination: {host: checkout}}]           # never reached if "shop" is older
`,
		Good: `
kind: VirtualService
metadata: {name: shop}
spec:
  hosts: [shop.example.com]
  gateways: [istio-system/public]
  http:
  - match: [{uri: {prefix: /checkout}}]
    route: [{destination: {host: checkout}}]
  - route: [{destination: {host: frontend}}]
`,
	},
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		type binding struct {
			vs       *graph.Resource
			hostPath string
			catchAll bool
		}
		groups := map[string][]binding{} // "gwns/gw|fqdn" → bindings in load order
		eachVirtualService(p, func(r *graph.Resource, vs *networkingVS) {
			named := bindings(vs).Named
			if len(named) == 0 {
				return
			}
			catchAll := hasCatchAll(vs)
			for _, ref := range named {
				name, ns := gatewayKey(ref, r.Namespace)
				if name == "" || ns == "" {
					continue
				}
				for i, h := range vs.GetHosts() {
					if h == "" {
						continue
					}
					k := ns + "/" + name + "|" + graph.FQDN(h, r.Namespace)
					groups[k] = append(groups[k], binding{r, graph.Index("spec.hosts", i), catchAll})
				}
			}
		})
		keys := make([]string, 0, len(groups))
		for k, bs := range groups {
			if len(bs) > 1 {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		reported := map[string]bool{} // one finding per VS host entry
		for _, k := range keys {
			bs := groups[k]
			gw, host, _ := strings.Cut(k, "|")
			var withCatchAll []string
			distinct := map[string]bool{}
			for _, b := range bs {
				distinct[objectName(b.vs)] = true
				if b.catchAll {
					withCatchAll = append(withCatchAll, objectName(b.vs))
				}
			}
			if len(distinct) < 2 || len(withCatchAll) == 0 {
				continue
			}
			first := bs[0]
			for _, b := range bs[1:] {
				if b.vs.Before(first.vs) {
					first = b
				}
			}
			for _, b := range bs {
				if b.vs != first.vs {
					continue // the group is reported once, on its first VirtualService
				}
				if reported[objectName(b.vs)+"|"+b.hostPath] {
					continue
				}
				reported[objectName(b.vs)+"|"+b.hostPath] = true
				var others []string
				var related []rules.Related
				for _, o := range bs {
					if sameObject(o.vs, b.vs) {
						continue
					}
					others = append(others, objectName(o.vs))
					if len(related) < maxRelated {
						related = append(related, rules.PeerAt(o.vs, o.hostPath, fmt.Sprintf("VirtualService %s also binds %s to Gateway %s", objectName(o.vs), host, gw)))
					}
				}
				p.ReportDetail(b.vs, b.hostPath, fmt.Sprintf("host %s of Gateway %s is bound by VirtualService %s and %s", host, gw, objectName(b.vs), strings.Join(others, ", ")),
					fmt.Sprintf("The gateway merges their routes in creation order, and the catch-all route of %s hides every route after it: which routes ingress traffic reaches depends on which object is older.",
						strings.Join(withCatchAll, ", ")), related...)
			}
		}
		return nil
	},
}

// hasCatchAll reports whether an http route matches every request.
func hasCatchAll(vs *networkingVS) bool {
	for _, h := range vs.GetHttp() {
		if len(h.GetMatch()) == 0 {
			return true
		}
	}
	return false
}
