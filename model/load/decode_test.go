package load_test

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	networkingv1 "istio.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rolloutlint/rolloutlint/model/kinds"
)

const directVS = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: reviews
  namespace: shop
  labels: {team: a}
spec:
  hosts: [reviews]
  http:
  - name: primary
    match:
    - headers: {x-canary: {exact: "yes"}}
    route:
    - destination: {host: reviews, subset: stable, port: {number: 9080}}
      weight: 90
    - destination: {host: reviews, subset: canary}
      weight: 10
    retries: {attempts: 3, perTryTimeout: 2s}
    timeout: 10s
status:
  observedGeneration: 4
`

// TestIstioSpecDecodedDirectly checks the whole typed object of the direct
// path (metadata and status by the converter, spec by DecodeProto) against
// the converter on the whole object, the reference path.
func TestIstioSpecDecodedDirectly(t *testing.T) {
	g := loadOne(t, "vs.yaml", directVS)
	if len(g.Problems) != 0 {
		t.Fatalf("problems: %v", problems(g))
	}
	r := g.Resources[0]
	// The spec is one DecodeProto takes (not left to the fallback).
	if err := kinds.DecodeProto(&networkingv1.VirtualService{}, r.Object()["spec"].(map[string]any)); err != nil {
		t.Fatalf("DecodeProto declines the spec: %v", err)
	}
	got := r.VirtualService()
	want := &kinds.VirtualServiceObject{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(r.Object(), want); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&got.Spec, &want.Spec) {
		t.Errorf("spec differs:\n got %v\nwant %v", &got.Spec, &want.Spec)
	}
	if got.Name != "reviews" || got.Namespace != "shop" || got.Labels["team"] != "a" || got.APIVersion != "networking.istio.io/v1" {
		t.Errorf("metadata not decoded: %+v %+v", got.TypeMeta, got.ObjectMeta)
	}
	if gs, ws := jsonOf(t, got.Status), jsonOf(t, want.Status); gs != ws {
		t.Errorf("status %s, want %s", gs, ws)
	}
	if w := got.Spec.GetHttp()[0].GetRoute()[1].GetWeight(); w != 10 {
		t.Errorf("canary weight %d, want 10", w)
	}
}

// TestIstioSpecUndecodableKeepsMessage: a value the schema walk lets through
// but jsonpb rejects (a number where a string goes) is still reported as
// before, from the fallback path, with the converter's reason.
func TestIstioSpecUndecodableKeepsMessage(t *testing.T) {
	src := strings.Replace(directVS, "name: primary", "name: 5", 1)
	g := loadOne(t, "vs.yaml", src)
	if len(g.Problems) != 1 {
		t.Fatalf("problems: %v, want one", problems(g))
	}
	p := g.Problems[0]
	if p.RuleID != "RL0003" || p.Pos.Line != 4 || !strings.Contains(p.Message, "VirtualService could not be decoded") || !strings.Contains(p.Message, "json: cannot unmarshal number") {
		t.Errorf("got %s@%d:%d %q", p.RuleID, p.Pos.Line, p.Pos.Column, p.Message)
	}
	if g.Resources[0].VirtualService() == nil {
		t.Error("the object is still typed, so other rules run")
	}
}

// TestIstioMistypedValuePrunedThenDecoded: a mistyped value is reported at its
// line and dropped; the rest of the spec still decodes (directly).
func TestIstioMistypedValuePrunedThenDecoded(t *testing.T) {
	src := strings.Replace(directVS, "weight: 90", "weight: ninety", 1)
	g := loadOne(t, "vs.yaml", src)
	if got := problems(g); len(got) != 1 || got[0] != "RL0003@15:15" {
		t.Fatalf("problems %v, want [RL0003@15:15]", got)
	}
	vs := g.Resources[0].VirtualService()
	routes := vs.Spec.GetHttp()[0].GetRoute()
	if len(routes) != 2 || routes[0].GetWeight() != 0 || routes[1].GetWeight() != 10 || routes[0].GetDestination().GetSubset() != "stable" {
		t.Errorf("routes %v", routes)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
