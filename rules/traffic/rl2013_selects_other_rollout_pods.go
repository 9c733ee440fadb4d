package traffic

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// SelectsOtherRollout reports selectors and managed subsets that also select
// the pods of another Rollout.
var SelectsOtherRollout = &rules.Rule{
	ID: "RL2013", Name: "selects-other-rollout-pods", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.Service, kinds.DestinationRule}, Tags: tags,
	Summary: "A Rollout's Service selector or stable/canary subset also matches another Rollout's pods.",
	Doc: rules.Doc{
		Why: `Until the controller adds \'rollouts-pod-template-hash\' (when the Service is created, and again
after every GitOps sync that restores the selector from git), a selector that matches another
Rollout's pod labels sends this application's traffic to the other application's pods too. In
subset mode the host Service is never rewritten by the controller, so its selector plus the
subset labels keep matching the other Rollout's pods for any traffic that does not go through
the subsets. Users see a fraction of requests answered by the wrong application.

Fix: add a label that only this Rollout's pods carry (for example \'app.kubernetes.io/name\') to
the selector and the pod template.`,
		Bad: `
# Rollouts cart and checkout both label pods {team: shop}
kind: Service
metadata: {name: checkout-stable}
spec:
  selector: {team: shop}
`,
		Good: `
spec:
  selector: {team: shop, app: checkout}
`,
	},
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		g := p.Graph
		x := g.Refs()
		type setKey struct {
			res  *graph.Resource
			path string
		}
		seen := map[setKey]bool{}
		for _, rr := range x.Rollouts {
			for _, ls := range rolloutLabelSets(g, rr) {
				sel := ls.Labels
				owners := map[*graph.Resource]bool{rr.Rollout: true}
				if ls.Res.Kind == "DestinationRule" {
					// A subset narrows the endpoints of its host's Service.
					host := ls.Res.DestinationRule().Spec.GetHost()
					svc := g.ServiceForHost(host, ls.Res.Namespace)
					if svc == nil || svc.Service() == nil {
						continue
					}
					sel = map[string]string{}
					for k, v := range svc.Service().Spec.Selector {
						sel[k] = v
					}
					for k, v := range ls.Labels {
						sel[k] = v
					}
					ls.Namespace = svc.Namespace
				} else {
					for _, o := range x.ServiceUsers(ls.Res) {
						owners[o.Rollout] = true // sharing itself is SharedService's finding
					}
				}
				key := setKey{ls.Res, ls.Path}
				if seen[key] || len(sel) == 0 {
					continue
				}
				seen[key] = true
				for _, other := range g.RolloutsSelectedBy(ls.Namespace, sel, hashLabel) {
					if owners[other] {
						continue
					}
					p.ReportDetail(ls.Res, ls.Path, fmt.Sprintf("%s (%s) also matches the pods of Rollout %s/%s", ls.What(), formatLabels(sel), other.Namespace, other.Name),
						fmt.Sprintf("Traffic for Rollout %s reaches the other application's pods whenever %s is not in the selector.", rr.Rollout.Name, hashLabel),
						templateRelated(g, x.ForRollout(other)))
				}
			}
		}
		return nil
	},
}

func formatLabels(m map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}
