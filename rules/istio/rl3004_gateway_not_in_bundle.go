package istio

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rolloutlint/rolloutlint/internal/lookalike"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/visibility"
)

// GatewayMissing reports VirtualService gateway references that resolve to no
// Gateway of the bundle.
var GatewayMissing = &rules.Rule{
	ID: "RL3004", Name: "gateway-not-in-bundle", Severity: rules.Info, Source: rules.SourceGo,
	Kinds: []string{kinds.VirtualService, kinds.Gateway}, Tags: []string{"istio"},
	Summary: "A VirtualService is bound to a Gateway the bundle does not define.",
	Doc: rules.Doc{
		Why: `A VirtualService bound to a Gateway that does not exist programs no proxy for that binding: the
ingress host answers \'404\' (no route) and the canary never sees ingress traffic.

Gateways are usually owned by a platform team and kept in another repository, so a reference
to a Gateway outside the bundle is normal. The policy:

- \'mesh\' is the sidecars, not a Gateway, and is never reported.
- \'name\' and \'./name\' resolve in the VirtualService's namespace, \'namespace/name\' in that
  namespace, and the legacy \'name.namespace\' form as istiod resolves it (second label = namespace).
- When the bundle defines **no** Gateway in the referenced namespace, the bundle is partial:
  **info**, so that you can see what was not checked.
- When the bundle defines other Gateways in that namespace but not this one, the reference is most
  likely a typo or a wrong namespace: **warning**, with the closest Gateway name as a hint.

References in \'spec.gateways\' and in \'http[].match[].gateways\' are checked. Istio Gateways and
Gateway API Gateways both count here; that istiod binds a VirtualService to no Gateway API Gateway
is RL3018's, and so are references to istiod-generated Gateway names.

A reference holding a look-alike or invisible character (a Cyrillic \'е\', a zero-width space)
is reported with the character; when its ASCII form names a Gateway of the bundle, that one is
suggested and the finding is a **warning**, wherever the namespace.`,
		Bad: `
kind: Gateway
metadata: {name: public-gateway, namespace: istio-system}
---
kind: VirtualService
metadata: {name: shop, namespace: shop}
spec:
  gateways: [public-gateway]   # resolves to shop/public-gateway, which does not exist
`,
		Good: `
spec:
  gateways: [istio-system/public-gateway]
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		g := p.Graph
		gwNamespaces := namespacesWith(g, "Gateway")
		var byNS map[string][]*graph.Resource
		check := func(r *graph.Resource, ref, path string) {
			if ref == meshGateway || ref == "" || strings.Contains(ref, visibility.InternalGatewaySuffix) {
				return // an istiod-generated Gateway name is RL3018's
			}
			name, ns := gatewayKey(ref, r.Namespace)
			if name == "" || ns == "" {
				return // malformed: Istio's validation rejects it
			}
			if g.Get(kinds.Gateway, ns, name) != nil {
				return
			}
			// A name with look-alike characters is shown quoted (an invisible
			// one escaped), and the Gateway its ASCII form names is the one
			// meant, whatever else the namespace holds.
			shown, lookup, prefix := name, name, ""
			var meant *graph.Resource
			codes, why, ascii, odd := lookalike.Reference(ref)
			if odd {
				shown, prefix = strconv.Quote(name), why+" "
				if ascii != "" {
					aName, aNS := gatewayKey(ascii, r.Namespace)
					meant, lookup = g.Get(kinds.Gateway, aNS, aName), aName
				}
			}
			msg := fmt.Sprintf("Gateway %s/%s of VirtualService %s is not in the bundle", ns, shown, objectName(r))
			if odd {
				msg += ": it holds " + codes
			}
			if meant != nil {
				p.ReportDiag(rules.Diagnostic{Resource: r, Path: path, Severity: rules.Warning,
					Message: msg + fmt.Sprintf(" (did you mean %q?)", ascii),
					Detail:  prefix + fmt.Sprintf("Gateway %s is the one meant: the binding programs no proxy and the VirtualService's hosts get no ingress route.", objectName(meant)),
					Related: []rules.Related{relatedObject(meant, fmt.Sprintf("Gateway %s has the ASCII name it imitates", objectName(meant)))}})
				return
			}
			if !gwNamespaces[ns] {
				p.ReportDetail(r, path, msg, prefix+fmt.Sprintf("No Gateway of namespace %q is, so the binding was not checked.", ns))
				return
			}
			if byNS == nil {
				byNS = map[string][]*graph.Resource{}
				for _, gw := range g.OfKind(kinds.Gateway) {
					byNS[gw.Namespace] = append(byNS[gw.Namespace], gw)
				}
			}
			var related []rules.Related
			if near := nearestName(lookup, byNS[ns]); near != nil {
				msg += fmt.Sprintf(" (did you mean %q?)", near.Name)
				related = append(related, relatedObject(near, fmt.Sprintf("Gateway %s has a similar name", objectName(near))))
			}
			p.ReportDiag(rules.Diagnostic{Resource: r, Path: path, Message: msg, Severity: rules.Warning, Related: related,
				Detail: prefix + fmt.Sprintf("The bundle holds other Gateways of namespace %q, so it should be there too: the binding programs no proxy and the VirtualService's hosts get no ingress route.", ns)})
		}
		eachVirtualService(p, func(r *graph.Resource, vs *networkingVS) {
			for i, ref := range vs.GetGateways() {
				check(r, ref, graph.Index("spec.gateways", i))
			}
			for i, h := range vs.GetHttp() {
				for j, m := range h.GetMatch() {
					for k, ref := range m.GetGateways() {
						check(r, ref, graph.Index(graph.Index(graph.Index("spec.http", i)+".match", j)+".gateways", k))
					}
				}
			}
		})
		return nil
	},
}
