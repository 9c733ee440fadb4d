package policies

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
)

// requiresBundles are the bundles TestRequiresSkipsOnlyWhatCannotFire
// judges the built-in policies' requirements on: every rule's testdata
// directory, every file of the GitOps rules' testdata on its own (the
// pre-commit case: one changed file) and all of them together, the test
// bundles, the repositories, the examples and two generated corpora. Each
// returns a freshly loaded graph.
func requiresBundles(t *testing.T) map[string]func() *graph.Graph {
	t.Helper()
	out := map[string]func() *graph.Graph{
		"corpus-mixed": func() *graph.Graph {
			return load.Inputs(corpus.Generate(corpus.Options{Rollouts: 40, MistakeRate: 0.5, Seed: 5}), load.Options{})
		},
		"corpus-gateways": func() *graph.Graph {
			return load.Inputs(corpus.Generate(corpus.Options{Profile: corpus.Gateways, Rollouts: 40, MistakeRate: 0.5, Seed: 6}), load.Options{})
		},
	}
	paths := func(ps ...string) func() *graph.Graph {
		return func() *graph.Graph {
			g, err := load.Paths(ps, load.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return g
		}
	}
	var dirs []string
	for _, pattern := range []string{"../testdata/rules/*", "../testdata/bundles/*", "../testdata/repos/*", "../examples/*"} {
		ds, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				dirs = append(dirs, d)
			}
		}
	}
	gitops, err := filepath.Glob("../testdata/rules/RL5*/*.yaml")
	if err != nil || len(gitops) == 0 {
		t.Fatalf("no GitOps rule testdata: %v", err)
	}
	for _, d := range dirs {
		out[d] = paths(d)
	}
	for _, f := range gitops {
		out[f] = paths(f)
	}
	out["every GitOps testdata file"] = paths(gitops...)
	return out
}

// without loads a bundle again without the objects of the given kinds.
func without(build func() *graph.Graph, kinds []string) *graph.Graph {
	g := build()
	var kept []*graph.Resource
	for _, r := range g.Resources {
		if !slices.Contains(kinds, r.Kind) {
			kept = append(kept, r)
		}
	}
	return graph.New(g.DefaultNamespace, kept, g.Files, g.Problems)
}

// policyFindings evaluates a policy over g, skipping it as a lint does when
// skip is set and evaluating it regardless otherwise. An error counts as a
// finding (it is one, RL0009, in a lint).
func policyFindings(t *testing.T, p *policy, g *graph.Graph, globals rules.Globals, skip bool) []string {
	t.Helper()
	var out []string
	pass := rules.NewPass(g, p.rule, nil, rules.ModeCLI, globals, func(d rules.Diagnostic) {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	})
	run := p.evaluate
	if skip {
		run = p.run
	}
	if err := run(pass); err != nil {
		out = append(out, "error: "+err.Error())
	}
	sort.Strings(out)
	return out
}

// TestRequiresSkipsOnlyWhatCannotFire holds the built-in policies'
// custom.requires to what they report. On every bundle, with and without the
// config's argocd: true: (1) the findings with the skip (a lint) are the
// findings of evaluating the policy regardless, and (2) for each clause of
// the requirement, the bundle without that clause's kinds (and without
// argocd: true when the clause names globals.argocd) gives no finding at all
// when evaluated regardless. Each clause must have been exercised: some
// bundle on which the policy reports must lose its findings by the removal,
// else the test would prove nothing about it.
func TestRequiresSkipsOnlyWhatCannotFire(t *testing.T) {
	if _, err := LoadBuiltin(); err != nil {
		t.Fatal(err)
	}
	bundles := requiresBundles(t)
	names := make([]string, 0, len(bundles))
	for name := range bundles {
		names = append(names, name)
	}
	sort.Strings(names)
	exercised := map[string]int{} // policy ID + clause → bundles on which it fired before the removal
	fired := map[string]int{}
	skipped := 0
	for _, name := range names {
		build := bundles[name]
		g := build()
		reduced := map[string]*graph.Graph{} // by the clause's kinds
		for _, argocd := range []bool{false, true} {
			globals := rules.Globals{ArgoCD: argocd}
			for _, p := range builtin.policies {
				if len(p.requires) == 0 {
					t.Fatalf("built-in policy %s declares no custom.requires", p.rule.ID)
				}
				all := policyFindings(t, p, g, globals, false)
				if lint := policyFindings(t, p, g, globals, true); !slices.Equal(all, lint) {
					t.Errorf("%s on %s (argocd %v): findings with the skip differ from evaluating it regardless (requires %s)\nregardless:\n  %s\nwith the skip:\n  %s",
						p.rule.ID, name, argocd, p.requires, strings.Join(all, "\n  "), strings.Join(lint, "\n  "))
				}
				if len(all) > 0 {
					fired[p.rule.ID]++
				}
				if !p.requires.met(g, globals) {
					skipped++
				}
				for _, clause := range p.requires {
					var ks []string
					gl := globals
					for _, alt := range clause {
						if alt == GlobalArgoCD {
							gl.ArgoCD = false
						} else {
							ks = append(ks, alt)
						}
					}
					key := strings.Join(ks, ",")
					if reduced[key] == nil {
						reduced[key] = without(build, ks)
					}
					rg := reduced[key]
					if p.requires.met(rg, gl) {
						t.Fatalf("%s: the bundle without %v still meets %s", name, clause, p.requires)
					}
					if got := policyFindings(t, p, rg, gl, false); len(got) > 0 {
						t.Errorf("%s on %s (argocd %v) without %v reports, though custom.requires says it cannot:\n  %s",
							p.rule.ID, name, gl.ArgoCD, clause, strings.Join(got, "\n  "))
					}
					if len(all) > 0 {
						exercised[p.rule.ID+" "+strings.Join(clause, "|")]++
					}
				}
			}
		}
	}
	for _, p := range builtin.policies {
		if fired[p.rule.ID] == 0 {
			t.Errorf("%s reports on none of the bundles: the test shows nothing about it", p.rule.ID)
		}
		for _, clause := range p.requires {
			if exercised[p.rule.ID+" "+strings.Join(clause, "|")] == 0 {
				t.Errorf("%s: no bundle on which it reports exercises the clause %v", p.rule.ID, clause)
			}
		}
	}
	if skipped == 0 {
		t.Error("no bundle fails any requirement: the skip was never taken")
	}
	t.Logf("%d bundles; %d policy runs skipped of %d", len(names), skipped, 2*len(names)*len(builtin.policies))
}

