package plan_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
)

func build(t *testing.T, yaml string) *plan.Plan {
	t.Helper()
	g := load.Inputs([]load.Input{{Path: "in.yaml", Data: []byte(yaml)}}, load.Options{})
	if len(g.Problems) > 0 {
		t.Fatalf("input problems: %+v", g.Problems)
	}
	ps := plan.Build(g)
	if len(ps) != 1 {
		t.Fatalf("want 1 plan, got %d", len(ps))
	}
	return ps[0]
}

func fixture(t *testing.T, name string) *plan.Plan {
	t.Helper()
	g, err := load.Paths([]string{filepath.Join("..", "..", "testdata", "plan", name)}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return plan.Build(g)[0]
}

// weights renders a state's first route as "s30 c50 a20" ("w30", the
// target weight, without traffic routing).
func weights(s plan.State) string {
	if len(s.Routes) == 0 {
		return fmt.Sprintf("w%d", s.Weight)
	}
	var out []string
	for _, d := range s.Routes[0].Dests {
		c := "!"
		if !d.Clamped {
			c = ""
		}
		out = append(out, fmt.Sprintf("%c%d%s", d.Role[0], d.Weight, c))
	}
	return strings.Join(out, " ")
}

func TestAdditionalSubsetsAndClamping(t *testing.T) {
	p := fixture(t, "additional-subsets.yaml")
	var got []string
	for _, s := range p.States {
		got = append(got, fmt.Sprintf("%s %s %d/%d", s.Phase, weights(s), s.StableReplicas, s.CanaryReplicas))
	}
	want := []string{
		"before s80 c0 a20 5/0",
		"start s80 c0 a20 5/0",
		// Seed 000 "Additional Subsets": additional 20, setWeight 50 → stable 30, canary 50.
		// dynamicStableScale: canary ceil(50% of 5) = 3; the stable follows
		// the weight the status held when the reconcile began, so it shrinks
		// to ceil(50% of 5) = 3 one reconcile later, in the pause's state
		// (argo-rollouts v1.10.2, testdata/conformance/argo/observed).
		"step s30 c50 a20 5/3",
		"step s30 c50 a20 3/3",
		// 100 − 90 − 20 < 0: stable clamped to 0 (argo-rollouts.md §2c); the total is 110.
		// The stable's step down to 1 lags into the promotion.
		"step s0! c90 a20 3/5",
		"promote s80 c0 a20 1/5",
		"scale-down s80 c0 a20 0/5",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("states:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Abort with dynamicStableScale: the canary keeps the share the
	// available stable pods cannot take (3 of 5 → canary 40), the stable
	// scales back up, and only then does the canary's traffic go to 0.
	var got2 []string
	for _, w := range p.Abort[0].Writes {
		got2 = append(got2, fmt.Sprintf("b%d %s %s→%s", w.Batch, w.Field, w.Old, w.New))
	}
	want2 := "b1 spec.http[0].route[0].weight 30→40|b1 spec.http[0].route[1].weight 50→40|b1 spec.replicas 3→5|" +
		"b2 spec.http[0].route[0].weight 40→80|b2 spec.http[0].route[1].weight 40→0"
	if g := strings.Join(got2, "|"); g != want2 {
		t.Errorf("abort writes:\n%s\nwant:\n%s", g, want2)
	}
}

func TestWritesCarryFieldsAndHosts(t *testing.T) {
	p := fixture(t, "host-level.yaml")
	if start := p.States[1]; len(start.Writes) != 0 {
		t.Errorf("start writes = %+v: the new ReplicaSet starts at 0 pods and nothing else changes", start.Writes)
	}
	// The canary Service follows the new revision once it has an available
	// pod: after the scale-up of setWeight 50, in the reconcile that moves
	// the weights (argo-rollouts v1.10.2 as observed).
	step2 := p.States[4]
	if len(step2.Writes) != 4 {
		t.Fatalf("step 2 writes = %+v", step2.Writes)
	}
	w := step2.Writes[1]
	if w.Kind != plan.WriteServiceSelector || w.Object.Name != "rollouts-demo-canary" ||
		w.Field != `spec.selector["rollouts-pod-template-hash"]` || w.Old != plan.OldHash || w.New != plan.NewHash ||
		fmt.Sprint(w.Hosts) != "[rollouts-demo-canary.default.svc.cluster.local]" || w.Batch != 2 || step2.Writes[2].Batch != 2 {
		t.Errorf("canary selector write = %+v", w)
	}
	promote := p.States[7]
	var kinds []string
	for _, w := range promote.Writes {
		kinds = append(kinds, fmt.Sprintf("%s@%d", w.Kind, w.Batch))
	}
	// Same reconcile: the selector switch and the route reset.
	if got := strings.Join(kinds, " "); got != "service-selector@1 vs-weight@1 vs-weight@1" {
		t.Errorf("promotion writes = %s", got)
	}
}

func TestBasicCanaryRounding(t *testing.T) {
	// Without traffic routing Argo approximates the weight with pod counts,
	// rounding each side up: 10 replicas at 15% → 2 canary + 9 stable
	// (Argo's canary docs), within maxSurge (25% of 10 → 3).
	p := build(t, `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: basic}
spec:
  replicas: 10
  selector: {matchLabels: {app: basic}}
  template:
    metadata: {labels: {app: basic}}
    spec: {containers: [{name: c, image: x}]}
  strategy:
    canary:
      steps:
      - setWeight: 15
      - setWeight: 50
`)
	var got []string
	for _, s := range p.States {
		got = append(got, fmt.Sprintf("%d/%d", s.StableReplicas, s.CanaryReplicas))
	}
	if g := strings.Join(got, " "); g != "10/0 10/0 9/2 5/5 0/10" {
		t.Errorf("replicas = %s", g)
	}
	if p.Split != plan.SplitNone {
		t.Errorf("split = %s", p.Split)
	}
}

func TestExperimentDestinations(t *testing.T) {
	p := build(t, `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: exp}
spec:
  replicas: 2
  selector: {matchLabels: {app: exp}}
  template:
    metadata: {labels: {app: exp}}
    spec: {containers: [{name: c, image: x}]}
  strategy:
    canary:
      stableService: exp-stable
      canaryService: exp-canary
      trafficRouting:
        istio: {virtualService: {name: exp}}
      steps:
      - setWeight: 20
      - experiment:
          templates:
          - {name: baseline, specRef: stable, weight: 10}
      - pause: {}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: exp}
spec:
  hosts: [exp]
  http:
  - route:
    - {destination: {host: exp-stable}, weight: 100}
    - {destination: {host: exp-canary}, weight: 0}
    - {destination: {host: other}, weight: 0}
`)
	var got []string
	for _, s := range p.States[2:5] {
		got = append(got, weights(s))
	}
	// setWeight 20 deletes the foreign destination; the experiment step adds
	// its destination (stable 100 − 20 − 10); it is gone at the next step.
	if g := strings.Join(got, " | "); g != "s80 c20 | s70 c20 e10 | s80 c20" {
		t.Errorf("weights = %s", g)
	}
}

func TestBlueGreen(t *testing.T) {
	p := fixture(t, "bluegreen.yaml")
	var got []string
	for _, s := range p.States {
		var ws []string
		for _, w := range s.Writes {
			ws = append(ws, fmt.Sprintf("%s:%s→%s", w.Object.Name, w.Old, w.New))
		}
		got = append(got, fmt.Sprintf("%s %d/%d %s", s.Phase, s.StableReplicas, s.CanaryReplicas, strings.Join(ws, ",")))
	}
	want := []string{
		"before 3/0 ",
		// The preview Service moves before the new ReplicaSet has pods.
		"start 3/1 api-preview:<stable-hash>→<canary-hash>,api-<canary-hash>:0→1",
		"promote 3/3 api-<canary-hash>:1→3,api-active:<stable-hash>→<canary-hash>",
		"scale-down 0/3 api-<stable-hash>:3→0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("states:\n%s", strings.Join(got, "\n"))
	}
	// An abort scales the new ReplicaSet down and leaves the preview Service on it.
	if len(p.Abort) != 1 || p.Abort[0].CanaryReplicas != 0 || len(p.Abort[0].Writes) != 1 || p.Abort[0].Writes[0].Kind != plan.WriteScale {
		t.Errorf("abort = %+v", p.Abort)
	}
}

func TestWeightArithmetic(t *testing.T) {
	cases := []struct {
		canary, exp, add, want int32
		clamped                bool
	}{
		{50, 0, 20, 30, false}, // seed 000 "Additional Subsets"
		{70, 50, 0, 0, true},   // argo-rollouts.md §2c: stable 0 / canary 70 / exp 50
		{80, 0, 30, 0, true},   // §2c: 0 / 80 / 30
		{0, 0, 0, 100, false},
	}
	for _, c := range cases {
		if w, cl := plan.StableWeight(c.canary, c.exp, c.add); w != c.want || cl != c.clamped {
			t.Errorf("StableWeight(%d,%d,%d) = %d,%v want %d,%v", c.canary, c.exp, c.add, w, cl, c.want, c.clamped)
		}
	}
	for _, c := range [][3]int32{{4, 50, 2}, {5, 50, 3}, {10, 1, 1}, {10, 0, 0}, {3, 100, 3}, {0, 50, 0}} {
		if got := plan.ReplicasForWeight(c[0], c[1]); got != c[2] {
			t.Errorf("ReplicasForWeight(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}
