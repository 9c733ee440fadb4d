package graph_test

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
)

func load1(t testing.TB, files ...string) *graph.Graph {
	t.Helper()
	var in []load.Input
	for i := 0; i+1 < len(files); i += 2 {
		in = append(in, load.Input{Path: files[i], Data: []byte(files[i+1])})
	}
	g := load.Inputs(in, load.Options{Namespace: "shop"})
	for _, p := range g.Problems {
		t.Fatalf("unexpected problem %s at %v: %s", p.RuleID, p.Pos, p.Message)
	}
	return g
}

func TestParsePath(t *testing.T) {
	cases := map[string][]graph.PathElem{
		"spec.strategy.canary.steps[2].setWeight":       {{Key: "spec", IsKey: true}, {Key: "strategy", IsKey: true}, {Key: "canary", IsKey: true}, {Key: "steps", IsKey: true}, {Index: 2}, {Key: "setWeight", IsKey: true}},
		`metadata.annotations["rolloutlint.io/ignore"]`: {{Key: "metadata", IsKey: true}, {Key: "annotations", IsKey: true}, {Key: "rolloutlint.io/ignore", IsKey: true}},
		`metadata.labels['app.kubernetes.io/name']`:     {{Key: "metadata", IsKey: true}, {Key: "labels", IsKey: true}, {Key: "app.kubernetes.io/name", IsKey: true}},
		"a[0][1]":   {{Key: "a", IsKey: true}, {Index: 0}, {Index: 1}},
		"a[x].b":    {{Key: "a", IsKey: true}, {Key: "x", IsKey: true}, {Key: "b", IsKey: true}},
		"a[":        {{Key: "a", IsKey: true}, {Key: "[", IsKey: true}},
		"":          nil,
		"..a..":     {{Key: "a", IsKey: true}},
		`a["x\"y"]`: {{Key: "a", IsKey: true}, {Key: `x"y`, IsKey: true}},
	}
	for in, want := range cases {
		if got := graph.ParsePath(in); !reflect.DeepEqual(got, want) {
			t.Errorf("ParsePath(%q) = %+v, want %+v", in, got, want)
		}
	}
	// Key quotes what the dotted form cannot carry, and ParsePath reads it back.
	for _, k := range []string{"plain", "rolloutlint.io/ignore", "with space", `q"uote`, ""} {
		p := graph.Key("metadata.annotations", k)
		got := graph.ParsePath(p)
		if len(got) != 3 || got[2].Key != k {
			t.Errorf("Key(%q) = %q parses back as %+v", k, p, got)
		}
	}
	if got := graph.Index("spec.http", 3); got != "spec.http[3]" {
		t.Errorf("Index = %q", got)
	}
}

const rollout = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
  annotations:
    rolloutlint.io/ignore: "RL1001 -- test"
spec:
  selector:
    matchLabels: {app: checkout}
  template:
    metadata:
      labels: {app: checkout}
  strategy:
    canary:
      canaryService: checkout-canary
      stableService: checkout-stable
      trafficRouting:
        istio:
          virtualServices:
          - name: checkout-vsvc
            routes: [primary]
          - name: edge.gateways
          - name: internal.shop.svc.cluster.local
      steps:
      - setWeight: 20
      - pause: {}
