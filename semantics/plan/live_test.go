package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
)

// liveRollout is a canary Rollout of four replicas over a host-level
// split; liveState its status and objects in the cluster, as the
// controller leaves them paused at step 1 with 20% on the canary.
const liveRollout = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: checkout, namespace: shop}
spec:
  replicas: 4
  selector: {matchLabels: {app: checkout}}
  template:
    metadata: {labels: {app: checkout}}
    spec: {containers: [{name: app, image: "checkout:2"}]}
  strategy:
    canary:
      stableService: checkout-stable
      canaryService: checkout-canary
      trafficRouting: {istio: {virtualService: {name: checkout, routes: [primary]}}}
      steps:
      - setWeight: 20
      - pause: {}
      - setWeight: 50
      - pause: {duration: 10s}
`

const liveRoutes = `---
apiVersion: v1
kind: Service
metadata: {name: checkout-stable, namespace: shop}
spec: {selector: {app: checkout}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: checkout-canary, namespace: shop}
spec: {selector: {app: checkout}, ports: [{port: 80}]}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: checkout, namespace: shop}
spec:
  hosts: [checkout]
  http:
  - name: primary
    route:
    - destination: {host: checkout-stable}
      weight: %d
    - destination: {host: checkout-canary}
      weight: %d
`

func liveStatus(step int, stable, canary string, weight int, abort bool) string {
	return fmt.Sprintf(`status:
  currentStepIndex: %d
  stableRS: %s
  currentPodHash: %s
  abort: %t
  pauseConditions: [{reason: CanaryPauseStep, startTime: "2026-01-02T03:04:05Z"}]
  canary: {weights: {canary: {weight: %d, podTemplateHash: %s}, stable: {weight: %d, podTemplateHash: %s}}}
`, step, stable, canary, abort, weight, canary, 100-weight, stable)
}

func replicaSet(hash string, replicas int) string {
	return fmt.Sprintf(`---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: checkout-%s
  namespace: shop
  labels: {app: checkout, rollouts-pod-template-hash: %s}
  ownerReferences: [{apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: checkout, uid: u, controller: true}]
spec:
  replicas: %d
  selector: {matchLabels: {app: checkout, rollouts-pod-template-hash: %s}}
  template: {metadata: {labels: {app: checkout, rollouts-pod-template-hash: %s}}}
