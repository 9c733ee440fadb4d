package load_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/fastyaml"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// The node-free fast path must load exactly what the full path loads: the
// same resources (identity, generic object, typed object, known flag), the
// same problems at the same positions, and positions of fields rebuilt on
// demand equal to those of the kept node. Every manifest of the repository
// and a generated corpus with mistakes are loaded both ways.
func TestFastPathLoadsWhatTheFullPathLoads(t *testing.T) {
	inputs := repositoryInputs(t)
	inputs = append(inputs, corpus.Generate(corpus.Options{Rollouts: 60, MistakeRate: 0.3, Seed: 7})...)
	fast, full := loadBothWays(inputs, load.Options{})
	compareLoads(t, fast, full)
	// FullDecode sends every document through yaml.v3; the fast path takes
	// most of them.
	if full.FastDocuments != 0 || fast.FastDocuments < len(fast.Resources)/2 {
		t.Errorf("fast documents: %d with FullDecode (want 0), %d of %d resources without", full.FastDocuments, fast.FastDocuments, len(fast.Resources))
	}
	if len(fast.Problems) == 0 || len(fast.Resources) < 500 {
		t.Fatalf("the comparison is too weak: %d problems, %d resources", len(fast.Problems), len(fast.Resources))
	}
}

// loadBothWays loads inputs with the fast path and without it
// (Options.FullDecode).
func loadBothWays(inputs []load.Input, opts load.Options) (fast, full *graph.Graph) {
	fast = load.Inputs(inputs, opts)
	opts.FullDecode = true
	return fast, load.Inputs(inputs, opts)
}

// compareLoads fails unless both graphs hold the same resources (identity,
// generic and typed objects, field positions) and the same problems.
func compareLoads(t *testing.T, fast, full *graph.Graph) {
	t.Helper()
	if len(fast.Resources) != len(full.Resources) {
		t.Fatalf("fast path loaded %d resources, full path %d", len(fast.Resources), len(full.Resources))
	}
	for i, a := range fast.Resources {
		b := full.Resources[i]
		where := a.File + ": " + a.Kind + "/" + a.Name
		if a.APIVersion != b.APIVersion || a.Kind != b.Kind || a.Namespace != b.Namespace || a.Name != b.Name ||
			a.NamespaceExplicit != b.NamespaceExplicit || a.File != b.File || a.Doc != b.Doc || a.Known != b.Known {
			t.Fatalf("%s: identity differs: %+v vs %+v", where, a.Ref(), b.Ref())
		}
		if !reflect.DeepEqual(a.Object(), b.Object()) {
			t.Errorf("%s: generic objects differ", where)
		}
		if !reflect.DeepEqual(a.Typed, b.Typed) {
			t.Errorf("%s: typed objects differ", where)
		}
		for _, path := range []string{"metadata.name", "spec", "kind", "spec.strategy.canary.steps[0]", "spec.http[0].route[0].weight"} {
			if pa, pb := a.Pos(path), b.Pos(path); pa != pb {
				t.Errorf("%s: %s at %v, full path says %v", where, path, pa, pb)
			}
		}
	}
	if !reflect.DeepEqual(problemKeys(fast.Problems), problemKeys(full.Problems)) {
		t.Errorf("problems differ:\nfast: %v\nfull: %v", problemKeys(fast.Problems), problemKeys(full.Problems))
	}
}

func problemKeys(ps []graph.Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.RuleID + " " + p.Pos.String() + " " + p.Path + " " + p.Message
		if p.Detail != "" {
			out[i] += ". " + p.Detail
		}
	}
	return out
}

// Every document of a typed kind the fast path takes takes the tape route: the generic
// maps are left for the other kinds and the documents the tape route
// declines, which must then be declined by the fast path as a whole too
// (compareLoads checks that what it loads is right).
func TestFastPathTakesTapeKindsFromTheTape(t *testing.T) {
	inputs := repositoryInputs(t)
	inputs = append(inputs, corpus.Generate(corpus.Options{Rollouts: 60, MistakeRate: 0.3, Seed: 7})...)
	inputs = append(inputs, corpus.Generate(corpus.Options{Rollouts: 60, Seed: 8, Profile: corpus.Gateways})...)
	var taped, fastOnly int
	for _, in := range inputs {
		for i, c := range load.SplitDocuments(in.Data) {
			obj, ok := fastyaml.Decode(c)
			apiVersion, _ := obj["apiVersion"].(string)
			kind, _ := obj["kind"].(string)
			group, _, found := strings.Cut(apiVersion, "/")
			if !found {
				group = ""
			}
			if k := kinds.Lookup(group, kind); !ok || k == nil || k.New == nil {
				continue
			}
			tape, fast := load.FastRoutes(c)
			switch {
			case tape && !fast:
				t.Errorf("%s#%d: the tape route took a document the fast path declines", in.Path, i)
			case tape:
				taped++
			case fast:
				fastOnly++
				t.Errorf("%s#%d: a %s the fast path takes was declined by the tape route:\n%s", in.Path, i, kind, c)
			}
		}
	}
	if taped < 300 {
		t.Errorf("the comparison is too weak: %d documents from the tape", taped)
	}
	t.Logf("%d documents from the tape, %d from generic maps", taped, fastOnly)
}
