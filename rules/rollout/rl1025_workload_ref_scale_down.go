package rollout

import (
	"fmt"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// WorkloadRefScaleDown reports workloadRef.scaleDown values the controller
// ignores, and scale-down modes it cannot apply to the referenced kind.
var WorkloadRefScaleDown = &rules.Rule{
	ID: "RL1025", Name: "workload-ref-scale-down", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds:   []string{kinds.Rollout},
	Tags:    []string{"rollout"},
	Summary: "workloadRef.scaleDown is not never, onsuccess or progressively (so it means never), or asks to scale down a workload that is not a Deployment.",
	Doc: rules.Doc{
		Why: `\'workloadRef.scaleDown\' says what happens to the referenced Deployment during the migration to a
Rollout. The field is a free string: the controller compares it, case-sensitively, with
\'onsuccess\' (scale the Deployment to 0 once the Rollout's first revision is healthy,
rollout/sync.go promoteStable) and \'progressively\' (scale it down as the Rollout's pods become
ready, rollout/replicaset.go); anything else — \'onSuccess\', \'OnSuccess\', a typo — silently means
\'never\', so the Deployment's pods keep running beside the Rollout's and every Service that
selects them keeps sending them traffic.

Both modes scale a **Deployment** of that name (scale_utils.go scaleDeployment uses the apps/v1
Deployments API whatever \'kind\' says): with a ReplicaSet or PodTemplate reference the lookup fails
and the promotion's reconcile returns the error on every sync.`,
		Bad: `
workloadRef:
  apiVersion: apps/v1
  kind: Deployment
  name: checkout
  scaleDown: onSuccess      # not "onsuccess": means never
`,
		Good: `
  scaleDown: onsuccess
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			ref := ro.Spec.WorkloadRef
			if ref == nil || ref.ScaleDown == "" {
				return
			}
			switch ref.ScaleDown {
			case v1alpha1.ScaleDownNever:
				return
			case v1alpha1.ScaleDownOnSuccess, v1alpha1.ScaleDownProgressively:
				if w := resolveWorkloadRef(p.Graph, r, ro); w != nil && w.supported && w.gk.Kind != kinds.Deployment {
					p.ReportDetail(r, "spec.workloadRef.scaleDown", fmt.Sprintf("scaleDown %q of Rollout %s scales down a Deployment, but its workloadRef is %s %s",
						ref.ScaleDown, ro.Name, ref.Kind, ref.Name),
						"The controller scales down a Deployment of that name, which does not exist, and its reconcile fails on every sync after the first promotion.")
				}
				return
			}
			msg := fmt.Sprintf("workloadRef.scaleDown %q of Rollout %s is not never, onsuccess or progressively", ref.ScaleDown, ro.Name)
			detail := fmt.Sprintf("The controller treats it as never, so %s %s keeps its pods.", ref.Kind, ref.Name)
			for _, known := range []string{v1alpha1.ScaleDownOnSuccess, v1alpha1.ScaleDownProgressively, v1alpha1.ScaleDownNever} {
				if strings.EqualFold(ref.ScaleDown, known) {
					detail += fmt.Sprintf(" The value is case-sensitive: write %q.", known)
				}
			}
			p.ReportDetail(r, "spec.workloadRef.scaleDown", msg, detail)
		})
		return nil
	},
}
