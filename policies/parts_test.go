package policies

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

func TestReadsParts(t *testing.T) {
	for src, want := range map[string]inputParts{
		"a if { some rr in input.rollouts; rr.services[0].target }":                                      0,
		"a if { input.globals.argocd }":                                                                  0,
		"a if { some rr in input.rollouts; x := rolloutlint.resource(input, rr.rollout.index); x.file }": 0,
		"a if { input.resources[0].object.spec.replicas > 1 }":                                           partResources,
		"a if { some item in input.resources; item.file }":                                               partResources,
		`a if { count(object.get(input.kinds, "Service", [])) > 0 }`:                                     partKinds,
		`a if { input.objects.Service.shop.web }`:                                                        partObjects,
		"a if { count(input) > 0 }":                                                                      allParts,
		`a if { walk(input, [p, v]); v == "x" }`:                                                         allParts,
		"a if { some k; input[k] }":                                                                      allParts,
		// The lookup's other arguments are read as usual.
		"a if { x := rolloutlint.resource(input, count(input.resources)); x.file }": partResources,
		"a if { x := rolloutlint.resource({}, 0); y := input; x == y }":             allParts,
	} {
		mods, err := parse([]Source{{Name: "p.rego", Text: "package p\n\n" + src + "\n"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := readsParts(nonTestModules(mods)); got != want {
			t.Errorf("%s: reads parts %03b, want %03b", src, got, want)
		}
	}
}

// TestResourceBuiltin: rolloutlint.resource is input.resources[i] on any
// input value (a test's fixture), undefined past the end, for a negative or
// fractional index, and on a value without resources.
func TestResourceBuiltin(t *testing.T) {
	for _, tc := range []struct {
		query, want string
	}{
		{`rolloutlint.resource({"resources": [{"file": "a"}, {"file": "b"}]}, 1).file`, `"b"`},
		{`rolloutlint.resource({"resources": [{"file": "a"}]}, 1)`, ``},
		{`rolloutlint.resource({"resources": [{"file": "a"}]}, -1)`, ``},
		{`rolloutlint.resource({"resources": [{"file": "a"}]}, 0.5)`, ``},
		{`rolloutlint.resource({"rollouts": []}, 0)`, ``},
		{`rolloutlint.resource(input, 0).file`, `"in.yaml"`},
	} {
		pq, err := rego.New(rego.Query("x := "+tc.query), rego.Capabilities(Capabilities())).PrepareForEval(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		in := ast.MustParseTerm(`{"resources": [{"file": "in.yaml"}]}`).Value
		rs, err := pq.Eval(context.Background(), rego.EvalParsedInput(in))
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		got := ""
		if len(rs) > 0 {
			b, _ := json.Marshal(rs[0].Bindings["x"])
			got = string(b)
		}
		if got != tc.want {
			t.Errorf("%s = %s, want %s", tc.query, got, tc.want)
		}
	}
}

// TestLazyItemsSameFindings: each built-in policy, evaluated over an input
// holding only the parts readsParts says it reads (for the Rollout policies,
// none: their items are built as they look them up), reports exactly what it
// reports over an input with every item built; and a conversion without the
// parts builds an item only for the objects a policy looked up.
func TestLazyItemsSameFindings(t *testing.T) {
	if _, err := LoadBuiltin(); err != nil {
		t.Fatal(err)
	}
	if err := prepareBuiltin(); err != nil {
		t.Fatal(err)
	}
	bundles := policyBundles(t)
	lazyPolicies, lazyBuilt, total := 0, 0, 0
	for _, p := range builtin.policies {
		_, mods, err := compileBuiltin([]*policy{p})
		if err != nil {
			t.Fatal(err)
		}
		parts := readsParts(nonTestModules(mods))
		if parts == 0 {
			lazyPolicies++
		}
		for name, build := range bundles {
			for _, argocd := range []bool{false, true} {
				run := func(parts inputParts) ([]string, *bundleInput) {
					// The policy asks for its own parts, not its compiled set's.
					saved := p.parts
					p.parts = parts
					defer func() { p.parts = saved }()
					g := build()
					in := seedInputParts(g, p.input, builtin.fields, builtin.templates, parts)
					return findingsOf(t, g, []*rules.Rule{p.rule}, argocd), in
				}
				all, _ := run(allParts)
				got, in := run(parts)
				if !slices.Equal(all, got) {
					t.Errorf("%s on %s (argocd %v), parts %03b: findings differ\nevery item:\n  %s\nthose parts:\n  %s",
						p.pkg, name, argocd, parts, strings.Join(all, "\n  "), strings.Join(got, "\n  "))
				}
				total += len(all)
				if parts == 0 && name == "corpus" {
					built := 0
					for i := range in.conv.items {
						if in.conv.items[i].Load() != nil {
							built++
						}
					}
					if built >= len(in.conv.items) {
						t.Errorf("%s: all %d items built, not only those looked up", p.pkg, built)
					}
					lazyBuilt += built
				}
			}
		}
	}
	if lazyPolicies == 0 || lazyBuilt == 0 {
		t.Errorf("%d built-in policies read no per-object part, and built %d items on demand: the lazy items are not exercised", lazyPolicies, lazyBuilt)
	}
	if total == 0 {
		t.Fatal("no findings at all: the comparison shows nothing")
	}
}

// seedInputParts converts g with the given kinds, fields and parts and puts
// the conversion first in g's memo, so the policies of the next lint use it.
func seedInputParts(g *graph.Graph, ks kindSet, f *fieldTree, templates bool, parts inputParts) *bundleInput {
	gi := graphInputsMemo.Get(g, func() *graphInputs { return &graphInputs{} })
	in := &bundleInput{kset: ks, fields: f, templates: templates, parts: parts}
	in.once.Do(func() { in.conv = convert(g, ks, f, templates, parts) })
	gi.mu.Lock()
	gi.ins = append([]*bundleInput{in}, gi.ins...)
	gi.mu.Unlock()
	return in
}
