// Package all is the explicit list of every built-in rule, Go and Rego. Adding
// a rule costs one line here, in its theme's section.
package all

import (
	"sort"

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/istio"
	"github.com/rolloutlint/rolloutlint/rules/rollout"
	"github.com/rolloutlint/rolloutlint/rules/tool"
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

	// RL1xxx: the Rollout spec.
	rollout.SetWeightRange,
	rollout.StepAction,

	// RL2xxx: Rollout ↔ traffic routing.

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

	// RL4xxx: analysis.

	// RL6xxx: step plan and xDS prediction.
}

// Rules returns every built-in rule sorted by ID. Rego policies are appended by
// the policies package's adapter.
func Rules() []*rules.Rule {
	out := append([]*rules.Rule(nil), goRules...)
	out = append(out, extra()...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// extra returns rules that come from other sources (the Rego policies); it is
// a seam so that package all does not import OPA until the policies exist.
var extra = func() []*rules.Rule { return nil }
