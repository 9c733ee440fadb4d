package clusterview

import (
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"
)

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

func svc(name string) string {
	return "apiVersion: v1\nkind: Service\nmetadata: {name: " + name + ", namespace: shop}\nspec: {ports: [{port: 80}]}\n"
}

func keysOf(objs []Object) []Key {
	var out []Key
	for _, o := range objs {
		out = append(out, o.Key)
	}
	return out
}

func TestRelatedFollowsReferencesBothWays(t *testing.T) {
	v := New()
	for _, m := range []string{rolloutA, rolloutB, vsObj, unrelated, svc("a-stable"), svc("a-canary"),
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: dr, namespace: shop}\nspec: {host: a-stable}\n",
		"apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: success-rate, namespace: shop}\nspec: {metrics: []}\n",
		"apiVersion: argoproj.io/v1alpha1\nkind: ClusterAnalysisTemplate\nmetadata: {name: global}\nspec: {metrics: []}\n",
		"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop-app, namespace: argocd}\nspec: {}\n",
	} {
		if err := v.Set(mustObj(t, m)); err != nil {
			t.Fatal(err)
		}
	}
	// A VirtualService created (or updated) is linted with the Services of its
	// destinations and every Rollout that manages it, and what they reference.
	vs := mustObj(t, vsObj)
	got := keysOf(v.Related(Key{KindVirtualService, "shop", "vs"}, vs.Object))
	want := []Key{
		{KindAnalysisTemplate, "shop", "success-rate"},
		{KindApplication, "argocd", "shop-app"},
		{KindClusterAnalysisTemplate, "", "global"},
		{KindDestinationRule, "shop", "dr"},
		{KindRollout, "shop", "a"},
		{KindRollout, "shop", "b"},
		{KindService, "shop", "a-canary"},
		{KindService, "shop", "a-stable"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("related of the VirtualService:\n got %v\nwant %v", got, want)
	}
	// A new Rollout naming the same VirtualService is linted with the Rollouts
	// already managing it (shared routes).
	c := mustObj(t, `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: c, namespace: shop}
spec: {strategy: {canary: {trafficRouting: {istio: {virtualService: {name: vs}}}}}}
`)
	got = keysOf(v.Related(Key{KindRollout, "shop", "c"}, c.Object))
	want = []Key{{KindRollout, "shop", "a"}, {KindRollout, "shop", "b"}, {KindService, "shop", "a-canary"},
		{KindService, "shop", "a-stable"}, {KindVirtualService, "shop", "vs"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("related of a new Rollout:\n got %v\nwant %v", got, want)
	}
	// Deleting removes the object and its reverse edges.
	v.Delete(Key{KindRollout, "shop", "b"})
	for _, k := range keysOf(v.Related(Key{KindVirtualService, "shop", "vs"}, vs.Object)) {
		if k.Name == "b" {
			t.Fatal("deleted Rollout still related")
		}
	}
	// The cached copy of the object under review is never returned.
	for _, k := range keysOf(v.Related(Key{KindRollout, "shop", "a"}, mustObj(t, rolloutA).Object)) {
		if k == (Key{KindRollout, "shop", "a"}) {
			t.Fatal("the object itself came back from the cache")
		}
	}
}

func TestRelatedIsBounded(t *testing.T) {
	v := New()
	v.maxRelated = 5
	if err := v.Set(mustObj(t, vsObj)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		r := mustObj(t, rolloutB)
		r.SetName("r" + string(rune('a'+i%26)) + string(rune('a'+i/26)))
		if err := v.Set(r); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(v.Related(Key{KindVirtualService, "shop", "vs"}, mustObj(t, vsObj).Object)); n != 5 {
		t.Fatalf("got %d related objects, want the bound 5", n)
	}
}

// fakeDiscovery serves a changeable set of resources.
type fakeDiscovery struct {
	mu     sync.Mutex
	served map[string][]metav1.APIResource // group/version → resources
}

func (f *fakeDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rs, ok := f.served[gv]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: gv}, "")
	}
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: rs}, nil
}

