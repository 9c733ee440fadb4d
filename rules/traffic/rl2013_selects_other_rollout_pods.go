package traffic

import (
	"fmt"
	"slices"
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
	// A label set is checked with the first Rollout that has it, found by
	// lookup among the set's owners: a Rollout's findings depend on it and
	// on lookups only.
	Sharded: true,
	Run: func(p *rules.Pass) error {
		g := p.Graph
		x := g.Refs()
		for _, rr := range p.Rollouts() {
			for _, ls := range rolloutLabelSets(g, rr) {
				if owners := labelSetOwners(g, ls); len(owners) > 0 && owners[0] != rr {
					continue // checked with owners[0]
				}
				sel := ls.Labels
				// The Rollouts a label set belongs to are few: a list on the
				// stack, a set only for a Service many Rollouts share.
				var ownerBuf [8]*graph.Resource
				owners := append(ownerBuf[:0], rr.Rollout)
				var ownerSet map[*graph.Resource]bool
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
					// Sharing itself is SharedService's finding.
					if users := x.ServiceUsers(ls.Res); len(users) < len(ownerBuf) {
						for _, o := range users {
							owners = append(owners, o.Rollout)
						}
					} else {
						ownerSet = make(map[*graph.Resource]bool, len(users)+1)
						ownerSet[rr.Rollout] = true
						for _, o := range users {
							ownerSet[o.Rollout] = true
						}
					}
				}
				if len(sel) == 0 {
					continue
				}
				for _, other := range g.RolloutsSelectedBy(ls.Namespace, sel, hashLabel) {
					if ownerSet[other] || ownerSet == nil && slices.Contains(owners, other) {
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
