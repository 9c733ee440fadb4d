package traffic

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// SharedDestinationRule reports a DestinationRule managed by more than one
// Rollout.
var SharedDestinationRule = &rules.Rule{
	ID: "RL2015", Name: "shared-destination-rule", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.DestinationRule}, Tags: tags,
	Summary: "Two or more Rollouts manage the same DestinationRule.",
	Doc: rules.Doc{
		Why: `A Rollout in subset mode rewrites the whole subset list of its DestinationRule, keeping only its
own stable and canary subsets, and labels them with its own pod-template hashes. Two Rollouts
sharing one DestinationRule strip each other's subsets and overwrite each other's hashes on
every update: the other application's routes fail with 503 \'NC\' or reach the wrong pods.

Fix: one DestinationRule per Rollout (and per host).`,
		Bad: `
# Rollouts cart and checkout
destinationRule: {name: shop, stableSubsetName: stable, canarySubsetName: canary}
`,
		Good: `
destinationRule: {name: checkout, stableSubsetName: stable, canarySubsetName: canary}
`,
	},
	Since: "v0.1.0",
	// A Rollout's findings depend on it and on lookups (the DestinationRule's
	// users) only: the sharing is reported on the first user, found by lookup.
	Sharded: true,
	Run: func(p *rules.Pass) error {
		x := p.Graph.Refs()
		for _, rr := range p.Rollouts() {
			dr := rr.DestinationRule
			if dr == nil || dr.Target == nil {
				continue
			}
			rel, names := othersRelated(x.DestinationRuleUsers(dr.Target), rr, func(o *graph.RolloutRefs) string { return o.DestinationRule.Path },
				func(o *graph.RolloutRefs) string { return "Rollout " + o.Rollout.Name + " also manages it" })
			if len(names) == 0 {
				continue
			}
			p.ReportDetail(rr.Rollout, dr.Path, fmt.Sprintf("DestinationRule %s/%s is also managed by Rollout %s", dr.Target.Namespace, dr.Target.Name, strings.Join(names, ", ")),
				"Each Rollout removes the other's subsets.", rel...)
		}
		return nil
	},
}
