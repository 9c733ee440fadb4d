package traffic

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// RouteNotFound reports route references that do not resolve to exactly one
// route of the VirtualService.
var RouteNotFound = &rules.Rule{
	ID: "RL2003", Name: "route-not-found", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.VirtualService}, Tags: tags,
	Summary: "A route the Rollout manages is not in its VirtualService, or cannot be chosen unambiguously.",
	Doc: rules.Doc{
		Why: `Argo Rollouts finds the routes it manages in the VirtualService: http routes by name
(\'routes\'), tls routes by port and SNI hosts (\'tlsRoutes\'), tcp routes by port
(\'tcpRoutes\'). When \'routes\' is omitted, the VirtualService must have exactly one http route
(not counting the header/mirror routes listed in \'managedRoutes\'), and likewise for tls and tcp.
When a route is not found, or the VirtualService has no http, tls or tcp route at all, the
Rollout is \'InvalidSpec\' ("HTTP Route 'x' is not found in the defined Virtual Service",
"spec.http[] should be set ... it must have exactly one route") and no step runs.

The checks follow the controller's exact conditions (rollout/trafficrouting/istio
ValidateHTTPRoutes, ValidateTlsRoutes, ValidateTcpRoutes, reached from
pkg/apis/rollouts/validation ValidateVirtualService): a kind is validated only when the
VirtualService has that section at all (\'spec.http\', \'spec.tls\', \'spec.tcp\' — an empty list
counts). A TLS- or TCP-only VirtualService therefore accepts a stale \'routes:\' list: the entry is
never used, and is reported as a **warning** (dead configuration), not as an error. When
\'routes\' is omitted and the VirtualService's only non-managed http route is named, Argo accepts
the Rollout but finds no unnamed route to patch: the weights never move (an error here).

Fix: name the route in the VirtualService exactly as the Rollout lists it, or list the routes
the Rollout manages when the VirtualService has several.`,
		Bad: `
# Rollout
virtualService: {name: checkout, routes: [primary]}
---
# VirtualService checkout
http:
- name: main
  route: [...]
`,
		Good: `
virtualService: {name: checkout, routes: [primary]}
---
http:
- name: primary
  route: [...]
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		for _, rr := range p.Rollouts() {
			if len(rr.VirtualServices) == 0 {
				continue // VirtualServices are only resolved for canary Istio routing
			}
			managed := map[string]bool{}
			for _, m := range rr.Spec.Spec.Strategy.Canary.TrafficRouting.ManagedRoutes {
				managed[m.Name] = true
			}
			for _, vs := range rr.VirtualServices {
				spec := vsSpec(vs.Target)
				if spec == nil {
					continue
				}
				// The name and related location are for a finding only.
				vsName := vsLabel(vs)
				relVS := func() rules.Related { return rules.RelatedAt(vs.Target, "metadata.name", vsName.String()) }
				if len(spec.GetHttp())+len(spec.GetTls())+len(spec.GetTcp()) == 0 {
					p.ReportDetail(rr.Rollout, vs.Path, vsName.String()+" has no http, tls or tcp route", "The Rollout has no route to manage.", relVS())
					continue
				}
				for _, rt := range vs.Routes {
					if rt.Absent {
						// Argo Rollouts validates and patches a route kind only
						// when the VirtualService has that section
						// (GetHttpRoutesI/GetTlsRoutesI/GetTcpRoutesI fail, the
						// kind is skipped): the entry is accepted and unused.
						field := routesField(rt.Kind)
						p.ReportDiag(rules.Diagnostic{Resource: rr.Rollout, Path: rt.Path, Severity: rules.Warning, Related: []rules.Related{relVS()},
							Message: fmt.Sprintf("%s has no %s section, so this %s entry is never used", vsName, rt.Kind, field),
							Detail:  "Argo Rollouts skips a route kind the VirtualService does not have and accepts the Rollout: the entry is dead configuration; remove it."})
						continue
					}
					if msg, detail := routeProblem(vs, rt, managed); msg != "" {
						p.ReportDetail(rr.Rollout, rt.Path, msg, detail, relVS())
					}
				}
			}
		}
		return nil
	},
}

// vsLabel names a referenced VirtualService in messages.
type vsLabel graph.VSRef

// String is `VirtualService ns/name`.
func (vs vsLabel) String() string {
	return "VirtualService " + vs.Target.Namespace + "/" + vs.Target.Name
}

// routesField is the Rollout field listing routes of a kind.
func routesField(k graph.RouteKind) string {
	switch k {
	case graph.HTTP:
		return "routes"
	case graph.TLS:
		return "tlsRoutes"
	case graph.TCP:
		return "tcpRoutes"
	}
	return ""
}

// routeProblem says why a route reference does not resolve to exactly one
// route (a message and its detail), or returns "".
func routeProblem(vs graph.VSRef, rt graph.RouteRef, managed map[string]bool) (string, string) {
	vsName := vsLabel(vs) // formatted only for a problem
	spec := vsSpec(vs.Target)
	http := spec.GetHttp()
	if !rt.Implicit {
		if rt.Index >= 0 {
			return "", ""
		}
		switch rt.Kind {
		case graph.HTTP:
			var names []string
			for _, h := range http {
				names = append(names, fmt.Sprintf("%q", h.GetName()))
			}
			if len(names) == 0 {
				return fmt.Sprintf("http route %q is not in %s", rt.Name, vsName), "It has no http route."
			}
			return fmt.Sprintf("http route %q is not in %s", rt.Name, vsName), fmt.Sprintf("Its http routes: %s.", strings.Join(names, ", "))
		case graph.TLS:
			return fmt.Sprintf("no tls route of %s matches port %d with sniHosts %v", vsName, rt.Port, rt.SNIHosts),
				"Argo needs one route whose matches name exactly that port and that set of SNI hosts."
		default:
			return fmt.Sprintf("no tcp route of %s matches port %d", vsName, rt.Port), "Argo needs one route whose matches name exactly that port."
		}
	}
	n := graph.RouteCount(spec, rt.Kind)
	field := routesField(rt.Kind)
	if rt.Kind == graph.HTTP {
		n = 0
		for _, h := range http {
			if !managed[h.GetName()] {
				n++
			}
		}
	}
	switch {
	case n > 1:
		return fmt.Sprintf("%s has %d %s routes and the Rollout lists no %s", vsName, n, rt.Kind, field),
			fmt.Sprintf("Argo requires exactly one route when %s is omitted.", field)
	case rt.Index < 0:
		return fmt.Sprintf("%s has no unnamed %s route for the Rollout to pick", vsName, rt.Kind),
			fmt.Sprintf("Argo Rollouts accepts this but patches no route, so the weights never move; list the route in %s.", field)
	}
	return "", ""
}