`

func TestPos(t *testing.T) {
	g := load1(t, "r.yaml", rollout)
	r := g.Get("Rollout", "shop", "checkout")
	if r == nil {
		t.Fatal("no Rollout")
	}
	cases := []struct {
		path      string
		line, col int
	}{
		{"spec.strategy.canary.steps[0].setWeight", 25, 20},                  // scalar value
		{"spec.strategy.canary.steps[1].pause", 26, 9},                       // collection: its key
		{"spec.strategy.canary.steps[1]", 26, 9},                             // sequence item: its start
		{`metadata.annotations["rolloutlint.io/ignore"]`, 6, 28},             // quoted key
		{"spec.strategy.canary.steps[7].setWeight", 24, 7},                   // missing index: parent key
		{"spec.strategy.canary.trafficRouting.istio.destinationRule", 18, 9}, // missing key: parent key
		{"status.phase", 4, 9},                                               // no parent: metadata.name
		{"", 4, 9},
		{"spec.selector.matchLabels.app", 9, 24},
	}
	for _, c := range cases {
		p := r.Pos(c.path)
		if p.File != "r.yaml" || p.Line != c.line || p.Column != c.col {
			t.Errorf("Pos(%q) = %s, want r.yaml:%d:%d", c.path, p, c.line, c.col)
		}
	}
	if !r.Exists("spec.strategy.canary.steps[1].pause") || r.Exists("spec.strategy.canary.steps[2]") || r.Exists("metadata.labels") {
		t.Errorf("Exists is wrong")
	}
	if v, ok := r.Annotation("rolloutlint.io/ignore"); !ok || v != "RL1001 -- test" {
		t.Errorf("Annotation = %q %v", v, ok)
	}
	if r.Namespace != "shop" || r.NamespaceExplicit {
		t.Errorf("namespace %q explicit %v, want the --namespace default", r.Namespace, r.NamespaceExplicit)
	}
}

const services = `apiVersion: v1
kind: Service
metadata: {name: checkout-stable}
spec: {selector: {app: checkout}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: checkout-canary}
spec: {selector: {app: checkout}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: payments, namespace: billing}
spec: {ports: [{port: 80}]}
`

const virtualServices = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: checkout-vsvc}
spec:
  hosts: [checkout]
  http:
  - name: header
    route: [{destination: {host: checkout-canary}}]
  - name: primary
    route:
    - {destination: {host: checkout-stable}, weight: 100}
    - {destination: {host: checkout-canary.shop.svc.cluster.local}, weight: 0}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: edge, namespace: gateways}
spec:
  hosts: [checkout.example.com]
  http:
  - name: named
    route: [{destination: {host: checkout-stable.shop.svc.cluster.local}}]
  - route:
    - {destination: {host: checkout-stable.shop}, weight: 100}
    - {destination: {host: checkout-canary.shop}, weight: 0}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: internal}
spec:
  hosts: [checkout]
  http:
  - name: only
    route: [{destination: {host: checkout-stable}}]
`

