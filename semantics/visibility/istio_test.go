package visibility_test

// The expected outcomes of these tables are istiod's: the cases of
// pilot/pkg/model/push_context_test.go (TestServiceIndex, TestIsServiceVisible,
// TestServiceIndexDefaultServiceExportTo, TestVirtualServiceWithExportTo,
// TestVirtualServiceWithDefaultExportTo, TestSetDestinationRuleWithExportTo)
// of Istio 1.31, and for what those tests leave out the code they test
// (initServiceRegistry, initVirtualServices, setDestinationRules,
// sidecar.go selectServices, collectImportedServices, pickFirstVisibleNamespace
// in 1.28, pickBestVisibleNamespace in 1.30 and 1.31). The test code is ours.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/semantics/visibility"
)

var versions = []string{"1.28", "1.30", "1.31"}

func modelFor(t *testing.T, version, src string) (*graph.Graph, *visibility.Model) {
	t.Helper()
	g := load.Inputs([]load.Input{{Path: "b.yaml", Data: []byte(src)}}, load.Options{})
	for _, p := range g.Problems {
		t.Fatalf("load: %s", p.Message)
	}
	m := visibility.For(g, version)
	if m.Version() != version {
		t.Fatalf("For(%s).Version() = %s", version, m.Version())
	}
	return g, m
}

// meshConfigMap is the istio ConfigMap of a mesh config body ("" for none).
func meshConfigMap(body string) string {
	if body == "" {
		return ""
	}
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio, namespace: istio-system}\ndata:\n  mesh: |-\n    " +
		strings.ReplaceAll(body, "\n", "\n    ") + "\n---\n"
}

// in is where an object must be visible: namespaces with the outcome, Other
// standing for a namespace the bundle names nowhere.
type in map[string]bool

