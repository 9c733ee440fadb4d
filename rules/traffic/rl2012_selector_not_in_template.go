package traffic

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// SelectorNotInTemplate reports selector or managed-subset labels that the
// Rollout's pod template does not carry.
var SelectorNotInTemplate = &rules.Rule{
	ID: "RL2012", Name: "selector-not-in-template", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.Service, kinds.DestinationRule, kinds.Deployment}, Tags: tags,
	Summary: "A Rollout's Service selector or stable/canary subset requires a label its pod template does not carry.",
	Doc: rules.Doc{
		Why: `A Service (or DestinationRule subset) selects pods by labels; every key it requires must be on
the Rollout's pod template with the same value, or it selects none of the Rollout's pods. For
Services Argo Rollouts refuses the Rollout (\'InvalidSpec\': "Service has unmatch label");
for subsets nothing checks, and traffic sent to the subset fails with 503 \'UH\' (no healthy
upstream). \'rollouts-pod-template-hash\' is exempt: the controller sets it.

Fix: add the label to \'spec.template.metadata.labels\' or remove it from the selector/subset.`,
		Bad: `
kind: Service
spec:
  selector: {app: checkout, tier: web}   # template labels: {app: checkout}
`,
		Good: `
kind: Service
spec:
  selector: {app: checkout}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		for _, rr := range p.Rollouts() {
			tmpl, known := p.Graph.PodLabels(rr.Rollout)
			if !known {
				continue // workloadRef to a Deployment outside the bundle
			}
			for _, ls := range rolloutLabelSets(p.Graph, rr) {
				for _, k := range sortedKeys(ls.Labels) {
					if k == hashLabel {
						continue
					}
					v := ls.Labels[k]
					got, ok := tmpl[k]
					if ok && got == v {
						continue
					}
					msg := fmt.Sprintf("%s requires %s=%s, but Rollout %s's pods have no label %q", ls.What(), k, v, rr.Rollout.Name, k)
					if ok {
						msg = fmt.Sprintf("%s requires %s=%s, but Rollout %s's pods have %s=%s", ls.What(), k, v, rr.Rollout.Name, k, got)
					}
					p.ReportDetail(ls.Res, graph.Key(ls.Path, k), msg, "It selects none of them: the pod template sets their labels.", templateRelated(p.Graph, rr))
				}
			}
		}
		return nil
	},
}
