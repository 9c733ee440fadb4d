package istio

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// DestinationPort reports destination ports a Service lacks, and missing
// destination ports on multi-port Services.
var DestinationPort = &rules.Rule{
	ID: "RL3002", Name: "destination-port", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.VirtualService, kinds.Service, kinds.ServiceEntry}, Tags: []string{"istio"},
	Summary: "A VirtualService destination names a port its Service lacks, or omits the port of a multi-port Service.",
	Doc: rules.Doc{
		Why: `Istio names the cluster of a destination \'outbound|<port>||<host>\'. The port must be one of the
Service's \'ports[].port\' (not a \'targetPort\' or container port) or of the ServiceEntry's \'ports[].number\':
any other number names a cluster that does not exist and the route answers \'503 NC\'.

When the destination has no port and the Service exposes exactly one, Istio uses it. With several
ports it uses the port the request arrived on. Inside the mesh that is usually the Service port
(works by accident), but on an ingress gateway it is the gateway's listener port (80, 443), which the
Service rarely has: ingress traffic fails with \'503 NC\'. rolloutlint therefore reports a missing
port on a multi-port Service as an error for gateway-bound VirtualServices and as a warning for
mesh-only ones. \'istioctl analyze\' has the same checks (IST0101 host:port, IST0112) but only against
live Services.

Destinations whose Service is not in the bundle are not checked.`,
		Bad: `
kind: Service
metadata: {name: reviews}
spec:
  ports:
  - {name: http, port: 80, targetPort: 8080}
  - {name: grpc, port: 9090}
---
kind: VirtualService
spec:
  gateways: [public]
  http:
  - route:
    - destination: {host: reviews}                   # which port?
    - destination: {host: reviews, port: {number: 8080}}  # the targetPort, not a Service port
`,
		Good: `
  http:
  - route:
    - destination: {host: reviews, port: {number: 80}}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		g := p.Graph
		wildcards := wildcardServiceEntries(g)
		// Every destination's ports are listed here, read in its
		// iteration and dropped: one buffer serves them all.
		var portBuf [8]servicePort
		eachVirtualService(p, func(r *graph.Resource, vs *networkingVS) {
			bound := gatewayBound(vs)
			for _, d := range destinationsOf(g, r, vs) {
				host := d.Dest.GetHost()
				if host == "" || host == "*" {
					continue
				}
				target, ports := destinationPorts(g, host, r.Namespace, wildcards, portBuf[:0])
				if target == nil || len(ports) == 0 {
					continue
				}
				want := d.Dest.GetPort().GetNumber()
				if want == 0 && len(ports) < 2 || want != 0 && findPort(ports, want) != nil {
					continue // the common case: nothing to report, no message to build
				}
				what := target.Kind + " " + objectName(target)
				related := func() rules.Related {
					return relatedObject(target, fmt.Sprintf("%s exposes %s", what, portList(ports)))
				}
				if want == 0 {
					diag := rules.Diagnostic{Resource: r, Path: d.Path(), Related: []rules.Related{related()},
						Message: fmt.Sprintf("destination %q of %s sets no port, but %s exposes %s", host, d.Route(), what, portList(ports))}
					if bound {
						diag.Detail = "On the gateway Istio uses the listener port and ingress requests get 503 NC. Set destination.port.number."
					} else {
						diag.Severity = rules.Warning
						diag.Detail = "Istio falls back to the port each request arrived on. Set destination.port.number."
					}
					p.ReportDiag(diag)
					continue
				}
				detail := fmt.Sprintf("It exposes %s; requests get 503 NC.", portList(ports))
				for _, sp := range ports {
					if sp.target == int64(want) {
						detail += fmt.Sprintf(" %d is the targetPort of port %d.", want, sp.number)
						break
					}
				}
				p.ReportDetail(r, d.Path()+".port.number", fmt.Sprintf("destination %q of %s routes to port %d, which %s does not expose", host, d.Route(), want, what),
					detail, related())
			}
		})
		return nil
	},
}

// servicePort is one port a destination may name.
type servicePort struct {
	number int64
	name   string
	target int64 // numeric targetPort, 0 when named or unset
}

// destinationPorts resolves a destination host to the Service (or else the
// ServiceEntry) of the bundle that serves it, and its ports.
// The ports are appended to out.
func destinationPorts(g *graph.Graph, host, ns string, wildcards map[string]*graph.Resource, out []servicePort) (*graph.Resource, []servicePort) {
	if svc := g.ServiceForHost(host, ns); svc != nil {
		s := svc.Service()
		if s == nil {
			return nil, nil
		}
		for _, sp := range s.Spec.Ports {
			out = append(out, servicePort{number: int64(sp.Port), name: sp.Name, target: int64(targetPortNumber(sp.TargetPort))})
		}
		return svc, out
	}
	ses := serviceEntriesFor(g, host, graph.FQDN(host, ns), wildcards)
	if len(ses) == 0 {
		return nil, nil
	}
	se, _ := ses[0].Typed.(*kinds.ServiceEntryObject)
	if se == nil {
		return nil, nil
	}
	for _, sp := range se.Spec.GetPorts() {
		out = append(out, servicePort{number: int64(sp.GetNumber()), name: sp.GetName(), target: int64(sp.GetTargetPort())})
	}
	return ses[0], out
}

// targetPortNumber is tp.IntValue() without its failed parse of a port name
// (an error allocated for every "http"): a name that cannot be a number is 0.
func targetPortNumber(tp intstr.IntOrString) int {
	if tp.Type == intstr.String && (tp.StrVal == "" || !strings.ContainsAny(tp.StrVal[:1], "+-0123456789")) {
		return 0
	}
	return tp.IntValue()
}

// findPort returns the port numbered n, or nil.
func findPort(ports []servicePort, n uint32) *servicePort {
	for i := range ports {
		if ports[i].number == int64(n) {
			return &ports[i]
		}
	}
	return nil
}

// portList renders ports as `ports 80 (http), 9090 (grpc)`.
func portList(ports []servicePort) string {
	parts := make([]string, 0, len(ports))
	for _, sp := range ports {
		s := strconv.FormatInt(sp.number, 10)
		if sp.name != "" {
			s += " (" + sp.name + ")"
		}
		parts = append(parts, s)
	}
	if len(parts) == 1 {
		return "port " + parts[0]
	}
	return "ports " + strings.Join(parts, ", ")
}
