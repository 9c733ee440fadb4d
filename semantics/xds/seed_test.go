package xds_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// predict plans the first Rollout of a testdata/plan fixture under a model.
func predict(t *testing.T, fixture, version string) (*plan.Plan, *xds.Prediction) {
	t.Helper()
	g, err := load.Paths([]string{filepath.Join("..", "..", "testdata", "plan", fixture)}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Problems) > 0 {
		t.Fatalf("fixture has problems: %+v", g.Problems)
	}
	plans := plan.Build(g)
	if len(plans) != 1 {
		t.Fatalf("want 1 plan, got %d", len(plans))
	}
	m, err := xds.ForVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	return plans[0], xds.Predict(m, xds.NewScoper(g), plans[0])
}

// rows renders each state as "label: class[effective] ..." so that a test
// states a whole phase table in a few lines.
func rows(states []plan.State, pushes []xds.StatePushes) []string {
	var out []string
	for i, s := range states {
		label := string(s.Phase)
		if s.Step >= 0 {
			label = fmt.Sprintf("step %d", s.Step)
		}
		var ps []string
		for _, p := range pushes[i].Pushes {
			var eff []string
			for _, t := range p.Effective {
				eff = append(eff, string(t))
			}
			ps = append(ps, fmt.Sprintf("%s[%s]", p.Class, strings.Join(eff, ",")))
		}
		out = append(out, label+": "+strings.Join(ps, " "))
	}
	return out
}

func checkRows(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d:\n got  %s\n want %s", i, got[i], want[i])
		}
	}
}

// TestSeedHostLevel reproduces seed 000's host-level phase table under 1.28.
func TestSeedHostLevel(t *testing.T) {
	p, pr := predict(t, "host-level.yaml", "1.28")
	checkRows(t, rows(p.States, pr.States), []string{
		"before: ",
		// Seed "Canary starts": the new ReplicaSet, at 0 pods. The seed has
		// the canary selector switch here; argo-rollouts v1.10.2 makes it
		// only once the canary has an available pod (conformance/argo).
		"start: ",
		// setWeight 0 leaves the route at 100/0: no write, no push.
		"step 0: ",
		"step 1: ",
		// Seed "Canary 0 -> 50": the canary pods come up while no Service
		// selects them (no push); then, in one reconcile, the canary selector
		// (§9 row 5), its EndpointSlice and the VS weights (§9 row 1) merge
		// into one push (§5: Full wins; EDS stays partial, §2.1): EDS and
		// RDS change, CDS does not (the CDS change recorded before came from
		// a harness sidecar without a pod of its own).
		// Verified against istiod (testdata/xds-conformance, host-level).
		"step 2: partial-full-eds[EDS,RDS]",
		"step 3: ",
		// Seed "Canary 50 -> 100": same pair.
		// The host has endpoints now: the not-ready pods push nothing.
		"step 4: incremental-eds[EDS] full[RDS]",
		// Seed "promoted": stable selector (§9 row 5), its EndpointSlice and
		// the VS reset (§9 row 1) merge into one push (§5: Full wins; EDS
		// stays partial because a VS key is skipped by EDS, §2.1).
		"promote: partial-full-eds[EDS,RDS]",
		// The old pods left every Service's endpoints at the selector switch,
		// so scaling them down changes no EDS (§9 row 7 needs a selecting host).
		"scale-down: ",
	})
	step4 := pr.States[6].Pushes[1]
	// §9 row 1: gateways get LDS+RDS (CDS dropped for routers), no EDS;
	// every gateway is pushed; the VS binds only a gateway, so no sidecar.
	if got := fmt.Sprint(step4.GatewayTypes, step4.SidecarTypes); got != "[LDS RDS] [CDS LDS RDS]" {
		t.Errorf("VS weight push types = %s", got)
	}
	if !step4.Scope.AllGateways || len(step4.Scope.SidecarNamespaces) != 0 {
		t.Errorf("VS weight scope = %+v, want all gateways and no sidecar", step4.Scope)
	}
	if pr.Summary.FullPushes != 3 || pr.Summary.MergedPushes != 2 {
		t.Errorf("summary = %+v", pr.Summary)
	}
}

// TestSeedSubsetLevel reproduces seed 000's subset-level phase table under 1.28.
func TestSeedSubsetLevel(t *testing.T) {
	p, pr := predict(t, "subset-level.yaml", "1.28")
	checkRows(t, rows(p.States, pr.States), []string{
		"before: ",
		"start: ",
		// Seed "Canary starts": DR canary subset label, written by the first
		// reconcile of step 0 (argo-rollouts v1.10.2, conformance/argo).
		// §9 row 3: full push, EDS for all watched clusters (DR blocks
		// partial EDS, §2.1), only EDS effectively changes (subset filtering).
		"step 0: full[EDS]",
		"step 1: ",
		// Seed "Canary 0 -> 50": shared Service endpoints (§9 row 7) then the
		// VS weights (§9 row 1).
		"step 2: incremental-eds[EDS] full[RDS]",
		"step 3: ",
		"step 4: incremental-eds[EDS] full[RDS]",
		// Seed "promoted": DR stable label + VS reset merge into one full push
		// (§5), EDS over every cluster because of the DR key (§2.1).
		"promote: full[EDS,RDS]",
		// The shared Service still selected the old pods (§9 row 7): they
		// terminate (EDS), then their deletion re-sends EDS unchanged.
		"scale-down: incremental-eds[EDS] incremental-eds[]",
	})
	if got := pr.States[2].Pushes[0]; got.EDS != xds.EDSAll || got.Keys[0] != "DestinationRule/default/rollouts-demo" {
		t.Errorf("DR push = %+v", got)
	}
}

