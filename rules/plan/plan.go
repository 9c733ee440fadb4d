// Package plan holds the RL6xxx rules: hazards that only show when a Rollout's
// steps are played out (semantics/plan) and Istio's reaction to each write is
// predicted (semantics/xds) under the run's Istio version.
package plan

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/rules"
	aplan "github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// predicted returns the bundle's plans and predictions under the run's Istio
// version, shared by every RL6xxx rule of the run.
func predicted(p *rules.Pass) ([]xds.Predicted, *xds.Model, error) {
	m, err := xds.ForVersion(p.Globals.IstioVersion)
	if err != nil {
		return nil, nil, fmt.Errorf("selecting the xDS model: %w", err)
	}
	return xds.ForGraph(p.Graph, m), m, nil
}

// stepName describes a state for messages: "step 2 (setWeight 50)".
func stepName(s aplan.State) string {
	if s.Step >= 0 {
		return fmt.Sprintf("step %d (%s)", s.Step, s.Action)
	}
	return string(s.Phase)
}

// routeName names a route for messages.
func routeName(rt aplan.RouteState) string {
	if rt.Name != "" {
		return fmt.Sprintf("route %q", rt.Name)
	}
	return fmt.Sprintf("route %s[%d]", rt.Kind, rt.Index)
}
