package xds_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// TestTablesComplete checks every version's table: each config kind and each
// write kind has a row, and every row cites the reference.
func TestTablesComplete(t *testing.T) {
	kinds := []xds.ConfigKind{xds.KindVirtualService, xds.KindDestinationRule, xds.KindServiceEntry, xds.KindEndpoints}
	writes := []plan.WriteKind{plan.WriteVSWeight, plan.WriteVSRouteAdd, plan.WriteVSRouteRemove, plan.WriteServiceSelector, plan.WriteDRSubsetLabel, plan.WriteScale}
	for _, v := range xds.Versions() {
		m, err := xds.ForVersion(v)
		if err != nil {
			t.Fatal(err)
		}
		have := map[xds.ConfigKind]bool{}
		for _, k := range m.Kinds {
			have[k.Kind] = true
			if !strings.Contains(k.Cite, "§") {
				t.Errorf("%s %s: no citation", v, k.Kind)
			}
		}
		for _, k := range kinds {
			if !have[k] {
				t.Errorf("%s: no row for %s", v, k)
			}
		}
		haveW := map[plan.WriteKind]bool{}
		for _, c := range m.Changes {
			haveW[c.Write] = true
			if !strings.Contains(c.Cite, "§") {
				t.Errorf("%s %s: no citation", v, c.Write)
			}
			for _, e := range c.Events {
				if !have[e.Kind] {
					t.Errorf("%s %s: event kind %s has no kind row", v, c.Write, e.Kind)
				}
			}
		}
		for _, w := range writes {
			if !haveW[w] {
				t.Errorf("%s: no change row for %s", v, w)
			}
		}
	}
}

// TestSidecarScoping: a root-namespace Sidecar that imports only its own
// namespace makes the mesh default narrow; a namespace Sidecar that imports
// the host brings that namespace back.
func TestSidecarScoping(t *testing.T) {
	g := load.Inputs([]load.Input{{Path: "s.yaml", Data: []byte(`
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: istio-system}
spec:
  egress:
  - hosts: ["./*"]
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: checkout}
spec:
  egress:
  - hosts: ["pay/*", "./*"]
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: search}
spec:
  egress:
  - hosts: ["*/catalog.shop.svc.cluster.local"]
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: pinned, namespace: search}
spec:
  workloadSelector: {labels: {app: x}}
  egress:
  - hosts: ["*/*"]
---
apiVersion: v1
kind: Service
metadata: {name: pay, namespace: pay}
spec:
  selector: {app: pay}
  ports: [{port: 80}]
`)}}, load.Options{})
	sc := xds.NewScoper(g)
	// The mesh default's "./*" still imports pay into pay's own namespace.
	if got := sc.Host(graph.ServiceFQDN("pay", "pay")).String(); got != "all gateways; sidecars in checkout,pay" {
		t.Errorf("pay scope = %q", got)
	}
	// catalog is imported by search's namespace-wide Sidecar (the
	// workload-selected one does not define the namespace default), and by
	// shop itself through the mesh default's "./*".
	if got := sc.Host(graph.ServiceFQDN("catalog", "shop")).String(); got != "all gateways; sidecars in search,shop" {
		t.Errorf("catalog scope = %q", got)
	}
}

// TestProofsNameScenarios: a row's Proof names conformance scenarios that
// exist (testdata/xds-conformance/scenarios), whose recorded observations
// show the behaviour (internal/xdsconformance compares them).
func TestProofsNameScenarios(t *testing.T) {
	check := func(v, row, proof string) {
		for _, name := range strings.Split(proof, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if _, err := os.Stat(filepath.Join("..", "..", "testdata", "xds-conformance", "scenarios", name+".yaml")); err != nil {
				t.Errorf("%s %s: proof %q is no conformance scenario", v, row, name)
			}
		}
	}
	for _, v := range xds.Versions() {
		m, _ := xds.ForVersion(v)
		for _, k := range m.Kinds {
			check(v, string(k.Kind), k.Proof)
		}
		for _, e := range m.Endpoints {
			check(v, string(e.Change), e.Proof)
			if !strings.Contains(e.Cite, "§") {
				t.Errorf("%s %s: no citation", v, e.Change)
			}
		}
	}
}
