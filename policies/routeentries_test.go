package policies

import (
	"slices"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// routeWeightsSet reads which destination entries of a VirtualService's
// routes set weight from what the loader recorded, and decodedWeightsSet
// from the document (only the weights): both must be what the whole object
// says, for every route kind and index, in block and flow style, and for an
// index past the routes, also when asked again (the decode's maps are
// recycled).
func TestRouteWeightsSetMatchesWholeObject(t *testing.T) {
	vs := `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: web, namespace: shop}
spec:
  hosts: [web]
  http:
  - name: a
    route:
    - destination: {host: web-stable}
      weight: 90
    - destination:
        host: web-canary
  - name: b
    route: [{destination: {host: x}}, {destination: {host: yy}, weight: 0}]
  tls:
  - match: [{sniHosts: [web]}]
    route:
    - destination: {host: web-stable}
  tcp:
  - route:
    - weight: 100
      destination: {host: web-stable}
`
	g := load.Inputs([]load.Input{{Path: "vs.yaml", Data: []byte(vs)}}, load.Options{})
	if len(g.Problems) > 0 || len(g.Resources) != 1 {
		t.Fatalf("problems %v, resources %d", g.Problems, len(g.Resources))
	}
	r := g.Resources[0]
	spec, _ := r.Object()["spec"].(map[string]any)
	checked, set := 0, 0
	for _, kind := range []graph.RouteKind{graph.HTTP, graph.TLS, graph.TCP, graph.HTTP} {
		routes, _ := spec[string(kind)].([]any)
		for i := range len(routes) + 1 {
			var whole []any
			if i < len(routes) {
				whole, _ = routes[i].(map[string]any)["route"].([]any)
			}
			rt := &graph.RouteRef{Kind: kind, Index: i}
			got := routeWeightsSet(r, rt)
			if r.WeightsSet() == nil {
				t.Fatal("the loader recorded no WeightsSet for the VirtualService")
			}
			if decoded := decodedWeightsSet(r, rt); !slices.Equal(decoded, got) {
				t.Fatalf("%s[%d]: the loader recorded %v, the document says %v", kind, i, got, decoded)
			}
			if len(got) != len(whole) {
				t.Fatalf("%s[%d]: %d entries, the whole object has %d", kind, i, len(got), len(whole))
			}
			for j := range whole {
				if got[j] != hasKey(whole, j, "weight") {
					t.Errorf("%s[%d].route[%d]: weight set %v, the whole object says %v",
						kind, i, j, got[j], hasKey(whole, j, "weight"))
				}
				if hasKey(whole, j, "weight") {
					set++
				}
				checked++
			}
		}
	}
	if checked != 10 || set != 5 {
		t.Fatalf("checked %d entries, %d with weight; want 10 and 5 (http twice)", checked, set)
	}
}
