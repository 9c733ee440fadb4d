package analysisrun_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/semantics/analysisrun"
)

const bundle = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: app, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
  strategy:
    canary:
      analysis:
        templates: [{templateName: health}, {templateName: latency}]
        args:
        - {name: svc, value: app-canary}
        - {name: svc, value: overrides}
        - {name: unknown, value: x}
        - name: hash
          valueFrom: {podTemplateHashValue: Latest}
      steps:
      - setWeight: 10
      - analysis:
          templates: [{templateName: health}]
          args:
          - name: svc
          - name: ns
            valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: health, namespace: shop}
spec:
  args:
  - name: svc
  - name: ns
    value: default
  - name: hash
  - name: window
    value: 1m
  metrics:
  - name: errors
    provider:
      prometheus:
        query: sum(rate(x{svc="{{args.svc}}",ns="{{args.ns}}",hash="{{args.hash}}"}[{{args.window}}]))
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: latency, namespace: shop}
spec:
  args:
  - name: quantile
  - name: ns
    value: ignored-second-default
  - name: svc
    value: latency-default
  metrics:
  - name: p99
    provider:
      prometheus:
        query: histogram_quantile({{args.quantile}}, rate(y[1m]))
`

func TestRunsAndArgs(t *testing.T) {
	g := load.Inputs([]load.Input{{Path: "b.yaml", Data: []byte(bundle)}}, load.Options{})
	a := analysisrun.Of(g)
	if again := analysisrun.Of(g); again != a {
		t.Error("the analysis should be computed once per graph")
	}
	if len(a.Runs) != 2 {
		t.Fatalf("got %d runs, want 2 (background, step 1)", len(a.Runs))
	}
	bg, step := a.Runs[0], a.Runs[1]
	if bg.Use != graph.UseBackground || len(bg.Templates) != 2 || step.Use != graph.UseStep || step.Step != 1 {
		t.Fatalf("runs: %s (%d templates), %s", bg.Describe(), len(bg.Templates), step.Describe())
	}
	want := []struct {
		run      *analysisrun.Run
		name     string
		resolved bool
		text     string
		runtime  bool
		rollout  bool
	}{
		{bg, "svc", true, "overrides", false, true}, // the last of duplicate Rollout args wins
		{bg, "ns", true, "default", false, false},   // template default
		{bg, "hash", true, "", true, true},          // podTemplateHashValue: known at run time
		{bg, "window", true, "1m", false, false},
		{bg, "quantile", false, "", false, false}, // declared by latency, supplied by nobody
		{step, "svc", true, "", false, true},      // a Rollout arg without value is the empty string
		{step, "ns", true, "shop", false, true},   // fieldRef metadata.namespace resolved statically
		{step, "hash", false, "", false, false},
	}
	for _, w := range want {
		got := w.run.Arg(w.name)
		if got == nil {
			t.Errorf("%s: no arg %s", w.run.Describe(), w.name)
			continue
		}
		if got.Resolved != w.resolved || got.Value.Text != w.text || got.Value.Runtime != w.runtime || got.FromRollout != w.rollout {
			t.Errorf("%s: arg %s = %+v, want resolved=%v text=%q runtime=%v fromRollout=%v", w.run.Describe(), w.name, got, w.resolved, w.text, w.runtime, w.rollout)
		}
	}
	if got := step.Arg("svc").Template.Name; got != "health" {
		t.Errorf("step run: svc declared by %s", got)
	}
	if bg.Arg("svc").Template.Name != "latency" {
		t.Errorf("background run: the latency default should replace health's valueless svc, got %s", bg.Arg("svc").Template.Name)
	}
	if bg.Arg("unknown") != nil {
		t.Error("a Rollout arg no template declares is ignored, as Argo ignores it")
	}
	// Queries: health per run (2) + latency in the background run (1).
	if len(a.Queries) != 3 {
		t.Fatalf("got %d queries, want 3", len(a.Queries))
	}
	q := a.Queries[0]
	if q.Err != nil || q.Sub.Query != `sum(rate(x{svc="overrides",ns="default",hash="runtime-value"}[1m]))` {
		t.Errorf("background health query: %q (err %v)", q.Sub.Query, q.Err)
	}
	if lat := a.Queries[1]; lat.Err != nil || len(lat.Sub.Unresolved) != 1 || lat.Sub.Query != "histogram_quantile(1, rate(y[1m]))" {
		t.Errorf("latency query: %q unresolved %v err %v", lat.Sub.Query, lat.Sub.Unresolved, lat.Err)
	}
}

// TestBuildSameOnAnyCPUCount: the prediction is worked on every CPU; its runs
// and queries, in order, do not depend on how many there are.
func TestBuildSameOnAnyCPUCount(t *testing.T) {
	in := corpus.Generate(corpus.Options{Rollouts: 300, MistakeRate: 0.3, Seed: 5})
	describe := func(procs int) string {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		a := analysisrun.Of(load.Inputs(in, load.Options{}))
		var b strings.Builder
		for _, r := range a.Runs {
			fmt.Fprintf(&b, "run %s [", r.Describe())
			for _, a := range r.Args {
				fmt.Fprintf(&b, " %s=%+v/%v", a.Name, a.Value, a.Resolved)
			}
			fmt.Fprintf(&b, "]: %d queries\n", len(r.Queries))
		}
		for _, q := range a.Queries {
			fmt.Fprintf(&b, "%s %s %q %s %v\n", q.Template.Name, q.Path(), q.Sub.Query, q.Type, q.Err != nil)
		}
		return b.String()
	}
	one := describe(1)
	if strings.Count(one, "\n") < 600 {
		t.Fatalf("the corpus gave too few runs and queries to compare:\n%s", one)
	}
	if four := describe(4); four != one {
		t.Errorf("the prediction differs between 1 and 4 CPUs")
	}
}

// TestQueriesInParts checks the parts sharded rules scan Queries by: the
// runs' queries in Rollout order, then each template kind's unused
// templates' queries in load order, together Queries exactly.
func TestQueriesInParts(t *testing.T) {
	unused := `
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisRun
metadata: {name: committed, namespace: shop}
spec:
  metrics:
  - name: m
    provider: {prometheus: {query: up}}
