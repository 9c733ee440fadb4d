package istio

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// DuplicateRouteDestination reports a host+subset+port that appears twice in
// one route's destinations.
var DuplicateRouteDestination = &rules.Rule{
	ID: "RL3010", Name: "duplicate-route-destination", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.VirtualService}, Tags: []string{"istio"},
	Summary: "One route lists the same destination (host, subset and port) twice.",
	Doc: rules.Doc{
		Why: `Istio turns a route's destinations into one weighted cluster entry each; the same destination
listed twice is the same cluster twice, and the effective share is the sum of both weights, which
is not what either line says. With Argo Rollouts it is worse: the controller writes the stable (or
canary) weight into *every* matching destination, so a duplicated stable destination doubles the
stable share and the canary receives far less than the step's \'setWeight\' (for \'setWeight: 10\',
10/(90+90+10) ≈ 5%). Hosts are compared fully qualified. \'istioctl analyze\' does not check this.

Fix: keep one entry per destination.`,
		Bad: `
  http:
  - name: primary
    route:
    - destination: {host: reviews, subset: stable}
      weight: 90
    - destination: {host: reviews.shop.svc.cluster.local, subset: stable}
      weight: 0
    - destination: {host: reviews, subset: canary}
      weight: 10
`,
		Good: `
  http:
  - name: primary
    route:
    - destination: {host: reviews, subset: stable}
      weight: 90
    - destination: {host: reviews, subset: canary}
      weight: 10
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		type key struct {
			fqdn, subset string
			port         uint32
		}
		eachVirtualService(p, func(r *graph.Resource, vs *networkingVS) {
			for _, e := range routesOf(p.Graph, r, vs) {
				if len(e.dests) < 2 {
					continue
				}
				var first map[key]graph.Destination
				if len(e.dests) > pairwiseDests {
					first = make(map[key]graph.Destination, len(e.dests))
				}
				for j, d := range e.dests {
					if d.Host == "" {
						continue
					}
					var prev graph.Destination
					dup := false
					if first == nil {
						// A few destinations: the first earlier one with the
						// same key, compared without building FQDNs.
						for _, q := range e.dests[:j] {
							if q.Host != "" && q.Subset == d.Subset && q.Port == d.Port && sameFQDN(q.Host, d.Host, r.Namespace) {
								prev, dup = q, true
								break
							}
						}
					} else {
						k := key{graph.FQDN(d.Host, r.Namespace), d.Subset, d.Port}
						if prev, dup = first[k]; !dup {
							first[k] = d
						}
					}
					if !dup {
						continue
					}
					p.ReportDetail(r, d.HostPath(), fmt.Sprintf("%s of VirtualService %s lists destination %s twice (weights %d and %d)", e.name(), objectName(r), destLabel(d), prev.Weight, d.Weight),
						"Both entries feed the same cluster, so its share is their sum.",
						rules.RelatedAt(r, prev.HostPath(), "first entry for "+destLabel(prev)))
				}
			}
		})
		return nil
	},
}

// pairwiseDests is how many destinations a route may have for RL3010 to
// compare them pairwise rather than through a map.
const pairwiseDests = 8

// sameFQDN reports whether graph.FQDN(a, ns) == graph.FQDN(b, ns), building
// the names only when a or b has a dot (distinct bare names never match).
func sameFQDN(a, b, ns string) bool {
	if a == b {
		return true
	}
	if !strings.Contains(a, ".") && !strings.Contains(b, ".") {
		return false
	}
	return graph.FQDN(a, ns) == graph.FQDN(b, ns)
}
