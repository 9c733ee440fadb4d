package traffic

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// drSubsets returns a DestinationRule's subset names, in order.
func drSubsets(dr *graph.Resource) []string {
	o := dr.DestinationRule()
	if o == nil {
		return nil
	}
	var out []string
	for _, s := range o.Spec.GetSubsets() {
		out = append(out, s.GetName())
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quoteAll(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// MissingSubset reports subsets that no DestinationRule for the host defines.
var MissingSubset = &rules.Rule{
	ID: "RL2006", Name: "missing-subset", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.VirtualService, kinds.DestinationRule}, Tags: tags,
	Summary: "A stable/canary subset, or a subset a VirtualService routes or mirrors to, is not defined by any DestinationRule for the host.",
	Doc: rules.Doc{
		Why: `A VirtualService destination (or mirror) that names a subset only works when a DestinationRule
for that host defines the subset. Otherwise Envoy has no cluster for it and every request sent
there fails with **503 \'NC\'** (no cluster) — at the moment a canary step first gives the subset
weight, or at once for the stable subset. Argo Rollouts does not check that the subsets exist:
it silently skips labelling a subset the DestinationRule lacks.

Hosts are compared as Istio does, namespace-aware: \'checkout\' written in namespace \'shop\',
\'checkout.shop\' and \'checkout.shop.svc.cluster.local\' are one host; a DestinationRule for
\'checkout\' in another namespace is a different host.

Severity: **error** when the bundle has DestinationRules for the host and none defines the
subset; **warning** when the bundle has no DestinationRule for the host at all (it may be
managed in another repository, or admitted later through the webhook).

Fix: add the subset to the DestinationRule for that host (or correct the subset name).`,
		Bad: `
destinationRule: {name: checkout, stableSubsetName: stable, canarySubsetName: canary}
---
kind: DestinationRule
spec:
  host: checkout
  subsets:
  - name: stable
  - name: preview      # no "canary"
`,
		Good: `
  subsets:
  - name: stable
  - name: canary
`,
	},
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		for _, rr := range p.Graph.Refs().Rollouts {
			dr := rr.DestinationRule
			if dr == nil || dr.Target == nil || dr.Target.DestinationRule() == nil {
				continue
			}
			have := drSubsets(dr.Target)
			base := "spec.strategy.canary.trafficRouting.istio.destinationRule."
			for _, s := range []struct{ field, name string }{{"stableSubsetName", dr.StableSubset}, {"canarySubsetName", dr.CanarySubset}} {
				if s.name == "" || contains(have, s.name) {
					continue
				}
				p.Report(rr.Rollout, base+s.field, fmt.Sprintf("%s %q is not a subset of DestinationRule %s/%s (its subsets: %s); traffic sent to it fails with 503 NC",
					s.field, s.name, dr.Target.Namespace, dr.Target.Name, quoteAll(have)),
					rules.RelatedAt(dr.Target, "spec.subsets", "DestinationRule "+dr.Target.Name+" subsets"))
			}
		}
		for _, vs := range p.Graph.OfKind(kinds.VirtualService) {
			spec := vsSpec(vs)
			if spec == nil {
				continue
			}
			for _, u := range graph.SubsetUses(spec) {
				drs := p.Graph.DestinationRulesForHost(u.Host, vs.Namespace)
				var rel []rules.Related
				var defined []string
				found := false
				for _, dr := range drs {
					names := drSubsets(dr)
					if contains(names, u.Subset) {
						found = true
						break
					}
					defined = append(defined, names...)
					rel = append(rel, rules.RelatedAt(dr, "spec.host", fmt.Sprintf("DestinationRule %s/%s for this host", dr.Namespace, dr.Name)))
				}
				if found {
					continue
				}
				fqdn := graph.FQDN(u.Host, vs.Namespace)
				if len(drs) == 0 {
					// The DestinationRule may live outside the bundle (or be
					// admitted later, in the webhook): a missing object is a
					// warning, as for RL2002.
					p.ReportDiag(rules.Diagnostic{Resource: vs, Path: u.Path, Severity: rules.Warning,
						Message: fmt.Sprintf("subset %q of host %q (%s) is not defined by any DestinationRule in the bundle; unless one exists in the cluster, requests to it fail with 503 NC", u.Subset, u.Host, fqdn)})
					continue
				}
				sort.Strings(defined)
				p.Report(vs, u.Path, fmt.Sprintf("subset %q of host %q is not defined by the DestinationRules for %s (their subsets: %s); requests to it fail with 503 NC", u.Subset, u.Host, fqdn, quoteAll(defined)), rel...)
			}
		}
		return nil
	},
}

// DestinationRuleHostMismatch reports subset-mode routes whose host is not the
// host of the Rollout's DestinationRule.
var DestinationRuleHostMismatch = &rules.Rule{
	ID: "RL2007", Name: "destination-rule-host-mismatch", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.VirtualService, kinds.DestinationRule}, Tags: tags,
	Summary: "The managed route sends the stable/canary subsets to a host other than the Rollout's DestinationRule host.",
	Doc: rules.Doc{
		Why: `In subset mode Argo Rollouts labels the stable and canary subsets of the DestinationRule it
names, and sets weights on the route destinations with those subset names — whatever their
host. Istio resolves a subset against the DestinationRules **of the destination's host**. When
the route's host is not the DestinationRule's host, the labelled subsets are never used: the
route's subsets resolve to another DestinationRule (or none, 503 \'NC\'), and the canary
receives no traffic or the wrong pods do.

Fix: use the DestinationRule's host in the managed route's destinations (or point the Rollout at
the DestinationRule of the host the route uses).`,
		Bad: `
# DestinationRule checkout: host: checkout
route:
- destination: {host: checkout-v2, subset: stable}
`,
		Good: `
route:
- destination: {host: checkout, subset: stable}
`,
	},
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		eachManagedRoute(p, func(m managedRoute) {
			dr := m.Refs.DestinationRule
			if dr == nil || dr.Target == nil || dr.Target.DestinationRule() == nil {
				return
			}
			host := dr.Target.DestinationRule().Spec.GetHost()
			want := graph.FQDN(host, dr.Target.Namespace)
			for _, d := range m.Dests {
				if d.Subset == "" || (d.Subset != dr.StableSubset && d.Subset != dr.CanarySubset) {
					continue
				}
				if got := graph.FQDN(d.Host, m.VS.Target.Namespace); got != want {
					p.ReportDiag(rules.Diagnostic{Resource: m.VS.Target, Path: d.HostPath(),
						Message: fmt.Sprintf("destination host %q (%s) with subset %q is not the host %q (%s) of DestinationRule %s/%s that Rollout %s labels; the subset resolves elsewhere",
							d.Host, got, d.Subset, host, want, dr.Target.Namespace, dr.Target.Name, m.Refs.Rollout.Name),
						Related: []rules.Related{rules.RelatedAt(dr.Target, "spec.host", "the DestinationRule's host")}})
				}
			}
		})
		return nil
	},
}

