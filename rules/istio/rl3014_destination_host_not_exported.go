package istio

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/visibility"
)

// DestinationHostNotExported reports VirtualService destinations whose
// Service or ServiceEntry exists but is not exported to a namespace where
// the route is applied.
var DestinationHostNotExported = &rules.Rule{
	ID: "RL3014", Name: "destination-host-not-exported", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.VirtualService, kinds.Service, kinds.ServiceEntry, kinds.Sidecar, kinds.Gateway, kinds.ConfigMap,
		kinds.Deployment, kinds.DaemonSet, kinds.StatefulSet, kinds.ReplicaSet, kinds.Rollout},
	Tags:    []string{"istio"},
	Summary: "A VirtualService routes to a Service or ServiceEntry that is not exported to a namespace where the route is applied.",
	Doc: rules.Doc{
		Why: `A proxy builds clusters only for the services visible to its namespace. A Kubernetes Service
is visible where its \'networking.istio.io/exportTo\' annotation says, a ServiceEntry where its
\'exportTo\' says: \'*\' anywhere in the list is every namespace, else \'~\' anywhere is none,
\'.\' is the object's own namespace, and any other entry that namespace — a list naming other
namespaces only leaves out the object's own. An absent (or empty) exportTo takes the mesh config's
\'defaultServiceExportTo\' (\'*\' unless the bundle's \'istio\' ConfigMap sets it; Istio 1.28
reads only \'.\' (own namespace) or else \'*\' in it, 1.30 and later the whole list). When a route
sends traffic to a host that is not exported to the namespace of the proxy applying the route,
that proxy has no cluster for it and the requests fail with \'503\' (response flag \'NC\'); a
mirror to it is dropped.

The namespaces where a route is applied are taken from the same model istiod uses
(pilot/pkg/model/push_context.go, sidecar.go, for the \'--istio-version\' chosen): for a mesh
VirtualService, the namespaces it is exported to whose Sidecar (or the root namespace's Sidecar)
imports one of its hosts. A sidecar resolves a route's destination to the service of that host in
its own namespace whatever that service's exportTo (collectImportedServices), else to one exported
to its namespace. For a gateway-bound VirtualService, the namespaces of the bound Gateway's proxies
(the bundle's workloads carrying the Gateway's selector labels, or the Gateway's namespace when
none does), which see only the services exported to them, those of their own namespace included.
Namespaces the bundle does not name are evaluated together.

\'istioctl analyze\' reports the first case from the VirtualService's own namespace (IST0101,
\'Referenced host not found\'), only against a live cluster. A host that no Service or
ServiceEntry of the bundle defines is RL3001's.

Severity: **error** when the host is visible nowhere the route is applied, **warning** when it
is visible in some of those namespaces or the gateway's proxies are only assumed to run in the
Gateway's namespace.

Fix: export the Service to the namespaces that route to it (\'networking.istio.io/exportTo:
"shop,istio-system"\'), or narrow the VirtualService's \'exportTo\'.`,
		Bad: `
kind: Service
metadata:
  name: reviews
  namespace: shop
  annotations: {networking.istio.io/exportTo: "."}   # shop only
---
kind: VirtualService
metadata: {name: reviews-ingress, namespace: shop}
spec:
  hosts: [reviews.example.com]
  gateways: [istio-system/public]                    # proxies in istio-system
  http:
  - route:
    - destination: {host: reviews}
`,
		Good: `
  annotations: {networking.istio.io/exportTo: ".,istio-system"}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		g := p.Graph
		m := visibility.For(g, p.Globals.IstioVersion)
		eachVirtualService(p, func(r *graph.Resource, vs *networkingVS) {
			dests := destinationsOf(g, r, vs)
			if len(dests) == 0 {
				return
			}
			// Consecutive destinations often share a host (subsets of one
			// Service): its places are resolved once for the run.
			var places []visibility.Place
			placesOf := ""
			for _, d := range dests {
				host := d.Dest.GetHost()
				if host == "" || host == "*" {
					continue
				}
				// visibility.IstioFQDN: a bare name expands as d.FQDN did.
				fq := host
				if !strings.Contains(host, ".") {
					fq = d.FQDN
				}
				svcs := m.Services(fq)
				if len(svcs) == 0 {
					continue // RL3001
				}
				if places == nil || placesOf != fq {
					places, placesOf = m.Places(r, fq), fq
				}
				var sidecars, gateways, passing []string
				assumed, total, missing := false, 0, 0
				for i, w := range places {
					total++
					if m.ServiceFor(fq, w) != nil {
						if missing > 0 && w.Gateway == nil {
							passing = append(passing, w.Namespace)
						}
						continue
					}
					if missing == 0 {
						// The sidecar places before the first missing one
						// all pass; passing is listed only for a finding.
						for _, q := range places[:i] {
							if q.Gateway == nil {
								passing = append(passing, q.Namespace)
							}
						}
					}
					missing++
					if w.Gateway == nil {
						sidecars = append(sidecars, w.Namespace)
						continue
					}
					gw := fmt.Sprintf("the proxies of Gateway %s in namespace %s", objectName(w.Gateway), w.Namespace)
					if w.Assumed {
						gw += " (assumed: no workload of the bundle carries its selector labels)"
						assumed = true
					}
					gateways = appendOnce(gateways, gw)
				}
				if missing == 0 {
					continue
				}
				var where []string
				if len(sidecars) > 0 {
					where = append(where, "the sidecars of "+namespaceList(sidecars, passing))
				}
				where = append(where, gateways...)
				svc := svcs[0]
				what, effect := "destination", "requests get 503 NC"
				if d.Mirror {
					what, effect = "mirror destination", "the mirrored copies are dropped"
				}
				exp := "exported to " + svc.Export.String()
				if svc.ExportPath == "" {
					exp += " (mesh default)"
				}
				sev := rules.Error
				if missing < total || assumed {
					sev = rules.Warning
				}
				msg := fmt.Sprintf("%s host %q of %s in VirtualService %s is not exported where it is routed", what, host, d.Route(), objectName(r))
				detail := fmt.Sprintf("It is not visible to %s: %s %s is %s, so %s there.",
					strings.Join(where, " and to "), svcKind(svc), objectName(svc.Resource), exp, effect)
				rel := []rules.Related{rules.RelatedAt(svc.Resource, pathOr(svc.ExportPath, "metadata.name"), fmt.Sprintf("%s %s is %s", svcKind(svc), objectName(svc.Resource), exp))}
				p.ReportDiag(rules.Diagnostic{Resource: r, Path: d.HostPath(), Message: msg, Detail: detail, Severity: sev, Related: rel})
			}
		})
		return nil
	},
}

func svcKind(s *visibility.Service) string {
	if s.Kubernetes {
		return "Service"
	}
	return "ServiceEntry"
}

func pathOr(p, def string) string {
	if p == "" {
		return def
	}
	return p
}

func appendOnce(l []string, s string) []string {
	for _, x := range l {
		if x == s {
			return l
		}
	}
	return append(l, s)
}

// namespaceList renders the namespaces a finding covers: "namespace a",
// "namespaces a, b", or, when they include visibility.Other, "every
// namespace that applies the route" with the evaluated ones where it works
// (passing) as exceptions.
func namespaceList(nss, passing []string) string {
	var named []string
	other := false
	for _, ns := range nss {
		if ns == visibility.Other {
			other = true
		} else {
			named = append(named, ns)
		}
	}
	switch {
	case other && len(passing) == 0:
		return "every namespace that applies the route"
	case other:
		return "every namespace that applies the route but " + strings.Join(passing, ", ")
	case len(named) == 1:
		return "namespace " + named[0]
	}
	return "namespaces " + strings.Join(named, ", ")
}