func (f *fakeDiscovery) serve(gv, resource, kind string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.served[gv] = append(f.served[gv], metav1.APIResource{Name: resource, Kind: kind, Namespaced: true})
}

// TestInformersFeedTheView runs client-go's real informer machinery against
// its fake dynamic client: kinds discovery does not serve are skipped, the
// others listed, watched and indexed, and a kind served later (a CRD
// installed after start) is picked up without gating readiness.
func TestInformersFeedTheView(t *testing.T) {
	scheme := runtime.NewScheme()
	listKinds := map[schema.GroupVersionResource]string{}
	for _, w := range watchedResources {
		for _, ver := range w.versions {
			listKinds[schema.GroupVersionResource{Group: w.group, Version: ver, Resource: w.resource}] = w.kind + "List"
		}
	}
	a := mustObj(t, rolloutA)
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, listKinds, a, mustObj(t, svc("a-stable")))
	disc := &fakeDiscovery{served: map[string][]metav1.APIResource{}}
	disc.serve("argoproj.io/v1alpha1", "rollouts", KindRollout)
	disc.serve("v1", "services", KindService)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v := New()
	v.RediscoverEvery = 20 * time.Millisecond
	if err := v.Start(ctx, disc, client, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	wantWatched := []string{"argoproj.io/v1alpha1, Resource=rollouts", "/v1, Resource=services"}
	if !reflect.DeepEqual(v.Watched(), wantWatched) {
		t.Fatalf("watched %q, want %q", v.Watched(), wantWatched)
	}
	waitFor(t, func() bool { return v.Synced() && v.Len() == 2 })

	// The VirtualService CRD gets installed (at v1beta1) after start.
	disc.serve("networking.istio.io/v1beta1", "virtualservices", KindVirtualService)
	waitFor(t, func() bool { return len(v.Watched()) == 3 })
	if !v.Synced() {
		t.Fatal("a kind found later made the view unready")
	}
	vs := mustObj(t, vsObj)
	gvr := schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1beta1", Resource: "virtualservices"}
	if _, err := client.Resource(gvr).Namespace("shop").Create(ctx, vs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return v.Len() == 3 })
	got := keysOf(v.Related(Key{KindRollout, "shop", "c"}, mustObj(t, rolloutB).Object))
	want := []Key{{KindRollout, "shop", "a"}, {KindService, "shop", "a-stable"}, {KindVirtualService, "shop", "vs"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("related after watch:\n got %v\nwant %v", got, want)
	}
	// Deletes reach the view too.
	if err := client.Resource(gvr).Namespace("shop").Delete(ctx, "vs", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return v.Len() == 2 })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNamespaceScopeAndObjects limits a view to one namespace, as a one-shot
