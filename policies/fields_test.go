package policies

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/fastyaml"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
)

func TestReadFields(t *testing.T) {
	mods, err := parse([]Source{{Name: "p.rego", Text: `package p

import data.rolloutlint.lib

a if input.resources[0].object.spec.replicas > 1

b if {
	some item in lib.resources("Service")
	item.object.spec.selector["app"]
	object.get(item.object, ["metadata", "labels"], {})
	object.get(item.object.spec, "ports", [])
}

c(vs, k) := vs.object.spec[k][0].name
`}})
	if err != nil {
		t.Fatal(err)
	}
	got := readFields(nonTestModules(mods)).String()
	if want := "metadata.labels, spec.ports, spec.replicas, spec.selector.app, spec[*][*].name"; got != want {
		t.Errorf("fields %q, want %q (spec[k][0].name keeps the names only)", got, want)
	}

	mods, err = parse([]Source{{Name: "p.rego", Text: `package p

d if {
	some item in input.resources
	some k, _ in item.object
	k == "spec"
}
`}})
	if err != nil {
		t.Fatal(err)
	}
	if f := readFields(nonTestModules(mods)); !f.whole {
		t.Errorf("iterating over an object read %q, want whole objects", f)
	}
}

func TestFieldTree(t *testing.T) {
	a, b := &fieldTree{}, &fieldTree{}
	a.add(keyPath("spec", "replicas"))
	b.add(keyPath("spec"))
	if !b.covers(a) || a.covers(b) {
		t.Errorf("covers: %q ⊇ %q should hold, not the converse", b, a)
	}
	if u := a.union(b).String(); u != "spec" {
		t.Errorf("union %q, want spec", u)
	}
	if !wholeObjects().covers(b) || b.covers(wholeObjects()) {
		t.Error("whole objects cover every tree and no tree but them covers them")
	}
}

// TestFieldTreeAny: a computed key or index reads the fields after it in
// every entry of a mapping and every element of a list.
func TestFieldTreeAny(t *testing.T) {
	names := &fieldTree{}
	names.add([]step{{key: "spec"}, {key: "http"}, {any: true}, {key: "name"}})
	names.add([]step{{key: "spec"}, {key: "http"}, {key: "primary"}, {key: "weight"}})
	names.seal()
	if got, want := names.String(), "spec.http.primary.weight, spec.http[*].name"; got != want {
		t.Errorf("String %q, want %q", got, want)
	}
	routes := &fieldTree{}
	routes.add(keyPath("spec", "http"))
	routes.seal()
	if !routes.covers(names) || names.covers(routes) {
		t.Errorf("covers: %q ⊇ %q should hold, not the converse", routes, names)
	}
	one := &fieldTree{}
	one.add(keyPath("spec", "http", "x", "name"))
	if !names.covers(one.seal()) {
		t.Errorf("%q should cover %q: [*] stands for the key x", names, one)
	}

	obj := map[string]any{"spec": map[string]any{
		"http": []any{
			map[string]any{"name": "a", "route": []any{map[string]any{"weight": int64(100)}}},
			map[string]any{"route": []any{}},
			"not a mapping",
		},
		"tcp": []any{map[string]any{"name": "t"}},
	}}
	got, err := newValueConverter().termFields(obj, names)
	if err != nil {
		t.Fatal(err)
	}
	want := ast.MustParseTerm(`{"spec": {"http": [{"name": "a"}, {}, "not a mapping"]}}`)
	if got.Value.Compare(want.Value) != 0 {
		t.Errorf("spec.http[*].name of a list: got %v, want %v", got, want)
	}

	// On a mapping, a key named in the tree gets its own fields and those
	// of [*].
	byKey := map[string]any{"spec": map[string]any{"http": map[string]any{
		"primary": map[string]any{"name": "p", "weight": int64(3), "extra": true},
		"other":   map[string]any{"name": "o", "weight": int64(4)},
	}}}
	got, err = newValueConverter().termFields(byKey, names)
	if err != nil {
		t.Fatal(err)
	}
	want = ast.MustParseTerm(`{"spec": {"http": {"primary": {"name": "p", "weight": 3}, "other": {"name": "o"}}}}`)
	if got.Value.Compare(want.Value) != 0 {
		t.Errorf("spec.http[*].name of a mapping: got %v, want %v", got, want)
	}
}

