package traffic_test

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/traffic"
)

// oddShapes are manifests that are valid YAML and mostly valid schema but
// half-written: empty lists, missing hosts, subsets without labels, routes
// without destinations, a Rollout whose Istio block names nothing.
const oddShapes = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: a, namespace: x}
spec:
  strategy:
    canary:
      trafficRouting:
        istio:
          virtualService: {name: vs, tlsRoutes: [{port: 443}], tcpRoutes: [{port: 5432}]}
          destinationRule: {name: dr}
      steps: [{setWeight: 10}, {experiment: {templates: [{name: t, specRef: canary}]}}]
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: b, namespace: x}
spec:
  strategy:
    canary:
      pingPong: {pingService: p}
      trafficRouting:
        istio: {virtualService: {name: ""}}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: c, namespace: x}
spec:
  strategy: {}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: vs, namespace: x}
spec:
  http:
  - route: []
  - route: [{destination: {}}]
  tls:
  - route: [{destination: {host: ""}}]
  tcp:
  - {}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: dr, namespace: x}
spec:
  subsets: [{name: ""}, {name: stable}]
---
apiVersion: v1
kind: Service
metadata: {name: p, namespace: x}
spec: {}
`

// TestOddShapesDoNotBreakRules runs every traffic rule over half-written
// objects: a rule may report, but must not fail or panic (RL0009).
func TestOddShapesDoNotBreakRules(t *testing.T) {
	g := load.Inputs([]load.Input{{Path: "odd.yaml", Data: []byte(oddShapes)}}, load.Options{})
	rs := []*rules.Rule{
		traffic.SharedRoute, traffic.MissingObject, traffic.RouteNotFound, traffic.RouteMissingDestination,
		traffic.DeletedDestination, traffic.MissingSubset, traffic.DestinationRuleHostMismatch, traffic.ExtraSubset,
		traffic.WeightOverflow, traffic.InitialWeights, traffic.VersionLabelSelector, traffic.SelectorNotInTemplate,
		traffic.SelectsOtherRollout, traffic.SharedService, traffic.SharedDestinationRule, traffic.ManagedRouteClash,
	}
	res := analyzer.Run(g, analyzer.Options{Rules: rs, Mode: rules.ModeCLI})
	reported := 0
	for _, d := range res.Diagnostics {
		if d.RuleID == analyzer.RuleInternal {
			t.Errorf("%s", d.Message)
		}
		if d.Pos.Line < 1 || d.Pos.Column < 1 {
			t.Errorf("%s at %d:%d: no position", d.RuleID, d.Pos.Line, d.Pos.Column)
		}
		reported++
	}
	if reported == 0 {
		t.Error("half-written routes and subsets produced no finding at all")
	}
}