// TestParseRequires checks the custom.requires contract.
func TestParseRequires(t *testing.T) {
	kinds := []string{"Rollout", "Service", "DestinationRule"}
	list := func(xs ...any) []any { return xs }
	ok, err := parseRequires(list("Rollout", list("Service", GlobalArgoCD)), kinds)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ok.String(), "Rollout and (Service or globals.argocd)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if r, err := parseRequires(nil, kinds); err != nil || r != nil {
		t.Errorf("absent requires: %v, %v; want no requirement", r, err)
	}
	for _, bad := range []struct {
		v    any
		want string
	}{
		{list(), "non-empty list"},
		{"Rollout", "non-empty list"},
		{list("VirtualService"), "custom.kinds does not declare"},
		{list(AllKinds), "cannot name"},
		{list("globals.istioVersion"), "only global"},
		{list(list()), "empty list of alternatives"},
		{list(3), "not a kind"},
		{list(list("Rollout", 3)), "not a kind"},
	} {
		if _, err := parseRequires(bad.v, kinds); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("requires %v: error %v, want one saying %q", bad.v, err, bad.want)
		}
	}
	// A policy reading every kind may require any kind.
	if _, err := parseRequires(list("VirtualService"), []string{AllKinds}); err != nil {
		t.Errorf("requires a kind with custom.kinds [*]: %v", err)
	}
}

// TestRequirementMet checks the clauses against a bundle and the globals.
func TestRequirementMet(t *testing.T) {
	g := load.Inputs([]load.Input{{Path: "a.yaml", Data: []byte("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n")}}, load.Options{})
	for _, c := range []struct {
		req    requirement
		argocd bool
		want   bool
	}{
		{nil, false, true},
		{requirement{{"Service"}}, false, true},
		{requirement{{"Rollout"}}, false, false},
		{requirement{{"Rollout", "Service"}}, false, true},
		{requirement{{"Service"}, {"Rollout"}}, false, false},
		{requirement{{"Rollout", GlobalArgoCD}}, false, false},
		{requirement{{"Rollout", GlobalArgoCD}}, true, true},
	} {
		if got := c.req.met(g, rules.Globals{ArgoCD: c.argocd}); got != c.want {
			t.Errorf("%v (argocd %v) met = %v, want %v", c.req, c.argocd, got, c.want)
		}
	}
}

