package rollout

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// AntiAffinity reports antiAffinity blocks with not exactly one kind, or a
// preferred weight outside 1..100.
var AntiAffinity = &rules.Rule{
	ID: "RL1016", Name: "anti-affinity", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout"},
	Summary: "antiAffinity sets neither or both of preferred/required, or a preferred weight outside 1..100.",
	Doc: rules.Doc{
		Why: `\'antiAffinity\' keeps new pods away from the nodes of the old ReplicaSet, either as a
preference (with a \'weight\' 1..100 used by the scheduler) or as a requirement. Argo Rollouts
rejects a block with neither or both ("AntiAffinity must have exactly one strategy listed")
and a weight outside 1..100; the Rollout is \'InvalidSpec\'.`,
		Bad: `
    canary:
      antiAffinity:
        preferredDuringSchedulingIgnoredDuringExecution: {weight: 0}
`,
		Good: `
    canary:
      antiAffinity:
        preferredDuringSchedulingIgnoredDuringExecution: {weight: 50}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			check := func(base string, a *v1alpha1.AntiAffinity) {
				if a == nil {
					return
				}
				pref, req := a.PreferredDuringSchedulingIgnoredDuringExecution, a.RequiredDuringSchedulingIgnoredDuringExecution
				prefPath, reqPath := base+".preferredDuringSchedulingIgnoredDuringExecution", base+".requiredDuringSchedulingIgnoredDuringExecution"
				switch {
				case pref == nil && req == nil:
					p.ReportDetail(r, base, "antiAffinity sets neither preferred nor required anti-affinity",
						"Set exactly one of preferredDuringSchedulingIgnoredDuringExecution and requiredDuringSchedulingIgnoredDuringExecution, or remove the block.")
				case pref != nil && req != nil:
					at, other := later(r, prefPath, reqPath)
					p.ReportDetail(r, at, "antiAffinity sets both preferred and required anti-affinity", "Set exactly one.", rules.RelatedAt(r, other, "the other kind"))
				case pref != nil && (pref.Weight < 1 || pref.Weight > 100):
					p.ReportDetail(r, prefPath+".weight", fmt.Sprintf("antiAffinity preferred weight %d is outside 1..100", pref.Weight),
						"Argo Rollouts marks the Rollout InvalidSpec.")
				}
			}
			if c := ro.Spec.Strategy.Canary; c != nil {
				check(canaryPath+".antiAffinity", c.AntiAffinity)
			}
			if bg := ro.Spec.Strategy.BlueGreen; bg != nil {
				check("spec.strategy.blueGreen.antiAffinity", bg.AntiAffinity)
			}
		})
		return nil
	},
}
