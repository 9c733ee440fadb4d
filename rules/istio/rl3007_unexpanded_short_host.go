package istio

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// NamespaceShortHost reports `name.namespace` and `name.namespace.svc` hosts,
// which Istio does not expand to the Service's fully qualified name.
var NamespaceShortHost = &rules.Rule{
	ID: "RL3007", Name: "unexpanded-short-host", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.VirtualService, kinds.DestinationRule, kinds.Service}, Tags: []string{"istio"},
	Summary: "A host written `name.namespace` (or `name.namespace.svc`) is not expanded by Istio and names no Service.",
	Doc: rules.Doc{
		Why: `Istio expands only a bare short name (\'reviews\', no dot) to
\'reviews.<namespace>.svc.cluster.local\'. Any host with a dot is taken literally, so \'reviews.prod\' and
\'reviews.prod.svc\', which Kubernetes DNS resolves, are *not* the Service
\'reviews.prod.svc.cluster.local\' for Istio:

- as a \'destination.host\', the route points at a cluster that does not exist: \'503 NC\';
- as a DestinationRule \'host\', the rule applies to nothing: its subsets are undefined
  (routes to them fail with \'503 NC\') and its traffic policy (mTLS, outlier detection) is ignored;
- in VirtualService \'hosts\', the routes are not attached to the Service: callers using its
  usual names bypass them (a canary split that never happens).

Reported only when the bundle defines the Service the host seems to mean, so external domains
such as \'example.com\' are never mistaken for \'name.namespace\'. The fix is the fully qualified name.`,
		Bad: `
kind: DestinationRule
metadata: {name: reviews, namespace: shop}
spec:
  host: reviews.prod
`,
		Good: `
spec:
  host: reviews.prod.svc.cluster.local
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		g := p.Graph
		check := func(r *graph.Resource, host, path, effect string) {
			name, ns, ok := namespaceShortForm(host)
			if !ok {
				return
			}
			svc := g.Get(kinds.Service, ns, name)
			if svc == nil {
				return
			}
			fq := graph.ServiceFQDN(name, ns)
			p.ReportDiag(rules.Diagnostic{
				Resource: r, Path: path,
				Message: fmt.Sprintf("host %q in %s %s is not expanded by Istio, so it is not Service %s", host, r.Kind, objectName(r), objectName(svc)),
				Detail: fmt.Sprintf("Istio expands only names without a dot, and the Service is %s: %s. Write %q.",
					fq, effect, fq),
				Related: []rules.Related{relatedObject(svc, fmt.Sprintf("Service %s is %s", objectName(svc), fq))},
				Fix:     &rules.Fix{Description: "use the fully qualified host " + fq, Replacement: fq},
			})
		}
		// Paths are built only for the hosts in a short form, which check
		// looks at further.
		eachVirtualService(p, func(r *graph.Resource, vs *networkingVS) {
			for i, h := range vs.GetHosts() {
				if _, _, ok := namespaceShortForm(h); ok {
					check(r, h, graph.Index("spec.hosts", i), "the routes are not attached to that Service and its callers bypass them")
				}
			}
			for _, d := range destinationsOf(g, r, vs) {
				if _, _, ok := namespaceShortForm(d.Dest.GetHost()); ok {
					check(r, d.Dest.GetHost(), d.HostPath(), "the route points at a cluster that does not exist and requests get 503 NC")
				}
			}
		})
		for _, r := range p.OfKind(kinds.DestinationRule) {
			if o := r.DestinationRule(); o != nil {
				check(r, o.Spec.GetHost(), "spec.host", "its subsets and traffic policy apply to nothing (routes to its subsets get 503 NC)")
			}
		}
		return nil
	},
}

// namespaceShortForm recognises `name.ns` and `name.ns.svc`.
func namespaceShortForm(host string) (name, namespace string, ok bool) {
	host = strings.TrimSuffix(host, ".svc")
	name, namespace, found := strings.Cut(host, ".")
	// Exactly two labels, as strings.Split would give, without its slice.
	if !found || strings.Contains(namespace, ".") || name == "" || namespace == "" || strings.Contains(host, "*") {
		return "", "", false
	}
	return name, namespace, true
}
