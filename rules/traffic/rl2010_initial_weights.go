package traffic

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/weights"
)

// InitialWeights reports managed routes whose weights in git are not the
// controller's resting state: totalling 100 with the canary at 0.
var InitialWeights = &rules.Rule{
	ID: "RL2010", Name: "initial-weights", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.VirtualService}, Tags: tags,
	Summary: "A managed route's weights in git do not total 100.",
	Doc: rules.Doc{
		Why: `Argo Rollouts computes a managed route's stable weight as 100 minus the canary, experiment
and additional-subset weights, so a route committed with weights that total something else is
not the route the controller will write: the first reconcile rewrites it, and until then Istio
splits traffic in proportions nobody chose (a total above 100 is rejected by Istio's validation
in some versions, normalised in others).

A non-zero canary weight committed mid-rollout is a GitOps ownership problem and is reported
by RL5001.

Fix: commit weights that total 100: the stable destination at 100 (minus additional subsets),
the canary at 0.`,
		Bad: `
route:
- destination: {host: checkout-stable}
  weight: 70
- destination: {host: checkout-canary}
  weight: 10
`,
		Good: `
route:
- destination: {host: checkout-stable}
  weight: 100
- destination: {host: checkout-canary}
  weight: 0
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachManagedRoute(p, func(m managedRoute) {
			if len(m.Dests) < 2 {
				return // a single destination receives everything whatever its weight
			}
			rel := rules.RelatedAt(m.Refs.Rollout, m.Route.Path, "Rollout "+m.Refs.Rollout.Name+" manages this route")
			var sum int32
			for _, d := range m.Dests {
				sum += d.Weight
			}
			if sum != weights.Total {
				p.ReportDiag(rules.Diagnostic{Resource: m.VS.Target, Path: m.Dests[0].Path(), Related: []rules.Related{rel},
					Message: fmt.Sprintf("the weights of %s total %d, not %d", m.label(), sum, weights.Total)})
			}
		})
		return nil
	},
}
