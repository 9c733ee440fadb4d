package argoconformance

import (
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

func TestRenderWritesCollapsesBackAndForth(t *testing.T) {
	svc := Object{Kind: "Service", Namespace: "shop", Name: "cart-canary"}
	rs := Object{Kind: "ReplicaSet", Namespace: "shop", Name: "cart-<canary-hash>"}
	sel := func(o, n string) Write {
		return Write{Kind: "service-selector", Object: svc, Field: selectorField, Old: o, New: n}
	}
	// Seven flips and a scale-down in between: one line at the first flip.
	ws := []Write{sel(newHashSym, oldHashSym), sel(oldHashSym, newHashSym), sel(newHashSym, oldHashSym),
		{Kind: "replicaset-scale", Object: rs, Field: "spec.replicas", Old: "3", New: "0"}, sel(oldHashSym, newHashSym), sel(newHashSym, oldHashSym)}
	got := strings.Join(RenderWrites(ws), "\n")
	want := "service-selector Service/shop/cart-canary " + selectorField + ": <canary-hash> ⇄ <stable-hash> (back and forth)\n" +
		"replicaset-scale ReplicaSet/shop/cart-<canary-hash> spec.replicas: 3 → 0"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// A field that moves on (0 → 100 → 0 is back and forth; 60 → 100 → 0 is not).
	vs := Object{Kind: "VirtualService", Namespace: "shop", Name: "cart"}
	w := func(o, n string) Write {
		return Write{Kind: "vs-weight", Object: vs, Field: "spec.http[0].route[1].weight", Old: o, New: n}
	}
	if got := RenderWrites([]Write{w("60", "100"), w("100", "0")}); len(got) != 2 {
		t.Errorf("weights that move on collapsed: %q", got)
	}
	if got := RenderWrites([]Write{{Kind: "vs-route-add", Object: vs, Field: "spec.http", Old: "absent", New: "route h (header x=1 → canary 100)"}}); got[0] != "vs-route-add VirtualService/shop/cart spec.http: absent → route h" {
		t.Errorf("route add rendered %q", got[0])
	}
}

func TestCompareReportsEveryDifference(t *testing.T) {
	plan := []View{
		{Phase: "before", Step: -1, Fields: map[string]string{keyPods: "4/0"}},
		{Phase: "step", Step: 0, Fields: map[string]string{keyPods: "4/1", "route x": "a 75, b 25"}, Writes: []string{"w1", "w2"}},
	}
	obs := []View{
		{Phase: "before", Step: -1, Fields: map[string]string{keyPods: "4/0"}},
		{Phase: "step", Step: 0, Fields: map[string]string{keyPods: "4/2", "route x": "a 75, b 25", "label y": "h"}, Writes: []string{"w1"}},
		{Phase: "promote", Step: -1, Fields: map[string]string{}},
	}
	var diffs []string
	rows := Compare(plan, obs)
	for _, r := range rows {
		if r.Differs() {
			diffs = append(diffs, r.State+" | "+r.Field+" | "+r.Plan+" | "+r.Controller)
		}
	}
	want := []string{
		"step 0 | label y | (none) | h",
		"step 0 | pods | 4/1 | 4/2",
		"step 0 | write 2 | w2 | (none)",
		"promote | state | (no state) | promote -1",
	}
	if strings.Join(diffs, "\n") != strings.Join(want, "\n") {
		t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(diffs, "\n"), strings.Join(want, "\n"))
	}
	if len(rows) != 7 {
		t.Errorf("%d rows compared, want 7", len(rows))
	}
}

// TestObserverWrites replays a small event log: the controller moves the
// weights of a route that a header route has pushed down to index 1, and
// the observer words it as the plan does, with live indexes.
func TestObserverWrites(t *testing.T) {
	vs := func(rv string, routes ...any) Event {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
			"metadata": map[string]any{"name": "web", "namespace": "r1-shop", "resourceVersion": rv},
			"spec":     map[string]any{"http": routes},
		}}
		return Event{RV: atoi(rv), Type: watch.Modified, Kind: "VirtualService", Obj: u}
	}
	route := func(name string, stable, canary int64) any {
		return map[string]any{"name": name, "route": []any{
			map[string]any{"destination": map[string]any{"host": "web-stable"}, "weight": stable},
			map[string]any{"destination": map[string]any{"host": "web-canary"}, "weight": canary},
		}}
	}
	header := map[string]any{"name": "header-route", "match": []any{map[string]any{"headers": map[string]any{}}},
		"route": []any{map[string]any{"destination": map[string]any{"host": "web-canary"}, "weight": int64(100)}}}
	ro := &v1alpha1.Rollout{}
	ro.Name, ro.Namespace = "web", "r1-shop"
	ro.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		StableService: "web-stable", CanaryService: "web-canary",
		TrafficRouting: &v1alpha1.RolloutTrafficRouting{
			ManagedRoutes: []v1alpha1.MangedRoutes{{Name: "header-route"}},
			Istio:         &v1alpha1.IstioTrafficRouting{VirtualService: &v1alpha1.IstioVirtualService{Name: "web", Routes: []string{"primary"}}},
		},
	}
	o := &observer{ro: ro, nsBack: map[string]string{"r1-shop": "shop"}, events: []Event{
		vs("10", route("primary", 100, 0)),
		vs("11", header, route("primary", 100, 0)),
		vs("12", header, route("primary", 90, 10)),
	}}
	var got []string
	for _, tw := range o.writes(10, 12) {
		got = append(got, writeText(tw.w))
	}
	want := []string{
		"vs-route-add VirtualService/shop/web spec.http: absent → route header-route",
		"vs-weight VirtualService/shop/web spec.http[1].route[0].weight: 100 → 90",
		"vs-weight VirtualService/shop/web spec.http[1].route[1].weight: 0 → 10",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("writes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	v := o.view(Replay(o.events, 12), "step", 1)
	if v.Fields["route VirtualService/shop/web http/primary"] != "web-stable 90, web-canary 10" || v.Fields["managed VirtualService/shop/web"] != "header-route header" {
		t.Errorf("view = %v", v.Fields)
	}
}
