package visibility_test

import (
	"reflect"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/semantics/visibility"
)

func model(t *testing.T, src string) (*graph.Graph, *visibility.Model) {
	t.Helper()
	g := load.Inputs([]load.Input{{Path: "b.yaml", Data: []byte(src)}}, load.Options{})
	for _, p := range g.Problems {
		t.Fatalf("load: %s", p.Message)
	}
	return g, visibility.Of(g)
}

func TestServiceExport(t *testing.T) {
	_, m := model(t, `
apiVersion: v1
kind: Service
metadata: {name: private, namespace: shop, annotations: {networking.istio.io/exportTo: "."}}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: listed, namespace: shop, annotations: {networking.istio.io/exportTo: "web, ."}}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: public, namespace: shop}
spec: {ports: [{port: 80}]}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ext, namespace: shop}
spec: {hosts: ["*.example.com"], exportTo: ["."], ports: [{number: 443, name: tls, protocol: TLS}], resolution: NONE}
`)
	cases := []struct {
		host, ns string
		want     bool
	}{
		{"private.shop.svc.cluster.local", "shop", true},
		{"private.shop.svc.cluster.local", "web", false},
		{"private.shop.svc.cluster.local", visibility.Other, false},
		{"listed.shop.svc.cluster.local", "web", true},
		{"listed.shop.svc.cluster.local", "shop", true},
		{"listed.shop.svc.cluster.local", "books", false},
		{"public.shop.svc.cluster.local", visibility.Other, true},
		{"api.example.com", "shop", true},
		{"api.example.com", "web", false},
	}
	for _, c := range cases {
		svcs := m.Services(c.host)
		if len(svcs) != 1 {
			t.Fatalf("%s: %d services", c.host, len(svcs))
		}
		if got := svcs[0].Visible(c.ns); got != c.want {
			t.Errorf("%s visible in %s = %v, want %v", c.host, c.ns, got, c.want)
		}
		if got := m.VisibleToGateway(c.host, c.ns) != nil; got != c.want {
			t.Errorf("%s visible to a gateway in %s = %v, want %v", c.host, c.ns, got, c.want)
		}
	}
	// A sidecar uses its own namespace's service whatever its exportTo.
	if m.VisibleService("private.shop.svc.cluster.local", "shop") == nil {
		t.Error("private Service not used by its own namespace")
	}
}

