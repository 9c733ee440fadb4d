package traffic

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// ExtraSubset reports subsets of a Rollout-managed DestinationRule that the
// controller removes.
var ExtraSubset = &rules.Rule{
	ID: "RL2008", Name: "managed-destination-rule-extra-subset", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.DestinationRule}, Tags: tags,
	Summary: "The DestinationRule a Rollout manages has subsets other than stable and canary; the controller removes them.",
	Doc: rules.Doc{
		Why: `When Argo Rollouts updates the DestinationRule named in \'destinationRule.name\' it rewrites the
whole \'subsets\' list with a merge patch that keeps only the stable and canary subsets (plus
subsets of running experiments). Any other subset — including ones listed in
\'additionalSubsetNames\' — disappears at the first update, and routes that use it fail with
503 \'NC\'; a GitOps tool then re-adds it and the two fight.

Fix: keep only the stable and canary subsets in the Rollout-managed DestinationRule; define
other subsets in a DestinationRule the Rollout does not manage.`,
		Bad: `
kind: DestinationRule
metadata: {name: checkout}
spec:
  host: checkout
  subsets:
  - name: stable
  - name: canary
  - name: legacy       # removed by the controller
`,
		Good: `
  subsets:
  - name: stable
  - name: canary
`,
	},
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		for _, rr := range p.Graph.Refs().Rollouts {
			dr := rr.DestinationRule
			if dr == nil || dr.Target == nil {
				continue
			}
			for i, name := range drSubsets(dr.Target) {
				if name == dr.StableSubset || name == dr.CanarySubset {
					continue
				}
				extra := ""
				if contains(dr.AdditionalSubsets, name) {
					extra = " Listing it in additionalSubsetNames does not keep it there."
				}
				p.ReportDiag(rules.Diagnostic{Resource: dr.Target, Path: graph.Index("spec.subsets", i) + ".name",
					Message: fmt.Sprintf("subset %q of DestinationRule %s/%s is not Rollout %s's stable (%q) or canary (%q) subset",
						name, dr.Target.Namespace, dr.Target.Name, rr.Rollout.Name, dr.StableSubset, dr.CanarySubset),
					Detail:  "The controller removes it on its first update." + extra,
					Related: []rules.Related{rules.RelatedAt(rr.Rollout, dr.Path, "Rollout "+rr.Rollout.Name+" manages this DestinationRule")}})
			}
		}
		return nil
	},
}
