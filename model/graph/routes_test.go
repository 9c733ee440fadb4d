package graph_test

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
)

const vsDoc = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: checkout, namespace: shop}
spec:
  hosts: [checkout]
  http:
  - name: primary
    mirror: {host: checkout, subset: shadow}
    mirrors:
    - destination: {host: audit, subset: v1}
    route:
    - destination: {host: checkout, subset: stable}
      weight: 90
    - destination: {host: checkout, subset: canary}
      weight: 10
  tcp:
  - route:
    - destination: {host: db, subset: primary}
`

func TestRouteDestinationsAndSubsetUses(t *testing.T) {
	g := load.Inputs([]load.Input{{Path: "vs.yaml", Data: []byte(vsDoc)}}, load.Options{})
	vs := g.Get("VirtualService", "shop", "checkout")
	spec := &vs.VirtualService().Spec
	ds := graph.RouteDestinations(spec, graph.HTTP, 0)
	if len(ds) != 2 || ds[1].Subset != "canary" || ds[1].Weight != 10 {
		t.Fatalf("destinations: %+v", ds)
	}
	if p := vs.Pos(ds[1].WeightPath()); p.Line != 15 {
		t.Errorf("canary weight at line %d, want 15", p.Line)
	}
	if graph.RouteDestinations(spec, graph.HTTP, 1) != nil || graph.RouteDestinations(spec, graph.TLS, 0) != nil {
		t.Error("a route that does not exist has destinations")
	}
	uses := graph.SubsetUses(spec)
	want := []struct {
		subset string
		line   int
	}{{"stable", 12}, {"canary", 14}, {"shadow", 8}, {"v1", 10}, {"primary", 18}}
	if len(uses) != len(want) {
		t.Fatalf("subset uses: %+v", uses)
	}
	for i, u := range uses {
		if u.Subset != want[i].subset || vs.Pos(u.Path).Line != want[i].line {
			t.Errorf("use %d: %s at line %d (%s), want %s at line %d", i, u.Subset, vs.Pos(u.Path).Line, u.Path, want[i].subset, want[i].line)
		}
	}
}
