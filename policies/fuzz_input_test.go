package policies

import (
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
)

// FuzzRegoInput loads arbitrary bytes and converts the graph into the Rego
// input, whole objects and the built-in policies' projection. It must not
// panic, and every item's object in the whole-object input must be the
// manifest as OPA's own conversion of the decoded value gives it: the
// hand-written converter (interned strings, typed terms, lazy indexes) may
// not change a value.
func FuzzRegoInput(f *testing.F) {
	for _, s := range []string{
		"apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r, namespace: shop}\nspec:\n  strategy: {canary: {trafficRouting: {istio: {virtualService: {name: vs, routes: [primary]}}}, steps: [{setWeight: 20}]}}\n",
		"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: vs, namespace: shop}\nspec: {hosts: [a], http: [{name: primary, route: [{destination: {host: a}, weight: 100}, {destination: {host: b}, weight: 0}]}]}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: 1, b: 1.5, c: true, d: null, e: [1, \"x\", {f: -3}], g: 9223372036854775807, h: 1e400}\n",
		"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: app}\nspec: {syncPolicy: {automated: {selfHeal: true}, syncOptions: [RespectIgnoreDifferences=true]}}\n",
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: s}}\n",
		"a: &a {x: 1}\nb: *a\n",
	} {
		f.Add([]byte(s))
	}
	if err := prepareBuiltin(); err != nil { // builtin.fields: the built-in policies' projection
		f.Fatal(err)
	}
	every := newKindSet([]string{AllKinds})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := load.Inputs([]load.Input{{Path: "f.yaml", Data: data}}, load.Options{Limits: load.Limits{MaxAliasNodes: 20000}})
		whole := inputFor(g, every, wholeObjects(), true, allParts).value(rules.Globals{IstioVersion: "1.28"}, rules.ModeCLI)
		_ = inputFor(g, every, builtin.fields, builtin.templates, builtin.parts).value(rules.Globals{}, rules.ModeWebhook)
		obj, ok := whole.(ast.Object)
		if !ok {
			t.Fatalf("input is %T", whole)
		}
		items, ok := obj.Get(ast.InternedTerm("resources")).Value.(*ast.Array)
		if !ok || items.Len() != len(g.Resources) {
			t.Fatalf("input.resources: %v items for %d resources", items, len(g.Resources))
		}
		for i, r := range g.Resources {
			got := items.Elem(i).Value.(ast.Object).Get(ast.InternedTerm("object"))
			want, err := ast.InterfaceToValue(r.Object())
			if err != nil {
				continue // a value OPA's conversion itself refuses
			}
			if got == nil || got.Value.Compare(want) != 0 {
				t.Fatalf("%s %s: input object\n%v\nwant\n%v", r.Kind, r.Name, got, want)
			}
		}
	})
}
