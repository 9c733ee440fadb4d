package istio

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/visibility"
)

// SidecarBypassesVirtualService reports namespace-wide Sidecars whose egress
// hosts import a service but not the mesh VirtualService that routes it.
var SidecarBypassesVirtualService = &rules.Rule{
	ID: "RL3017", Name: "sidecar-bypasses-virtualservice", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds:   []string{kinds.Sidecar, kinds.VirtualService, kinds.Service, kinds.ServiceEntry, kinds.ConfigMap, kinds.Rollout},
	Tags:    []string{"istio"},
	Summary: "A Sidecar's egress hosts import a service but not the VirtualService that routes it (it lives in another namespace): its sidecars bypass the routes.",
	Doc: rules.Doc{
		Why: `A Sidecar's egress \'hosts\' (\'namespace/dnsName\') import services by **the service's namespace**
and VirtualServices by **the VirtualService's namespace** (sidecar.go selectServices,
virtualservice.go SelectVirtualServices). When the VirtualService that splits a host lives in
another namespace than the host's Service — a routing namespace, or the client team's own — an
egress entry such as \'shop/*\' imports the Service but not the VirtualService: the sidecars of that
namespace send the host's traffic straight to the Service's endpoints, without the
VirtualService's routes, retries or weights. A canary split Argo Rollouts drives on that
VirtualService does not reach them; they call stable and canary pods alike.

Evaluated for every namespace the Sidecar shapes: its own, or, for a Sidecar of the root
namespace (\'istio-system\' unless the bundle's \'istio\' ConfigMap names another), every namespace
without a Sidecar of its own. Sidecars with a \'workloadSelector\' are not evaluated.

Fix: import the VirtualService's namespace as well (\'routing/reviews.shop.svc.cluster.local\'), or
move the VirtualService to the Service's namespace.`,
		Bad: `
kind: VirtualService
metadata: {name: reviews, namespace: routing}
spec:
  hosts: [reviews.shop.svc.cluster.local]
---
kind: Sidecar
metadata: {name: default, namespace: web}
spec:
  egress:
  - hosts: ["./*", "shop/*"]       # imports reviews, not routing/reviews
`,
		Good: `
  egress:
  - hosts: ["./*", "shop/*", "routing/*"]
`,
	},
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		g := p.Graph
		m := visibility.For(g, p.Globals.IstioVersion)
		root := m.Mesh.RootNamespace
		var managers map[*graph.Resource]*graph.Resource // VirtualService → a Rollout managing it, built for the first finding
		managerOf := func(vs *graph.Resource) *graph.Resource {
			if managers == nil {
				managers = map[*graph.Resource]*graph.Resource{}
				for _, rr := range g.Refs().Rollouts {
					for _, v := range rr.VirtualServices {
						if v.Target != nil && managers[v.Target] == nil {
							managers[v.Target] = rr.Rollout
						}
					}
				}
			}
			return managers[vs]
		}
		var rootClientNS []string // namespaces the root Sidecar shapes
		for _, sc := range g.OfKind(kinds.Sidecar) {
			o, _ := sc.Typed.(*kinds.SidecarObject)
			if o == nil || m.Sidecar(sc.Namespace) != sc {
				continue // a workloadSelector Sidecar, or a second one of its namespace
			}
			clients := []string{sc.Namespace}
			if sc.Namespace == root {
				if rootClientNS == nil {
					for _, ns := range m.Namespaces() {
						if m.Sidecar(ns) == sc {
							rootClientNS = append(rootClientNS, ns)
						}
					}
				}
				clients = rootClientNS
			}
			type finding struct {
				vs  *graph.Resource
				svc *visibility.Service
				hit []string // client namespaces bypassing the VirtualService
			}
			var found []*finding
			byKey := map[[2]any]*finding{}
			for _, c := range clients {
				// Services are imported from the namespaces the egress hosts
				// name; a "*/" import takes the VirtualServices of the same
				// hosts from every namespace too, so it cannot bypass them.
				for _, from := range importedNamespaces(o, c) {
					for _, s := range m.ServicesIn(from) {
						if !m.ImportsService(c, s) {
							continue
						}
						for _, vs := range m.VirtualServicesForHost(s.Host) {
							if !visibility.MeshBound(vs) || !m.VirtualServiceExport(vs).Has(c) || m.ImportsVirtualService(c, vs) {
								continue
							}
							k := [2]any{vs, s}
							f := byKey[k]
							if f == nil {
								f = &finding{vs: vs, svc: s}
								byKey[k] = f
								found = append(found, f)
							}
							f.hit = append(f.hit, c)
						}
					}
				}
			}
			for _, f := range found {
				split := ""
				if ro := managerOf(f.vs); ro != nil {
					split = fmt.Sprintf(" (the canary split of Rollout %s)", objectName(ro))
				}
				who := "its sidecars"
				if sc.Namespace == root {
					who = "the sidecars of " + rootClients(f.hit, clients)
				}
				client := f.hit[0]
				if slices.Contains(f.hit, visibility.Other) {
					client = visibility.Other
				}
				p.ReportDetail(sc, importPath(sc, f.svc, client), fmt.Sprintf(
					"Sidecar %s imports host %s but not VirtualService %s, which routes it", objectName(sc), f.svc.Host, objectName(f.vs)),
					fmt.Sprintf("The host is %s %s and the VirtualService lives in namespace %s: %s call the host without the VirtualService's routes%s.",
						svcKind(f.svc), objectName(f.svc.Resource), f.vs.Namespace, who, split),
					relatedObject(f.vs, fmt.Sprintf("VirtualService %s routes %s", objectName(f.vs), f.svc.Host)))
			}
		}
		return nil
	},
}

