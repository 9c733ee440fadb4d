package xds

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/semantics/plan"
)

// TestEndpointsSim follows a host-level canary's hosts through the writes
// that change their endpoints and checks how each change is classified.
func TestEndpointsSim(t *testing.T) {
	stable, canary := "s.default.svc.cluster.local", "c.default.svc.cluster.local"
	start := plan.State{StableReplicas: 4, Labels: []plan.RevisionLabel{
		{Object: plan.Object{Kind: "Service", Namespace: "default", Name: "s"}, Hash: plan.OldHash},
		{Object: plan.Object{Kind: "Service", Namespace: "default", Name: "c"}, Hash: plan.OldHash},
	}}
	sim := newEndpointsSim(start)
	steps := []struct {
		w    plan.Write
		want []endpointEvent
	}{
		// The canary Service moves to a revision with no pods: its endpoints go.
		{plan.Write{Kind: plan.WriteServiceSelector, Hosts: []string{canary}, Old: plan.OldHash, New: plan.NewHash},
			[]endpointEvent{{canary, Emptied, StageSlice}}},
		// Its first pods join a host with no endpoints (istiod: no shard).
		{plan.Write{Kind: plan.WriteScale, Object: plan.Object{Name: "r-" + plan.NewHash}, Hosts: []string{canary}, Old: "0", New: "2"},
			[]endpointEvent{{canary, NotReadyToEmpty, StageWrite}, {canary, TurnedReady, StageReady}}},
		// More pods join a host that has endpoints.
		{plan.Write{Kind: plan.WriteScale, Object: plan.Object{Name: "r-" + plan.NewHash}, Hosts: []string{canary}, Old: "2", New: "4"},
			[]endpointEvent{{canary, NotReadyAdded, StageWrite}, {canary, TurnedReady, StageReady}}},
		// The stable Service moves from 4 old pods to 4 new ones.
		{plan.Write{Kind: plan.WriteServiceSelector, Hosts: []string{stable}, Old: plan.OldHash, New: plan.NewHash},
			[]endpointEvent{{stable, Reselected, StageSlice}}},
		// A scale-down terminates pods, then deletes them.
		{plan.Write{Kind: plan.WriteScale, Object: plan.Object{Name: "r-" + plan.NewHash}, Hosts: []string{canary, stable}, Old: "4", New: "3"},
			[]endpointEvent{{canary, Terminating, StageWrite}, {canary, Deleted, StageDeleted}, {stable, Terminating, StageWrite}, {stable, Deleted, StageDeleted}}},
	}
	for i, s := range steps {
		got := sim.apply(s.w)
		if len(got) != len(s.want) {
			t.Fatalf("step %d: got %v, want %v", i, got, s.want)
		}
		for j := range got {
			if got[j] != s.want[j] {
				t.Errorf("step %d event %d: got %v, want %v", i, j, got[j], s.want[j])
			}
		}
	}
	if n := sim.count(canary); n != 3 {
		t.Errorf("canary host holds %d endpoints, want 3", n)
	}
	// A host whose Service selects every revision counts both.
	if n := sim.count("dr-host.default.svc.cluster.local"); n != 7 {
		t.Errorf("unmanaged host holds %d endpoints, want 7 (4 old + 3 new)", n)
	}
}