func TestReferenceResolution(t *testing.T) {
	g := load1(t, "r.yaml", rollout, "s.yaml", services, "v.yaml", virtualServices)
	rr := g.Refs().ForRollout(g.Get("Rollout", "shop", "checkout"))
	if rr == nil {
		t.Fatal("no refs")
	}
	if s := rr.Service(graph.RoleCanary); s == nil || s.Target == nil || s.Target.Name != "checkout-canary" || s.Path != "spec.strategy.canary.canaryService" {
		t.Errorf("canary service ref = %+v", s)
	}
	if len(rr.VirtualServices) != 3 {
		t.Fatalf("%d VS refs", len(rr.VirtualServices))
	}
	type want struct {
		name, ns, target string
		route            int
		implicit         bool
	}
	wants := []want{
		{"checkout-vsvc", "shop", "checkout-vsvc", 1, false}, // named route "primary" is the second
		{"edge", "gateways", "edge", 1, true},                // name.namespace; no routes: first unnamed
	}
	// The FQDN form: Argo Rollouts drops .cluster.local only, so it looks for
	// VirtualService "internal.shop" in namespace "svc", which is not there.
	if v := rr.VirtualServices[2]; v.Name != "internal.shop" || v.Namespace != "svc" || v.Target != nil {
		t.Errorf("VS ref 2 = %s/%s target %v, want svc/internal.shop unresolved", v.Namespace, v.Name, v.Target)
	}
	for i, w := range wants {
		v := rr.VirtualServices[i]
		if v.Name != w.name || v.Namespace != w.ns || v.Target == nil || v.Target.Name != w.target {
			t.Errorf("VS ref %d = %s/%s target %v", i, v.Namespace, v.Name, v.Target)
			continue
		}
		if len(v.Routes) != 1 || v.Routes[0].Index != w.route || v.Routes[0].Implicit != w.implicit || v.Routes[0].Kind != graph.HTTP {
			t.Errorf("VS %s routes = %+v, want index %d implicit %v", w.name, v.Routes, w.route, w.implicit)
		}
	}
	if got := rr.VirtualServices[0].Routes[0].VSPath(); got != "spec.http[1]" {
		t.Errorf("VSPath = %q", got)
	}
	k := graph.RouteKey{VS: graph.ObjectKey{Kind: "VirtualService", Namespace: "gateways", Name: "edge"}, Kind: graph.HTTP, Index: 1}
	if users := g.Refs().RouteUsers(k); len(users) != 1 || users[0].Refs != rr {
		t.Errorf("RouteUsers(edge http[1]) = %v", users)
	}
	if users := g.Refs().ServiceUsers(g.Get("Service", "shop", "checkout-stable")); len(users) != 1 {
		t.Errorf("ServiceUsers = %d", len(users))
	}
	// Destination hosts resolve to Services by short name, name.ns and FQDN.
	for _, c := range []struct{ host, ns, want string }{
		{"checkout-canary", "shop", "checkout-canary"},
		{"checkout-canary.shop", "gateways", "checkout-canary"},
		{"checkout-canary.shop.svc", "gateways", "checkout-canary"},
		{"checkout-canary.shop.svc.cluster.local", "gateways", "checkout-canary"},
		{"payments.billing.svc.cluster.local", "shop", "payments"},
		{"payments", "shop", ""},
		{"checkout.example.com", "shop", ""},
	} {
		got := g.ServiceForHost(c.host, c.ns)
		if (got == nil) != (c.want == "") || got != nil && got.Name != c.want {
			t.Errorf("ServiceForHost(%q, %q) = %v, want %q", c.host, c.ns, got, c.want)
		}
	}
	if vs := g.VirtualServicesForHost("checkout.shop.svc.cluster.local", "x"); len(vs) != 2 {
		t.Errorf("VirtualServicesForHost(checkout) = %d, want checkout-vsvc and internal", len(vs))
	}
}

func TestUnresolvedReferences(t *testing.T) {
	ro := strings.Replace(rollout, "name: checkout-vsvc", "name: missing", 1)
	g := load1(t, "r.yaml", ro)
	rr := g.Refs().ForRollout(g.Get("Rollout", "shop", "checkout"))
	if rr.Service(graph.RoleStable).Target != nil {
		t.Errorf("a Service that is not in the bundle resolved")
	}
	v := rr.VirtualServices[0]
	if v.Target != nil || len(v.Routes) != 1 || v.Routes[0].Index != -1 || v.Routes[0].Name != "primary" {
		t.Errorf("missing VS ref = %+v", v)
	}
}

func TestSplitNamespacedName(t *testing.T) {
	for in, want := range map[string][2]string{
		"vs":                      {"vs", "dflt"},
		"vs.ns":                   {"vs", "ns"},
		"vs.ns.svc.cluster.local": {"vs.ns", "svc"}, // Argo drops .cluster.local only
		"vs.ns.cluster.local":     {"vs", "ns"},
		"my.dotted.vs.ns":         {"my.dotted.vs", "ns"},
	} {
		n, ns := graph.SplitNamespacedName(in, "dflt")
		if n != want[0] || ns != want[1] {
			t.Errorf("SplitNamespacedName(%q) = %q, %q; want %q", in, n, ns, want)
		}
	}
}

// FuzzPos checks that any path, on any loaded document, maps to a real
// position and never panics.
func FuzzPos(f *testing.F) {
	for _, p := range []string{"", "spec", "spec.strategy.canary.steps[0].setWeight", `metadata.annotations["a/b"]`,
		"a[", "[", "]", "[-1]", "[99999999999999999999]", `["`, `['x']`, "..", "a[0][0][0]", "spec.template.metadata.labels.app"} {
		f.Add(p)
	}
	g := load.Inputs([]load.Input{{Path: "r.yaml", Data: []byte(rollout + "---\na: &x [1, *x]\n---\n- 1\n")}}, load.Options{})
	f.Fuzz(func(t *testing.T, path string) {
		for _, r := range g.Resources {
			p := r.Pos(path)
			if p.Line < 1 || p.Column < 1 || p.File != "r.yaml" {
				t.Fatalf("Pos(%q) = %+v", path, p)
			}
			_ = r.Exists(path)
			_ = graph.ParsePath(path)
		}
	})
}

