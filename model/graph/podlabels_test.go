package graph_test

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
)

const twoRollouts = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: cart, namespace: shop}
spec:
  selector: {matchLabels: {app: cart}}
  template:
    metadata: {labels: {app: cart, team: shop, tier: web}}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: checkout, namespace: shop}
spec:
  selector: {matchLabels: {app: checkout}}
  template:
    metadata: {labels: {app: checkout, team: shop}}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: cart, namespace: other}
spec:
  selector: {matchLabels: {app: cart}}
  template:
    metadata: {labels: {app: cart, team: shop, tier: web}}
`

func TestRolloutsSelectedBy(t *testing.T) {
	g := load.Inputs([]load.Input{{Path: "b.yaml", Data: []byte(twoRollouts)}}, load.Options{})
	cases := []struct {
		ns   string
		sel  map[string]string
		want []string
	}{
		{"shop", map[string]string{"team": "shop"}, []string{"cart", "checkout"}},
		{"shop", map[string]string{"team": "shop", "tier": "web"}, []string{"cart"}},
		{"shop", map[string]string{"team": "shop", "rollouts-pod-template-hash": "abc"}, []string{"cart", "checkout"}},
		{"shop", map[string]string{"team": "shop", "app": "search"}, nil},
		{"other", map[string]string{"app": "cart"}, []string{"cart"}},
		{"shop", map[string]string{}, nil},
	}
	for _, c := range cases {
		got := g.RolloutsSelectedBy(c.ns, c.sel, "rollouts-pod-template-hash")
		var names []string
		for _, r := range got {
			if r.Namespace != c.ns {
				t.Errorf("%v: got Rollout %s/%s from another namespace", c.sel, r.Namespace, r.Name)
			}
			names = append(names, r.Name)
		}
		if len(names) != len(c.want) {
			t.Errorf("%s %v: got %v, want %v", c.ns, c.sel, names, c.want)
			continue
		}
		for i := range names {
			if names[i] != c.want[i] {
				t.Errorf("%s %v: got %v, want %v", c.ns, c.sel, names, c.want)
			}
		}
	}
}
