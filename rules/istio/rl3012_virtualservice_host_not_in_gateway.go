package istio

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/visibility"
)

// VirtualServiceHostNotInGateway reports VirtualServices bound to a Gateway
// of the bundle that serves none of their hosts.
var VirtualServiceHostNotInGateway = &rules.Rule{
	ID: "RL3012", Name: "virtualservice-host-not-in-gateway", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.VirtualService, kinds.Gateway}, Tags: []string{"istio"},
	Summary: "A VirtualService is bound to a Gateway whose servers accept none of its hosts.",
	Doc: rules.Doc{
		Why: `A Gateway takes from a bound VirtualService only the hosts its servers accept: a server host
\'ns/host\' (\'*/\' any namespace, \'./\' the Gateway's own, no prefix = any) where \'host\' is exact, a
\'*.suffix\' wildcard or \'*\'. When none of the VirtualService's hosts is accepted, the binding programs
nothing and requests for those hosts get \'404\' (no route) at the ingress: the canary never receives
ingress traffic, and neither does stable. Typical causes: a host typo, the VirtualService in a
namespace the server's \'ns/\' prefix excludes, or a Gateway that was narrowed.
\'istioctl analyze\' reports the same (IST0132); rolloutlint names the hosts on both sides.

Only Gateways in the bundle are checked (RL3004 covers missing ones).

A Gateway API Gateway (\'gateway.networking.k8s.io\') is checked against its listeners'
\'hostname\'s the way \'istioctl analyze\' checks it (a listener without a hostname accepts every
host; a wildcard matches either way). Note that istiod does not bind a VirtualService to a Gateway
API Gateway by that name at all (RL3018).`,
		Bad: `
kind: Gateway
metadata: {name: public, namespace: istio-system}
spec:
  servers:
  - port: {number: 80, name: http, protocol: HTTP}
    hosts: ["shop/*.shop.example.com"]
---
kind: VirtualService
metadata: {name: reviews, namespace: books}        # not namespace shop
spec:
  hosts: [reviews.shop.example.com]
  gateways: [istio-system/public]
`,
		Good: `
    hosts: ["shop/*.shop.example.com", "books/reviews.shop.example.com"]
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		g := p.Graph
		accepts := map[*graph.Resource]*gatewayHosts{}
		eachVirtualService(p, func(r *graph.Resource, vs *networkingVS) {
			if len(vs.GetHosts()) == 0 {
				return
			}
			for i, ref := range vs.GetGateways() {
				if ref == meshGateway {
					continue
				}
				name, ns := gatewayKey(ref, r.Namespace)
				gw := g.GetGroup(kinds.GroupIstio, kinds.Gateway, ns, name)
				if gw == nil || gw.Gateway() == nil {
					if k := g.GetGroup(kinds.GroupGatewayAPI, kinds.Gateway, ns, name); k != nil {
						checkListenerHostnames(p, r, vs, k, graph.Index("spec.gateways", i))
					}
					continue
				}
				gh := accepts[gw]
				if gh == nil {
					gh = indexGatewayHosts(gw)
					accepts[gw] = gh
				}
				matched := false
				for _, h := range vs.GetHosts() {
					if gh.accepts(r.Namespace, h) {
						matched = true
						break
					}
				}
				if matched {
					continue
				}
				p.ReportDetail(r, graph.Index("spec.gateways", i),
					fmt.Sprintf("VirtualService %s is bound to Gateway %s, which accepts none of its hosts %s", objectName(r), objectName(gw), quoteList(vs.GetHosts())),
					fmt.Sprintf("To namespace %q the Gateway serves %s: the binding programs no route and ingress requests for these hosts get 404.",
						r.Namespace, quoteList(gh.written)),
					rules.RelatedAt(gw, "spec.servers", fmt.Sprintf("servers of Gateway %s", objectName(gw))))
			}
		})
		return nil
	},
}

// gatewayHosts indexes a Gateway's server hosts by the namespace they admit.
type gatewayHosts struct {
	gwNamespace string
	byNS        map[string]*hostSet // "*" for any namespace
	written     []string
}

// hostSet holds exact hosts, wildcard suffixes and the catch-all `*`.
type hostSet struct {
	exact    map[string]bool
	suffixes map[string]bool // ".example.com" for "*.example.com"
	any      bool
}

// indexGatewayHosts reads a Gateway's server hosts once.
func indexGatewayHosts(gw *graph.Resource) *gatewayHosts {
	gh := &gatewayHosts{gwNamespace: gw.Namespace, byNS: map[string]*hostSet{}}
	for _, s := range gw.Gateway().Spec.GetServers() {
		for _, h := range s.GetHosts() {
			gh.written = append(gh.written, h)
			ns, host := "*", h
			if before, after, ok := strings.Cut(h, "/"); ok {
				ns, host = before, after
				if ns == "." {
					ns = gw.Namespace
				}
			}
			set := gh.byNS[ns]
			if set == nil {
				set = &hostSet{} // its maps are made on their first host
				gh.byNS[ns] = set
			}
			switch {
			case host == "*":
				set.any = true
			case strings.HasPrefix(host, "*."):
				if set.suffixes == nil {
					set.suffixes = map[string]bool{}
				}
				set.suffixes[host[1:]] = true
			default:
				if set.exact == nil {
					set.exact = map[string]bool{}
				}
				set.exact[host] = true
			}
		}
	}
	return gh
}

// narrowerThan reports whether a host of the set falls under a wildcard
// VirtualService host (suffix ".example.com", or "" for `*`). Istio matches
// wildcards both ways; this scans the set, which only wildcard VirtualService
// hosts need.
func (s *hostSet) narrowerThan(suffix string) bool {
	for h := range s.exact {
		if strings.HasSuffix(h, suffix) {
			return true
		}
	}
	for h := range s.suffixes {
		if strings.HasSuffix(h, suffix) {
			return true
		}
	}
	return false
}

// accepts reports whether a server admits a VirtualService host written in
// namespace vsNS.
func (gh *gatewayHosts) accepts(vsNS, host string) bool {
	for _, ns := range []string{"*", vsNS} {
		if set := gh.byNS[ns]; set != nil && set.matches(host, vsNS) {
			return true
		}
	}
	return false
}

// matches reports whether the set admits a VirtualService host written in
// namespace vsNS (short names expanded there).
func (s *hostSet) matches(host, vsNS string) bool {
	if s.any || s.exact[host] {
		return true
	}
	if strings.HasPrefix(host, "*") && s.narrowerThan(host[1:]) {
		return true
	}
	if len(s.exact) > 0 && !strings.Contains(host, ".") && host != "*" {
		var buf [128]byte // the expanded name is only looked up
		if s.exact[string(graph.AppendServiceFQDN(buf[:0], host, vsNS))] {
			return true
		}
	}
	// foo.bar.example.com is admitted by *.bar.example.com and *.example.com;
	// a wildcard VirtualService host *.bar.example.com by the same or broader ones.
	h := strings.TrimPrefix(host, "*")
	for i := strings.IndexByte(h, '.'); i >= 0; {
		if s.suffixes[h[i:]] {
			return true
		}
		j := strings.IndexByte(h[i+1:], '.')
		if j < 0 {
			break
		}
		i += j + 1
	}
	return false
}

// checkListenerHostnames reports a VirtualService bound to a Gateway API
// Gateway none of whose listeners accepts one of its hosts (IST0132's check
// of Gateway API Gateways: a listener without hostname accepts any host).
func checkListenerHostnames(p *rules.Pass, r *graph.Resource, vs *networkingVS, k *graph.Resource, path string) {
	ls := gatewayAPIListeners(k)
	var hostnames []string
	for _, l := range ls {
		if l.hostname == "" {
			return
		}
		hostnames = append(hostnames, l.hostname)
	}
	if len(hostnames) == 0 {
		return // no listener: nothing to compare with
	}
	for _, h := range vs.GetHosts() {
		for _, lh := range hostnames {
			if visibility.Matches(lh, h) {
				return
			}
		}
	}
	p.ReportDetail(r, path, fmt.Sprintf(
		"VirtualService %s is bound to Gateway API Gateway %s, whose listeners accept none of its hosts",
		objectName(r), objectName(k)), fmt.Sprintf("Listener hostnames %s; its hosts %s.", quoteList(hostnames), quoteList(vs.GetHosts())),
		rules.RelatedAt(k, "spec.listeners", fmt.Sprintf("listeners of Gateway API Gateway %s", objectName(k))))
}
