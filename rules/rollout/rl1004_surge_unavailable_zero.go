package rollout

import (
	"strconv"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// SurgeUnavailableZero reports a canary whose maxSurge and maxUnavailable are
// both zero.
var SurgeUnavailableZero = &rules.Rule{
	ID: "RL1004", Name: "surge-unavailable-zero", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout"},
	Summary: "A canary's maxSurge and maxUnavailable are both 0, so no pod can ever be replaced.",
	Doc: rules.Doc{
		Why: `With \'maxSurge: 0\' the controller may not create a pod above the desired count, and with
\'maxUnavailable: 0\' it may not remove one below it: the canary could never start. Argo
Rollouts rejects the Rollout ("MaxSurge and MaxUnavailable both can not be zero"), marks it
\'InvalidSpec\' and does nothing. Both default to 25%, so this only happens when both are
written. \'"0%"\' counts as zero.`,
		Bad: `
    canary:
      maxSurge: 0
      maxUnavailable: "0%"
`,
		Good: `
    canary:
      maxSurge: 1
      maxUnavailable: 0
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			c := canaryOf(ro)
			if c == nil || c.MaxSurge == nil || c.MaxUnavailable == nil {
				return
			}
			if !isZero(c.MaxSurge) || !isZero(c.MaxUnavailable) {
				return
			}
			surge, unavail := canaryPath+".maxSurge", canaryPath+".maxUnavailable"
			at, other := later(r, surge, unavail)
			p.ReportDetail(r, at, "maxSurge "+c.MaxSurge.String()+" and maxUnavailable "+c.MaxUnavailable.String()+" are both zero",
				"No pod can be added or removed, so Argo Rollouts marks the Rollout InvalidSpec. Allow a surge of at least 1.",
				rules.RelatedAt(r, other, "the other limit set to zero"))
		})
		return nil
	},
}

// isZero reports whether an int-or-percent is zero ("0", 0, "0%").
func isZero(v *intstr.IntOrString) bool {
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v.StrVal), "%"))
	return err == nil && n == 0
}
