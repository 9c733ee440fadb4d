package istio

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// DestinationRuleHostUnknown reports DestinationRules whose host is no
// Service or ServiceEntry of the bundle, under the same partial-bundle policy
// as RL3001.
var DestinationRuleHostUnknown = &rules.Rule{
	ID: "RL3013", Name: "destinationrule-host-unknown", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.DestinationRule, kinds.Service, kinds.ServiceEntry}, Tags: []string{"istio"},
	Summary: "A DestinationRule's host names no Service or ServiceEntry of the bundle.",
	Doc: rules.Doc{
		Why: `A DestinationRule applies to the service whose name is its \'host\'. When no Service or ServiceEntry
has that name, the rule applies to nothing: its traffic policy (mTLS mode, connection pool,
outlier detection) is silently ignored and its subsets exist for no service, so every route to
them answers \'503 NC\'. With Argo Rollouts subset-level routing, the controller keeps patching the
subsets of a rule no proxy uses. \'istioctl analyze\' (IST0174) checks this only against a live
cluster.

Same policy as RL3001: a cluster-local host is checked only when the bundle holds Services of
its namespace; external hosts only against the bundle's ServiceEntries (wildcards included) and
never reported missing. Wildcard DestinationRule hosts (\'*.local\') are not checked.`,
		Bad: `
kind: Service
metadata: {name: reviews, namespace: shop}
---
kind: DestinationRule
metadata: {name: reviews, namespace: shop}
spec:
  host: review            # no such Service
`,
		Good: `
spec:
  host: reviews
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		g := p.Graph
		svcNamespaces := namespacesWith(g, "Service")
		wildcards := wildcardServiceEntries(g)
		var byNS map[string][]*graph.Resource
		for _, r := range p.OfKind(kinds.DestinationRule) {
			o := r.DestinationRule()
			if o == nil {
				continue
			}
			host := o.Spec.GetHost()
			if host == "" || host[0] == '*' {
				continue
			}
			fqdn := graph.FQDN(host, r.Namespace)
			if g.ServiceForHost(host, r.Namespace) != nil || len(serviceEntriesFor(g, host, fqdn, wildcards)) > 0 {
				continue
			}
			_, ns, ok := clusterLocalService(fqdn)
			if !ok || !svcNamespaces[ns] {
				continue
			}
			if byNS == nil {
				byNS = servicesByNamespace(g)
			}
			msg := fmt.Sprintf("host %q of DestinationRule %s matches no Service or ServiceEntry", host, objectName(r))
			var related []rules.Related
			if near := nearestName(graph.ShortHost(fqdn), byNS[ns]); near != nil {
				msg += fmt.Sprintf(" (did you mean %q?)", near.Name)
				related = append(related, relatedObject(near, fmt.Sprintf("Service %s has a similar name", objectName(near))))
			}
			p.ReportDetail(r, "spec.host", msg, fmt.Sprintf(
				"The bundle holds other Services of namespace %q, but none for %s: the rule applies to nothing, its traffic policy is ignored and routes to its subsets get 503 NC.",
				ns, fqdn), related...)
		}
		return nil
	},
}
