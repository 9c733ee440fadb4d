package traffic

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

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
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		for _, rr := range p.Rollouts() {
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
				p.ReportDetail(rr.Rollout, base+s.field, fmt.Sprintf("%s %q is not a subset of DestinationRule %s/%s", s.field, s.name, dr.Target.Namespace, dr.Target.Name),
					fmt.Sprintf("Its subsets: %s. Traffic sent to the missing one fails with 503 NC.", quoteAll(have)),
					rules.RelatedAt(dr.Target, "spec.subsets", "DestinationRule "+dr.Target.Name+" subsets"))
			}
		}
		for _, vs := range p.OfKind(kinds.VirtualService) {
			spec := vsSpec(vs)
			if spec == nil {
				continue
			}
			// SubsetRefs, not SubsetUses: a use's field path is built
			// only for a finding.
			for _, u := range graph.SubsetRefs(spec) {
				drs := p.Graph.DestinationRulesForHost(u.Host, vs.Namespace)
				if slices.ContainsFunc(drs, func(dr *graph.Resource) bool { return definesSubset(dr, u.Subset) }) {
					continue // the common case, told without listing names
				}
				var rel []rules.Related
				var defined []string
				for _, dr := range drs {
					defined = append(defined, drSubsets(dr)...)
					rel = append(rel, rules.RelatedAt(dr, "spec.host", fmt.Sprintf("DestinationRule %s/%s for this host", dr.Namespace, dr.Name)))
				}
				fqdn := graph.FQDN(u.Host, vs.Namespace)
				if len(drs) == 0 {
					// The DestinationRule may live outside the bundle (or be
					// admitted later, in the webhook): a missing object is a
					// warning, as for RL2002.
					p.ReportDiag(rules.Diagnostic{Resource: vs, Path: u.Path(), Severity: rules.Warning,
						Message: fmt.Sprintf("subset %q of host %q is not defined by any DestinationRule in the bundle", u.Subset, u.Host),
						Detail:  fmt.Sprintf("Unless one for %s exists in the cluster, requests to the subset fail with 503 NC.", fqdn)})
					continue
				}
				sort.Strings(defined)
				p.ReportDetail(vs, u.Path(), fmt.Sprintf("subset %q of host %q is defined by none of its DestinationRules", u.Subset, u.Host),
					fmt.Sprintf("The DestinationRules for %s define %s; requests to the subset fail with 503 NC.", fqdn, quoteAll(defined)), rel...)
			}
		}
		return nil
	},
}
