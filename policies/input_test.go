package policies

import (
	"runtime"
	"slices"
	"sync"
	"testing"
	"weak"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
)

func smallCorpus(seed uint64) *graph.Graph {
	return load.Inputs(corpus.Generate(corpus.Options{Rollouts: 30, MistakeRate: 0.5, Seed: seed}), load.Options{})
}

// TestInputReleasedWithGraph: the converted input lives on its graph, so it
// is collected once the lint's graph is unreachable (no process-wide cache
// keeps it).
func TestInputReleasedWithGraph(t *testing.T) {
	rs, err := LoadBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	released := func() weak.Pointer[bundleInput] {
		g := smallCorpus(1)
		analyzer.Run(g, analyzer.Options{Rules: rs, Mode: rules.ModeCLI})
		return weak.Make(inputFor(g, kindSet{}, &fieldTree{}, false, 0))
	}()
	for range 3 {
		runtime.GC()
	}
	if released.Value() != nil {
		t.Error("the converted input is still reachable after its graph was dropped")
	}
}

// TestConcurrentLints runs the built-in policies over two graphs at once, two
// lints per graph, as the webhook does with concurrent requests: every lint of
// a graph reports the same findings (run with -race to check the sharing).
// argocd: true makes the GitOps rules report on every managed route.
func TestConcurrentLints(t *testing.T) {
	rs, err := LoadBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	graphs := []*graph.Graph{smallCorpus(2), smallCorpus(3)}
	const lintsPerGraph = 2
	got := make([][]string, len(graphs)*lintsPerGraph)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			res := analyzer.Run(graphs[i%len(graphs)], analyzer.Options{Rules: rs, Mode: rules.ModeWebhook, Globals: rules.Globals{ArgoCD: true}, Parallelism: 3})
			for _, d := range res.Diagnostics {
				got[i] = append(got[i], d.RuleID+" "+d.Pos.String()+" "+d.Message)
			}
		})
	}
	wg.Wait()
	for i := range graphs {
		if len(got[i]) == 0 {
			t.Fatalf("graph %d: no findings; the corpus is meant to trigger the GitOps rules", i)
		}
		for j := i + len(graphs); j < len(got); j += len(graphs) {
			if !slices.Equal(got[i], got[j]) {
				t.Errorf("graph %d: concurrent lints disagree:\n%q\n%q", i, got[i], got[j])
			}
		}
		for _, line := range got[i] {
			if len(line) > 6 && line[:6] == "RL0009" {
				t.Errorf("graph %d: a policy failed: %s", i, line)
			}
		}
	}
}

// TestConvertSameOnAnyCPUCount: the input is built on every CPU and placed
// by index; its value does not depend on how many CPUs there are.
func TestConvertSameOnAnyCPUCount(t *testing.T) {
	in := corpus.Generate(corpus.Options{Rollouts: 200, MistakeRate: 0.3, Seed: 8})
	conv := func(procs int) *converted {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		return convert(load.Inputs(in, load.Options{}), newKindSet([]string{AllKinds}), wholeObjects(), true, allParts)
	}
	one, four := conv(1), conv(4)
	if one.resources.Value.Compare(four.resources.Value) != 0 {
		t.Error("input.resources differs between 1 and 4 CPUs")
	}
	if one.rollouts.Value.Compare(four.rollouts.Value) != 0 {
		t.Error("input.rollouts differs between 1 and 4 CPUs")
	}
	if n := one.rollouts.Value.(*ast.Array).Len(); n != 200 {
		t.Errorf("%d Rollouts converted, want 200", n)
	}
}

// TestCopiedObjectsConvertedOnce: the object term of a copied resource (a
// cluster object the webhook joins into review after review) is built once
// for all its copies when it holds the built-in policies' fields, equal to
// the term built afresh; whole objects are built again in each conversion,
// not kept.
func TestCopiedObjectsConvertedOnce(t *testing.T) {
	if err := prepareBuiltin(); err != nil {
		t.Fatal(err)
	}
	g := smallCorpus(3)
	// The built-in policies' fields, not allDeclaredFields: that union also
	// holds what user policies compiled by earlier tests read (whole objects
	// for some), so it depended on the order the tests ran in.
	builtin.mu.Lock()
	projected := builtin.fields
	builtin.mu.Unlock()
	if projected.whole {
		t.Fatal("the built-in policies read whole objects")
	}
	for _, tc := range []struct {
		fields *fieldTree
		kept   bool
	}{{projected, true}, {wholeObjects().seal(), false}} {
		sel := selectionOf(tc.fields)
		checked := 0
		for _, r := range g.Resources {
			if !declaredKinds().has(r.Kind) {
				continue
			}
			ref := refTerm(newValueConverter(), r)
			fresh := itemTerm(newValueConverter(), r, ref, true, tc.fields, sel).Get(ast.StringTerm("object"))
			a, b := r.Copy(), r.Copy()
			first := itemTerm(newValueConverter(), a, ref, true, tc.fields, sel).Get(ast.StringTerm("object"))
			second := itemTerm(newValueConverter(), b, ref, true, tc.fields, sel).Get(ast.StringTerm("object"))
			if !first.Equal(fresh) || !second.Equal(fresh) {
				t.Fatalf("%s %s/%s: the copies' object terms differ from the resource's", r.Kind, r.Namespace, r.Name)
			}
			if (first == second) != tc.kept {
				t.Fatalf("%s %s/%s with fields %s: the copies share one term: %v, want %v", r.Kind, r.Namespace, r.Name, tc.fields, first == second, tc.kept)
			}
			checked++
		}
		if checked == 0 {
			t.Fatal("no object of the corpus has a declared kind")
		}
	}
}
