package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/rolloutlint/rolloutlint/live/clusterview"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// sharedRouteProbe is a cross-object rule for the test: it reports every
// Rollout that manages a VirtualService route another Rollout manages too, on
// the Rollout, with a related location on the route. It stands in for the
// real shared-route rule to prove that a finding on a cluster object reaches
// the review of the object it points at.
var sharedRouteProbe = &rules.Rule{
	ID: "RL2999", Name: "shared-route-probe", Summary: "s", Doc: rules.Doc{Why: "d"}, Severity: rules.Error, Source: rules.SourceGo,
	Run: func(p *rules.Pass) error {
		refs := p.Graph.Refs()
		for _, k := range refs.RouteKeys() {
			users := refs.RouteUsers(k)
			if len(users) < 2 {
				continue
			}
			vs := users[0].VS.Target
			for _, u := range users {
				p.Report(u.Refs.Rollout, u.Route.Path, fmt.Sprintf("route %s[%d] of VirtualService %s is managed by %d Rollouts", k.Kind, k.Index, vs.Name, len(users)),
					rules.RelatedAt(vs, u.Route.VSPath(), "the shared route"))
			}
		}
		return nil
	},
}

func TestFindingsOnRelatedObjectsReachTheReview(t *testing.T) {
	v := clusterview.New()
	for _, m := range []string{rolloutA, rolloutB, unrelated} {
		if err := v.Set(mustObj(t, m)); err != nil {
			t.Fatal(err)
		}
	}
	l := &Linter{Rules: append(all.Rules(), sharedRouteProbe), View: v}
	vs := mustObj(t, vsObj)
	raw, _ := json.Marshal(vs.Object)
	res, err := l.Lint(context.Background(), clusterview.Key{Kind: clusterview.KindVirtualService, Namespace: "shop", Name: "vs"}, "shop", raw, vs.Object)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Findings {
		if f.RuleID == sharedRouteProbe.ID {
			got = append(got, where(f))
		}
	}
	want := []string{
		"Rollout shop/a spec.strategy.canary.trafficRouting.istio.virtualService.routes[0]",
		"Rollout shop/b spec.strategy.canary.trafficRouting.istio.virtualServices[0].name",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("findings on the Rollouts sharing the route:\n got %q\nwant %q", got, want)
	}

	// Linting an unrelated Service sees none of that, though the same rule runs.
	svc := mustObj(t, unrelated)
	raw, _ = json.Marshal(svc.Object)
	res, err = l.Lint(context.Background(), clusterview.Key{Kind: clusterview.KindService, Namespace: "shop", Name: "other"}, "shop", raw, svc.Object)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 0 || res.Related != 0 {
		t.Fatalf("unrelated Service: %d findings, %d related objects", len(res.Findings), res.Related)
	}
}

// The objects below are those of live/clusterview's tests: two Rollouts
// sharing a VirtualService route, and a Service nothing references.

func mustObj(t testing.TB, manifest string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(manifest), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

const (
	rolloutA = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: a, namespace: shop, labels: {app.kubernetes.io/instance: shop-app}}
spec:
  strategy:
    canary:
      stableService: a-stable
      canaryService: a-canary
      trafficRouting:
        istio:
          virtualService: {name: vs, routes: [primary]}
          destinationRule: {name: dr, stableSubsetName: stable, canarySubsetName: canary}
      steps:
      - analysis: {templates: [{templateName: success-rate}, {templateName: global, clusterScope: true}]}
`
	rolloutB = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: b, namespace: shop}
spec:
  strategy:
    canary:
      trafficRouting: {istio: {virtualServices: [{name: vs.shop}]}}
`
	vsObj = `
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: vs, namespace: shop}
spec:
  hosts: [shop]
  http:
  - name: primary
    route:
    - destination: {host: a-stable}
    - destination: {host: a-canary.shop.svc.cluster.local}
`
	unrelated = `
apiVersion: v1
kind: Service
metadata: {name: other, namespace: shop}
spec: {ports: [{port: 80}]}
`
)

