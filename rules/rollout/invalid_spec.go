package rollout

import "github.com/rolloutlint/rolloutlint/rules"

// InvalidSpec are the rules whose error findings are checks of Argo Rollouts'
// own validation: a Rollout with one gets the condition InvalidSpec and runs
// no step. `rolloutlint plan` runs them first and does not play such a
// Rollout out. (A rule's warning findings are not rejections.)
var InvalidSpec = []*rules.Rule{
	SetWeightRange, StepAction, PauseDuration, SurgeUnavailableZero, Selector, SameService,
	RequiredServices, CanaryScaleNoRouting, RouteSteps, StringMatch, DynamicStableScale, OneStrategy,
	ExperimentWeight, MaxTrafficWeight, AntiAffinity, ProgressDeadline, PingPongRouter,
	ScaleDownRevisionLimit, NegativeCount, IstioVirtualServiceFields, WorkloadRefAndTemplate,
	PodTemplateNoContainers, WorkloadRefNotFound,
}
