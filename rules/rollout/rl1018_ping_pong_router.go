package rollout

import (
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// PingPongRouter reports pingPong with a router that cannot swap the two
// Services, and ALB ping-pong without a root Service.
var PingPongRouter = &rules.Rule{
	ID: "RL1018", Name: "ping-pong-router", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout", "traffic"},
	Summary: "pingPong with traffic routing other than Istio, ALB or a plugin, or ALB ping-pong without alb.rootService.",
	Doc: rules.Doc{
		Why: `With \'pingPong\' the two Services swap the stable and canary roles at every promotion, so
the router must be one Argo Rollouts can re-point at either Service: Istio, ALB or a plugin.
With nginx, SMI and the others the Rollout is rejected ("Ping-pong feature works with the
ALB, Istio, and plugin-based traffic routers only"). ALB additionally needs
\'alb.rootService\', the Service the Ingress rule names ("Root service field is required for
the configuration with ALB and ping-pong feature enabled"). Either way the Rollout is
\'InvalidSpec\'.`,
		Bad: `
    canary:
      pingPong: {pingService: app-ping, pongService: app-pong}
      trafficRouting:
        nginx: {stableIngress: app}
`,
		Good: `
    canary:
      pingPong: {pingService: app-ping, pongService: app-pong}
      trafficRouting:
        alb: {ingress: app, servicePort: 80, rootService: app-root}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			c := canaryOf(ro)
			if c == nil || c.PingPong == nil || c.TrafficRouting == nil {
				return
			}
			tr := c.TrafficRouting
			pp := canaryPath + ".pingPong"
			switch {
			case !anyRouter(tr, "istio", "alb", "plugins"):
				p.ReportDetail(r, pp, "pingPong of Rollout "+ro.Name+" needs Istio, ALB or plugin routing, not "+routerList(tr),
					"Argo Rollouts marks the Rollout InvalidSpec.",
					rules.RelatedAt(r, routingPath, "the traffic routing"))
			case tr.ALB != nil && tr.ALB.RootService == "":
				p.ReportDetail(r, routingPath+".alb", "ALB ping-pong of Rollout "+ro.Name+" has no alb.rootService",
					"Ping-pong needs the Service the Ingress rule routes to; Argo Rollouts marks the Rollout InvalidSpec.",
					rules.RelatedAt(r, pp, "pingPong"))
			}
		})
		return nil
	},
}