// seedInput converts g with the given kinds and fields, every item built,
// and puts the conversion first in g's memo, so the policies of the next
// lint use it.
func seedInput(g *graph.Graph, ks kindSet, f *fieldTree, templates bool) *bundleInput {
	return seedInputParts(g, ks, f, templates, allParts)
}

// TestProjectedInputSameFindings lints bundles twice with the built-in
// policies, once over whole objects and once over the fields the policies
// read: the findings must be the same, and the projection must really leave
// the other fields out.
func TestProjectedInputSameFindings(t *testing.T) {
	rs, err := LoadBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	// The projection is the compiled policies' (builtin.fields): compile
	// them all now, so the test does not depend on an earlier one having.
	if err := prepareBuiltin(); err != nil {
		t.Fatal(err)
	}
	ks := kindSet{}
	for _, r := range rs {
		ks = ks.union(newKindSet(r.Kinds))
	}
	bundles := policyBundles(t)
	findings := func(g *graph.Graph, argocd bool) []string { return findingsOf(t, g, rs, argocd) }
	total := 0
	for name, build := range bundles {
		for _, argocd := range []bool{false, true} {
			whole, projected := build(), build()
			seedInput(whole, ks, wholeObjects(), true)
			in := seedInput(projected, ks, builtin.fields, builtin.templates)
			before := Conversions()
			w, p := findings(whole, argocd), findings(projected, argocd)
			if n := Conversions() - before; n != 0 {
				t.Fatalf("%s: the lints converted %d more times instead of using the seeded inputs", name, n)
			}
			if !slices.Equal(w, p) {
				t.Errorf("%s (argocd %v): findings differ\nwhole objects:\n  %s\nprojected:\n  %s", name, argocd,
					strings.Join(w, "\n  "), strings.Join(p, "\n  "))
			}
			total += len(w)
			if name == "corpus" {
				checkProjected(t, projected, in)
			}
		}
	}
	if total == 0 {
		t.Fatal("no findings at all: the comparison shows nothing")
	}
}

