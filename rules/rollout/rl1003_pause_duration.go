package rollout

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// PauseDuration reports pause steps whose duration is negative, unparsable or
// an explicit zero.
var PauseDuration = &rules.Rule{
	ID: "RL1003", Name: "pause-duration", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout"},
	Summary: "A pause step's duration is negative, unparsable (e.g. \"1d\") or an explicit 0.",
	Doc: rules.Doc{
		Why: `A \'pause\' step's \'duration\' is a number of seconds or a Go duration string (\'30s\', \'10m\',
\'1h\'). Argo Rollouts reads anything else (\'1d\', \'10 minutes\') as -1 and rejects the Rollout
with "Duration needs to be greater than 0": the Rollout is \'InvalidSpec\' and no step runs.
A negative number is rejected the same way. An explicit \'duration: 0\' is accepted but
does not pause at all, which is rarely what was meant: \'pause: {}\' (no duration) is
the indefinite pause that waits for \'kubectl argo rollouts promote\'. That case is a warning.`,
		Bad: `
      steps:
      - setWeight: 20
      - pause: {duration: 1d}
      - pause: {duration: -30}
`,
		Good: `
      steps:
      - setWeight: 20
      - pause: {duration: 24h}
      - pause: {}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		// Rollouts repeat a few duration texts: each is parsed once.
		parsed := map[string]int32{}
		eachStep(p, func(r *graph.Resource, _ *v1alpha1.Rollout, i int, s *v1alpha1.CanaryStep, path string) {
			if s.Pause == nil || s.Pause.Duration == nil {
				return
			}
			d := s.Pause.Duration
			secs, ok := d.IntVal, d.Type != intstr.String
			if !ok {
				if secs, ok = parsed[d.StrVal]; !ok {
					secs = s.Pause.DurationSeconds()
					parsed[d.StrVal] = secs
				}
			}
			if secs > 0 {
				return
			}
			at := path + ".pause.duration" // only for a finding
			switch {
			case d.Type == intstr.String && secs < 0 && !isNegativeNumber(d.StrVal):
				p.ReportDetail(r, at, fmt.Sprintf("step %d: pause duration %q is not a number of seconds or a Go duration", i, d.StrVal),
					"Argo Rollouts reads it as -1 and marks the Rollout InvalidSpec. Write seconds (3600) or a duration in s, m or h (1h).")
			case secs < 0:
				p.ReportDetail(r, at, fmt.Sprintf("step %d: pause duration %s is negative", i, d.String()),
					"Argo Rollouts marks the Rollout InvalidSpec and runs no step.")
			case secs == 0:
				p.ReportDiag(rules.Diagnostic{Resource: r, Path: at, Severity: rules.Warning,
					Message: "step " + itoa(i) + ": pause duration " + d.String() + " does not pause",
					Detail:  "Use pause: {} to wait for promotion, or a positive duration."})
			}
		})
		return nil
	},
}

// isNegativeNumber reports whether s is a negative duration Argo can parse
// (so the problem is the sign, not the syntax).
func isNegativeNumber(s string) bool {
	return len(s) > 1 && s[0] == '-' && (v1alpha1.RolloutPause{Duration: &intstr.IntOrString{Type: intstr.String, StrVal: s[1:]}}).DurationSeconds() >= 0
}