// ExtraSubset reports subsets of a Rollout-managed DestinationRule that the
// controller removes.
var ExtraSubset = &rules.Rule{
	ID: "RL2008", Name: "managed-destination-rule-extra-subset", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.DestinationRule}, Tags: tags,
	Summary: "The DestinationRule a Rollout manages has subsets other than stable and canary; the controller removes them.",
	Doc: rules.Doc{
		Why: `When Argo Rollouts updates the DestinationRule named in \'destinationRule.name\' it rewrites the
whole \'subsets\' list with a merge patch that keeps only the stable and canary subsets (plus
subsets of running experiments). Any other subset — including ones listed in
\'additionalSubsetNames\' — disappears at the first update, and routes that use it fail with
503 \'NC\'; a GitOps tool then re-adds it and the two fight.

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
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		for _, rr := range p.Graph.Refs().Rollouts {
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
					extra = " (listing it in additionalSubsetNames does not keep it in the managed DestinationRule)"
				}
				p.ReportDiag(rules.Diagnostic{Resource: dr.Target, Path: graph.Index("spec.subsets", i) + ".name",
					Message: fmt.Sprintf("subset %q of DestinationRule %s/%s is neither Rollout %s's stable subset %q nor its canary subset %q: the controller removes it on its first update%s",
						name, dr.Target.Namespace, dr.Target.Name, rr.Rollout.Name, dr.StableSubset, dr.CanarySubset, extra),
					Related: []rules.Related{rules.RelatedAt(rr.Rollout, dr.Path, "Rollout "+rr.Rollout.Name+" manages this DestinationRule")}})
			}
		}
		return nil
	},
}