// TestPrepareForCompilesOnlyWhatTheBundleNeeds: a bundle with a Rollout and
// a Service but no Application compiles RL5002 and not the Application
// policies.
func TestPrepareForCompilesOnlyWhatTheBundleNeeds(t *testing.T) {
	if _, err := LoadBuiltin(); err != nil {
		t.Fatal(err)
	}
	g := load.Inputs([]load.Input{{Path: "a.yaml", Data: []byte(
		"apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n")}}, load.Options{})
	pols := builtin.policies
	needed := func(p *policy) bool { return p.requires.met(g, rules.Globals{}) }
	// Compile into a fresh compiler, as prepareBuiltinFor does, and check
	// the set: the process-wide state may already hold other tests' compiles.
	var todo []*policy
	for _, p := range pols {
		if needed(p) {
			todo = append(todo, p)
		}
	}
	ids := make([]string, 0, len(todo))
	for _, p := range todo {
		ids = append(ids, p.rule.ID)
	}
	if got, want := strings.Join(ids, ","), "RL5002"; got != want {
		t.Fatalf("policies needed by a Rollout and a Service: %s, want %s", got, want)
	}
	c, mods, err := compileBuiltin(todo)
	if err != nil {
		t.Fatal(err)
	}
	if names := slices.Sorted(maps.Keys(mods)); !slices.Equal(names, []string{"policies/rego/gitops/pod_template_hash_committed.rego", "policies/rego/lib/lib.rego"}) {
		t.Errorf("parsed %v, want RL5002's module and the library's lib.rego (RL5002 reaches none of the other library files)", names)
	}
	for _, m := range c.Modules {
		if strings.Contains(m.Package.Path.String(), "argocd") {
			t.Errorf("compiled %s, which needs an Application", m.Package.Path)
		}
	}
	if err := prepareBuiltinFor(g, rules.Globals{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range todo {
		if !p.ready.Load() {
			t.Errorf("%s not ready after prepareBuiltinFor", p.rule.ID)
		}
	}
}

// TestLazyBuiltinSameFindingsAsFullCompile holds what a lint does with the
// built-in policies (the requirement's skip, the library pruned to the rules
// the compiled policies reach, the objects projected on the fields the
// pruned modules read) to the reference: the policies compiled as user
// policies are (the whole library, every compiler check), evaluated
// regardless of their requirement over whole objects. On every bundle of
// TestRequiresSkipsOnlyWhatCannotFire, with and without argocd: true.
func TestLazyBuiltinSameFindingsAsFullCompile(t *testing.T) {
	full := fullBuiltin(t)
	if err := prepareBuiltin(); err != nil {
		t.Fatal(err)
	}
	ref := map[string]*policy{}
	for _, q := range full.policies {
		ref[q.rule.ID] = q
	}
	every := newKindSet([]string{AllKinds})
	bundles := requiresBundles(t)
	total := 0
	for name, build := range bundles {
		for _, argocd := range []bool{false, true} {
			globals := rules.Globals{ArgoCD: argocd}
			for _, p := range builtin.policies {
				q := ref[p.rule.ID]
				if q == nil {
					t.Fatalf("%s is not in the full compile", p.rule.ID)
				}
				lazyG, refG := build(), build()
				seedInput(lazyG, p.input, p.fields, p.templates)
				seedInput(refG, every, wholeObjects(), true)
				got := policyFindings(t, p, lazyG, globals, true)
				want := policyFindings(t, q, refG, globals, false)
				if !slices.Equal(got, want) {
					t.Errorf("%s on %s (argocd %v): a lint's findings differ from the full compile's\nfull compile, whole objects:\n  %s\nlint:\n  %s",
						p.rule.ID, name, argocd, strings.Join(want, "\n  "), strings.Join(got, "\n  "))
				}
				total += len(want)
			}
		}
	}
	if total == 0 {
		t.Fatal("no findings at all: the comparison shows nothing")
	}
}

// TestPruneLib checks that a policy set compiles only the library rules it
// reaches, and that a use of the library that names no rule keeps it whole.
func TestPruneLib(t *testing.T) {
	lib := `package rolloutlint.lib
a := 1
b := c
c := 2
d := 3
f(x) := x if e
e if true
`
	count := func(policy string) (int, bool) {
		mods := map[string]*ast.Module{
			"lib.rego": ast.MustParseModuleWithOpts(lib, ast.ParserOptions{RegoVersion: ast.RegoV1}),
			"p.rego":   ast.MustParseModuleWithOpts(policy, ast.ParserOptions{RegoVersion: ast.RegoV1}),
		}
		pruned := pruneLib(mods, func(name string) bool { return name == "lib.rego" })
		var names []string
		for _, r := range mods["lib.rego"].Rules {
			n, _ := ruleName(r)
			names = append(names, n)
		}
		return len(names), pruned
	}
	for _, c := range []struct {
		policy string
		want   int
		pruned bool
	}{
		{"package p\nimport data.rolloutlint.lib\nv := lib.b\n", 2, true},                        // b and c
		{"package p\nimport data.rolloutlint.lib\nv := lib.f(1)\n", 2, true},                     // f and e
		{"package p\nimport data.rolloutlint.lib as l\nv := l.a\n", 1, true},                     // an alias
		{"package p\nv := data.rolloutlint.lib.d\n", 1, true},                                    // no import
		{"package p\nimport data.rolloutlint.lib.a\nv := a\n", 1, true},                          // a rule imported
		{"package p\nimport data.rolloutlint.lib\nv := lib\n", 6, false},                         // the package as a value
		{"package p\nimport data.rolloutlint.lib\nv := lib[x] if some x in [\"a\"]\n", 6, false}, // a computed name
	} {
		got, pruned := count(c.policy)
		if got != c.want || pruned != c.pruned {
			t.Errorf("%q: %d library rules kept (pruned %v), want %d (pruned %v)", c.policy, got, pruned, c.want, c.pruned)
		}
	}
}