// TestJoinedViewObjectsLintAsReloaded holds the reviews of a view that keeps
// its objects loaded (loaded when set, or by the first review that needs
// them, then shared by later reviews with the positions they found) to the
// reviews that load every related object from its JSON again: the same
// findings, messages and paths, review after review.
func TestJoinedViewObjectsLintAsReloaded(t *testing.T) {
	prepared, bodies := clusterFromCorpus(t, 1500) // Prepare set: loaded when set
	lazy := clusterview.New()                      // loaded by the first review that needs them
	for _, o := range prepared.Objects() {
		var obj map[string]any
		if err := json.Unmarshal(o.JSON, &obj); err != nil {
			t.Fatal(err)
		}
		if err := lazy.Set(&unstructured.Unstructured{Object: obj}); err != nil {
			t.Fatal(err)
		}
	}
	globals := rules.Globals{IstioVersion: "1.28"}
	ref := &Linter{Rules: all.Rules(), View: prepared, Globals: globals, reload: true}
	linters := map[string]*Linter{
		"prepared": {Rules: all.Rules(), View: prepared, Globals: globals},
		"lazy":     {Rules: all.Rules(), View: lazy, Globals: globals},
	}
	findings := 0
	wants := make([]*Result, len(bodies))
	for round := range 2 {
		for i, b := range bodies {
			self, ns, raw, obj := reviewed(t, b)
			want, err := ref.Lint(context.Background(), self, ns, raw, obj)
			if err != nil {
				t.Fatal(err)
			}
			findings += len(want.Findings)
			wants[i] = want
			for name, l := range linters {
				got, err := l.Lint(context.Background(), self, ns, raw, obj)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("round %d, %s view, review of %s:\ngot  %+v\nwant %+v", round, name, self, got, want)
				}
			}
		}
	}
	if findings == 0 {
		t.Fatal("no review had a finding: the comparison proves nothing")
	}
	// Concurrent reviews share the loaded objects and their positions.
	fresh, _ := clusterFromCorpus(t, 1500)
	l := &Linter{Rules: all.Rules(), View: fresh, Globals: globals}
	var wg sync.WaitGroup
	errs := make(chan string, len(bodies))
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(bodies); i += 4 {
				self, ns, raw, obj := reviewed(t, bodies[i])
				got, err := l.Lint(context.Background(), self, ns, raw, obj)
				if err != nil || !reflect.DeepEqual(got, wants[i]) {
					errs <- fmt.Sprintf("concurrent review of %s: %+v (%v), want %+v", self, got, err, wants[i])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	t.Logf("%d reviews, %d findings compared", 2*len(bodies), findings)
}

// reviewed returns what Lint takes from an AdmissionReview body.
func reviewed(t testing.TB, body []byte) (clusterview.Key, string, []byte, map[string]any) {
	var review struct {
		Request struct {
			Name, Namespace string
			Kind            struct{ Kind string }
			Object          json.RawMessage
		}
	}
	if err := json.Unmarshal(body, &review); err != nil {
		t.Error(err)
	}
	rq := review.Request
	var obj map[string]any
	if err := json.Unmarshal(rq.Object, &obj); err != nil {
		t.Error(err)
	}
	return clusterview.Key{Kind: rq.Kind.Kind, Namespace: rq.Namespace, Name: rq.Name}, rq.Namespace, rq.Object, obj
}

// TestReviewSeesViewChanges reviews a Rollout again and again while one of
// its Services changes in the view: the policies' input converted for a
// cluster object is kept with the loaded object and reused by later
// reviews, so a review after a change must see the new version, not the
// converted old one. RL5002 (a Service selector committing
// rollouts-pod-template-hash) reads the Service's selector in Rego.
func TestReviewSeesViewChanges(t *testing.T) {
	const rollout = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: checkout, namespace: shop}
spec:
  selector: {matchLabels: {app: checkout}}
  template: {metadata: {labels: {app: checkout}}, spec: {containers: [{name: checkout, image: checkout:1}]}}
  strategy: {canary: {stableService: checkout-stable, canaryService: checkout-canary, steps: [{setWeight: 20}]}}
`
	service := func(name, selector string) string {
		return `
apiVersion: v1
kind: Service
metadata: {name: ` + name + `, namespace: shop}
spec: {selector: ` + selector + `, ports: [{port: 80}]}
`
	}
	clean := service("checkout-stable", "{app: checkout}")
	hashed := service("checkout-stable", "{app: checkout, rollouts-pod-template-hash: 6f9c7b7d4}")
	l := &Linter{Rules: all.Rules()}
	v := clusterview.New()
	v.Prepare = l.Prepare
	l.View = v
	for _, m := range []string{rollout, service("checkout-canary", "{app: checkout}")} {
		if err := v.Set(mustObj(t, m)); err != nil {
			t.Fatal(err)
		}
	}
	ro := mustObj(t, rollout)
	raw, err := json.Marshal(ro.Object)
	if err != nil {
		t.Fatal(err)
	}
	self := clusterview.Key{Kind: clusterview.KindRollout, Namespace: "shop", Name: "checkout"}
	rl5002 := func() []string {
		t.Helper()
		res, err := l.Lint(context.Background(), self, "shop", raw, ro.Object)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range res.Findings {
			if f.RuleID == "RL5002" {
				got = append(got, where(f))
			}
		}
		return got
	}
	onStable := []string{"Service shop/checkout-stable spec.selector.rollouts-pod-template-hash"}
	for i, step := range []struct {
		svc  string
		want []string
	}{{clean, nil}, {hashed, onStable}, {clean, nil}, {hashed, onStable}} {
		if err := v.Set(mustObj(t, step.svc)); err != nil {
			t.Fatal(err)
		}
		for review := range 3 { // the first converts the new version, the others reuse it
			if got := rl5002(); !reflect.DeepEqual(got, step.want) {
				t.Fatalf("version %d of the Service, review %d: RL5002 findings %q, want %q", i, review, got, step.want)
			}
		}
	}
}
