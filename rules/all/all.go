// Package all is the explicit list of every built-in rule, Go and Rego. Adding
// a rule costs one line here, in its theme's section.
package all

import (
	"sort"

	"github.com/rolloutlint/rolloutlint/policies"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/analysis"
	"github.com/rolloutlint/rolloutlint/rules/istio"
	"github.com/rolloutlint/rolloutlint/rules/plan"
	"github.com/rolloutlint/rolloutlint/rules/rollout"
	"github.com/rolloutlint/rolloutlint/rules/tool"
	"github.com/rolloutlint/rolloutlint/rules/traffic"
)

// goRules lists the Go rules, grouped by theme and sorted by ID within each.
var goRules = []*rules.Rule{
	// RL0xxx: the tool itself.
	tool.Syntax,
	tool.NoKind,
	tool.Schema,
	tool.NotManifest,
	tool.Limit,
	tool.APIVersion,
	tool.SuppressionNoReason,
	tool.SuppressionUnused,
	tool.Internal,
	tool.RenderFailed,
	tool.Skipped,
	tool.InvalidName,
	tool.DuplicateObject,

	// RL1xxx: the Rollout spec.
	rollout.SetWeightRange,
	rollout.StepAction,
	rollout.PauseDuration,
	rollout.SurgeUnavailableZero,
	rollout.Selector,
	rollout.SameService,
	rollout.RequiredServices,
	rollout.CanaryScaleNoRouting,
	rollout.RouteSteps,
	rollout.StringMatch,
	rollout.DynamicStableScale,
	rollout.IstioVirtualServiceFields,
	rollout.OneStrategy,
	rollout.ExperimentWeight,
	rollout.MaxTrafficWeight,
	rollout.AntiAffinity,
	rollout.ProgressDeadline,
	rollout.PingPongRouter,
	rollout.ScaleDownRevisionLimit,
	rollout.WorkloadRefAndTemplate,
	rollout.NegativeCount,
	rollout.CanaryScaleMode,
	rollout.PodTemplateNoContainers,
	rollout.WorkloadRefNotFound,
	rollout.WorkloadRefScaleDown,
	rollout.ExperimentTemplateInvalid,
	rollout.ExperimentTemplateService,

	// RL2xxx: Rollout ↔ traffic routing.
	traffic.SharedRoute,
	traffic.MissingObject,
	traffic.RouteNotFound,
	traffic.RouteMissingDestination,
	traffic.DeletedDestination,
	traffic.MissingSubset,
	traffic.DestinationRuleHostMismatch,
	traffic.ExtraSubset,
	traffic.WeightOverflow,
	traffic.InitialWeights,
	traffic.VersionLabelSelector,
	traffic.SelectorNotInTemplate,
	traffic.SelectsOtherRollout,
	traffic.SharedService,
	traffic.SharedDestinationRule,
	traffic.ManagedRouteClash,
	traffic.ManagedDestinationRuleShadowed,
	traffic.ManagedRouteShadowsRoute,
	traffic.ServiceNotFound,

	// RL3xxx: Istio hygiene.
	istio.DestinationHostUnknown,
	istio.DestinationPort,
	istio.GatewayBypassesSplit,
	istio.GatewayMissing,
	istio.DuplicateMeshHost,
	istio.DuplicateDestinationRule,
	istio.NamespaceShortHost,
	istio.SubsetSelectsNoPods,
	istio.RouteWeights,
	istio.DuplicateRouteDestination,
	istio.GatewayHostShadowed,
	istio.VirtualServiceHostNotInGateway,
	istio.DestinationRuleHostUnknown,
	istio.DestinationHostNotExported,
	istio.VirtualServiceNotExportedToGateway,
	istio.SubsetUndefinedForClient,
	istio.SidecarBypassesVirtualService,
	istio.GatewayAPIGatewayBinding,
	istio.VirtualServiceUnreachableRule,
	istio.VirtualServiceIneffectiveMatch,

	// RL4xxx: analysis.
	analysis.TemplateNotFound,
	analysis.ArgUnresolved,
	analysis.ArgUndeclared,
	analysis.ArgConflict,
	analysis.ArgValueAndValueFrom,
	analysis.PromQLEmptyLabel,
	analysis.PromQLParse,
	analysis.IstioVersionLabel,
	analysis.IstioWorkload,
	analysis.IstioStableService,
	analysis.IstioSubsetMixed,
	analysis.MetricLimits,
	analysis.MetricProvider,
	analysis.MetricDuplicate,
	analysis.MetricIndefinite,
	analysis.ResultIndexUnguarded,
	analysis.ConditionShape,
	analysis.AnalysisArgFieldRefUnresolved,
	analysis.PrometheusDryRun, // live: runs only with lint --prometheus-url

	// RL6xxx: step plan and xDS prediction.
	plan.MissingDestination,
	plan.SplitWindow,
	plan.GatewayFanout,
}

// Rules returns every built-in rule sorted by ID: the Go rules above and the
// embedded Rego policies (RL5xxx), which policies adapts to rules. policies
// imports rules and the model but never this package, so there is no cycle.
func Rules() []*rules.Rule {
	out := append([]*rules.Rule(nil), goRules...)
	out = append(out, policies.Builtin()...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
