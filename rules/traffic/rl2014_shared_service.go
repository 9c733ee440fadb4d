package traffic

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// SharedService reports a Service that more than one Rollout references.
var SharedService = &rules.Rule{
	ID: "RL2014", Name: "shared-service", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.Service}, Tags: tags,
	Summary: "A Service is the stable/canary/active/preview Service of two or more Rollouts.",
	Doc: rules.Doc{
		Why: `Argo Rollouts owns the selector of every Service a Rollout names: it writes its own
\'rollouts-pod-template-hash\' into it and marks it \'argo-rollouts.argoproj.io/managed-by-rollouts\'.
When two Rollouts name the same Service, the second is refused ("Service is managed by another
Rollout", \'InvalidSpec\'), or — while the annotation is absent — the two controllers overwrite
each other's hash and the Service flips between the two applications' pods.

Fix: give each Rollout its own stable and canary Services.`,
		Bad: `
# Rollouts cart and checkout
canary:
  stableService: shop-stable
  canaryService: shop-canary
`,
		Good: `
canary:
  stableService: checkout-stable
  canaryService: checkout-canary
`,
	},
	Since: "v0.1.0",
	// A Rollout's findings depend on it and on lookups (the Service's users)
	// only: the sharing is reported on the first user, found by lookup.
	Sharded: true,
	Run: func(p *rules.Pass) error {
		x := p.Graph.Refs()
		for _, rr := range p.Rollouts() {
			for _, s := range rr.Services {
				if s.Target == nil {
					continue
				}
				rel, names := othersRelated(x.ServiceUsers(s.Target), rr, func(o *graph.RolloutRefs) string { return roleOf(o, s.Target) },
					func(o *graph.RolloutRefs) string { return "Rollout " + o.Rollout.Name + " also uses this Service" })
				if len(names) == 0 {
					continue
				}
				p.ReportDetail(rr.Rollout, s.Path, fmt.Sprintf("Service %s/%s is also used by Rollout %s", s.Target.Namespace, s.Target.Name, strings.Join(names, ", ")),
					"The controllers overwrite each other's selector.", rel...)
			}
		}
		return nil
	},
}

// roleOf returns the field path where a Rollout names a Service.
func roleOf(rr *graph.RolloutRefs, svc *graph.Resource) string {
	for _, s := range rr.Services {
		if s.Target == svc {
			return s.Path
		}
	}
	return "metadata.name"
}
