package istio

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/routematch"
)

// VirtualServiceUnreachableRule reports VirtualService routes that never
// take traffic because earlier routes take all of it.
var VirtualServiceUnreachableRule = &rules.Rule{
	ID: "RL3019", Name: "virtualservice-unreachable-rule", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds:   []string{kinds.VirtualService},
	Tags:    []string{"istio"},
	Summary: "A VirtualService route is never used: it follows a catch-all route, or earlier routes take every request its matches accept.",
	Doc: rules.Doc{
		Why: `Envoy tries a VirtualService's routes in order and the first route whose matches accept a request
takes it. A route placed after a route without \'match\' (a catch-all), a second route without
\'match\', and a route each of whose matches an earlier match already accepts never take any
traffic: whatever they route to, retry or rewrite is dead configuration, and a canary split
written there moves nothing. This is \'istioctl analyze\' IST0130 (VirtualServiceUnreachableRule,
from istiod's validation, pkg/config/validation/validation.go): istioctl compares identical
matches and URI prefixes; rolloutlint decides coverage condition by condition (an earlier match
with fewer or looser conditions — no URI or a shorter prefix, no header or a presence-only one,
no port — covers a later, narrower one), so it also finds routes shadowed by a broader header or
method match. Regular expressions cover only the same expression. tls and tcp routes are compared
by identical matches.

Argo Rollouts adds its \'setHeaderRoute\' and \'setMirrorRoute\' routes in front of these while a
step runs; what they shadow is RL2018's.

Fix: move the narrower route before the broader one, or delete it.`,
		Bad: `
http:
- name: primary            # no match: takes every request
  route:
  - destination: {host: reviews}
- name: beta               # never used
  match: [{headers: {x-beta: {exact: "1"}}}]
  route:
  - destination: {host: reviews-beta}
`,
		Good: `
http:
- name: beta
  match: [{headers: {x-beta: {exact: "1"}}}]
  route:
  - destination: {host: reviews-beta}
- name: primary
  route:
  - destination: {host: reviews}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachVirtualService(p, func(r *graph.Resource, vs *networkingVS) {
			for _, list := range routeAnalysesOf(p.Graph, r, vs) {
				for _, u := range list.res.Unreachable {
					by := list.name(u.By)
					var why string
					switch u.Reason {
					case routematch.SecondCatchAll:
						why = fmt.Sprintf("it has no match, and neither has the earlier %s, which takes every request", by)
					case routematch.AfterCatchAll:
						why = fmt.Sprintf("it follows %s, which has no match and takes every request", by)
					default:
						why = fmt.Sprintf("every request its matches accept is taken by an earlier route first (%s)", by)
					}
					p.ReportDetail(r, list.path(u.Route), fmt.Sprintf("%s of VirtualService %s is never used", list.name(u.Route), objectName(r)),
						fmt.Sprintf("%s (istioctl IST0130: %s).", strings.ToUpper(why[:1])+why[1:], u.Reason),
						rules.RelatedAt(r, list.path(u.By), list.name(u.By)+" takes the traffic"))
				}
			}
		})
		return nil
	},
}

// routeList is one of a VirtualService's route lists, ready for routematch.
type routeList struct {
	kind   string
	routes []routematch.Route
	vs     *networkingVS // for the http routes' names
}

// name names route i for messages (routeName), built only for a finding.
func (l routeList) name(i int) string {
	if l.kind == "http" {
		return routeName("http", i, l.vs.GetHttp()[i].GetName())
	}
	return routeName(l.kind, i, "")
}

func (l routeList) path(i int) string { return graph.Index("spec."+l.kind, i) }

func (l routeList) matchPath(i, j int) string { return graph.Index(l.path(i)+".match", j) }

// analyzedList is a route list with its routematch analysis, which RL3019
// (the unreachable routes) and RL3020 (the ineffective matches) both read.
type analyzedList struct {
	routeList
	res routematch.Result
}

// analysesMemo holds the analyzed route lists of every VirtualService,
// made once for the two rules. Read only.
var analysesMemo = graph.NewMemo[vsAnalyses]("istio.routeAnalyses")

// vsAnalyses is analyzeRoutes of each of g.OfKind(VirtualService), in that
// order.
type vsAnalyses struct {
	vss   []*graph.Resource
	lists [][]analyzedList
}

// routeAnalysesOf returns analyzeRoutes(vs) for a VirtualService r of g
// whose spec is vs, from the memo. The slice is shared: do not modify it.
func routeAnalysesOf(g *graph.Graph, r *graph.Resource, vs *networkingVS) []analyzedList {
	all := analysesMemo.Get(g, func() vsAnalyses {
		vss := g.OfKind(kinds.VirtualService)
		m := vsAnalyses{vss: vss, lists: make([][]analyzedList, len(vss))}
		for i, r := range vss {
			if o := r.VirtualService(); o != nil {
				m.lists[i] = analyzeRoutes(&o.Spec)
			}
		}
		return m
	})
	if i := r.KindPos(); i < len(all.vss) && all.vss[i] == r && r.VirtualService() != nil {
		return all.lists[i]
	}
	return analyzeRoutes(vs) // not one of g's VirtualServices
}

// analyzeRoutes analyzes each of a VirtualService's route lists.
func analyzeRoutes(vs *networkingVS) []analyzedList {
	lists := vsRouteLists(vs)
	if len(lists) == 0 {
		return nil
	}
	out := make([]analyzedList, len(lists))
	for i, l := range lists {
		out[i] = analyzedList{routeList: l, res: routematch.Analyze(l.routes)}
	}
	return out
}

// vsRouteLists returns a VirtualService's http, tls and tcp route lists.
func vsRouteLists(vs *networkingVS) []routeList {
	var out []routeList
	if len(vs.GetHttp()) > 0 {
		l := routeList{kind: "http", vs: vs, routes: make([]routematch.Route, 0, len(vs.GetHttp()))}
		for i, h := range vs.GetHttp() {
			l.routes = append(l.routes, routematch.Route{Matches: h.GetMatch(), ID: i})
		}
		out = append(out, l)
	}
	if len(vs.GetTls()) > 0 {
		l := routeList{kind: "tls", routes: make([]routematch.Route, 0, len(vs.GetTls()))}
		for i, t := range vs.GetTls() {
			m := make([]proto.Message, 0, len(t.GetMatch()))
			for _, x := range t.GetMatch() {
				m = append(m, x)
			}
			l.routes = append(l.routes, routematch.Route{L4: m, ID: i})
		}
		out = append(out, l)
	}
	if len(vs.GetTcp()) > 0 {
		l := routeList{kind: "tcp", routes: make([]routematch.Route, 0, len(vs.GetTcp()))}
		for i, t := range vs.GetTcp() {
			m := make([]proto.Message, 0, len(t.GetMatch()))
			for _, x := range t.GetMatch() {
				m = append(m, x)
			}
			l.routes = append(l.routes, routematch.Route{L4: m, ID: i})
		}
		out = append(out, l)
	}
	return out
}
