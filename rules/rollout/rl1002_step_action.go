package rollout

import (
	"fmt"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// StepAction reports canary steps with no action or with more than one of the
// mutually exclusive ones.
var StepAction = &rules.Rule{
	ID: "RL1002", Name: "step-action", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout"},
	Summary: "A canary step sets no action, or more than one of setWeight, pause, experiment and analysis.",
	Doc: rules.Doc{
		Why: `Each canary step does exactly one thing. Argo Rollouts rejects a step that combines
\'setWeight\', \'pause\', \'experiment\' or \'analysis\' ("Step must have one of the following set"), and
a step with no action at all (often the result of a misspelt key, which RL0003 reports too).
The Rollout becomes \'InvalidSpec\' and does not progress.`,
		Bad: `
      steps:
      - setWeight: 20
        pause: {duration: 5m}
`,
		Good: `
      steps:
      - setWeight: 20
      - pause: {duration: 5m}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachStep(p, func(r *graph.Resource, _ *v1alpha1.Rollout, i int, s *v1alpha1.CanaryStep, path string) {
			var buf [4]string // the four exclusive actions: no allocation
			exclusive := buf[:0]
			if s.SetWeight != nil {
				exclusive = append(exclusive, "setWeight")
			}
			if s.Pause != nil {
				exclusive = append(exclusive, "pause")
			}
			if s.Experiment != nil {
				exclusive = append(exclusive, "experiment")
			}
			if s.Analysis != nil {
				exclusive = append(exclusive, "analysis")
			}
			others := s.SetCanaryScale != nil || s.SetHeaderRoute != nil || s.SetMirrorRoute != nil || s.Plugin != nil
			switch {
			case len(exclusive) > 1:
				p.ReportDetail(r, path+"."+exclusive[1], fmt.Sprintf("step %d combines %s", i, strings.Join(exclusive, " and ")),
					fmt.Sprintf("A step takes exactly one of setWeight, pause, experiment and analysis: split it into %d steps.", len(exclusive)))
			case len(exclusive) == 0 && !others && !actionWritten(r, path):
				p.ReportDetail(r, path, fmt.Sprintf("step %d has no action", i),
					"Set one of setWeight, pause, experiment, analysis, setCanaryScale, setHeaderRoute, setMirrorRoute or plugin.")
			}
		})
		return nil
	},
}

// actionWritten reports a step that names an action whose value did not
// decode (setWeight: "10"): RL0003 reports the type, and the step is not
// one without an action. Only steps that decoded without one get here.
func actionWritten(r *graph.Resource, path string) bool {
	for _, k := range []string{"setWeight", "pause", "experiment", "analysis", "setCanaryScale", "setHeaderRoute", "setMirrorRoute", "plugin"} {
		if r.Exists(path + "." + k) {
			return true
		}
	}
	return false
}