func yamlList(l []string) string {
	q := make([]string, len(l))
	for i, e := range l {
		q[i] = fmt.Sprintf("%q", e)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func TestIstioServiceExportTo(t *testing.T) {
	all := in{"bar": true, "foo": true, "baz": true, visibility.Other: true}
	none := in{"bar": false, "foo": false, "baz": false, visibility.Other: false}
	cases := []struct {
		name string
		// exportTo as written (nil: absent); the annotation joins it with commas.
		exportTo []string
		mesh     string // defaultServiceExportTo, as YAML ("" unset)
		want     in     // for every version
		want128  in     // for 1.28 when it differs
	}{
		{name: "absent, default unset: public", want: all},
		{name: "*", exportTo: []string{"*"}, want: all},
		{name: ". is the own namespace only", exportTo: []string{"."}, want: in{"bar": true, "foo": false, visibility.Other: false}},
		{name: "~ is no namespace", exportTo: []string{"~"}, want: none},
		{name: "another namespace only: not the own", exportTo: []string{"foo"}, want: in{"bar": false, "foo": true, "baz": false, visibility.Other: false}},
		{name: "own namespace listed", exportTo: []string{"bar"}, want: in{"bar": true, "foo": false, visibility.Other: false}},
		{name: ". and another", exportTo: []string{".", "foo"}, want: in{"bar": true, "foo": true, "baz": false, visibility.Other: false}},
		{name: "* and ~: * wins", exportTo: []string{"*", "~"}, want: all},
		{name: "~ and .: ~ wins", exportTo: []string{"~", "."}, want: none},
		{name: "~ and another: ~ wins", exportTo: []string{"~", "foo"}, want: none},
		{name: "default .", mesh: `["."]`, want: in{"bar": true, "foo": false, visibility.Other: false}},
		{name: "default *", mesh: `["*"]`, want: all},
		{name: "explicit exportTo over the default", exportTo: []string{"*"}, mesh: `["."]`, want: all},
		{name: "default . and foo", mesh: `[".", "foo"]`,
			want:    in{"bar": true, "foo": true, "baz": false, visibility.Other: false},
			want128: in{"bar": true, "foo": false, "baz": false, visibility.Other: false}},
		{name: "default foo only", mesh: `["foo"]`,
			want:    in{"bar": false, "foo": true, "baz": false, visibility.Other: false},
			want128: none},
		{name: "default . and *", mesh: `[".", "*"]`,
			want:    all,
			want128: in{"bar": true, "foo": false, visibility.Other: false}},
	}
	for _, c := range cases {
		for _, v := range versions {
			for _, form := range []string{"annotation", "ServiceEntry"} {
				src := meshConfigMap(func() string {
					if c.mesh == "" {
						return ""
					}
					return "defaultServiceExportTo: " + c.mesh
				}())
				host := "svc.bar.svc.cluster.local"
				if form == "annotation" {
					ann := ""
					if c.exportTo != nil {
						ann = fmt.Sprintf(", annotations: {networking.istio.io/exportTo: %q}", strings.Join(c.exportTo, ","))
					}
					src += "apiVersion: v1\nkind: Service\nmetadata: {name: svc, namespace: bar" + ann + "}\nspec: {ports: [{port: 80}]}\n"
				} else {
					host = "svc.example.com"
					exp := ""
					if c.exportTo != nil {
						exp = ", exportTo: " + yamlList(c.exportTo)
					}
					src += "apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: svc, namespace: bar}\n" +
						"spec: {hosts: [svc.example.com], ports: [{number: 80, name: http, protocol: HTTP}], resolution: DNS" + exp + "}\n"
				}
				_, m := modelFor(t, v, src)
				want := c.want
				if v == "1.28" && c.want128 != nil {
					want = c.want128
				}
				svcs := m.Services(host)
				if len(svcs) != 1 {
					t.Fatalf("%s: %d services", c.name, len(svcs))
				}
				for ns, w := range want {
					if got := svcs[0].Visible(ns); got != w {
						t.Errorf("%s, %s, Istio %s: visible in %s = %v, want %v", c.name, form, v, ns, got, w)
					}
					// A gateway proxy routes to the services exported to its
					// namespace, its own namespace's included only so.
					if got := m.VisibleToGateway(host, ns) != nil; got != w {
						t.Errorf("%s, %s, Istio %s: gateway in %s routes = %v, want %v", c.name, form, v, ns, got, w)
					}
				}
			}
		}
	}
}

func TestIstioServiceAnnotationEmpty(t *testing.T) {
	// An empty annotation is no exportTo at all (kube/conversion.go): the
	// mesh default applies, not "visible nowhere".
	_, m := modelFor(t, "1.31", `
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: bar, annotations: {networking.istio.io/exportTo: ""}}
spec: {ports: [{port: 80}]}
`)
	s := m.Services("svc.bar.svc.cluster.local")[0]
	if !s.Visible("foo") || s.ExportPath != "" {
		t.Errorf("empty annotation: visible in foo %v, path %q", s.Visible("foo"), s.ExportPath)
	}
}

func TestIstioVirtualServiceExportTo(t *testing.T) {
	vs := func(name, ns string, exportTo []string) string {
		exp := ""
		if exportTo != nil {
			exp = ", exportTo: " + yamlList(exportTo)
		}
		return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: %s, namespace: %s}\n"+
			"spec: {hosts: [%s.com]%s, http: [{route: [{destination: {host: %s.com}}]}]}\n---\n", name, ns, name, exp, name)
	}
	// TestVirtualServiceWithExportTo's objects (root namespace zzz).
	bundle := meshConfigMap("rootNamespace: zzz") +
		vs("rule1", "test1", []string{".", "ns1"}) +
		vs("rule2", "test2", []string{"test2", "ns1", "test1"}) +
		vs("rule3", "test3", []string{"test1", "test2", "*"}) +
		vs("rootns", "zzz", nil) +
		vs("hidden", "test1", []string{".", "~"})
	cases := []struct {
		vs   string
		want in
	}{
		{"test1/rule1", in{"test1": true, "ns1": true, "test2": false, visibility.Other: false}},
		{"test2/rule2", in{"test1": true, "test2": true, "ns1": true, visibility.Other: false}},
		{"test3/rule3", in{"test1": true, "test2": true, "ns1": true, visibility.Other: true}},
		{"zzz/rootns", in{"test1": true, "zzz": true, visibility.Other: true}},
		{"test1/hidden", in{"test1": false, visibility.Other: false}}, // "~" hides it
	}
	for _, v := range versions {
		g, m := modelFor(t, v, bundle)
		for _, c := range cases {
			ns, name, _ := strings.Cut(c.vs, "/")
			r := g.Get(kinds.VirtualService, ns, name)
			for cl, w := range c.want {
				if got := m.VirtualServiceExport(r).Has(cl); got != w {
					t.Errorf("Istio %s: %s visible in %s = %v, want %v", v, c.vs, cl, got, w)
				}
			}
		}
	}
	// TestVirtualServiceWithDefaultExportTo: a default naming namespaces
	// besides "." exports there too (1.30+); 1.28 reads "." only.
	for _, c := range []struct {
		mesh    string
		want    in
		want128 in
	}{
		{`[".", "ns1"]`, in{"test1": true, "ns1": true, "test2": false, visibility.Other: false},
			in{"test1": true, "ns1": false, "test2": false, visibility.Other: false}},
		{`["ns1"]`, in{"test1": false, "ns1": true, visibility.Other: false},
			in{"test1": false, "ns1": false, visibility.Other: false}},
	} {
		for _, v := range versions {
			g, m := modelFor(t, v, meshConfigMap("defaultVirtualServiceExportTo: "+c.mesh)+vs("mesh-rule1", "test1", nil))
			r := g.Get(kinds.VirtualService, "test1", "mesh-rule1")
			want := c.want
			if v == "1.28" {
				want = c.want128
			}
			for cl, w := range want {
				if got := m.VirtualServiceExport(r).Has(cl); got != w {
					t.Errorf("Istio %s, default %s: visible in %s = %v, want %v", v, c.mesh, cl, got, w)
				}
			}
		}
	}
}