`, hash, hash, replicas, hash, hash)
}

func graphOf(t *testing.T, docs ...string) *graph.Graph {
	t.Helper()
	g := load.Inputs([]load.Input{{Path: "in.yaml", Data: []byte(strings.Join(docs, "\n"))}}, load.Options{})
	for _, p := range g.Problems {
		t.Fatalf("input problem: %+v", p)
	}
	return g
}

// fromLive reads the live state of the only Rollout of live and plans the
// only Rollout of local from it.
func fromLive(t *testing.T, local, live *graph.Graph, newTemplate bool) *plan.Plan {
	t.Helper()
	l, err := plan.ReadLive(live, live.Refs().Rollouts[0])
	if err != nil {
		t.Fatal(err)
	}
	l.NewTemplate = newTemplate
	p := plan.FromLive(local, local.Refs().Rollouts[0], l)
	if p == nil {
		t.Fatal("no plan")
	}
	return p
}

func describe(states []plan.State) []string {
	var out []string
	for _, s := range states {
		line := fmt.Sprintf("%s %d %s %d/%d", s.Phase, s.Step, weights(s), s.StableReplicas, s.CanaryReplicas)
		for _, w := range s.Writes {
			line += fmt.Sprintf(" | %s %s %s→%s", w.Object.Name, w.Field, w.Old, w.New)
		}
		out = append(out, line)
	}
	return out
}

func check(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// Paused at step 1 with 20% on the canary: the plan starts there, with the
// controller's real hashes; the next weight write goes from 80/20, and the
// abort path starts from the live state.
func TestFromLiveMidCanary(t *testing.T) {
	routes := fmt.Sprintf(liveRoutes, 80, 20)
	live := graphOf(t, liveRollout+liveStatus(1, "6d4f8b7c9", "5b9c7d8f4", 20, false)+routes, replicaSet("6d4f8b7c9", 4), replicaSet("5b9c7d8f4", 1))
	local := graphOf(t, liveRollout+routes)
	p := fromLive(t, local, live, false)
	if p.Live == nil || p.Live.Step != 1 || !p.Live.Paused || p.Live.CanaryWeight != 20 || p.Live.StableReplicas != 4 || p.Live.CanaryReplicas != 1 {
		t.Fatalf("live state %+v", p.Live)
	}
	check(t, "states", describe(p.States), []string{
		"live -1 s80 c20 4/1",
		"step 1 s80 c20 4/1",
		"step 2 s50 c50 4/2 | checkout-5b9c7d8f4 spec.replicas 1→2 | checkout spec.http[0].route[0].weight 80→50 | checkout spec.http[0].route[1].weight 20→50",
		"step 3 s50 c50 4/2",
		"promote -1 s100 c0 4/4 | checkout-5b9c7d8f4 spec.replicas 2→4 | checkout spec.http[0].route[0].weight 50→0 | checkout spec.http[0].route[1].weight 50→100 | checkout-stable spec.selector[\"rollouts-pod-template-hash\"] 6d4f8b7c9→5b9c7d8f4 | checkout spec.http[0].route[0].weight 0→100 | checkout spec.http[0].route[1].weight 100→0",
		"scale-down -1 s100 c0 0/4 | checkout-6d4f8b7c9 spec.replicas 4→0",
	})
	if p.AbortFrom != 0 {
		t.Errorf("abort from state %d, want the live state", p.AbortFrom)
	}
	check(t, "abort", describe(p.Abort), []string{
		"abort -1 s100 c0 4/1 | checkout-canary spec.selector[\"rollouts-pod-template-hash\"] 5b9c7d8f4→6d4f8b7c9 | checkout spec.http[0].route[0].weight 80→100 | checkout spec.http[0].route[1].weight 20→0",
		"scale-down -1 s100 c0 4/0 | checkout-canary spec.selector[\"rollouts-pod-template-hash\"] 6d4f8b7c9→5b9c7d8f4 | checkout-5b9c7d8f4 spec.replicas 1→0 | checkout-canary spec.selector[\"rollouts-pod-template-hash\"] 5b9c7d8f4→6d4f8b7c9",
	})
	if !strings.Contains(p.States[0].Action, "at step 1 of 4, paused") {
		t.Errorf("live action %q", p.States[0].Action)
	}
}

// An abort in progress: the plan is the live state and the rest of the
// abort path from it.
func TestFromLiveAborted(t *testing.T) {
	routes := fmt.Sprintf(liveRoutes, 100, 0)
	live := graphOf(t, liveRollout+liveStatus(2, "6d4f8b7c9", "5b9c7d8f4", 0, true)+routes, replicaSet("6d4f8b7c9", 4), replicaSet("5b9c7d8f4", 2))
	p := fromLive(t, graphOf(t, liveRollout+routes), live, false)
	check(t, "states", describe(p.States), []string{"live -1 s100 c0 4/2"})
	check(t, "abort", describe(p.Abort), []string{
		"abort -1 s100 c0 4/2 | checkout-canary spec.selector[\"rollouts-pod-template-hash\"] 5b9c7d8f4→6d4f8b7c9",
		"scale-down -1 s100 c0 4/0 | checkout-canary spec.selector[\"rollouts-pod-template-hash\"] 6d4f8b7c9→5b9c7d8f4 | checkout-5b9c7d8f4 spec.replicas 2→0 | checkout-canary spec.selector[\"rollouts-pod-template-hash\"] 5b9c7d8f4→6d4f8b7c9",
	})
}

// A new pod template on a Rollout at rest: the update starts from the live
// state with the live stable hash; the new revision's hash stays symbolic.
func TestFromLiveNewTemplate(t *testing.T) {
	routes := fmt.Sprintf(liveRoutes, 100, 0)
	live := graphOf(t, liveRollout+liveStatus(4, "6d4f8b7c9", "6d4f8b7c9", 0, false)+routes, replicaSet("6d4f8b7c9", 4))
	local := graphOf(t, strings.Replace(liveRollout, "checkout:2", "checkout:3", 1)+routes)
	p := fromLive(t, local, live, true)
	got := describe(p.States)
	check(t, "first states", got[:3], []string{
		"live -1 s100 c0 4/0",
		"start -1 s100 c0 4/0",
		"step 0 s80 c20 4/1 | checkout-<canary-hash> spec.replicas 0→1 | checkout-canary spec.selector[\"rollouts-pod-template-hash\"] 6d4f8b7c9→<canary-hash> | checkout spec.http[0].route[0].weight 100→80 | checkout spec.http[0].route[1].weight 0→20",
	})
	// Mid-canary, the revision being rolled out is scaled down at the start;
	// with no canary pods available the controller sends all traffic to the
	// stable, then, once the new revision has pods, moves the canary Service
	// from the old canary's hash and sets the step's weight again.
	mid := graphOf(t, liveRollout+liveStatus(1, "6d4f8b7c9", "5b9c7d8f4", 20, false)+fmt.Sprintf(liveRoutes, 80, 20),
		replicaSet("6d4f8b7c9", 4), replicaSet("5b9c7d8f4", 1))
	p = fromLive(t, local, mid, true)
	got = describe(p.States)
	check(t, "first states mid-canary", got[:3], []string{
		"live -1 s80 c20 4/0",
		"start -1 s80 c20 4/0 | checkout-5b9c7d8f4 spec.replicas 1→0",
		"step 0 s80 c20 4/1 | checkout spec.http[0].route[0].weight 80→100 | checkout spec.http[0].route[1].weight 20→0 | checkout-<canary-hash> spec.replicas 0→1 | checkout-canary spec.selector[\"rollouts-pod-template-hash\"] 5b9c7d8f4→<canary-hash> | checkout spec.http[0].route[0].weight 100→80 | checkout spec.http[0].route[1].weight 0→20",
	})
}

func TestReadLiveNeedsStatus(t *testing.T) {
	g := graphOf(t, liveRollout)
	if _, err := plan.ReadLive(g, g.Refs().Rollouts[0]); err == nil || !strings.Contains(err.Error(), "not reconciled") {
		t.Errorf("a Rollout without status: %v", err)
	}
}

// A live state the committed plan passes through: the plan from it goes on
// as the committed plan does from there, with the real hashes (the reconcile
// model is the one conformance/argo checks).
func TestFromLiveContinuesTheCommittedPlan(t *testing.T) {
	routes := fmt.Sprintf(liveRoutes, 100, 0)
	local := graphOf(t, liveRollout+routes)
	committed := describe(plan.ForRollout(local, local.Refs().Rollouts[0]).States)
	r := strings.NewReplacer(plan.OldHash, "6d4f8b7c9", plan.NewHash, "5b9c7d8f4")
	// Paused at step 3 (50/50, 2 canary pods of 4).
	live := graphOf(t, liveRollout+liveStatus(3, "6d4f8b7c9", "5b9c7d8f4", 50, false)+fmt.Sprintf(liveRoutes, 50, 50),
		replicaSet("6d4f8b7c9", 4), replicaSet("5b9c7d8f4", 2))
	got := describe(fromLive(t, local, live, false).States)
	at := -1
	for i, line := range committed {
		if strings.HasPrefix(line, "step 3 ") {
			at = i
		}
	}
	if at < 0 {
		t.Fatalf("no step 3 in the committed plan:\n%s", strings.Join(committed, "\n"))
	}
	var want []string
	for _, line := range committed[at:] {
		want = append(want, r.Replace(line))
	}
	if len(got) < 1 || !strings.HasPrefix(got[0], "live -1 s50 c50 4/2") {
		t.Fatalf("first state %q", got)
	}
	check(t, "after the live state", got[1:], want)
}

// A header route the controller has put before the Rollout's route in the
// live VirtualService: ReadLive finds it among managedRoutes, the live
// weights are those of the route named primary (at http[1] live), and the
// plan goes on without re-creating the header route.
func TestReadLiveManagedRoutes(t *testing.T) {
	ro := strings.Replace(liveRollout, "routes: [primary]}}}", "routes: [primary]}}, managedRoutes: [{name: testers}]}", 1)
	ro = strings.Replace(ro, "      - setWeight: 20\n      - pause: {}\n", "      - setWeight: 20\n      - setHeaderRoute: {name: testers, match: [{headerName: x-tester, headerValue: {exact: \"yes\"}}]}\n      - pause: {}\n", 1)
	liveVS := strings.Replace(fmt.Sprintf(liveRoutes, 80, 20), "  http:\n", `  http:
  - name: testers
    match: [{headers: {x-tester: {exact: "yes"}}}]
    route:
    - destination: {host: checkout-canary}
      weight: 100
