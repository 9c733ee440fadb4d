package traffic

import (
	"fmt"
	"strconv"
	"strings"

	networkingv1 "istio.io/api/networking/v1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// ExtraSubset reports subsets of a Rollout-managed DestinationRule that the
// controller removes.
var ExtraSubset = &rules.Rule{
	ID: "RL2008", Name: "managed-destination-rule-extra-subset", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.DestinationRule, kinds.VirtualService}, Tags: tags,
	Summary: "The DestinationRule a Rollout manages has subsets other than stable and canary; the controller removes them.",
	Doc: rules.Doc{
		Why: `When Argo Rollouts updates the DestinationRule named in \'destinationRule.name\' it rewrites the
whole \'subsets\' list with a merge patch that keeps only the stable and canary subsets (plus
subsets of running experiments). Any other subset — including ones listed in
\'additionalSubsetNames\' — disappears at the first update, and routes that use it fail with
503 \'NC\'; a GitOps tool then re-adds it and the two fight.

When a VirtualService route (or mirror) still sends traffic to such a subset, the finding names
each route and the share of its requests (its weight of the route's total) that will fail.

Fix: keep only the stable and canary subsets in the Rollout-managed DestinationRule; define
other subsets in a DestinationRule the Rollout does not manage.`,
		Bad: `
kind: DestinationRule
metadata: {name: checkout}
spec:
  host: checkout
  subsets:
  - name: stable
  - name: canary
  - name: legacy       # removed by the controller
`,
		Good: `
  subsets:
  - name: stable
  - name: canary
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		var uses map[subsetKey][]subsetRoute // built on the first finding
		for _, rr := range p.Rollouts() {
			dr := rr.DestinationRule
			if dr == nil || dr.Target == nil {
				continue
			}
			for i, name := range drSubsets(dr.Target) {
				if name == dr.StableSubset || name == dr.CanarySubset {
					continue
				}
				extra := ""
				if contains(dr.AdditionalSubsets, name) {
					extra = " Listing it in additionalSubsetNames does not keep it there."
				}
				related := []rules.Related{rules.RelatedAt(rr.Rollout, dr.Path, "Rollout "+rr.Rollout.Name+" manages this DestinationRule")}
				// Routes still sending traffic to the subset fail once it is
				// gone: name them, with their share.
				if uses == nil {
					uses = subsetRoutesMemo.Get(p.Graph, func() map[subsetKey][]subsetRoute { return indexSubsetRoutes(p.Graph) })
				}
				var routedBy []string
				for _, u := range uses[subsetKey{drHost(dr.Target), name}] {
					routedBy = append(routedBy, u.describe())
					if len(related) < 10 {
						related = append(related, rules.RelatedAt(u.vs, u.path, u.describe()))
					}
				}
				routed := ""
				if len(routedBy) > 0 {
					routed = " It is still routed to by " + strings.Join(routedBy, ", ") + ": that traffic then fails with 503 NC."
				}
				p.ReportDiag(rules.Diagnostic{Resource: dr.Target, Path: graph.Index("spec.subsets", i) + ".name",
					Message: fmt.Sprintf("subset %q of DestinationRule %s/%s is not Rollout %s's stable (%q) or canary (%q) subset",
						name, dr.Target.Namespace, dr.Target.Name, rr.Rollout.Name, dr.StableSubset, dr.CanarySubset),
					Detail:  "The controller removes it on its first update." + extra + routed,
					Related: related})
			}
		}
		return nil
	},
}

// subsetRoute is a route destination or mirror sending traffic to a subset.
type subsetRoute struct {
	vs     *graph.Resource
	route  string // `http route "primary"`, `tcp[0]`
	path   string
	weight int32 // the destination's weight
	total  int32 // the route's total weight
	mirror bool
	pct    float64 // mirror percentage, 100 when unset
}

// describe renders the use with its share: `VirtualService shop/checkout
// http route "primary" (weight 10 of 100: 10% of its requests)`.
func (u subsetRoute) describe() string {
	base := fmt.Sprintf("VirtualService %s %s", objectName(u.vs), u.route)
	if u.mirror {
		return fmt.Sprintf("%s (mirror of %s%% of its requests)", base, strconv.FormatFloat(u.pct, 'f', -1, 64))
	}
	if u.total <= 0 {
		return base
	}
	share := float64(u.weight) * 100 / float64(u.total)
	return fmt.Sprintf("%s (weight %d of %d: %s%% of its requests)", base, u.weight, u.total, strconv.FormatFloat(share, 'f', -1, 64))
}

// subsetKey is a subset of a fully qualified host.
type subsetKey struct{ host, subset string }

// drHost is a DestinationRule's host, fully qualified in its namespace.
func drHost(dr *graph.Resource) string {
	if o := dr.DestinationRule(); o != nil {
		return graph.FQDN(o.Spec.GetHost(), dr.Namespace)
	}
	return ""
}

// subsetRoutesMemo holds indexSubsetRoutes' index, built on the lint's
// first finding: once, not once per shard. Read only.
var subsetRoutesMemo = graph.NewMemo[map[subsetKey][]subsetRoute]("traffic.subsetRoutes")

// indexSubsetRoutes lists, by host and subset, every route destination and
// mirror of the bundle's VirtualServices that names a subset, once.
func indexSubsetRoutes(g *graph.Graph) map[subsetKey][]subsetRoute {
	out := map[subsetKey][]subsetRoute{}
	for _, r := range g.OfKind(kinds.VirtualService) {
		vs := r.VirtualService()
		if vs == nil {
			continue
		}
		add := func(host, subset string, u subsetRoute) {
			if subset != "" {
				k := subsetKey{graph.FQDN(host, r.Namespace), subset}
				out[k] = append(out[k], u)
			}
		}
		for _, kind := range []graph.RouteKind{graph.HTTP, graph.TLS, graph.TCP} {
			for i := 0; i < graph.RouteCount(&vs.Spec, kind); i++ {
				dests := graph.RouteDestinations(&vs.Spec, kind, i)
				var total int32
				for _, d := range dests {
					total += d.Weight
				}
				name := routeName(&vs.Spec, kind, i)
				for _, d := range dests {
					w, t := d.Weight, total
					if len(dests) == 1 {
						w, t = 100, 100 // a single destination takes everything
					}
					add(d.Host, d.Subset, subsetRoute{vs: r, route: name, path: d.SubsetPath(), weight: w, total: t})
				}
				if kind != graph.HTTP {
					continue
				}
				h := vs.Spec.GetHttp()[i]
				if m := h.GetMirror(); m != nil {
					pct := 100.0
					if mp := h.GetMirrorPercentage(); mp != nil {
						pct = mp.GetValue()
					}
					add(m.GetHost(), m.GetSubset(), subsetRoute{vs: r, route: name, path: graph.Index("spec.http", i) + ".mirror.subset", mirror: true, pct: pct})
				}
				for j, mm := range h.GetMirrors() {
					pct := 100.0
					if mp := mm.GetPercentage(); mp != nil {
						pct = mp.GetValue()
					}
					add(mm.GetDestination().GetHost(), mm.GetDestination().GetSubset(), subsetRoute{vs: r, route: name,
						path: graph.Index(graph.Index("spec.http", i)+".mirrors", j) + ".destination.subset", mirror: true, pct: pct})
				}
			}
		}
	}
	return out
}

// routeName names a route for messages: `http route "primary"` or `tcp[0]`.
func routeName(vs *networkingv1.VirtualService, kind graph.RouteKind, i int) string {
	if kind == graph.HTTP {
		if n := vs.GetHttp()[i].GetName(); n != "" {
			return fmt.Sprintf("http route %q", n)
		}
	}
	return fmt.Sprintf("%s[%d]", kind, i)
}
