package traffic

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// DeletedDestination reports destinations of a managed route that the
// controller removes on the first weight change.
var DeletedDestination = &rules.Rule{
	ID: "RL2005", Name: "route-destination-deleted", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.VirtualService}, Tags: tags,
	Summary: "A managed route has a destination that is neither stable, canary nor an additional subset: Argo deletes it.",
	Doc: rules.Doc{
		Why: `On every weight change Argo Rollouts rewrites each managed route: the stable and canary
destinations get the step's weights, experiment destinations get theirs, destinations whose
subset is listed in \'destinationRule.additionalSubsetNames\' keep their weight, and **every other
destination is deleted**. A third destination in git (a legacy version, a shadow backend)
silently disappears at the first step, its traffic moves to stable/canary, and a GitOps tool
then fights the controller over it.

Fix: move the extra destination to a route the Rollout does not manage, or (subset mode) list
its subset in \'additionalSubsetNames\'.`,
		Bad: `
route:
- destination: {host: checkout, subset: stable}
  weight: 80
- destination: {host: checkout, subset: canary}
  weight: 0
- destination: {host: checkout, subset: legacy}   # deleted by the controller
  weight: 20
`,
		Good: `
destinationRule:
  name: checkout
  stableSubsetName: stable
  canarySubsetName: canary
  additionalSubsetNames: [legacy]
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachManagedRoute(p, func(m managedRoute) {
			for _, d := range m.Dests {
				if classify(m.Refs, d) != roleOther {
					continue
				}
				what := fmt.Sprintf("host %q", d.Host)
				if d.Subset != "" {
					what += fmt.Sprintf(" subset %q", d.Subset)
				}
				p.ReportDiag(rules.Diagnostic{Resource: m.VS.Target, Path: d.HostPath(),
					Message: fmt.Sprintf("destination %s of %s is not one Rollout %s keeps", what, m.label(), m.Refs.Rollout.Name),
					Detail: fmt.Sprintf("It is not the Rollout's stable, canary or an additional subset, so the controller deletes it (weight %d) at the first weight change.",
						d.Weight),
					Related: []rules.Related{rules.RelatedAt(m.Refs.Rollout, m.Route.Path, "Rollout "+m.Refs.Rollout.Name+" manages this route")}})
			}
		})
		return nil
	},
}
