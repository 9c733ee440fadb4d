package istio

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/internal/lookalike"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// DestinationHostUnknown reports VirtualService destinations whose host is no
// Service or ServiceEntry of the bundle, when the bundle plainly holds the
// Services of that namespace.
var DestinationHostUnknown = &rules.Rule{
	ID: "RL3001", Name: "destination-host-unknown", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.VirtualService, kinds.Service, kinds.ServiceEntry}, Tags: []string{"istio"},
	Summary: "A VirtualService destination host names no Service or ServiceEntry of the bundle.",
	Doc: rules.Doc{
		Why: `Istio sends a route's traffic to the cluster of its \'destination.host\'. When no Service or
ServiceEntry defines that host, the sidecar or gateway has no such cluster and every request the
route matches fails with \'503\' and response flag \'NC\' (no cluster); a mirror to it is silently
dropped. A one-letter typo in a canary Service name is enough, and nothing rejects it at apply
time. \'istioctl analyze\' reports this (IST0101) only against a live cluster: offline, it does not
see Services given as files.

Policy, so that partial bundles stay quiet: a short name, \'name.namespace\' or
\'name.namespace.svc.cluster.local\' host is checked only when the bundle holds at least one
Service of that namespace (then it is taken to hold all of them). External hosts are matched
against the bundle's ServiceEntries (wildcards included) and never reported when absent, since
ServiceEntries often live in another repository.

A host holding a look-alike or invisible character (a Cyrillic \'е\', a zero-width space) is
reported with the character, and with the Service its ASCII form names, whatever namespace it is in.

Fix the host, or add the Service or ServiceEntry it should name.`,
		Bad: `
kind: Service
metadata: {name: reviews-canary, namespace: shop}
---
kind: VirtualService
metadata: {name: reviews, namespace: shop}
spec:
  hosts: [reviews]
  http:
  - route:
    - destination: {host: reviews-canry}   # typo: no such Service
`,
		Good: `
  http:
  - route:
    - destination: {host: reviews-canary}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		g := p.Graph
		svcNamespaces := namespacesWith(g, "Service")
		wildcards := wildcardServiceEntries(g)
		var byNS map[string][]*graph.Resource // built on the first finding only
		eachVirtualService(p, func(r *graph.Resource, vs *networkingVS) {
			for _, d := range destinationsOf(g, r, vs) {
				host := d.Dest.GetHost()
				if host == "" || host == "*" {
					continue
				}
				fqdn := d.FQDN
				if g.ServiceForHost(host, r.Namespace) != nil || len(serviceEntriesFor(g, host, fqdn, wildcards)) > 0 {
					continue
				}
				// A host with look-alike characters is shown quoted (an
				// invisible one escaped), and the Service its ASCII form names
				// is the one meant, wherever the host would be looked up.
				codes, why, ascii, odd := lookalike.Reference(host)
				var meant *graph.Resource
				if odd && ascii != "" {
					meant = g.ServiceForHost(ascii, r.Namespace)
				}
				_, ns, ok := clusterLocalService(fqdn)
				if meant == nil && (!ok || !svcNamespaces[ns]) {
					continue
				}
				what, effect := "destination", "requests get 503 NC"
				if d.Mirror {
					what, effect = "mirror destination", "the mirrored copies are dropped (503 NC on the shadow side)"
				}
				if odd {
					// The route is left out of the message, which names the
					// characters instead; the detail names it.
					msg := fmt.Sprintf("%s host %q in VirtualService %s matches no Service: it holds %s", what, host, objectName(r), codes)
					if meant != nil {
						p.ReportDetail(r, d.HostPath(), msg+fmt.Sprintf(" (did you mean %q?)", ascii),
							fmt.Sprintf("%s Service %s is the one meant; as written, the %s of %s matches no Service or ServiceEntry, so %s.", why, objectName(meant), what, d.Route(), effect),
							relatedObject(meant, fmt.Sprintf("Service %s has the ASCII name it imitates", objectName(meant))))
						continue
					}
					p.ReportDetail(r, d.HostPath(), msg,
						fmt.Sprintf("%s No ServiceEntry declares it either: the bundle holds other Services of namespace %q, but none for the %s of %s, so %s.", why, ns, what, d.Route(), effect))
					continue
				}
				if byNS == nil {
					byNS = servicesByNamespace(g)
				}
				msg := fmt.Sprintf("%s host %q of %s in VirtualService %s matches no Service", what, host, d.Route(), objectName(r))
				var related []rules.Related
				if near := nearestName(graph.ShortHost(fqdn), byNS[ns]); near != nil {
					msg += fmt.Sprintf(" (did you mean %q?)", near.Name)
					related = append(related, relatedObject(near, fmt.Sprintf("Service %s has a similar name", objectName(near))))
				}
				p.ReportDetail(r, d.HostPath(), msg,
					fmt.Sprintf("Nor does a ServiceEntry: the bundle holds other Services of namespace %q, but none for %s, so %s.", ns, fqdn, effect), related...)
			}
		})
		return nil
	},
}
