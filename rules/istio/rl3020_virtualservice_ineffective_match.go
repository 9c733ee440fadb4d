package istio

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// VirtualServiceIneffectiveMatch reports single matches of a VirtualService
// route that an earlier match makes useless.
var VirtualServiceIneffectiveMatch = &rules.Rule{
	ID: "RL3020", Name: "virtualservice-ineffective-match", Severity: rules.Info, Source: rules.SourceGo,
	Kinds:   []string{kinds.VirtualService},
	Tags:    []string{"istio"},
	Summary: "One match of a VirtualService route never takes effect: an earlier match (of an earlier route, or of the same one) accepts every request it does.",
	Doc: rules.Doc{
		Why: `A route's \'match\' list is a list of alternatives; the first route whose list accepts a request
takes it. A match that an earlier route's match already covers (the same conditions, or fewer
and looser ones) never selects this route. Within one route, a match repeated, or covered by an
earlier alternative (a \'/api/v1/products\' prefix after \'/api/v1/product\' with the same
method), is redundant: the route still works through its other matches, but the match is
misleading — it reads as if it decided something. This is \'istioctl analyze\' IST0131
(VirtualServiceIneffectiveMatch), with coverage decided condition by condition as RL3019
explains. When earlier routes cover all of a route's matches the route itself is unused (RL3019).`,
		Bad: `
http:
- match: [{uri: {prefix: /api}}]
  route: [{destination: {host: api}}]
- match:
  - uri: {prefix: /api/v2}     # taken by the route above
  - uri: {prefix: /v2}
  route: [{destination: {host: api-v2}}]
`,
		Good: `
http:
- match: [{uri: {prefix: /api/v2}}, {uri: {prefix: /v2}}]
  route: [{destination: {host: api-v2}}]
- match: [{uri: {prefix: /api}}]
  route: [{destination: {host: api}}]
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachVirtualService(p, func(r *graph.Resource, vs *networkingVS) {
			for _, list := range routeAnalysesOf(p.Graph, r, vs) {
				for _, in := range list.res.Ineffective {
					how := "accepts every request it does"
					if in.Duplicate {
						how = "is the same match"
					}
					where := list.name(in.By)
					if in.By == in.Route {
						where = "the same route"
					}
					p.ReportDetail(r, list.matchPath(in.Route, in.Match), fmt.Sprintf("match %d of %s in VirtualService %s never takes effect", in.Match, list.name(in.Route), objectName(r)),
						fmt.Sprintf("Match %d of %s %s (istioctl IST0131).", in.ByMatch, where, how),
						rules.RelatedAt(r, list.matchPath(in.By, in.ByMatch), fmt.Sprintf("match %d of %s", in.ByMatch, list.name(in.By))))
				}
			}
		})
		return nil
	},
}