---
apiVersion: argoproj.io/v1alpha1
kind: ClusterAnalysisTemplate
metadata: {name: spare}
spec:
  metrics:
  - name: m
    provider: {prometheus: {query: up}}
  - name: n
    provider: {prometheus: {query: up}}
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: spare, namespace: shop}
spec:
  metrics:
  - name: m
    provider: {prometheus: {query: up}}
`
	g := load.Inputs([]load.Input{{Path: "b.yaml", Data: []byte(bundle + unused)}}, load.Options{})
	a := analysisrun.Of(g)
	var joined []*analysisrun.Query
	last := -1
	for _, q := range a.RunQueries() {
		if q.Run == nil || q.Run.Refs.Rollout.KindPos() < last {
			t.Fatalf("RunQueries: %s of %s has no run or is out of Rollout order", q.Path(), q.Template.Name)
		}
		last = q.Run.Refs.Rollout.KindPos()
		joined = append(joined, q)
	}
	counts := map[string]int{}
	a.UnusedQueries(func(kind string, qs []*analysisrun.Query) {
		for _, q := range qs {
			if q.Run != nil || q.Template.Kind != kind {
				t.Errorf("UnusedQueries(%s): %s of %s %s", kind, q.Path(), q.Template.Kind, q.Template.Name)
			}
			counts[kind]++
		}
		joined = append(joined, qs...)
	})
	if len(a.RunQueries()) == 0 || counts["AnalysisTemplate"] != 1 || counts["ClusterAnalysisTemplate"] != 2 || counts["AnalysisRun"] != 1 {
		t.Errorf("%d run queries, unused by kind %v; want some, and 1 AnalysisTemplate, 2 ClusterAnalysisTemplate, 1 AnalysisRun", len(a.RunQueries()), counts)
	}
	if len(joined) != len(a.Queries) {
		t.Fatalf("the parts hold %d queries, Queries %d", len(joined), len(a.Queries))
	}
	for i := range joined {
		if joined[i] != a.Queries[i] {
			t.Errorf("query %d differs between the parts and Queries", i)
		}
	}
}