// policyBundles builds, afresh on each call, the bundles the input tests
// compare findings on: a corpus with many mistakes, the RL5xxx rules' test
// data and the bundled example.
func policyBundles(t *testing.T) map[string]func() *graph.Graph {
	t.Helper()
	bundles := map[string]func() *graph.Graph{
		"corpus": func() *graph.Graph {
			return load.Inputs(corpus.Generate(corpus.Options{Rollouts: 60, MistakeRate: 0.5, Seed: 11}), load.Options{})
		},
	}
	dirs, _ := filepath.Glob("../testdata/rules/RL5*")
	dirs = append(dirs, "../examples/checkout")
	for _, dir := range dirs {
		bundles[dir] = func() *graph.Graph {
			g, err := load.Paths([]string{dir}, load.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return g
		}
	}
	return bundles
}

// findingsOf lints g with rs and returns the findings as JSON lines.
func findingsOf(t *testing.T, g *graph.Graph, rs []*rules.Rule, argocd bool) []string {
	t.Helper()
	res := analyzer.Run(g, analyzer.Options{Rules: rs, Mode: rules.ModeCLI, Globals: rules.Globals{ArgoCD: argocd}})
	var out []string
	for _, d := range res.Diagnostics {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// checkProjected checks a Rollout's converted object holds spec.replicas
// (read by RL5004) but not its pod template (read by no policy).
func checkProjected(t *testing.T, g *graph.Graph, in *bundleInput) {
	t.Helper()
	rollouts := g.OfKind("Rollout")
	if len(rollouts) == 0 {
		t.Fatal("no Rollout in the corpus")
	}
	{
		r := rollouts[0]
		item := in.conv.resources.Value.(*ast.Array).Elem(r.Index())
		spec, err := item.Value.(ast.Object).Find(ast.MustParseRef("x.object.spec")[1:])
		if err != nil {
			t.Fatalf("Rollout %s: no spec in its item: %v", r.Name, err)
		}
		if _, err := spec.Find(ast.MustParseRef("x.template")[1:]); err == nil {
			t.Errorf("Rollout %s: the projected object holds spec.template", r.Name)
		}
		_, hasReplicas := r.Object()["spec"].(map[string]any)["replicas"]
		if _, err := spec.Find(ast.MustParseRef("x.replicas")[1:]); (err == nil) != hasReplicas {
			t.Errorf("Rollout %s: spec.replicas in the projected object: %v, in the manifest: %v", r.Name, err == nil, hasReplicas)
		}
	}
}

// TestFieldTreeSelection: the fastyaml selection of a tree with computed
// keys reads what the tree names in every entry and nothing else the
// conversion would keep, so converting the reduced object equals converting
// the whole one; a computed key read whole makes its node whole.
func TestFieldTreeSelection(t *testing.T) {
	names := &fieldTree{}
	names.add([]step{{key: "spec"}, {key: "http"}, {any: true}, {key: "name"}})
	names.add([]step{{key: "spec"}, {key: "http"}, {key: "primary"}, {key: "weight"}})
	names.seal()
	for _, doc := range []string{
		"spec:\n  http:\n  - name: a\n    route:\n    - weight: 100\n  - route: []\n  - not a mapping\n  tcp:\n  - name: t\n",
		"spec:\n  http:\n    primary: {name: p, weight: 3, extra: true}\n    other:\n      name: o\n      weight: 4\n",
	} {
		full, ok := fastyaml.Decode([]byte(doc))
		if !ok {
			t.Fatalf("declined:\n%s", doc)
		}
		part, ok := fastyaml.DecodeSharedFields([]byte(doc), names.selection())
		if !ok {
			t.Fatalf("declined with the selection:\n%s", doc)
		}
		if reflect.DeepEqual(part, full) {
			t.Errorf("the selection %s read everything of:\n%s", names, doc)
		}
		want, err := newValueConverter().termFields(full, names)
		if err != nil {
			t.Fatal(err)
		}
		got, err := newValueConverter().termFields(part, names)
		if err != nil {
			t.Fatal(err)
		}
		if got.Value.Compare(want.Value) != 0 {
			t.Errorf("from the selection %v, from the whole object %v", got, want)
		}
	}

	routes := &fieldTree{}
	routes.add([]step{{key: "spec"}, {key: "http"}, {any: true}})
	routes.add(keyPath("metadata", "name"))
	sel := routes.seal().selection()
	if sel == nil || sel.Sub["spec"] == nil || sel.Sub["metadata"] == nil {
		t.Fatalf("%s: want spec and metadata selected, got %+v", routes, sel)
	}
	if http, ok := sel.Sub["spec"].Sub["http"]; !ok || http != nil {
		t.Errorf("%s: want spec.http whole, got %+v", routes, http)
	}
}

// TestReadsTemplates: a module that names the Rollouts' templates, as a key
// or an argument, reads them; the built-in policies do not, so a lint with
// them alone leaves the templates out of input.rollouts.
func TestReadsTemplates(t *testing.T) {
	for src, want := range map[string]bool{
		"a if { some rr in input.rollouts; count(rr.templates) > 0 }":                    true,
		`b if { some rr in input.rollouts; count(object.get(rr, "templates", [])) > 0 }`: true,
		"c if { some rr in input.rollouts; rr.services[0].target }":                      false,
	} {
		mods, err := parse([]Source{{Name: "p.rego", Text: "package p\n\n" + src + "\n"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := readsTemplates(nonTestModules(mods)); got != want {
			t.Errorf("%s: reads templates %v, want %v", src, got, want)
		}
	}
	if _, err := LoadBuiltin(); err != nil {
		t.Fatal(err)
	}
	if err := prepareBuiltin(); err != nil {
		t.Fatal(err)
	}
	if builtin.templates {
		t.Error("a built-in policy reads the Rollouts' templates: TestProjectedInputSameFindings shows whether leaving them out was safe")
	}

	g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: 2, Seed: 3}), load.Options{})
	for _, with := range []bool{false, true} {
		rr := convert(g, newKindSet([]string{AllKinds}), wholeObjects(), with, allParts).rollouts.Value.(*ast.Array).Elem(0)
		tpls := rr.Value.(ast.Object).Get(ast.StringTerm("templates"))
		if (tpls != nil) != with {
			t.Errorf("converted with templates %v: templates %v", with, tpls)
		}
		if with && (tpls == nil || tpls.Value.(*ast.Array).Len() == 0) {
			t.Errorf("the corpus's first Rollout has no templates converted: %v", tpls)
		}
	}
}