func TestIstioDestinationRuleLookup(t *testing.T) {
	dr := func(name, ns, host string, exportTo []string) string {
		exp := ""
		if exportTo != nil {
			exp = ", exportTo: " + yamlList(exportTo)
		}
		return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: %s, namespace: %s}\n"+
			"spec: {host: %q%s}\n---\n", name, ns, host, exp)
	}
	// TestSetDestinationRuleWithExportTo's rules (root namespace istio-system).
	bundle := dr("rule1", "test1", "httpbin.org", []string{".", "ns1"}) +
		dr("rule2", "test2", "httpbin.org", []string{"test2", "ns1", "test1", "newns"}) +
		dr("rule3", "test3", "httpbin.org", []string{"test1", "test2", "*"}) +
		dr("rule4-local", "test4", "httpbin.org", []string{"test4"}) +
		dr("rule4", "istio-system", "httpbin.org", nil) +
		dr("rule1", "istio-system", "httpbin.org", []string{"."}) +
		dr("rule2", "istio-system", "*.org", []string{"."}) +
		dr("rule3", "istio-system", "*.app.org", []string{"."}) +
		dr("rule5", "test5", "api.test.com", []string{"istio-system"}) +
		dr("rule6", "test6", "api.test.com", []string{"istio-system"})
	cases := []struct {
		client, svcNS, host string
		want                string // namespace/name of the rule that applies, "" none
	}{
		{"test1", "test1", "httpbin.org", "test1/rule1"},
		{"test1", "test2", "httpbin.org", "test1/rule1"},
		{"test2", "test1", "httpbin.org", "test2/rule2"},
		{"newns", "test2", "httpbin.org", "test2/rule2"},
		{"test3", "test1", "httpbin.org", "test3/rule3"},
		{"test5", "test4", "httpbin.org", "istio-system/rule4"}, // test4's rule is private to test4
		{"ns1", "test1", "httpbin.org", "test1/rule1"},
		{"ns1", "random", "httpbin.org", "istio-system/rule4"},
		{"random", "random", "httpbin.org", "istio-system/rule4"},
		{visibility.Other, "random", "httpbin.org", "istio-system/rule4"},
		{"test3", "random", "httpbin.org", "test3/rule3"},
		{"istio-system", "random", "httpbin.org", "istio-system/rule1"}, // the root's private rule for its own proxies
		{"istio-system", "istio-system", "httpbin.org", "istio-system/rule1"},
		{"istio-system", "istio-system", "foo.app.org", "istio-system/rule3"}, // most specific wildcard
		{"istio-system", "test5", "api.test.com", "test5/rule5"},              // exported to the root namespace
		{"istio-system", "test6", "api.test.com", "test6/rule6"},
		{"istio-system", "test7", "api.test.com", ""},
	}
	for _, v := range versions {
		_, m := modelFor(t, v, bundle)
		for _, c := range cases {
			e := m.DestinationRule(c.host, c.client, c.svcNS)
			got := ""
			if e.Found() {
				got = e.Rules[0].Namespace + "/" + e.Rules[0].Name
			}
			if got != c.want {
				t.Errorf("Istio %s: client %s, service %s, host %s: rule %q, want %q", v, c.client, c.svcNS, c.host, got, c.want)
			}
		}
	}
}