// lint of a namespace would, waits for it to sync and lists what it holds:
// the namespace's objects, the cluster-scoped ones and the Applications of
// every namespace, sorted, nothing else of another namespace.
func TestNamespaceScopeAndObjects(t *testing.T) {
	scheme := runtime.NewScheme()
	listKinds := map[schema.GroupVersionResource]string{}
	for _, w := range watchedResources {
		for _, ver := range w.versions {
			listKinds[schema.GroupVersionResource{Group: w.group, Version: ver, Resource: w.resource}] = w.kind + "List"
		}
	}
	other := mustObj(t, strings.Replace(svc("x"), "namespace: shop", "namespace: elsewhere", 1))
	global := mustObj(t, "apiVersion: argoproj.io/v1alpha1\nkind: ClusterAnalysisTemplate\nmetadata: {name: global}\nspec: {metrics: []}\n")
	app := mustObj(t, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop-app, namespace: argocd}\nspec: {}\n")
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, listKinds,
		mustObj(t, rolloutA), mustObj(t, svc("a-stable")), other, global, app)
	disc := &fakeDiscovery{served: map[string][]metav1.APIResource{}}
	disc.serve("argoproj.io/v1alpha1", "rollouts", KindRollout)
	disc.serve("argoproj.io/v1alpha1", "clusteranalysistemplates", KindClusterAnalysisTemplate)
	disc.serve("argoproj.io/v1alpha1", "applications", KindApplication)
	disc.serve("v1", "services", KindService)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v := New()
	v.Namespace = "shop"
	if err := v.Start(ctx, disc, client, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if err := v.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return v.Len() == 4 })
	got := keysOf(v.Objects())
	want := []Key{{KindApplication, "argocd", "shop-app"}, {KindClusterAnalysisTemplate, "", "global"},
		{KindRollout, "shop", "a"}, {KindService, "shop", "a-stable"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("objects:\n got %v\nwant %v", got, want)
	}
	if got := keysOf(v.Objects("elsewhere")); !reflect.DeepEqual(got, want[:2]) {
		t.Errorf("objects of another namespace: %v, want only the ones read whole", got)
	}
	// The kinds read whole are watched in every namespace, the others in the
	// view's namespace only.
	wantWatched := []string{"argoproj.io/v1alpha1, Resource=rollouts", "/v1, Resource=services",
		"argoproj.io/v1alpha1, Resource=clusteranalysistemplates", "argoproj.io/v1alpha1, Resource=applications"}
	if !reflect.DeepEqual(v.Watched(), wantWatched) {
		t.Errorf("watched %q, want %q", v.Watched(), wantWatched)
	}
	var ns []string
	for _, a := range client.Actions() {
		if a.GetVerb() == "list" {
			ns = append(ns, a.GetResource().Resource+" in "+strconv.Quote(a.GetNamespace()))
		}
	}
	sort.Strings(ns)
	if wantNS := []string{`applications in ""`, `clusteranalysistemplates in ""`, `rollouts in "shop"`, `services in "shop"`}; !reflect.DeepEqual(ns, wantNS) {
		t.Errorf("lists %q, want %q", ns, wantNS)
	}
	var obj map[string]any
	if err := json.Unmarshal(v.Objects()[2].JSON, &obj); err != nil || obj["kind"] != KindRollout {
		t.Errorf("object JSON: %v %v", err, obj["kind"])
	}
	// A context that ends first is an error, not a hang.
	done, stop := context.WithCancel(context.Background())
	stop()
	never := New()
	never.synced = append(never.synced, func() bool { return false })
	if err := never.WaitForSync(done); err == nil {
		t.Error("WaitForSync returned nil for a view that never synced")
	}
}

// TestDerivedFollowsTheObjectsContent: Prepare derives a value when an
// object is set; setting the same content again (an informer's resync)
// keeps it, new content derives a new one, and Related and Objects hand
// back the value of the version they return.
func TestDerivedFollowsTheObjectsContent(t *testing.T) {
	v := New()
	var calls []string
	v.Prepare = func(o Object) any {
		calls = append(calls, string(o.JSON))
		return len(calls)
	}
	for _, m := range []string{rolloutA, vsObj} {
		if err := v.Set(mustObj(t, m)); err != nil {
			t.Fatal(err)
		}
	}
	derivedOf := func(k Key) any {
		for _, o := range v.Objects() {
			if o.Key == k {
				return o.Derived.Load()
			}
		}
		t.Fatalf("%s not in the view", k)
		return nil
	}
	ro := Key{Kind: KindRollout, Namespace: "shop", Name: "a"}
	vs := Key{Kind: KindVirtualService, Namespace: "shop", Name: "vs"}
	if derivedOf(ro) != 1 || derivedOf(vs) != 2 {
		t.Fatalf("derived %v %v, want 1 2", derivedOf(ro), derivedOf(vs))
	}
	if err := v.Set(mustObj(t, rolloutA)); err != nil { // same content
		t.Fatal(err)
	}
	if len(calls) != 2 || derivedOf(ro) != 1 {
		t.Fatalf("a resync derived again: %d calls, value %v", len(calls), derivedOf(ro))
	}
	changed := mustObj(t, rolloutA)
	changed.SetLabels(map[string]string{"changed": "yes"})
	if err := v.Set(changed); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 3 || derivedOf(ro) != 3 {
		t.Fatalf("new content: %d calls, value %v", len(calls), derivedOf(ro))
	}
	for _, o := range v.Related(vs, mustObj(t, vsObj).Object) {
		if o.Key == ro && o.Derived.Load() != 3 {
			t.Fatalf("Related hands back %v for the Rollout, want 3", o.Derived.Load())
		}
	}
	o := v.Related(vs, mustObj(t, vsObj).Object)
	if len(o) == 0 {
		t.Fatal("the Rollout is not related to its VirtualService")
	}
	o[0].Derived.Store("mine")
	if derivedOf(o[0].Key) != "mine" {
		t.Fatal("a value stored through Related is not kept")
	}
}

