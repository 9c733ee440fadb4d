package istio

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/visibility"
)

// VirtualServiceNotExportedToGateway reports gateway-bound VirtualServices
// whose exportTo leaves out the namespace the gateway's proxies run in.
var VirtualServiceNotExportedToGateway = &rules.Rule{
	ID: "RL3015", Name: "virtualservice-not-exported-to-gateway", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.VirtualService, kinds.Gateway, kinds.ConfigMap,
		kinds.Deployment, kinds.DaemonSet, kinds.StatefulSet, kinds.ReplicaSet, kinds.Rollout},
	Tags:    []string{"istio"},
	Summary: "A VirtualService bound to a Gateway is not exported to the namespace the Gateway's proxies run in, so they never apply it.",
	Doc: rules.Doc{
		Why: `istiod hands a gateway proxy the VirtualServices bound to its Gateway **and visible in the proxy's
namespace** (push_context.go VirtualServicesForGateway: the private ones of that namespace, the
ones exported to it, the public ones). A VirtualService with \'exportTo: ["."]\' in the
application's namespace, bound to an ingress Gateway whose proxies run in \'istio-system\', is
therefore invisible to the ingress: its hosts get \'404\' (no route) there, and a canary's
weights on it move nothing. \'*\' in \'exportTo\' exports everywhere, else \'~\' in it nowhere. The
mesh config's \'defaultVirtualServiceExportTo\' (from the bundle's \'istio\' ConfigMap) applies when
\'exportTo\' is empty: Istio 1.28 reads only \'.\' (own namespace) or else \'*\' in it, 1.30 and
later the whole list (\'--istio-version\').

The proxies' namespace is the namespace of the bundle's workloads whose pod template carries the
Gateway's \'selector\' labels (istiod matches the selector in every namespace), else the Gateway's
own namespace is assumed (then the finding is a warning); for a reference to an istiod-generated
Gateway of a Gateway API Gateway, the Gateway API Gateway's namespace.

Fix: add the gateway's namespace to \'exportTo\' (\'exportTo: [".", istio-system]\') or drop it.`,
		Bad: `
kind: VirtualService
metadata: {name: reviews, namespace: shop}
spec:
  hosts: [reviews.example.com]
  gateways: [istio-system/public]   # its proxies run in istio-system
  exportTo: ["."]
`,
		Good: `
  exportTo: [".", istio-system]
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		m := visibility.For(p.Graph, p.Globals.IstioVersion)
		eachVirtualService(p, func(r *graph.Resource, vs *networkingVS) {
			export := m.VirtualServiceExport(r)
			if export.IsAll() && len(export.Except()) == 0 {
				return
			}
			for _, gr := range m.Gateways(r) {
				var px visibility.Proxies
				var gwName string
				var rel []rules.Related
				switch {
				case gr.Istio != nil:
					px = m.GatewayProxies(gr.Istio)
					gwName = "Gateway " + objectName(gr.Istio)
					rel = append(rel, relatedObject(gr.Istio, gwName))
					for i, w := range px.Workloads {
						if i < maxRelated-1 {
							rel = append(rel, relatedObject(w, fmt.Sprintf("%s %s carries the Gateway's selector labels", w.Kind, objectName(w))))
						}
					}
				case gr.Internal:
					px = visibility.Proxies{Namespaces: []string{gr.Namespace}}
					gwName = "istiod-generated Gateway " + gr.Namespace + "/" + gr.Name
				default:
					continue // not in the bundle: RL3004
				}
				for _, ns := range px.Namespaces {
					if export.Has(ns) {
						continue
					}
					where := "run"
					sev := rules.Error
					if px.Assumed {
						where, sev = "are assumed to run (no workload of the bundle carries its selector labels)", rules.Warning
					}
					from := "its exportTo"
					if len(vs.GetExportTo()) == 0 {
						from = "the mesh default defaultVirtualServiceExportTo"
						if src := m.Mesh.Source; src != nil {
							rel = append(rel, relatedObject(src, "the mesh config sets defaultVirtualServiceExportTo"))
						}
					}
					p.ReportDiag(rules.Diagnostic{Resource: r, Path: gr.Path, Severity: sev, Related: rel,
						Message: fmt.Sprintf("VirtualService %s is bound to %s but not exported to namespace %s, where its proxies run", objectName(r), gwName, ns),
						Detail: fmt.Sprintf("The proxies %s in namespace %s, but %s exports it to %s only: those proxies never apply it and requests for its hosts get 404 there.",
							where, ns, from, export)})
				}
			}
		})
		return nil
	},
}