func TestIstioDestinationRuleMeshDefault(t *testing.T) {
	// Only "." of defaultDestinationRuleExportTo counts (setDestinationRules):
	// any other default leaves a rule without exportTo exported everywhere.
	for _, c := range []struct {
		mesh     string
		everyone bool
	}{
		{`["."]`, false},
		{`["foo"]`, true},
		{`["*"]`, true},
		{`[".", "*"]`, false},
	} {
		g, m := modelFor(t, "1.31", meshConfigMap("defaultDestinationRuleExportTo: "+c.mesh)+`
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: reviews, namespace: shop}
spec: {host: reviews}
`)
		r := g.Get(kinds.DestinationRule, "shop", "reviews")
		if got := m.DestinationRule("reviews.shop.svc.cluster.local", "web", "shop").Found(); got != c.everyone {
			t.Errorf("default %s: web gets the rule = %v, want %v", c.mesh, got, c.everyone)
		}
		if got := m.DestinationRuleExport(r).Has("web"); got != c.everyone {
			t.Errorf("default %s: DestinationRuleExport has web = %v, want %v", c.mesh, got, c.everyone)
		}
		if !m.DestinationRuleExport(r).Has("shop") || m.DestinationRule("reviews.shop.svc.cluster.local", "shop", "shop").Level != visibility.LevelClient {
			t.Errorf("default %s: the rule's own namespace does not get it", c.mesh)
		}
	}
}

