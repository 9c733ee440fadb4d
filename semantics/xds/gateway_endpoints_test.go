package xds_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// predictScenario predicts a conformance scenario's one Rollout.
func predictScenario(t *testing.T, scenario, version string) *xds.Prediction {
	t.Helper()
	g, err := load.Paths([]string{filepath.Join("..", "..", "testdata", "xds-conformance", "scenarios", scenario+".yaml")}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plans := plan.Build(g)
	if len(plans) != 1 {
		t.Fatalf("want 1 plan, got %d", len(plans))
	}
	m, err := xds.ForVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	return xds.Predict(m, xds.NewScoper(g), plans[0])
}

// TestEndpointsKeyReachesBlindGateway: on 1.31 the ingress gateway cannot
// see web-canary (exportTo shop,frontend), yet istiod keeps the Endpoints
// key for it. Recorded (1.31.0, header-mirror): the abort push, merged with
// the VirtualService key, sent the gateway EDS for every CLA it watches;
// the endpoints-only pushes of web-canary sent it nothing.
func TestEndpointsKeyReachesBlindGateway(t *testing.T) {
	pr := predictScenario(t, "header-mirror", "1.31")
	if len(pr.Abort) == 0 || len(pr.Abort[0].Pushes) == 0 {
		t.Fatal("no abort push")
	}
	abort := pr.Abort[0].Pushes[0]
	reached, types, eds := abort.ForProxy(xds.Gateway, "istio-system")
	if !reached || eds != xds.EDSAll || !slices.Contains(types, xds.EDS) {
		t.Errorf("abort push to the gateway: reached %v, types %v, EDS %s; want reached, EDS all", reached, types, eds)
	}
	n := 0
	for _, sp := range pr.States {
		for _, p := range sp.Pushes {
			if !slices.Equal(p.Keys, []string{"Endpoints/web-canary.shop.svc.cluster.local"}) {
				continue
			}
			n++
			if reached, types, _ := p.ForProxy(xds.Gateway, "istio-system"); reached {
				t.Errorf("endpoints-only push of a host the gateway cannot see reaches it with %v", types)
			}
		}
	}
	if n == 0 {
		t.Error("no endpoints-only push of web-canary")
	}
}

// TestMergedEndpointsKeyIsAServiceUpdate: on 1.28 a VirtualService key alone
// sends a gateway no CDS, but an EndpointSlice update (keyed ServiceEntry)
// merged into the same full push does. Recorded (1.28.2, additional-subsets,
// promote push 1): the gateway got CDS, EDS and LDS.
func TestMergedEndpointsKeyIsAServiceUpdate(t *testing.T) {
	pr := predictScenario(t, "additional-subsets", "1.28")
	var found bool
	for _, sp := range pr.States {
		for _, p := range sp.Pushes {
			if !slices.Equal(p.Keys, []string{"ServiceEntry/pay.pay.svc.cluster.local", "VirtualService/pay/pay"}) || !p.Class.IsFull() {
				continue
			}
			found = true
			_, types, _ := p.ForProxy(xds.Gateway, "istio-system")
			if !slices.Contains(types, xds.CDS) {
				t.Errorf("merged push sends the gateway %v, want CDS among them", types)
			}
		}
	}
	if !found {
		t.Fatal("no full push keyed by pay's ServiceEntry and the VirtualService")
	}
}

// TestLateSliceCarriesPodChanges: with ping-pong Services the first canary
// step moves pong's selector and scales the canary up in one reconcile. When
// pong's EndpointSlice lands after the debounce window, the new pod is in
// that slice too. Recorded (1.31.0, pingpong, after): the selector's push is
// keyed ServiceEntry/ticket-pong only and changes nothing; the slice follows.
func TestLateSliceCarriesPodChanges(t *testing.T) {
	pr := predictScenario(t, "pingpong", "1.31")
	var late []xds.Push
	for _, sp := range pr.States {
		if len(sp.IfLate) > 0 {
			late = sp.IfLate
			break
		}
	}
	if len(late) < 2 {
		t.Fatalf("no late-slice pushes: %+v", late)
	}
	if got := late[0]; !slices.Equal(got.Keys, []string{"ServiceEntry/ticket-pong.events.svc.cluster.local"}) || len(got.Effective) != 0 {
		t.Errorf("selector push with a late slice: keys %v, changes %v; want only pong's ServiceEntry key, no change", got.Keys, got.Effective)
	}
	if got := late[1]; !slices.Equal(got.Keys, []string{"Endpoints/ticket-pong.events.svc.cluster.local"}) || !slices.Equal(got.Effective, []xds.Type{xds.EDS}) {
		t.Errorf("late slice push: keys %v, changes %v; want pong's Endpoints key, EDS", got.Keys, got.Effective)
	}
}
