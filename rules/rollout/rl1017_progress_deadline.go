package rollout

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// defaultProgressDeadline is Argo Rollouts' default progressDeadlineSeconds.
const defaultProgressDeadline = 600

// ProgressDeadline reports progressDeadlineSeconds not above minReadySeconds.
var ProgressDeadline = &rules.Rule{
	ID: "RL1017", Name: "progress-deadline", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout"},
	Summary: "progressDeadlineSeconds (default 600) is not greater than minReadySeconds.",
	Doc: rules.Doc{
		Why: `A pod counts as available only \'minReadySeconds\' after it is ready, and the Rollout is
declared stuck after \'progressDeadlineSeconds\' (default 600) without progress. A deadline
that is not longer than \'minReadySeconds\' can never be met; Argo Rollouts rejects it ("must
be greater than minReadySeconds") and the Rollout is \'InvalidSpec\'.`,
		Bad: `
spec:
  minReadySeconds: 900
`,
		Good: `
spec:
  minReadySeconds: 900
  progressDeadlineSeconds: 1800
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			deadline := int32(defaultProgressDeadline)
			if ro.Spec.ProgressDeadlineSeconds != nil {
				deadline = *ro.Spec.ProgressDeadlineSeconds
			}
			if deadline > ro.Spec.MinReadySeconds || deadline < 0 || ro.Spec.MinReadySeconds < 0 {
				return // negative values are RL1021's
			}
			if ro.Spec.ProgressDeadlineSeconds == nil {
				p.ReportDetail(r, "spec.minReadySeconds", fmt.Sprintf("minReadySeconds %d is not below the default progressDeadlineSeconds %d", ro.Spec.MinReadySeconds, deadline),
					"The Rollout could never make progress in time; Argo Rollouts marks it InvalidSpec. Raise progressDeadlineSeconds.")
				return
			}
			p.ReportDetail(r, "spec.progressDeadlineSeconds", "progressDeadlineSeconds "+itoa(int(deadline))+" is not greater than minReadySeconds "+itoa(int(ro.Spec.MinReadySeconds)),
				"No pod could become available before the deadline; Argo Rollouts marks the Rollout InvalidSpec.",
				rules.RelatedAt(r, "spec.minReadySeconds", "minReadySeconds"))
		})
		return nil
	},
}
