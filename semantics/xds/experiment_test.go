package xds_test

import (
	"slices"
	"testing"

	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// TestExperimentServicePushes: an experiment's Service (scenario
// experiment, recorded on 1.31.0). Its creation, with its ReplicaSet's
// not-ready pods in the same reconcile, is one config push keyed
// ServiceEntry/<host> that sends no EDS (nobody watches the new cluster's
// CLA yet) and changes CDS, EDS, LDS and RDS; the pods turning ready are an
// endpoints-only push. Its deletion merges the slice's Endpoints update and
// does send EDS. Removing the rule that folds the not-ready pods into the
// creation makes the first push carry an Endpoints key as well.
func TestExperimentServicePushes(t *testing.T) {
	pr := predictScenario(t, "experiment", "1.31")
	const host = "cart-<canary-hash>-<revision>-2-baseline.shop.svc.cluster.local"
	step := pr.States[4] // before, start, step 0, step 1, step 2 (the experiment)
	if len(step.Pushes) != 3 {
		t.Fatalf("experiment step: %d pushes, want 3 (create, ready, weights)", len(step.Pushes))
	}
	create := step.Pushes[0]
	if !slices.Equal(create.Keys, []string{"ServiceEntry/" + host}) || create.Class != xds.ClassConfig || create.EDS != xds.EDSNone {
		t.Errorf("create push: keys %v class %s eds %s", create.Keys, create.Class, create.EDS)
	}
	if !slices.Equal(create.Effective, []xds.Type{xds.CDS, xds.EDS, xds.LDS, xds.RDS}) {
		t.Errorf("create push changes %v", create.Effective)
	}
	if _, types, _ := create.ForProxy(xds.Gateway, "istio-system"); !slices.Equal(types, []xds.Type{xds.CDS, xds.LDS}) {
		t.Errorf("create push to the gateway: %v", types)
	}
	if _, types, _ := create.ForProxy(xds.Sidecar, "client"); !slices.Equal(types, []xds.Type{xds.CDS, xds.LDS, xds.RDS}) {
		t.Errorf("create push to a sidecar: %v", types)
	}
	if ready := step.Pushes[1]; !slices.Equal(ready.Keys, []string{"Endpoints/" + host}) || ready.Class != xds.ClassEndpointsOnly {
		t.Errorf("ready push: keys %v class %s", ready.Keys, ready.Class)
	}
	next := pr.States[5].Pushes
	last := next[len(next)-1]
	if !slices.Equal(last.Keys, []string{"Endpoints/" + host, "ServiceEntry/" + host}) || last.EDS != xds.EDSPartial {
		t.Errorf("delete push: keys %v eds %s", last.Keys, last.EDS)
	}
	if _, types, _ := last.ForProxy(xds.Sidecar, "shop"); !slices.Equal(types, []xds.Type{xds.CDS, xds.EDS, xds.LDS, xds.RDS}) {
		t.Errorf("delete push to a sidecar: %v", types)
	}
}