func TestIstioSidecarEgress(t *testing.T) {
	bundle := `
apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: shop}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: ratings, namespace: shop, annotations: {networking.istio.io/exportTo: foo}}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: catalog, namespace: books}
spec: {ports: [{port: 80}]}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: ratings, namespace: shop}
spec: {hosts: [ratings], http: [{route: [{destination: {host: ratings}}]}]}
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: web}
spec: {egress: [{hosts: ["./*", "shop/*"]}]}
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: shop}
spec: {egress: [{hosts: ["./*"]}]}
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: foo}
spec: {egress: [{hosts: ["*/*", "~shop/ratings.shop.svc.cluster.local"]}]}
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: books}
spec: {egress: [{hosts: ["./*", "~/*"]}]}
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: nothing}
spec: {egress: [{hosts: ["~/*"]}]}
`
	reviews, ratings, catalog := "reviews.shop.svc.cluster.local", "ratings.shop.svc.cluster.local", "catalog.books.svc.cluster.local"
	cases := []struct {
		client, host string
		want         bool // 1.31
		want130      bool // 1.28 and 1.30: "~" is no exclusion prefix
	}{
		{"web", reviews, true, true},
		{"web", ratings, false, false}, // not exported to web
		{"web", catalog, false, false}, // books is not imported
		// A service exported to another namespace only is imported by no
		// egress host of its own namespace.
		{"shop", ratings, false, false},
		{"shop", reviews, true, true},
		{"foo", ratings, false, true}, // 1.31 excludes it
		{"foo", reviews, true, true},
		{"books", catalog, false, true}, // 1.31: "~/*" excludes every host
		{"nothing", catalog, false, false},
		{"nothing", reviews, false, false},
		{visibility.Other, reviews, true, true}, // no Sidecar: everything visible
		{visibility.Other, ratings, false, false},
	}
	for _, v := range versions {
		_, m := modelFor(t, v, bundle)
		for _, c := range cases {
			want := c.want
			if v != "1.31" {
				want = c.want130
			}
			if got := m.ImportsService(c.client, m.Services(c.host)[0]); got != want {
				t.Errorf("Istio %s: %s imports %s = %v, want %v", v, c.client, c.host, got, want)
			}
		}
		// The VirtualService of shop routing to ratings: shop's sidecars
		// resolve the destination to their own namespace's Service whatever
		// its exportTo (collectImportedServices), so the host is in their
		// scope; a gateway in shop has no route to it.
		if m.VisibleService(ratings, "shop") == nil || !m.HostInScope("shop", ratings) {
			t.Errorf("Istio %s: shop's sidecars miss their own namespace's ratings as a VirtualService destination", v)
		}
		if m.VisibleToGateway(ratings, "shop") != nil {
			t.Errorf("Istio %s: a gateway in shop sees ratings, exported to foo only", v)
		}
		if m.VisibleService(ratings, "web") != nil {
			t.Errorf("Istio %s: web resolves ratings, exported to foo only", v)
		}
	}
}

func TestIstioDestinationServicePick(t *testing.T) {
	// A VirtualService destination host without a service in the sidecar's
	// namespace: 1.28 takes the first visible namespace in alphabetical
	// order; 1.30 and 1.31 a visible Kubernetes Service, else the oldest
	// ServiceEntry (load order).
	bundle := `
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: squat, namespace: aaa}
spec: {hosts: [reviews.shop.svc.cluster.local], ports: [{number: 80, name: http, protocol: HTTP}], resolution: DNS}
---
apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: shop}
spec: {ports: [{port: 80}]}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: api, namespace: zz}
spec: {hosts: [api.example.com], ports: [{number: 443, name: tls, protocol: TLS}], resolution: DNS}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: api, namespace: mm}
spec: {hosts: [api.example.com], ports: [{number: 443, name: tls, protocol: TLS}], resolution: DNS}
`
	cases := []struct {
		host, client  string
		want128, want string // namespace of the service picked
	}{
		{"reviews.shop.svc.cluster.local", "web", "aaa", "shop"},
		{"reviews.shop.svc.cluster.local", "aaa", "aaa", "aaa"}, // the client's own namespace first
		{"reviews.shop.svc.cluster.local", "shop", "shop", "shop"},
		{"api.example.com", "web", "mm", "zz"},
	}
	for _, v := range versions {
		_, m := modelFor(t, v, bundle)
		for _, c := range cases {
			want := c.want
			if v == "1.28" {
				want = c.want128
			}
			s := m.VisibleService(c.host, c.client)
			if s == nil || s.Namespace != want {
				t.Errorf("Istio %s: %s from %s picks %v, want namespace %s", v, c.host, c.client, s, want)
			}
		}
	}
}

func TestForVersions(t *testing.T) {
	g := load.Inputs(nil, load.Options{})
	for in, want := range map[string]string{"": "1.28", "1.28": "1.28", "v1.30": "1.30", "1.31.2": "1.31", "1.27": "1.28", "1.32": "1.31"} {
		if got := visibility.For(g, in).Version(); got != want {
			t.Errorf("For(%q).Version() = %s, want %s", in, got, want)
		}
	}
	if visibility.Of(g) != visibility.For(g, "1.28") {
		t.Error("Of is not For under the default version")
	}
}
