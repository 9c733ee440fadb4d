package traffic

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/weights"
)

// WeightOverflow reports steps where canary + experiment + additional weights
// exceed 100, so the controller clamps the stable weight.
var WeightOverflow = &rules.Rule{
	ID: "RL2009", Name: "weight-overflow", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.VirtualService}, Tags: tags,
	Summary: "At a step, the canary weight plus experiment and additional-subset weights exceed 100.",
	Doc: rules.Doc{
		Why: `At each weight change Argo Rollouts writes stable = 100 − canary − experiment weights −
the current weights of destinations kept through \'additionalSubsetNames\', and clamps the
result at 0. When canary + experiment + additional exceeds 100 nothing fails: the stable weight
becomes 0 and the route's weights add up to more than 100 (for example canary 80 + legacy 30 →
0/80/30). Istio expects 100, so the update is rejected or traffic is split in proportions the
step never said; the stable version silently receives no traffic at all.

Fix: lower the step's \'setWeight\' (or the experiment template weights), or the additional
destination's weight, so that they total at most 100.`,
		Bad: `
steps:
- setWeight: 80      # + legacy subset at 30 = 110
---
route:
- destination: {host: checkout, subset: legacy}
  weight: 30
`,
		Good: `
steps:
- setWeight: 70      # 70 + 30 = 100, stable 0 by intent
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		for _, rr := range p.Rollouts() {
			c := rr.Spec.Spec.Strategy.Canary
			if c == nil || c.TrafficRouting == nil || c.TrafficRouting.Istio == nil || len(c.Steps) == 0 {
				continue
			}
			add, addDests, route := heaviestAdditional(rr)
			for _, st := range weights.Plan(c.Steps, add) {
				over := st.Split.Overflow()
				s := st.Split
				if !st.Sets || over == 0 || s.Experiment+s.Additional == 0 {
					continue // a canary weight above 100 on its own is RL1001's finding
				}
				path := graph.Index("spec.strategy.canary.steps", st.Index)
				parts := []string{fmt.Sprintf("canary %d", s.Canary)}
				if c.Steps[st.Index].SetWeight != nil {
					path += ".setWeight"
				} else {
					path += ".experiment"
				}
				if s.Experiment > 0 {
					parts = append(parts, fmt.Sprintf("experiment %d", s.Experiment))
				}
				var rel []rules.Related
				where := ""
				if s.Additional > 0 {
					var names []string
					for _, d := range addDests {
						names = append(names, fmt.Sprintf("%q %d", d.Subset, d.Weight))
						rel = append(rel, rules.RelatedAt(route.VS.Target, d.WeightPath(), fmt.Sprintf("additional subset %q keeps weight %d", d.Subset, d.Weight)))
					}
					parts = append(parts, "additional subsets "+strings.Join(names, ", "))
					where = "In " + route.label() + ", "
				}
				p.ReportDetail(rr.Rollout, path, fmt.Sprintf("step %d: %s add up to %d > %d", st.Index, strings.Join(parts, " + "), s.Sum(), weights.Total),
					fmt.Sprintf("%sArgo clamps stable to 0 and writes weights totalling %d.", where, s.Sum()), rel...)
			}
		}
		return nil
	},
}

// heaviestAdditional returns the weights of the additional-subset
// destinations of the Rollout's managed route where they weigh most (the
// route that overflows first), with the destinations and the route.
func heaviestAdditional(rr *graph.RolloutRefs) ([]int32, []graph.Destination, managedRoute) {
	var best []int32
	var bestDests []graph.Destination
	var bestRoute managedRoute
	var bestSum int32
	for i := range rr.VirtualServices {
		vs := &rr.VirtualServices[i]
		spec := vsSpec(vs.Target)
		if spec == nil {
			continue
		}
		for j := range vs.Routes {
			rt := &vs.Routes[j]
			var ws []int32
			var ds []graph.Destination
			var sum int32
			for _, d := range graph.RouteDestinations(spec, rt.Kind, rt.Index) {
				if classify(rr, d) == roleAdditional {
					ws, ds, sum = append(ws, d.Weight), append(ds, d), sum+d.Weight
				}
			}
			if sum > bestSum {
				best, bestDests, bestSum = ws, ds, sum
				bestRoute = managedRoute{Refs: rr, VS: vs, Route: rt, Spec: spec}
			}
		}
	}
	return best, bestDests, bestRoute
}