func TestForgetMemosSince(t *testing.T) {
	g := load1(t, "r.yaml", "kind: Service\napiVersion: v1\nmetadata: {name: a}\n")
	before, after := graph.NewMemo[string]("before"), graph.NewMemo[string]("after")
	n := map[string]int{}
	get := func(m *graph.Memo[string], name string) string {
		return m.Get(g, func() string { n[name]++; return name })
	}
	get(before, "before")
	mark := g.MemoMark()
	get(after, "after")
	g.ForgetMemosSince(mark)
	if v := get(before, "before"); v != "before" || n["before"] != 1 {
		t.Errorf("a memo made before the mark was recomputed (%d builds)", n["before"])
	}
	if v := get(after, "after"); v != "after" || n["after"] != 2 {
		t.Errorf("a memo made after the mark was not forgotten (%d builds)", n["after"])
	}
}

// TestMemoKeys: each memo variable is its own key (two memos of one type do
// not share a value), a keyed memo holds one value per key, and a value is
// computed once however many goroutines ask.
func TestMemoKeys(t *testing.T) {
	g := load1(t, "r.yaml", "kind: Service\napiVersion: v1\nmetadata: {name: a}\n")
	a, b := graph.NewMemo[int]("a"), graph.NewMemo[int]("b")
	if a.Get(g, func() int { return 1 }) != 1 || b.Get(g, func() int { return 2 }) != 2 || a.Get(g, func() int { return 3 }) != 1 {
		t.Error("two memos of one type share a value, or a value was recomputed")
	}
	k := graph.NewKeyedMemo[string, string]("k")
	if k.Get(g, "1.28", func() string { return "x" }) != "x" || k.Get(g, "1.30", func() string { return "y" }) != "y" || k.Get(g, "1.28", func() string { return "z" }) != "x" {
		t.Error("a keyed memo does not keep one value per key")
	}
	other := load1(t, "r.yaml", "kind: Service\napiVersion: v1\nmetadata: {name: a}\n")
	if a.Get(other, func() int { return 4 }) != 4 {
		t.Error("a memo's value leaked to another graph")
	}
	c := graph.NewMemo[*int]("c")
	var calls atomic.Int32
	var wg sync.WaitGroup
	results := make([]*int, 16)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = c.Get(g, func() *int { calls.Add(1); v := i; return &v })
		}()
	}
	wg.Wait()
	for _, r := range results {
		if r != results[0] {
			t.Fatal("concurrent callers got different values")
		}
	}
	if calls.Load() != 1 {
		t.Errorf("computed %d times, want once", calls.Load())
	}
}

// TestAppendFQDNIsFQDN checks the lookups' allocation-free FQDN against FQDN.
func TestAppendFQDNIsFQDN(t *testing.T) {
	for _, host := range []string{"", "*", ".", "reviews", "reviews.", "reviews.shop", "reviews.shop.", "reviews.shop.svc",
		"reviews.shop.svc.", "reviews.shop.svc.cluster.local", "*.shop.svc.cluster.local", "a.b.c", "example.com", "*.example.com"} {
		if got, want := string(graph.AppendFQDN(nil, host, "ns")), graph.FQDN(host, "ns"); got != want {
			t.Errorf("appendFQDN(%q) = %q, FQDN = %q", host, got, want)
		}
	}
}

func TestSharedRouteKeys(t *testing.T) {
	rollout := func(name, vs string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: ` + name + `}
spec:
  strategy:
    canary:
      trafficRouting:
        istio:
          virtualService: {name: ` + vs + `, routes: [main]}
---
`
	}
	vs := func(name string) string {
		return `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: ` + name + `}
spec:
  hosts: [` + name + `]
  http:
  - name: main
    route: [{destination: {host: ` + name + `}}]
