package rollout

import (
	"fmt"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// NegativeCount reports Rollout counts and durations below zero.
var NegativeCount = &rules.Rule{
	ID: "RL1021", Name: "negative-count", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout"},
	Summary: "replicas, minReadySeconds, revisionHistoryLimit or progressDeadlineSeconds is negative (error), or a strategy delay or count is (warning).",
	Doc: rules.Doc{
		Why: `Counts and durations of a Rollout cannot be negative. Argo Rollouts rejects \'replicas\',
\'minReadySeconds\', \'revisionHistoryLimit\' and \'progressDeadlineSeconds\' below zero ("must be
greater than or equal to 0") and the Rollout is \'InvalidSpec\'. Negative strategy delays and
counts (\'scaleDownDelaySeconds\', \'abortScaleDownDelaySeconds\', \'minPodsPerReplicaSet\',
\'autoPromotionSeconds\') are accepted but make no sense; they are reported as warnings.`,
		Bad: `
spec:
  replicas: -1
`,
		Good: `
spec:
  replicas: 1
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			// check reports a negative value: an error where Argo Rollouts
			// rejects it, a warning where it accepts a value that makes no sense.
			check := func(path string, v *int32) {
				if v == nil || *v >= 0 {
					return
				}
				if strings.HasPrefix(path, "spec.strategy.") {
					p.ReportDiag(rules.Diagnostic{Resource: r, Path: path, Severity: rules.Warning,
						Message: fmt.Sprintf("%s is negative (%d)", path, *v),
						Detail:  "Argo Rollouts accepts a negative count or delay here, but it means nothing: probably a sign mistake."})
					return
				}
				p.ReportDetail(r, path, fmt.Sprintf("%s is negative (%d)", path, *v), "It must be 0 or more; Argo Rollouts marks the Rollout InvalidSpec.")
			}
			s := &ro.Spec
			min := s.MinReadySeconds
			check("spec.replicas", s.Replicas)
			check("spec.minReadySeconds", &min)
			check("spec.revisionHistoryLimit", s.RevisionHistoryLimit)
			check("spec.progressDeadlineSeconds", s.ProgressDeadlineSeconds)
			if c := s.Strategy.Canary; c != nil {
				check(canaryPath+".scaleDownDelaySeconds", c.ScaleDownDelaySeconds)
				check(canaryPath+".abortScaleDownDelaySeconds", c.AbortScaleDownDelaySeconds)
				check(canaryPath+".minPodsPerReplicaSet", c.MinPodsPerReplicaSet)
			}
			if bg := s.Strategy.BlueGreen; bg != nil {
				check("spec.strategy.blueGreen.scaleDownDelaySeconds", bg.ScaleDownDelaySeconds)
				check("spec.strategy.blueGreen.abortScaleDownDelaySeconds", bg.AbortScaleDownDelaySeconds)
				check("spec.strategy.blueGreen.autoPromotionSeconds", &bg.AutoPromotionSeconds)
			}
		})
		return nil
	},
}
