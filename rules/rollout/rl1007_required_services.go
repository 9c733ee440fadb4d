package rollout

import (
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// RequiredServices reports Service fields a strategy needs but leaves empty.
var RequiredServices = &rules.Rule{
	ID: "RL1007", Name: "required-services", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout", "traffic"},
	Summary: "canaryService/stableService (or ping/pong, or blueGreen activeService) missing where the strategy needs them.",
	Doc: rules.Doc{
		Why: `Traffic routing splits traffic between two Services whose selectors Argo Rollouts pins to the
stable and the canary ReplicaSet. Istio host-level splitting (no \'destinationRule\'), nginx,
ALB (without \'pingPong\'), SMI, Apisix, Ambassador, App Mesh and Traefik all need both
\'canaryService\' and \'stableService\'; Argo Rollouts rejects the Rollout otherwise ("Canary
service and Stable service must to be set to use Traffic Routing"). Istio subset-level
splitting (\'destinationRule\') and \'pingPong\' do not. \'pingPong\' needs both its Services, and a
blue-green Rollout needs an \'activeService\'.`,
		Bad: `
    canary:
      stableService: checkout-stable
      trafficRouting:
        istio:
          virtualService: {name: checkout, routes: [primary]}
`,
		Good: `
    canary:
      stableService: checkout-stable
      canaryService: checkout-canary
      trafficRouting:
        istio:
          virtualService: {name: checkout, routes: [primary]}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			if bg := ro.Spec.Strategy.BlueGreen; bg != nil && bg.ActiveService == "" {
				p.ReportDetail(r, "spec.strategy.blueGreen.activeService", "blueGreen strategy of Rollout "+ro.Name+" has no activeService",
					"Argo Rollouts needs the Service that receives production traffic.")
			}
			c := canaryOf(ro)
			if c == nil {
				return
			}
			if pp := c.PingPong; pp != nil {
				for _, f := range []struct{ field, val string }{{"pingService", pp.PingService}, {"pongService", pp.PongService}} {
					if f.val == "" {
						p.ReportDetail(r, canaryPath+".pingPong."+f.field, "pingPong of Rollout "+ro.Name+" has no "+f.field,
							"Ping-pong needs two Services that swap the stable and canary roles.")
					}
				}
			}
			tr := c.TrafficRouting
			if tr == nil || !needsCanaryStable(tr, c.PingPong != nil) {
				return
			}
			why, at := routingReason(tr, c.PingPong != nil)
			for _, f := range []struct{ field, val string }{{"canaryService", c.CanaryService}, {"stableService", c.StableService}} {
				if f.val != "" {
					continue
				}
				p.ReportDetail(r, at, "Rollout "+ro.Name+" has no "+f.field+", which "+why+" needs",
					"It splits traffic between a canary and a stable Service; Argo Rollouts marks the Rollout InvalidSpec. Set "+canaryPath+"."+f.field+".")
			}
		})
		return nil
	},
}

// needsCanaryStable mirrors which routers require both canary and stable
// Services in Argo Rollouts' validation.
func needsCanaryStable(tr *v1alpha1.RolloutTrafficRouting, pingPong bool) bool {
	switch {
	case tr.Istio != nil && tr.Istio.DestinationRule == nil && !pingPong:
		return true
	case tr.ALB != nil && !pingPong:
		return true
	}
	return tr.SMI != nil || tr.Apisix != nil || tr.Ambassador != nil || tr.Nginx != nil || tr.AppMesh != nil || tr.Traefik != nil
}

// routingReason names the router that needs the Services and where it is
// configured.
func routingReason(tr *v1alpha1.RolloutTrafficRouting, pingPong bool) (why, path string) {
	switch {
	case tr.Istio != nil && tr.Istio.DestinationRule == nil && !pingPong:
		return "Istio host-level routing (no destinationRule)", routingPath + ".istio"
	case tr.ALB != nil && !pingPong:
		return "ALB routing", routingPath + ".alb"
	case tr.SMI != nil:
		return "SMI routing", routingPath + ".smi"
	case tr.Nginx != nil:
		return "nginx routing", routingPath + ".nginx"
	case tr.Apisix != nil:
		return "Apisix routing", routingPath + ".apisix"
	case tr.Ambassador != nil:
		return "Ambassador routing", routingPath + ".ambassador"
	case tr.AppMesh != nil:
		return "App Mesh routing", routingPath + ".appMesh"
	}
	return "Traefik routing", routingPath + ".traefik"
}
