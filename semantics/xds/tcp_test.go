package xds_test

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// TestTCPWeightsChangeLDS: TCP weighted routes are rendered in the listener
// (reference §7, tcp_proxy weighted_clusters), so a TCP weight write is an
// effective LDS change, not RDS.
func TestTCPWeightsChangeLDS(t *testing.T) {
	g := load.Inputs([]load.Input{{Path: "tcp.yaml", Data: []byte(`
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: db}
spec:
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: x}]}
  strategy:
    canary:
      stableService: db-stable
      canaryService: db-canary
      trafficRouting:
        istio:
          virtualService: {name: db, tcpRoutes: [{port: 5432}]}
      steps:
      - setWeight: 25
      - setWeight: 50
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: db}
spec:
  hosts: [db]
  tcp:
  - match: [{port: 5432}]
    route:
    - {destination: {host: db-stable}, weight: 100}
    - {destination: {host: db-canary}, weight: 0}
`)}}, load.Options{})
	if len(g.Problems) > 0 {
		t.Fatalf("problems: %+v", g.Problems)
	}
	p := plan.Build(g)[0]
	m, _ := xds.ForVersion("1.28")
	pr := xds.Predict(m, xds.NewScoper(g), p)
	// The second weight write, alone in its reconcile (the first shares one
	// with the canary selector's switch).
	step := pr.States[3]
	var vsPush *xds.Push
	for i := range step.Pushes {
		if step.Pushes[i].Keys[0] == "VirtualService/default/db" {
			vsPush = &step.Pushes[i]
		}
	}
	if vsPush == nil {
		t.Fatalf("no VirtualService push in %+v", step.Pushes)
	}
	if vsPush.Class != xds.ClassFull || len(vsPush.Effective) != 1 || vsPush.Effective[0] != xds.LDS {
		t.Errorf("TCP weight push = %s %v, want full [LDS]", vsPush.Class, vsPush.Effective)
	}
	// A mesh-bound VS exported everywhere reaches sidecars in every namespace.
	if got := vsPush.Scope.String(); got != "all gateways; sidecars in all namespaces" {
		t.Errorf("scope = %q", got)
	}
}
