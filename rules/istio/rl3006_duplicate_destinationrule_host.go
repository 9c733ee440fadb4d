package istio

import (
	"fmt"
	"sort"
	"strings"

	networkingv1 "istio.io/api/networking/v1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/visibility"
)

// DuplicateDestinationRule reports DestinationRules of one namespace that
// configure the same host, which Istio merges with first-wins semantics.
var DuplicateDestinationRule = &rules.Rule{
	ID: "RL3006", Name: "duplicate-destinationrule-host", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.DestinationRule, kinds.ConfigMap}, Tags: []string{"istio"},
	Summary: "Two DestinationRules in one namespace configure the same host; Istio merges them first-wins.",
	Doc: rules.Doc{
		Why: `When several DestinationRules of one namespace, visible in a common namespace through
\'exportTo\' and without \'workloadSelector\', configure the same host, Istio merges them in creation
order: subsets are concatenated, a subset name defined twice keeps only the first definition, and
only the first rule's top-level \'trafficPolicy\' (TLS mode, load balancer, outlier detection)
applies. Which object is "first" depends on creation time, so the effective policy can differ
between clusters and after a re-sync. With Argo Rollouts subset-level routing this is how a
canary subset ends up selecting the wrong pods (the controller patches one rule, the other rule's
stale subset of the same name wins) or how mTLS settings silently vanish (\'503 UF\'/\'URX\').
\'istioctl analyze\' has no check for this.

Policy: hosts are compared fully qualified (\'reviews\', \'reviews.shop\' and
\'reviews.shop.svc.cluster.local\' in namespace \'shop\' are one host). Rules in different namespaces
are not reported: Istio picks the client's namespace first, then the service's, then the root
namespace (\'istio-system\'), which is intended layering, not a conflict. Rules with a
\'workloadSelector\' are never merged and are skipped.

Fix: keep one DestinationRule per host and namespace, with all its subsets and policy.`,
		Bad: `
kind: DestinationRule
metadata: {name: reviews, namespace: shop}
spec:
  host: reviews
  subsets: [{name: stable, labels: {app: reviews}}, {name: canary, labels: {app: reviews}}]
---
kind: DestinationRule
metadata: {name: reviews-mtls, namespace: shop}
spec:
  host: reviews.shop.svc.cluster.local
  trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}
`,
		Good: `
kind: DestinationRule
metadata: {name: reviews, namespace: shop}
spec:
  host: reviews
  trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}
  subsets: [{name: stable, labels: {app: reviews}}, {name: canary, labels: {app: reviews}}]
`,
	},
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		g := p.Graph
		m := visibility.For(g, p.Globals.IstioVersion)
		cover := pairCover{}
		eachInFileOrder(g, kinds.DestinationRule, func(r *graph.Resource) {
			o := r.DestinationRule()
			if o == nil || o.Spec.GetHost() == "" || o.Spec.GetWorkloadSelector() != nil {
				return
			}
			host := o.Spec.GetHost()
			fq := graph.FQDN(host, r.Namespace)
			scope := m.DestinationRuleExport(r)
			var names []string
			var related []rules.Related
			var others []*graph.Resource
			var shared []string
			policies := 0
			if o.Spec.GetTrafficPolicy() != nil {
				policies++
			}
			for _, other := range g.DestinationRulesForHost(host, r.Namespace) {
				od := other.DestinationRule()
				if sameObject(other, r) || od == nil || other.Namespace != r.Namespace || od.Spec.GetWorkloadSelector() != nil {
					continue
				}
				if !scope.Overlaps(m.DestinationRuleExport(other)) {
					continue
				}
				others = append(others, other)
				names = append(names, objectName(other))
				shared = append(shared, commonSubsets(o.Spec.GetSubsets(), od.Spec.GetSubsets())...)
				if od.Spec.GetTrafficPolicy() != nil {
					policies++
				}
				if len(related) < maxRelated {
					related = append(related, rules.PeerAt(other, "spec.host",
						fmt.Sprintf("DestinationRule %s also configures %s", objectName(other), fq)))
				}
			}
			if len(names) == 0 || !cover.add(fq, r, others) {
				return // no conflict, or one a finding on an earlier object named
			}
			msg := fmt.Sprintf("DestinationRule %s configures host %q, as does DestinationRule %s", objectName(r), host, strings.Join(names, ", "))
			detail := fmt.Sprintf("In namespace %s, Istio merges the DestinationRules for %s in creation order", r.Namespace, fq)
			if shared = uniqueSorted(shared); len(shared) > 0 {
				detail += fmt.Sprintf("; subset %s is defined more than once and only the oldest definition applies", quoteList(shared))
			}
			if policies > 1 {
				detail += fmt.Sprintf("; %d of them set a top-level trafficPolicy and only the oldest one applies", policies)
			}
			p.ReportDetail(r, "spec.host", msg, detail+". Keep one DestinationRule per host.", related...)
		})
		return nil
	},
}

// commonSubsets returns the subset names defined in both lists.
func commonSubsets(a, b []*networkingv1.Subset) []string {
	in := make(map[string]bool, len(a))
	for _, s := range a {
		in[s.GetName()] = true
	}
	var out []string
	for _, s := range b {
		if in[s.GetName()] {
			out = append(out, s.GetName())
		}
	}
	return out
}

// uniqueSorted sorts ss in place and drops repeats.
func uniqueSorted(ss []string) []string {
	sort.Strings(ss)
	out := ss[:0]
	for i, s := range ss {
		if i == 0 || s != ss[i-1] {
			out = append(out, s)
		}
	}
	return out
}
