package load_test

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
)

// FuzzLoad feeds arbitrary bytes to the loader: it must never panic, every
// problem it records must carry a position in the input, and the node-free
// fast path must load exactly what the full path loads.
func FuzzLoad(f *testing.F) {
	seeds := []string{
		"",
		"apiVersion: v1\nkind: Service\nmetadata: {name: a}\n",
		"apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r}\nspec:\n  strategy:\n    canary:\n      steps:\n      - setWieght: 20\n      - setWeight: 120\n",
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: x}}\n",
		"{\"apiVersion\": \"v1\", \"kind\": \"Service\", \"metadata\": {\"name\": \"j\"}}",
		"a: &a [1, 2]\nb: &b [*a, *a]\nc: [*b, *b]\n",
		"--- !tag\n...\n---\n# c\n",
		"\xef\xbb\xbfkind: [\r\n",
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Values.name }}\n",
		"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: v}\nspec: {hosts: [a], http: [{route: [{destination: {host: a}, weight: x}]}]}\n",
		"<<: *missing\n",
		"a: 1\na: 2\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, full := loadBothWays([]load.Input{{Path: "f.yaml", Data: data}}, load.Options{Limits: load.Limits{MaxAliasNodes: 20000}})
		compareLoads(t, g, full)
		for _, p := range g.Problems {
			if p.Pos.Line < 1 || p.Pos.Column < 1 {
				t.Fatalf("problem %s without a position: %+v", p.RuleID, p)
			}
		}
		for _, r := range g.Resources {
			for _, path := range []string{"metadata.name", "spec", "spec.strategy.canary.steps[0]", "spec.http[0].route[1].weight", `metadata.annotations["a/b"]`} {
				if pos := r.Pos(path); pos.Line < 1 {
					t.Fatalf("%s: Pos(%q) = %+v", r.Name, path, pos)
				}
			}
		}
	})
}