`, 1)
	live := graphOf(t, ro+liveStatus(2, "6d4f8b7c9", "5b9c7d8f4", 20, false)+liveVS, replicaSet("6d4f8b7c9", 4), replicaSet("5b9c7d8f4", 1))
	l, err := plan.ReadLive(live, live.Refs().Rollouts[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Managed) != 1 || l.Managed[0].Name != "testers" || l.Managed[0].Type != "header" {
		t.Fatalf("managed routes %+v", l.Managed)
	}
	local := graphOf(t, ro+fmt.Sprintf(liveRoutes, 100, 0))
	p := plan.FromLive(local, local.Refs().Rollouts[0], l)
	got := describe(p.States)
	check(t, "first states", got[:3], []string{
		"live -1 s80 c20 4/1",
		"step 2 s80 c20 4/1",
		"step 3 s50 c50 4/2 | checkout-5b9c7d8f4 spec.replicas 1→2 | checkout spec.http[1].route[0].weight 80→50 | checkout spec.http[1].route[1].weight 20→50",
	})
	if len(p.States[0].Managed) != 1 {
		t.Errorf("live state without the header route: %+v", p.States[0].Managed)
	}
	// Without PATH the live VirtualService is the plan's own: primary is
	// its http[1] because of the header route before it, and is written
	// there (not at http[2]).
	p = plan.FromLive(live, live.Refs().Rollouts[0], l)
	check(t, "from the live objects alone", describe(p.States)[2:3], []string{
		"step 3 s50 c50 4/2 | checkout-5b9c7d8f4 spec.replicas 1→2 | checkout spec.http[1].route[0].weight 80→50 | checkout spec.http[1].route[1].weight 20→50",
	})
}

// withSelectors gives the live Services the hash selectors Argo writes.
func withSelectors(routes, stable, canary string) string {
	routes = strings.Replace(routes, "name: checkout-stable, namespace: shop}\nspec: {selector: {app: checkout}", "name: checkout-stable, namespace: shop}\nspec: {selector: {app: checkout, rollouts-pod-template-hash: "+stable+"}", 1)
	return strings.Replace(routes, "name: checkout-canary, namespace: shop}\nspec: {selector: {app: checkout}", "name: checkout-canary, namespace: shop}\nspec: {selector: {app: checkout, rollouts-pod-template-hash: "+canary+"}", 1)
}

// The live selectors are read: where they agree with the model nothing
// changes; an aborted Rollout whose canary Service the controller has
// already sent back to the stable hash starts its abort path there, and
// with canary pods still up the controller flips it to the canary and back
// in each reconcile (argo-rollouts#3078).
func TestReadLiveSelectors(t *testing.T) {
	const stable, canary = "6d4f8b7c9", "5b9c7d8f4"
	routes := fmt.Sprintf(liveRoutes, 80, 20)
	status := liveStatus(1, stable, canary, 20, false)
	plain := fromLive(t, graphOf(t, liveRollout+routes), graphOf(t, liveRollout+status+routes, replicaSet(stable, 4), replicaSet(canary, 1)), false)
	liveG := graphOf(t, liveRollout+status+withSelectors(routes, stable, canary), replicaSet(stable, 4), replicaSet(canary, 1))
	l, err := plan.ReadLive(liveG, liveG.Refs().Rollouts[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Labels) != 2 || l.Labels[0].Hash != stable || l.Labels[1].Hash != canary {
		t.Fatalf("live labels %+v", l.Labels)
	}
	withSel := fromLive(t, graphOf(t, liveRollout+routes), liveG, false)
	check(t, "selectors the model agrees with", describe(withSel.States), describe(plain.States))

	aborted := graphOf(t, liveRollout+liveStatus(2, stable, canary, 0, true)+withSelectors(fmt.Sprintf(liveRoutes, 100, 0), stable, stable),
		replicaSet(stable, 4), replicaSet(canary, 2))
	p := fromLive(t, graphOf(t, liveRollout+routes), aborted, false)
	for _, lb := range p.States[0].Labels {
		if lb.Object.Name == "checkout-canary" && lb.Hash != stable {
			t.Errorf("live canary selector %s, want the stable hash the cluster has", lb.Hash)
		}
	}
	check(t, "abort", describe(p.Abort)[:1], []string{
		"abort -1 s100 c0 4/2 | checkout-canary spec.selector[\"rollouts-pod-template-hash\"] 6d4f8b7c9→5b9c7d8f4 | checkout-canary spec.selector[\"rollouts-pod-template-hash\"] 5b9c7d8f4→6d4f8b7c9",
	})
}

// A canary without traffic routing (weights are pod counts) resumes the
// same way: from a live state its committed plan passes through, the plan
// goes on as the committed plan does, and the abort path starts there.
func TestFromLiveBasicCanary(t *testing.T) {
	ro := strings.Replace(liveRollout, "      trafficRouting: {istio: {virtualService: {name: checkout, routes: [primary]}}}\n", "", 1)
	ro = strings.Replace(ro, "setWeight: 20", "setWeight: 25", 1)
	local := graphOf(t, ro)
	committed := describe(plan.ForRollout(local, local.Refs().Rollouts[0]).States)
	live := graphOf(t, ro+liveStatus(1, "6d4f8b7c9", "5b9c7d8f4", 25, false), replicaSet("6d4f8b7c9", 3), replicaSet("5b9c7d8f4", 1))
	p := fromLive(t, local, live, false)
	got := describe(p.States)
	at := -1
	for i, line := range committed {
		if strings.HasPrefix(line, "step 1 ") {
			at = i
		}
	}
	if at < 0 || !strings.HasSuffix(committed[at], " 3/1") {
		t.Fatalf("committed plan has no step 1 at 3/1:\n%s", strings.Join(committed, "\n"))
	}
	r := strings.NewReplacer(plan.OldHash, "6d4f8b7c9", plan.NewHash, "5b9c7d8f4")
	var want []string
	for _, line := range committed[at:] {
		want = append(want, r.Replace(line))
	}
	if len(got) < 2 || !strings.HasPrefix(got[0], "live -1 ") || !strings.HasSuffix(got[0], " 3/1") {
		t.Fatalf("live state %q", got)
	}
	check(t, "after the live state", got[1:], want)
	if p.AbortFrom != 0 || len(p.Abort) == 0 || !strings.HasPrefix(describe(p.Abort)[0], "abort -1 w0 4/0 | checkout-5b9c7d8f4 spec.replicas 1→0") {
		t.Errorf("abort from %d: %q", p.AbortFrom, describe(p.Abort))
	}
}