---
`
	}
	g := load.Inputs([]load.Input{{Path: "b.yaml", Data: []byte(rollout("a", "shared") + rollout("b", "shared") + rollout("c", "own") + vs("shared") + vs("own"))}}, load.Options{Namespace: "shop"})
	x := g.Refs()
	var want []graph.RouteKey
	for _, k := range x.RouteKeys() {
		if len(x.RouteUsers(k)) > 1 {
			want = append(want, k)
		}
	}
	if len(want) != 1 || want[0].VS.Name != "shared" || len(x.RouteKeys()) != 2 {
		t.Fatalf("RouteKeys %v, shared %v: want two routes, one shared", x.RouteKeys(), want)
	}
	if got := x.SharedRouteKeys(); !reflect.DeepEqual(got, want) {
		t.Errorf("SharedRouteKeys() = %v, want %v", got, want)
	}
}

// TestConcurrentBuildMatchesSerial builds a bundle large enough for New to
// index it on several goroutines and checks the graph against the one built
// on a single goroutine.
func TestConcurrentBuildMatchesSerial(t *testing.T) {
	in := corpus.Generate(corpus.Options{Rollouts: 600, Seed: 3, MistakeRate: 0.2})
	loaded := load.Inputs(in, load.Options{})
	if len(loaded.Resources) < 2048 {
		t.Fatalf("only %d objects: New would not build concurrently", len(loaded.Resources))
	}
	par := graph.New(loaded.DefaultNamespace, loaded.Resources, loaded.Files, loaded.Problems)
	ser := graph.NewSerial(loaded.DefaultNamespace, loaded.Resources, loaded.Files, loaded.Problems)
	if !reflect.DeepEqual(par.Refs(), ser.Refs()) {
		t.Fatal("resolved references differ")
	}
	for _, r := range loaded.Resources {
		if a, b := par.All(r.Kind, r.Namespace, r.Name), ser.All(r.Kind, r.Namespace, r.Name); !reflect.DeepEqual(a, b) {
			t.Fatalf("All(%s %s/%s): %d objects, serially %d", r.Kind, r.Namespace, r.Name, len(a), len(b))
		}
		host := r.Name + "." + r.Namespace
		if par.ServiceForHost(host, "") != ser.ServiceForHost(host, "") ||
			!reflect.DeepEqual(par.DestinationRulesForHost(host, ""), ser.DestinationRulesForHost(host, "")) ||
			!reflect.DeepEqual(par.VirtualServicesForHost(host, ""), ser.VirtualServicesForHost(host, "")) {
			t.Fatalf("host index differs for %s", host)
		}
		if labels, ok := par.PodLabels(r); ok {
			if a, b := par.RolloutsSelectedBy(r.Namespace, labels), ser.RolloutsSelectedBy(r.Namespace, labels); !reflect.DeepEqual(a, b) {
				t.Fatalf("RolloutsSelectedBy(%v): %d Rollouts, serially %d", labels, len(a), len(b))
			}
		}
	}
}

// TestAnnotationKeys: the keys come sorted from the typed object when there
// is one, else from the generic object, whatever their values' types.
func TestAnnotationKeys(t *testing.T) {
	g := load1(t, "r.yaml", `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: typed
  annotations: {b: "1", a: "2"}
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: generic
  annotations: {z: "1", y: 2}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: bare}
`)
	for _, c := range []struct {
		kind, name string
		want       []string
	}{
		{"Rollout", "typed", []string{"a", "b"}},
		{"Widget", "generic", []string{"y", "z"}},
		{"Widget", "bare", []string{}},
	} {
		r := g.Get(c.kind, "shop", c.name)
		if r == nil {
			t.Fatalf("no %s %s", c.kind, c.name)
		}
		if got := r.AnnotationKeys(); !slices.Equal(got, c.want) {
			t.Errorf("%s AnnotationKeys() = %q, want %q", c.name, got, c.want)
		}
	}
	if _, ok := g.Get("Widget", "shop", "generic").Annotation("y"); ok {
		t.Errorf("Annotation of a value that is no string: found")
	}
}