// rootClients renders the namespaces a root Sidecar finding covers: hit are
// the evaluated namespaces that bypass, checked all evaluated ones (Other
// standing for every namespace without a Sidecar of its own).
func rootClients(hit, checked []string) string {
	has := map[string]bool{}
	for _, ns := range hit {
		has[ns] = true
	}
	if !has[visibility.Other] {
		if len(hit) == 1 {
			return "namespace " + hit[0] + ", which has no Sidecar of its own,"
		}
		return "namespaces " + strings.Join(hit, ", ") + ", which have no Sidecar of their own,"
	}
	var except []string
	for _, ns := range checked {
		if !has[ns] {
			except = append(except, ns)
		}
	}
	if len(except) == 0 {
		return "every namespace without a Sidecar of its own"
	}
	return "every namespace without a Sidecar of its own but " + strings.Join(except, ", ")
}

// importedNamespaces lists the namespaces a Sidecar's egress hosts import
// from by name, for a proxy of namespace client ("." is the client's).
func importedNamespaces(o *kinds.SidecarObject, client string) []string {
	var out []string
	for _, eg := range o.Spec.GetEgress() {
		for _, h := range eg.GetHosts() {
			ns, _, ok := strings.Cut(h, "/")
			switch {
			case !ok || ns == "*" || strings.HasPrefix(ns, "~"):
				continue
			case ns == ".":
				ns = client
			}
			if ns != visibility.Other && !slices.Contains(out, ns) {
				out = append(out, ns)
			}
		}
	}
	return out
}

// importPath is the field path of the first egress host of a Sidecar that
// imports the service for a client of namespace client.
func importPath(sc *graph.Resource, svc *visibility.Service, client string) string {
	o, _ := sc.Typed.(*kinds.SidecarObject)
	if o == nil {
		return "spec.egress"
	}
	for i, eg := range o.Spec.GetEgress() {
		for j, h := range eg.GetHosts() {
			ns, name, ok := strings.Cut(h, "/")
			if !ok || strings.HasPrefix(ns, "~") {
				continue
			}
			if ns == "*" || ns == svc.Namespace || ns == "." && client == svc.Namespace {
				if name == svc.Host || visibility.SubsetOf(svc.Host, name) {
					return graph.Index(graph.Index("spec.egress", i)+".hosts", j)
				}
			}
		}
	}
	return "spec.egress"
}