// An object the webhook admitted counts for the next reviews before its
// watch event comes; the watch's version replaces it and is never replaced
// by it; without an event it stops counting after PendingFor, and is swept.
func TestAdmittedObjectsCountUntilTheWatchComes(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	at := t0
	clock = func() time.Time { return at }
	defer func() { clock = time.Now }()

	v := New()
	rollout := mustObj(t, `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: r, namespace: shop}
spec: {strategy: {canary: {steps: [{analysis: {templates: [{templateName: success-rate}]}}]}}}
`)
	template := Key{KindAnalysisTemplate, "shop", "success-rate"}
	related := func() []Key { return keysOf(v.Related(Key{KindRollout, "shop", "r"}, rollout.Object)) }
	if got := related(); len(got) != 0 {
		t.Fatalf("related before anything: %v", got)
	}
	// Admitted without a namespace in the object: the request's counts.
	admitted := mustObj(t, "apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: success-rate}\nspec: {metrics: [{name: admitted}]}\n")
	if err := v.Admitted(template, admitted.Object); err != nil {
		t.Fatal(err)
	}
	if got := related(); !reflect.DeepEqual(got, []Key{template}) {
		t.Fatalf("related after the template was admitted: %v", got)
	}
	// The watch's version replaces it, and a later admission of the same
	// object does not replace the watch's.
	watched := mustObj(t, "apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: success-rate, namespace: shop}\nspec: {metrics: [{name: watched}]}\n")
	if err := v.Set(watched); err != nil {
		t.Fatal(err)
	}
	if err := v.Admitted(template, admitted.Object); err != nil {
		t.Fatal(err)
	}
	at = t0.Add(2 * PendingFor)
	objs := v.Related(Key{KindRollout, "shop", "r"}, rollout.Object)
	if len(objs) != 1 || !strings.Contains(string(objs[0].JSON), "watched") {
		t.Fatalf("after the watch: %v", keysOf(objs))
	}
	// An admission whose watch event never comes stops counting, and the
	// next admission sweeps it out of the view.
	v.Delete(template)
	at = t0
	if err := v.Admitted(template, admitted.Object); err != nil {
		t.Fatal(err)
	}
	at = t0.Add(PendingFor + time.Second)
	if got := related(); len(got) != 0 {
		t.Fatalf("an admission past PendingFor still counts: %v", got)
	}
	other := mustObj(t, "apiVersion: v1\nkind: Service\nmetadata: {name: other, namespace: shop}\nspec: {}\n")
	if err := v.Admitted(Key{KindService, "shop", "other"}, other.Object); err != nil {
		t.Fatal(err)
	}
	if n := v.Len(); n != 1 {
		t.Fatalf("%d objects after the sweep, want the one admitted last", n)
	}
}
