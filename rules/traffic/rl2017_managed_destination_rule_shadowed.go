package traffic

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/visibility"
)

// ManagedDestinationRuleShadowed reports subset-level Rollouts whose managed
// DestinationRule is not the one some of the managed routes' proxies use.
var ManagedDestinationRuleShadowed = &rules.Rule{
	ID: "RL2017", Name: "managed-destination-rule-shadowed", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.VirtualService, kinds.DestinationRule, kinds.Service, kinds.ServiceEntry,
		kinds.Sidecar, kinds.Gateway, kinds.ConfigMap, kinds.Deployment, kinds.DaemonSet, kinds.StatefulSet, kinds.ReplicaSet},
	Tags:    tags,
	Summary: "Where a subset-level Rollout's routes are applied, another DestinationRule takes precedence over the one the Rollout manages, so its subsets never follow the rollout.",
	Doc: rules.Doc{
		Why: `In subset-level traffic splitting Argo Rollouts writes the new and the old
\'rollouts-pod-template-hash\' into the canary and stable subsets of the DestinationRule named in
\'trafficRouting.istio.destinationRule\' (istio.go UpdateHash), in the Rollout's namespace. A proxy,
though, takes the subsets from the DestinationRule that applies **for its namespace**: one in its
own namespace first, then one the service's namespace exports to it, then the root namespace's
(push_context.go destinationRule). When a client namespace has its own DestinationRule for the
host — written for a connection pool or TLS setting, with copies of the subsets — the proxies of
that namespace use its subsets, which the controller never updates: their "canary" and "stable"
keep whatever labels they were written with (typically both select every pod, stable and canary
alike), so the weights Argo sets split nothing there, and after a promotion they may point at
pods that are gone.

The namespaces where the Rollout's routes are applied are computed as in RL3014 (the managed
VirtualServices' sidecar namespaces and gateway proxies). Where no rule defines the subsets at
all, RL3016 reports the \'503\'s.

Fix: drop the client namespace's rule, or move its settings into the managed DestinationRule (a
workloadSelector rule does not shadow it for other pods), or export the managed rule and keep the
client rule without subsets for a host-level setting only.`,
		Bad: `
kind: DestinationRule                 # managed by Rollout shop/reviews
metadata: {name: reviews, namespace: shop}
spec:
  host: reviews
  subsets: [{name: stable, labels: {app: reviews}}, {name: canary, labels: {app: reviews}}]
---
kind: DestinationRule                 # the web team's copy
metadata: {name: reviews, namespace: web}
spec:
  host: reviews.shop.svc.cluster.local
  trafficPolicy: {connectionPool: {tcp: {maxConnections: 50}}}
  subsets: [{name: stable, labels: {app: reviews}}, {name: canary, labels: {app: reviews}}]
`,
		Good: `
kind: DestinationRule
metadata: {name: reviews, namespace: web}
spec:
  host: reviews.shop.svc.cluster.local
  workloadSelector: {matchLabels: {app: web-frontend}}
  trafficPolicy: {connectionPool: {tcp: {maxConnections: 50}}}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		m := visibility.For(p.Graph, p.Globals.IstioVersion)
		for _, rr := range p.Rollouts() {
			dr := rr.DestinationRule
			if dr == nil || dr.Target == nil || dr.Target.DestinationRule() == nil {
				continue
			}
			host := visibility.IstioFQDN(dr.Target.DestinationRule().Spec.GetHost(), dr.Target.Namespace)
			type shadow struct {
				by     []*graph.Resource
				level  visibility.Level
				places []string
			}
			var found []*shadow
			byKey := map[string]*shadow{}
			// Places are told apart as placeText tells them, without
			// rendering the text of places that turn out fine.
			type placeKey struct {
				gwNamespace, gwName, namespace string
				sidecars                       bool
			}
			seen := map[placeKey]bool{}
			for _, vs := range rr.VirtualServices {
				if vs.Target == nil {
					continue
				}
				for _, pl := range m.Places(vs.Target, host) {
					key := placeKey{namespace: pl.Namespace, sidecars: pl.Gateway == nil}
					if pl.Gateway != nil {
						key.gwNamespace, key.gwName = pl.Gateway.Namespace, pl.Gateway.Name
					}
					if seen[key] {
						continue
					}
					seen[key] = true
					e := m.DestinationRuleAt(host, pl)
					if !e.Found() || e.Has(dr.Target) {
						continue
					}
					// Subsets missing there are RL3016's; subsets defined by
					// another rule are this rule's.
					if e.Subset(dr.CanarySubset) == nil && e.Subset(dr.StableSubset) == nil {
						continue
					}
					k := ruleList(e.Rules) + string(e.Level)
					sh := byKey[k]
					if sh == nil {
						sh = &shadow{by: e.Rules, level: e.Level}
						byKey[k] = sh
						found = append(found, sh)
					}
					sh.places = append(sh.places, placeText(pl))
				}
			}
			for _, sh := range found {
				sort.Strings(sh.places)
				var rel []rules.Related
				for _, b := range sh.by {
					rel = append(rel, rules.RelatedAt(b, "spec.subsets", fmt.Sprintf("DestinationRule %s applies there (%s)", objectName(b), sh.level)))
				}
				rel = append(rel, rules.RelatedAt(dr.Target, "spec.subsets", fmt.Sprintf("DestinationRule %s, which the Rollout updates", objectName(dr.Target))))
				p.ReportDiag(rules.Diagnostic{Resource: rr.Rollout, Path: dr.Path, Related: rel,
					Message: fmt.Sprintf("DestinationRule %s (%s) takes precedence for %s over %s, which Rollout %s manages",
						ruleList(sh.by), sh.level, host, objectName(dr.Target), rr.Rollout.Name),
					Detail: fmt.Sprintf("It applies for %s. The controller writes the pod template hashes into the subsets %q and %q of %s only, so those proxies split traffic by subsets that never follow the rollout.",
						strings.Join(sh.places, "; "), dr.StableSubset, dr.CanarySubset, objectName(dr.Target))})
			}
		}
		return nil
	},
}

// placeText renders where routes are applied for messages.
func placeText(pl visibility.Place) string {
	if pl.Gateway != nil {
		return fmt.Sprintf("the proxies of Gateway %s in namespace %s", objectName(pl.Gateway), pl.Namespace)
	}
	if pl.Namespace == visibility.Other {
		return "the sidecars of the namespaces the bundle does not name"
	}
	return "the sidecars of namespace " + pl.Namespace
}

func ruleList(rs []*graph.Resource) string {
	var names []string
	for _, r := range rs {
		names = append(names, objectName(r))
	}
	return strings.Join(names, " + ")
}