// TestVersions checks the §11 drift on the seed examples.
func TestVersions(t *testing.T) {
	cases := []struct {
		fixture, version string
		want             []string
	}{
		// 1.30: DR keys are delta-aware for EDS → the subset label push keeps EDS
		// partial; a VS key blocks partial EDS when merged (§11 1.30).
		// The VS key blocks partial EDS only for the proxies it concerns: the
		// gateways; sidecars still get the partial push.
		{"subset-level.yaml", "1.30", []string{
			"before: ", "start: ", "step 0: partial-full-eds[EDS]", "step 1: ",
			"step 2: incremental-eds[EDS] full[RDS]", "step 3: ", "step 4: incremental-eds[EDS] full[RDS]",
			"promote: partial-full-eds[EDS,RDS]", "scale-down: incremental-eds[EDS] incremental-eds[]",
		}},
		{"host-level.yaml", "1.30", []string{
			"before: ", "start: ", "step 0: ", "step 1: ",
			"step 2: partial-full-eds[EDS,RDS]", "step 3: ", "step 4: incremental-eds[EDS] full[RDS]",
			"promote: partial-full-eds[EDS,RDS]", "scale-down: ",
		}},
		// 1.31: no Full flag; config pushes and endpoints-only pushes (§11 1.31).
		// Verified against istiod 1.31.0 (testdata/xds-conformance/1.31.0/
		// subset-level.json): not-ready pods are sent as UNHEALTHY, so a
		// scale-up is two endpoint pushes that both change EDS; deleting the
		// terminated pods re-sends EDS unchanged.
		{"subset-level.yaml", "1.31", []string{
			"before: ", "start: ", "step 0: config[EDS]", "step 1: ",
			"step 2: endpoints-only[EDS] endpoints-only[EDS] config[RDS]", "step 3: ",
			"step 4: endpoints-only[EDS] endpoints-only[EDS] config[RDS]",
			"promote: config[EDS,RDS]", "scale-down: endpoints-only[EDS] endpoints-only[]",
		}},
	}
	for _, c := range cases {
		t.Run(c.fixture+"@"+c.version, func(t *testing.T) {
			p, pr := predict(t, c.fixture, c.version)
			checkRows(t, rows(p.States, pr.States), c.want)
		})
	}
	if _, err := xds.ForVersion("1.29"); err == nil || !strings.Contains(err.Error(), "1.28, 1.30, 1.31") {
		t.Errorf("unsupported version error = %v", err)
	}
}

// TestHeaderMirrorScope checks managed routes, setCanaryScale and scoping by
// exportTo and Sidecar egress hosts.
func TestHeaderMirrorScope(t *testing.T) {
	p, pr := predict(t, "header-mirror.yaml", "1.28")
	checkRows(t, rows(p.States, pr.States), []string{
		"before: ",
		"start: ",
		// setCanaryScale replicas: the pod comes up while no Service selects
		// it, then the canary selector follows it (§9 row 5) with its
		// EndpointSlice in the same push; only EDS changes (§10).
		"step 0: partial-full-eds[EDS]",
		// Header and mirror routes added/removed: VS change, RDS (§9 row 2).
		"step 1: full[RDS]",
		"step 2: full[RDS]",
		"step 3: ",
		"step 4: full[RDS]",
		"step 5: incremental-eds[EDS]",
		// setWeight 10 with setCanaryScale weight 25 in force: weight only.
		"step 6: full[RDS]",
		// matchTrafficWeight: canary back to ceil(10% of 10) = 1 pod
		// (terminating, then deleted: EDS re-sent unchanged).
		"step 7: incremental-eds[EDS] incremental-eds[]",
		"step 8: incremental-eds[EDS] full[RDS]",
		// The canary to full size, all traffic to it, then in one reconcile
		// the stable selector, the header route's removal and the reset
		// (argo-rollouts v1.10.2, conformance/argo). istiod sees no RDS change
		// in the last push (testdata/xds-conformance/known-differences.txt).
		"promote: incremental-eds[EDS] full[RDS] partial-full-eds[EDS,RDS]",
		"scale-down: ",
	})
	reps := []int32{}
	for _, s := range p.States {
		reps = append(reps, s.CanaryReplicas)
	}
	if got := fmt.Sprint(reps); got != "[0 0 1 1 1 1 1 3 3 1 6 10 10]" {
		t.Errorf("canary replicas = %s", got)
	}
	vsPush := pr.States[3].Pushes[0]
	// VS exportTo [shop, team-a]; team-a's Sidecar imports only ./* and istio-system/*.
	if got := vsPush.Scope.String(); got != "all gateways; sidecars in shop" {
		t.Errorf("VS scope = %q", got)
	}
	// Service exportTo annotation "shop,frontend" limits the canary host's scope.
	if got := pr.States[2].Pushes[0].Scope.String(); got != "gateways in frontend,shop; sidecars in frontend,shop" {
		t.Errorf("canary host scope = %q", got)
	}
	// The stable Service is exported everywhere; team-a's Sidecar drops it.
	if got := pr.States[11].Pushes[2].Scope.String(); got != "all gateways; sidecars in all namespaces except team-a" {
		t.Errorf("promotion scope = %q", got)
	}
}
