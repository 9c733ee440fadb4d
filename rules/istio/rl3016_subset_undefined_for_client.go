package istio

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/visibility"
)

// SubsetUndefinedForClient reports subsets that a DestinationRule of the
// bundle defines but that the DestinationRule applying to some client
// namespace of the route does not.
var SubsetUndefinedForClient = &rules.Rule{
	ID: "RL3016", Name: "subset-undefined-for-client", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.VirtualService, kinds.DestinationRule, kinds.Service, kinds.ServiceEntry, kinds.Sidecar,
		kinds.Gateway, kinds.ConfigMap, kinds.Deployment, kinds.DaemonSet, kinds.StatefulSet, kinds.ReplicaSet, kinds.Rollout},
	Tags:    []string{"istio"},
	Summary: "A route's subset is defined by a DestinationRule that does not apply where the route is applied (exportTo, or another rule taking precedence).",
	Doc: rules.Doc{
		Why: `A subset is a cluster of the proxy that applies the route, built from the DestinationRule that
applies to the host **for that proxy's namespace**. istiod picks it in order
(push_context.go destinationRule): a rule in the proxy's own namespace; else one the service's
namespace exports to the proxy's namespace; else one the root namespace exports to it. At each
step the most specific host wins and the rules of that host are merged. So a subset can be
defined in the bundle and still be undefined where the route runs:

- the rule is exported to its own namespace only (\'exportTo: ["."]\', or the mesh default
  \'defaultDestinationRuleExportTo\'), and the route is applied by sidecars of other namespaces or
  by a gateway elsewhere;
- a rule in the client's namespace (often a connection-pool or TLS rule written for that team)
  shadows the service's rule there and has no subsets.

Those proxies have no \'outbound|port|subset|host\' cluster and the requests fail with \'503\' (flag
\'NC\'). With Argo Rollouts subset-level routing this hits every step: both the stable and the
canary subset are missing for those clients. The namespaces where the route is applied are
RL3014's. A subset no DestinationRule of the bundle defines is RL2006's.

Severity: **error** when the subset is undefined everywhere the route is applied, **warning**
when only in some namespaces.

Fix: export the rule to the namespaces that route with it, or give the shadowing rule the subsets
(or remove it).`,
		Bad: `
kind: DestinationRule
metadata: {name: reviews, namespace: shop}
spec:
  host: reviews
  exportTo: ["."]                 # shop only
  subsets: [{name: stable, labels: {app: reviews}}, {name: canary, labels: {app: reviews}}]
---
kind: VirtualService
metadata: {name: reviews, namespace: shop}
spec:
  hosts: [reviews]                # applied in every namespace
  http:
  - route:
    - destination: {host: reviews, subset: stable}
`,
		Good: `
kind: DestinationRule
metadata: {name: reviews, namespace: shop}
spec:
  host: reviews
  subsets: [{name: stable, labels: {app: reviews}}, {name: canary, labels: {app: reviews}}]
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		m := visibility.For(p.Graph, p.Globals.IstioVersion)
		eachVirtualService(p, func(r *graph.Resource, vs *networkingVS) {
			uses := graph.SubsetRefs(vs)
			if len(uses) == 0 {
				return
			}
			// A route's subsets usually share one host (stable and canary):
			// its name and places are resolved once for the run of uses.
			var host, fq string
			var places []visibility.Place
			placesOf := ""
			for k, u := range uses {
				if k == 0 || u.Host != host {
					host, fq = u.Host, visibility.IstioFQDN(u.Host, r.Namespace)
				}
				definers := m.SubsetDefiners(fq, u.Subset)
				if len(definers) == 0 {
					continue // RL2006
				}
				if places == nil || placesOf != fq {
					places, placesOf = m.Places(r, fq), fq
				}
				groups := map[string][]string{} // reason → place labels
				var order []string
				var rel []rules.Related
				relSeen := map[*graph.Resource]bool{}
				missing := 0
				var passing []string
				for i, pl := range places {
					e := m.DestinationRuleAt(fq, pl)
					if e.Subset(u.Subset) != nil {
						if missing > 0 && pl.Gateway == nil {
							passing = append(passing, pl.Namespace)
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
					var reason string
					if e.Found() {
						reason = fmt.Sprintf("get DestinationRule %s (%s), which has no subset %q", ruleNames(e.Rules), e.Level, u.Subset)
						for _, dr := range e.Rules {
							if !relSeen[dr] {
								relSeen[dr] = true
								rel = append(rel, relatedObject(dr, fmt.Sprintf("DestinationRule %s applies there and lacks subset %q", objectName(dr), u.Subset)))
							}
						}
					} else {
						reason = "get no DestinationRule for the host"
					}
					if _, ok := groups[reason]; !ok {
						order = append(order, reason)
					}
					groups[reason] = append(groups[reason], placeLabel(pl))
				}
				if missing == 0 {
					continue
				}
				var parts []string
				for _, reason := range order {
					// A group standing for every other namespace excepts the
					// namespaces where the subset is defined or missing otherwise.
					except := append([]string(nil), passing...)
					for _, o := range order {
						if o == reason {
							continue
						}
						for _, l := range groups[o] {
							if ns, ok := strings.CutPrefix(l, "sidecar\x00"); ok {
								except = append(except, ns)
							}
						}
					}
					sort.Strings(except)
					parts = append(parts, joinPlaces(groups[reason], except)+" "+reason)
				}
				var defs []string
				for _, d := range definers {
					defs = append(defs, fmt.Sprintf("%s (exported to %s)", objectName(d), m.DestinationRuleExport(d)))
					if !relSeen[d] && len(rel) < maxRelated {
						relSeen[d] = true
						rel = append(rel, rules.RelatedAt(d, "spec.exportTo", fmt.Sprintf("DestinationRule %s defines subset %q", objectName(d), u.Subset)))
					}
				}
				sev := rules.Error
				if missing < len(places) {
					sev = rules.Warning
				}
				p.ReportDiag(rules.Diagnostic{Resource: r, Path: u.Path(), Severity: sev, Related: rel,
					Message: fmt.Sprintf("subset %q of host %q in VirtualService %s is not defined where the route is applied", u.Subset, u.Host, objectName(r)),
					Detail: fmt.Sprintf("It is defined by %s, but %s: those proxies have no such cluster and the requests get 503 NC.",
						strings.Join(defs, ", "), strings.Join(parts, "; "))})
			}
		})
		return nil
	},
}

// placeLabel renders a place: "sidecar\x00<ns>" for sidecars (joined by
// joinPlaces), a phrase for gateway proxies.
func placeLabel(pl visibility.Place) string {
	if pl.Gateway == nil {
		return "sidecar\x00" + pl.Namespace
	}
	return fmt.Sprintf("the proxies of Gateway %s in namespace %s", objectName(pl.Gateway), pl.Namespace)
}

// joinPlaces renders place labels: sidecar namespaces together first;
// passing are the sidecar namespaces applying the route where it works.
func joinPlaces(labels, passing []string) string {
	var nss, gws []string
	for _, l := range labels {
		if ns, ok := strings.CutPrefix(l, "sidecar\x00"); ok {
			nss = append(nss, ns)
		} else {
			gws = append(gws, l)
		}
	}
	var parts []string
	if len(nss) > 0 {
		parts = append(parts, "the sidecars of "+namespaceList(nss, passing))
	}
	parts = append(parts, gws...)
	return strings.Join(parts, " and ")
}

func ruleNames(rs []*graph.Resource) string {
	var names []string
	for _, r := range rs {
		names = append(names, objectName(r))
	}
	sort.Strings(names)
	return strings.Join(names, " + ")
}
