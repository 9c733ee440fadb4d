package traffic

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	networkingv1 "istio.io/api/networking/v1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/routematch"
)

// ManagedRouteShadowsRoute reports the routes and matches that Argo
// Rollouts' header and mirror routes, put first in the VirtualService while
// a step runs, take the traffic of.
var ManagedRouteShadowsRoute = &rules.Rule{
	ID: "RL2018", Name: "managed-route-shadows-route", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds:   []string{kinds.Rollout, kinds.VirtualService},
	Tags:    tags,
	Summary: "A setHeaderRoute/setMirrorRoute route, which Argo Rollouts puts first in the VirtualService, takes the requests of a VirtualService route (or of a later managed route) while the step runs.",
	Doc: rules.Doc{
		Why: `A \'setHeaderRoute\' step adds an http route matching the step's headers and sending everything to
the canary; a \'setMirrorRoute\' step adds one with the step's method, path and header matches,
the managed route's weighted destinations and a mirror to the canary. Argo Rollouts then orders
the VirtualService so that the routes listed in \'trafficRouting.managedRoutes\' come first, in that
order, before every route of the VirtualService (rollout/trafficrouting/istio: createHeaderRoute,
createMirrorRoute, orderRoutes). While the step runs, Envoy tries them first:

- a VirtualService route whose matches a managed route's match covers (a header route on
  \'x-canary\' and a debugging route on the same header; a mirror route on path prefix \'/api\' and
  an \'/api/admin\' route to another service) loses those requests: they go to the canary, or to
  the weighted split with a mirror, not where the route sends them;
- a managed route listed later in \'managedRoutes\' whose match an earlier one covers never takes
  effect.

Coverage is decided as RL3019 decides it (istioctl IST0130/IST0131 semantics, condition by
condition) on the route list as Argo writes it at each step. Each pair is reported once, at the
first step that causes it.

Fix: give the managed route a narrower match (an extra header), order \'managedRoutes\' from the
narrowest match to the broadest, or move the shadowed route's traffic behind a header the managed
route does not match.`,
		Bad: `
trafficRouting:
  managedRoutes: [{name: mirror-api}]
  istio: {virtualService: {name: api, routes: [primary]}}
steps:
- setMirrorRoute:
    name: mirror-api
    match: [{path: {prefix: /api}}]     # also takes /api/admin
---
http:
- name: admin
  match: [{uri: {prefix: /api/admin}}]
  route: [{destination: {host: admin}}]
- name: primary
  route: [...]
`,
		Good: `
- setMirrorRoute:
    name: mirror-api
    match: [{path: {prefix: /api/v1}}]
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		for _, rr := range p.Rollouts() {
			c := rr.Spec.Spec.Strategy.Canary
			if c == nil || c.TrafficRouting == nil || len(c.TrafficRouting.ManagedRoutes) == 0 {
				continue
			}
			order := c.TrafficRouting.ManagedRoutes
			managedName := map[string]bool{}
			for _, mr := range order {
				managedName[mr.Name] = true
			}
			done := map[string]bool{}
			active := map[string]activeRoute{}
			for i, step := range c.Steps {
				changed, stepPath := "", ""
				switch {
				case step.SetHeaderRoute != nil:
					changed, stepPath = step.SetHeaderRoute.Name, graph.Index("spec.strategy.canary.steps", i)+".setHeaderRoute"
					if len(step.SetHeaderRoute.Match) == 0 {
						delete(active, changed)
					} else {
						active[changed] = activeRoute{kind: "header", step: i, path: graph.Index("spec.strategy.canary.steps", i) + ".setHeaderRoute", matches: headerMatches(step.SetHeaderRoute)}
					}
				case step.SetMirrorRoute != nil:
					changed, stepPath = step.SetMirrorRoute.Name, graph.Index("spec.strategy.canary.steps", i)+".setMirrorRoute"
					if len(step.SetMirrorRoute.Match) == 0 {
						delete(active, changed)
					} else {
						active[changed] = activeRoute{kind: "mirror", step: i, path: graph.Index("spec.strategy.canary.steps", i) + ".setMirrorRoute", matches: mirrorMatches(step.SetMirrorRoute)}
					}
				}
				if changed == "" || len(active) == 0 {
					continue
				}
				for _, vs := range rr.VirtualServices {
					spec := vsSpec(vs.Target)
					if spec == nil || len(spec.GetHttp()) == 0 {
						continue
					}
					// The list as Argo writes it: active managed routes in
					// managedRoutes order, then the VirtualService's own.
					type entry struct {
						managed string // the managed route's name, "" for a VirtualService route
						index   int    // the VirtualService route's index
					}
					var list []routematch.Route
					var entries []entry
					for _, mr := range order {
						if a, ok := active[mr.Name]; ok {
							list = append(list, routematch.Route{Matches: a.matches})
							entries = append(entries, entry{managed: mr.Name})
						}
					}
					for j, h := range spec.GetHttp() {
						if managedName[h.GetName()] {
							continue // removed, or reordered with the managed routes (RL2016)
						}
						list = append(list, routematch.Route{Matches: h.GetMatch()})
						entries = append(entries, entry{index: j})
					}
					res := routematch.Analyze(list)
					report := func(by, covered int, what string) {
						b, v := entries[by], entries[covered]
						if b.managed == "" {
							return // two VirtualService routes: RL3019/RL3020
						}
						key := fmt.Sprintf("%s\x00%s\x00%s\x00%d\x00%s", vs.Target.Namespace+"/"+vs.Target.Name, b.managed, v.managed, v.index, what)
						if done[key] {
							return
						}
						done[key] = true
						a := active[b.managed]
						var victim string
						var rel []rules.Related
						if v.managed != "" {
							victim = fmt.Sprintf("%s route %q (later in managedRoutes)", active[v.managed].kind, v.managed)
							rel = append(rel, rules.RelatedAt(rr.Rollout, active[v.managed].path, fmt.Sprintf("step %d sets %q", active[v.managed].step, v.managed)))
						} else {
							victim = fmt.Sprintf("VirtualService %s %s", objectName(vs.Target), routeName(spec, graph.HTTP, v.index))
							rel = append(rel, rules.RelatedAt(vs.Target, graph.Index("spec.http", v.index), victim))
						}
						dest := "the canary"
						if a.kind == "mirror" {
							dest = "the managed route's weighted split, mirrored to the canary"
						}
						if a.path != stepPath {
							rel = append(rel, rules.RelatedAt(rr.Rollout, a.path, fmt.Sprintf("step %d sets %q", a.step, b.managed)))
						}
						p.ReportDetail(rr.Rollout, stepPath, fmt.Sprintf("from step %d, %s route %q takes %s of %s", i, a.kind, b.managed, what, victim),
							fmt.Sprintf("Argo Rollouts puts it first in VirtualService %s, and its match covers those requests: they go to %s instead.", objectName(vs.Target), dest), rel...)
					}
					for _, in := range res.Ineffective {
						switch {
						case in.By == in.Route:
						case unreachableAll(res, in.Route):
							report(in.By, in.Route, "every request")
						default:
							report(in.By, in.Route, fmt.Sprintf("the requests of match %d", in.Match))
						}
					}
				}
			}
		}
		return nil
	},
}

// activeRoute is a header or mirror route Argo Rollouts has added.
type activeRoute struct {
	kind    string // header | mirror
	step    int
	path    string
	matches []*networkingv1.HTTPMatchRequest
}

func unreachableAll(res routematch.Result, route int) bool {
	for _, u := range res.Unreachable {
		if u.Route == route && u.Reason == routematch.AllMatchesCover {
			return true
		}
	}
	return false
}

// headerMatches are the matches of the route setHeaderRoute adds: one per
// header match (createHeaderRouteMatch).
func headerMatches(h *v1alpha1.SetHeaderRoute) []*networkingv1.HTTPMatchRequest {
	var out []*networkingv1.HTTPMatchRequest
	for _, m := range h.Match {
		out = append(out, &networkingv1.HTTPMatchRequest{Headers: map[string]*networkingv1.StringMatch{m.HeaderName: istioString(m.HeaderValue)}})
	}
	return out
}

// mirrorMatches are the matches of the route setMirrorRoute adds (method,
// path as uri, headers).
func mirrorMatches(m *v1alpha1.SetMirrorRoute) []*networkingv1.HTTPMatchRequest {
	var out []*networkingv1.HTTPMatchRequest
	for _, rm := range m.Match {
		hm := &networkingv1.HTTPMatchRequest{}
		if rm.Method != nil {
			hm.Method = istioString(rm.Method)
		}
		if rm.Path != nil {
			hm.Uri = istioString(rm.Path)
		}
		for k, v := range rm.Headers {
			if hm.Headers == nil {
				hm.Headers = map[string]*networkingv1.StringMatch{}
			}
			v := v
			hm.Headers[k] = istioString(&v)
		}
		out = append(out, hm)
	}
	return out
}

// istioString converts Argo's string match (one of exact, prefix, regex;
// RL1010 reports several or none) to Istio's.
func istioString(s *v1alpha1.StringMatch) *networkingv1.StringMatch {
	switch {
	case s == nil:
		return &networkingv1.StringMatch{}
	case s.Exact != "":
		return &networkingv1.StringMatch{MatchType: &networkingv1.StringMatch_Exact{Exact: s.Exact}}
	case s.Regex != "":
		return &networkingv1.StringMatch{MatchType: &networkingv1.StringMatch_Regex{Regex: s.Regex}}
	case s.Prefix != "":
		return &networkingv1.StringMatch{MatchType: &networkingv1.StringMatch_Prefix{Prefix: s.Prefix}}
	}
	return &networkingv1.StringMatch{}
}
