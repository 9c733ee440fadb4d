package rollout

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// ExperimentWeight reports experiment template weights that the Rollout's
// traffic routing cannot honour.
var ExperimentWeight = &rules.Rule{
	ID: "RL1014", Name: "experiment-weight-routing", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout", "traffic"},
	Summary: "An experiment template sets weight without trafficRouting, or with a router other than Istio, SMI, ALB or a plugin.",
	Doc: rules.Doc{
		Why: `An experiment template's \'weight\' sends a share of traffic to the experiment's own
ReplicaSet. That needs a router that can add a third destination: Istio, SMI, ALB or a
plugin. Without \'trafficRouting\' Argo Rollouts rejects the Rollout ("Experiment template
weight cannot be set unless TrafficRouting is enabled"); with nginx, Apisix, Ambassador,
App Mesh or Traefik it rejects it too. The Rollout is \'InvalidSpec\'.`,
		Bad: `
    canary:
      steps:
      - experiment:
          templates:
          - {name: baseline, specRef: stable, weight: 10}
`,
		Good: `
    canary:
      steps:
      - experiment:
          templates:
          - {name: baseline, specRef: stable}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachStep(p, func(r *graph.Resource, ro *v1alpha1.Rollout, i int, s *v1alpha1.CanaryStep, path string) {
			if s.Experiment == nil {
				return
			}
			tr := routingOf(ro)
			for k, t := range s.Experiment.Templates {
				if t.Weight == nil {
					continue
				}
				at := graph.Index(path+".experiment.templates", k) + ".weight"
				switch {
				case tr == nil:
					p.ReportDetail(r, at, fmt.Sprintf("step %d: experiment template %q sets weight %d, but the Rollout has no trafficRouting", i, t.Name, *t.Weight),
						"No router can send that share; Argo Rollouts marks the Rollout InvalidSpec. Drop weight or add traffic routing.")
				case !anyRouter(tr, "istio", "smi", "alb", "plugins"):
					p.ReportDetail(r, at, fmt.Sprintf("step %d: experiment template %q sets weight %d, which %s routing cannot send", i, t.Name, *t.Weight, routerList(tr)),
						"Only Istio, SMI, ALB and plugin routing weight experiment destinations; Argo Rollouts marks the Rollout InvalidSpec.")
				}
			}
		})
		return nil
	},
}