func TestMeshDefaults(t *testing.T) {
	g, m := model(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: istio, namespace: mesh-root}
data:
  mesh: |-
    rootNamespace: mesh-root
    defaultServiceExportTo: ["."]
    defaultVirtualServiceExportTo: ["."]
    defaultDestinationRuleExportTo: ["."]
---
apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: shop}
spec: {ports: [{port: 80}]}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: reviews, namespace: shop}
spec: {hosts: [reviews], http: [{route: [{destination: {host: reviews}}]}]}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: reviews, namespace: shop}
spec: {host: reviews, subsets: [{name: v1, labels: {v: "1"}}]}
`)
	if m.Mesh.RootNamespace != "mesh-root" || m.Mesh.Source == nil {
		t.Fatalf("mesh = %+v", m.Mesh)
	}
	if m.Services("reviews.shop.svc.cluster.local")[0].Visible("web") {
		t.Error("defaultServiceExportTo . ignored")
	}
	vs := g.Get(kinds.VirtualService, "shop", "reviews")
	if got := m.VirtualServiceExport(vs).String(); got != "shop" {
		t.Errorf("VirtualService export = %s, want shop", got)
	}
	// The DestinationRule is private under the default: a client elsewhere
	// gets none; its own namespace gets it as the client namespace's.
	if e := m.DestinationRule("reviews.shop.svc.cluster.local", "web", "shop"); e.Found() {
		t.Errorf("private DestinationRule reached web: %+v", e)
	}
	if e := m.DestinationRule("reviews.shop.svc.cluster.local", "shop", "shop"); e.Level != visibility.LevelClient {
		t.Errorf("level in shop = %q", e.Level)
	}
}

func TestDestinationRulePrecedence(t *testing.T) {
	g, m := model(t, `
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: svc-ns, namespace: shop}
spec: {host: reviews, subsets: [{name: stable, labels: {a: b}}, {name: canary, labels: {a: c}}]}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: client-ns, namespace: web}
spec: {host: reviews.shop.svc.cluster.local, trafficPolicy: {connectionPool: {tcp: {maxConnections: 10}}}}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: only-books, namespace: shop}
spec: {host: "*.shop.svc.cluster.local", exportTo: [books]}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: mesh-wide, namespace: istio-system}
spec: {host: "*.local", trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: private, namespace: payments}
spec: {host: pay, exportTo: ["."]}
`)
	host := "reviews.shop.svc.cluster.local"
	get := func(ns, name string) *graph.Resource { return g.Get(kinds.DestinationRule, ns, name) }
	cases := []struct {
		client string
		level  visibility.Level
		rule   *graph.Resource
	}{
		{"shop", visibility.LevelClient, get("shop", "svc-ns")},
		{"web", visibility.LevelClient, get("web", "client-ns")}, // shadows the service namespace's subsets
		{"books", visibility.LevelService, get("shop", "svc-ns")},
		{visibility.Other, visibility.LevelService, get("shop", "svc-ns")},
	}
	for _, c := range cases {
		e := m.DestinationRule(host, c.client, "shop")
		if e.Level != c.level || len(e.Rules) != 1 || e.Rules[0] != c.rule {
			t.Errorf("client %s: level %q rules %v, want %q %s", c.client, e.Level, names(e.Rules), c.level, c.rule.Name)
		}
	}
	if e := m.DestinationRule(host, "web", "shop"); e.Subset("canary") != nil {
		t.Error("web sees the canary subset through the shadowed rule")
	}
	// A host of shop without its own rule: the exact-host rule does not
	// apply, the wildcard exported to books does only for books, and the
	// root namespace's rule for everyone else.
	other := "ratings.shop.svc.cluster.local"
	if e := m.DestinationRule(other, "books", "shop"); e.Level != visibility.LevelService || e.Rules[0] != get("shop", "only-books") {
		t.Errorf("books: %q %v", e.Level, names(e.Rules))
	}
	if e := m.DestinationRule(other, "web", "shop"); e.Level != visibility.LevelRoot || e.Host != "*.local" {
		t.Errorf("web: %q %q %v", e.Level, e.Host, names(e.Rules))
	}
	// exportTo "." keeps a rule to its namespace.
	if e := m.DestinationRule("pay.payments.svc.cluster.local", "web", "payments"); e.Level != visibility.LevelRoot {
		t.Errorf("private rule: %q %v", e.Level, names(e.Rules))
	}
}

func TestSidecarImports(t *testing.T) {
	g, m := model(t, `
apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: shop}
spec: {ports: [{port: 80}]}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: reviews-split, namespace: routing}
spec: {hosts: [reviews.shop.svc.cluster.local], http: [{route: [{destination: {host: reviews.shop.svc.cluster.local}}]}]}
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: web}
spec: {egress: [{hosts: ["./*", "shop/*"]}]}
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: books}
spec: {egress: [{hosts: ["*/reviews.shop.svc.cluster.local"]}]}
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: istio-system}
spec: {egress: [{hosts: ["./*", "istio-system/*"]}]}
`)
	vs := g.Get(kinds.VirtualService, "routing", "reviews-split")
	svc := m.Services("reviews.shop.svc.cluster.local")[0]
	for _, c := range []struct {
		ns          string
		vsIn, svcIn bool
	}{
		{"web", false, true}, // imports the Service by its namespace, not the VirtualService of routing
		{"books", true, true},
		{"routing", true, false}, // the root Sidecar: "./*" imports routing's own VirtualService
		{visibility.Other, false, false},
	} {
		if got := m.ImportsVirtualService(c.ns, vs); got != c.vsIn {
			t.Errorf("%s imports the VirtualService = %v, want %v", c.ns, got, c.vsIn)
		}
		if got := m.ImportsService(c.ns, svc); got != c.svcIn {
			t.Errorf("%s imports the Service = %v, want %v", c.ns, got, c.svcIn)
		}
	}
	if got := m.SidecarNamespaces(vs); got.IsAll() || !reflect.DeepEqual(got.Members(), []string{"books", "routing"}) {
		t.Errorf("SidecarNamespaces = %v", got)
	}
	// Candidates name the namespaces that can differ from the rest: the
	// VirtualService's, the service's, the root, and web (a Sidecar of its
	// own importing from shop does not matter, one importing from routing
	// would), books ("*/" imports may reach any namespace).
	if got := m.Candidates(vs, "reviews.shop.svc.cluster.local"); !reflect.DeepEqual(got, []string{"books", "istio-system", "routing", "shop", visibility.Other}) {
		t.Errorf("Candidates = %q", got)
	}
}

func TestGatewayProxies(t *testing.T) {
	g, m := model(t, `
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: public, namespace: shop}
spec: {selector: {istio: ingressgateway}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["*"]}]}
---
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: internal, namespace: shop}
spec: {selector: {istio: internal}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["*"]}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: istio-ingressgateway, namespace: istio-ingress}
spec:
  selector: {matchLabels: {istio: ingressgateway}}
  template:
    metadata: {labels: {istio: ingressgateway, app: gw}}
    spec: {containers: [{name: istio-proxy, image: proxyv2}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: public, namespace: edge}
spec: {gatewayClassName: istio, listeners: [{name: http, port: 80, protocol: HTTP}]}
`)
	pub := m.GatewayProxies(g.GetGroup(kinds.GroupIstio, kinds.Gateway, "shop", "public"))
	if !reflect.DeepEqual(pub.Namespaces, []string{"istio-ingress"}) || pub.Assumed {
		t.Errorf("public: %+v", pub)
	}
	in := m.GatewayProxies(g.GetGroup(kinds.GroupIstio, kinds.Gateway, "shop", "internal"))
	if !reflect.DeepEqual(in.Namespaces, []string{"shop"}) || !in.Assumed {
		t.Errorf("internal: %+v", in)
	}
	k := m.GatewayProxies(g.GetGroup(kinds.GroupGatewayAPI, kinds.Gateway, "edge", "public"))
	if !reflect.DeepEqual(k.Namespaces, []string{"edge"}) || k.Assumed {
		t.Errorf("Gateway API: %+v", k)
	}
}

func TestHostMatching(t *testing.T) {
	for _, c := range []struct {
		h, o   string
		subset bool
	}{
		{"a.example.com", "*.example.com", true},
		{"a.b.example.com", "*.example.com", true},
		{"*.b.example.com", "*.example.com", true},
		{"*.example.com", "*.b.example.com", false},
		{"example.com", "*.example.com", false},
		{"x", "*", true},
		{"a.com", "a.com", true},
	} {
		if got := visibility.SubsetOf(c.h, c.o); got != c.subset {
			t.Errorf("SubsetOf(%q, %q) = %v", c.h, c.o, got)
		}
	}
	if !visibility.Matches("*.example.com", "a.example.com") || visibility.Matches("a.com", "b.com") {
		t.Error("Matches")
	}
}

func TestResolveGatewayName(t *testing.T) {
	for ref, want := range map[string]string{
		"gw":                                "shop/gw",
		"./gw":                              "shop/gw",
		"istio-system/gw":                   "istio-system/gw",
		"gw.istio-system":                   "istio-system/gw",
		"gw.istio-system.svc.cluster.local": "istio-system/gw",
	} {
		ns, name := visibility.ResolveGatewayName(ref, "shop")
		if ns+"/"+name != want {
			t.Errorf("%s → %s/%s, want %s", ref, ns, name, want)
		}
	}
}

func names(rs []*graph.Resource) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Namespace+"/"+r.Name)
	}
	return out
}
