package istio_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// hygieneRules returns the RL3xxx rules from the registry.
func hygieneRules(t testing.TB) []*rules.Rule {
	var out []*rules.Rule
	for _, r := range all.Rules() {
		if strings.HasPrefix(r.ID, "RL3") {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		t.Fatal("no RL3xxx rule registered")
	}
	return out
}

// runRules runs rs over g and returns their diagnostics.
func runRules(t testing.TB, g *graph.Graph, rs []*rules.Rule) []rules.Diagnostic {
	var out []rules.Diagnostic
	for _, r := range rs {
		pass := rules.NewPass(g, r, nil, rules.ModeCLI, rules.Globals{}, func(d rules.Diagnostic) { out = append(out, d) })
		if err := r.Run(pass); err != nil {
			t.Fatalf("%s: %v", r.ID, err)
		}
	}
	return out
}

// TestCorpusIsClean runs the hygiene rules over a generated bundle of correct
// host- and subset-level Rollouts (with their Gateways): any finding is a
// false alarm.
func TestCorpusIsClean(t *testing.T) {
	g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: 200, Seed: 3}), load.Options{})
	for _, d := range runRules(t, g, hygieneRules(t)) {
		t.Errorf("%s:%d:%d: %s %s", d.Pos.File, d.Pos.Line, d.Pos.Column, d.RuleID, d.Message)
	}
}

// TestCorpusMistakesAreFound breaks the generated bundle in ways each rule
// must see at scale: a second mesh VirtualService and a second DestinationRule
// for one host, a typo'd destination host, a wrong port and a gateway typo.
func TestCorpusMistakesAreFound(t *testing.T) {
	inputs := corpus.Generate(corpus.Options{Rollouts: 100, Seed: 3})
	// app-00001 is subset-level (odd index), app-00000 host-level, both in team-00/team-01.
	inputs = append(inputs, load.Input{Path: "extra.yaml", Data: []byte(`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: app-00001-retries, namespace: team-01}
spec:
  hosts: [app-00001.team-01.svc.cluster.local]
  http:
  - retries: {attempts: 2}
    route:
    - destination: {host: app-00001, port: {number: 8080}}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: app-00001-tls, namespace: team-01}
spec:
  host: app-00001
  trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: app-00000-admin, namespace: team-00}
spec:
  hosts: [admin.example.com]
  gateways: [app-00000-gatway]
  http:
  - route:
    - destination: {host: app-00000-stabel}
`)})
	g := load.Inputs(inputs, load.Options{})
	got := map[string]int{}
	for _, d := range runRules(t, g, hygieneRules(t)) {
		got[d.RuleID]++
	}
	want := map[string]int{
		"RL3001": 1, // app-00000-stabel
		"RL3002": 1, // port 8080 is the targetPort
		"RL3004": 1, // app-00000-gatway, with other Gateways in team-00: warning
		"RL3005": 1, // the two mesh VirtualServices of app-00001, reported once
		"RL3006": 1, // the two DestinationRules of app-00001, reported once
	}
	for id, n := range want {
		if got[id] != n {
			t.Errorf("%s: got %d findings, want %d (all: %v)", id, got[id], n, got)
		}
	}
	for id, n := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("%s: %d unexpected findings", id, n)
		}
	}
}

// BenchmarkHygieneRules runs the RL3xxx rules over generated bundles of
// growing size; ns/object stays flat when the rules are linear.
func BenchmarkHygieneRules(b *testing.B) {
	rs := hygieneRules(b)
	for _, n := range []int{500, 1000, 2500, 5000} {
		g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: n, Seed: 1}), load.Options{})
		objects := len(g.Resources)
		b.Run(fmt.Sprintf("rollouts=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				runRules(b, g, rs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(objects), "ns/object")
		})
	}
}

// TestRulesScaleLinearly checks the cost per object stays flat from 100 to
// 1,000 Rollouts. Timings are noisy on shared machines; allocations are
// deterministic, and a rule that rescans the bundle per object allocates per
// pair, so allocations per object are the measure.
func TestRulesScaleLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a 1,000-Rollout bundle")
	}
	rs := hygieneRules(t)
	perObject := func(n int) float64 {
		g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: n, Seed: 1}), load.Options{})
		allocs := testing.AllocsPerRun(3, func() { runRules(t, g, rs) })
		return allocs / float64(len(g.Resources))
	}
	small, large := perObject(100), perObject(1000)
	t.Logf("allocations per object: %.2f at 100 Rollouts, %.2f at 1,000", small, large)
	if large > small*1.2 {
		t.Errorf("allocations per object grow with the bundle: %.2f at 100 Rollouts, %.2f at 1,000", small, large)
	}
}

// TestOddShapesDoNotBreakRules feeds half-written objects through the
// hygiene rules: they must neither fail nor panic, and must not report
// anything about fields that are absent.
func TestOddShapesDoNotBreakRules(t *testing.T) {
	g := load.Inputs([]load.Input{{Path: "odd.yaml", Data: []byte(`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: empty}
spec:
  hosts: ["", "*", reviews.]
  gateways: ["", mesh, /]
  http:
  - route:
    - destination: {}
    - destination: {host: ""}
    - weight: 10
  - mirror: {}
    mirrors: [{}]
  tcp:
  - {}
  tls:
  - route: []
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: empty}
spec:
  subsets:
  - name: nolabels
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: empty-host}
spec:
  host: ""
  subsets:
  - name: a
    labels: {}
---
apiVersion: v1
kind: Service
metadata: {name: reviews}
spec:
  ports: []
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: reviews}
spec:
  template: {}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: reviews}
spec:
  template:
    metadata:
      labels: [not, a, map]
`)}}, load.Options{})
	for _, kind := range []string{"VirtualService", "DestinationRule", "Service", "Rollout"} {
		for _, r := range g.OfKind(kind) {
			if r.Typed == nil {
				t.Fatalf("%s %s did not decode, so the rules would not see it", kind, r.Name)
			}
		}
	}
	for _, d := range runRules(t, g, hygieneRules(t)) {
		switch d.RuleID {
		case "RL3009": // two destinations with weights 0 and 10: a real finding
			continue
		case "RL3019": // the second route has no match after a catch-all: a real finding
			continue
		}
		t.Errorf("unexpected %s at %d:%d: %s", d.RuleID, d.Pos.Line, d.Pos.Column, d.Message)
	}
}

// TestRelatedLocations checks that findings point at the other object
// involved: the similarly named Service, the mesh subset, the other
// VirtualService or DestinationRule, the pod template.
func TestRelatedLocations(t *testing.T) {
	cases := []struct {
		rule    string
		line    int   // line of the finding in bad.yaml
		related []int // lines of its related locations in bad.yaml
	}{
		{"RL3001", 30, []int{10}},
		{"RL3003", 64, []int{50}},
		{"RL3003", 101, []int{87}},
		{"RL3005", 6, []int{15, 28}},
		{"RL3006", 5, []int{18, 26}},
		{"RL3008", 41, []int{9}},
	}
	byRule := map[string]*rules.Rule{}
	for _, r := range hygieneRules(t) {
		byRule[r.ID] = r
	}
	for _, c := range cases {
		g, err := load.Paths([]string{"../../testdata/rules/" + c.rule}, load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, d := range runRules(t, g, []*rules.Rule{byRule[c.rule]}) {
			if d.Pos.Line != c.line || !strings.HasSuffix(d.Pos.File, "bad.yaml") {
				continue
			}
			found = true
			var got []int
			for _, r := range d.Related {
				got = append(got, r.Line)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.related) {
				t.Errorf("%s at line %d: related lines %v, want %v", c.rule, c.line, got, c.related)
			}
		}
		if !found {
			t.Errorf("%s: no finding at bad.yaml:%d", c.rule, c.line)
		}
	}
}

// TestDuplicateHostReportedOncePerPair: three mesh VirtualServices claim one
// host; a and c are each exported only to their own namespace, b to every
// namespace, so a~b and b~c conflict and a~c does not. Each conflicting pair
// is reported once: on a (naming b) and on b (naming a and c); c, whose only
// conflict b's finding names, gets none. With all three in conflict, the
// first names both others and the rest get none.
func TestDuplicateHostReportedOncePerPair(t *testing.T) {
	vs := func(name, ns, exportTo string) string {
		return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: %s, namespace: %s}\nspec:\n  hosts: [reviews.shop.svc.cluster.local]\n  exportTo: [%s]\n  http:\n  - route:\n    - destination: {host: reviews.shop.svc.cluster.local}\n---\n", name, ns, exportTo)
	}
	var rl3005 *rules.Rule
	for _, r := range hygieneRules(t) {
		if r.ID == "RL3005" {
			rl3005 = r
		}
	}
	for _, c := range []struct {
		name, src string
		want      []string // "object: others named"
	}{
		{"chain", vs("a", "x", `"."`) + vs("b", "w", `"*"`) + vs("c", "z", `"."`),
			[]string{"x/a: w/b", "w/b: x/a, z/c"}},
		{"clique", vs("a", "x", `"*"`) + vs("b", "w", `"*"`) + vs("c", "z", `"*"`),
			[]string{"x/a: w/b, z/c"}},
	} {
		g := load.Inputs([]load.Input{{Path: "vs.yaml", Data: []byte(c.src)}}, load.Options{})
		var got []string
		for _, d := range runRules(t, g, []*rules.Rule{rl3005}) {
			var others []string
			for _, r := range d.Related {
				others = append(others, r.Object.Namespace+"/"+r.Object.Name)
			}
			got = append(got, d.Object.Namespace+"/"+d.Object.Name+": "+strings.Join(others, ", "))
		}
		if strings.Join(got, "; ") != strings.Join(c.want, "; ") {
			t.Errorf("%s: findings %q, want %q", c.name, got, c.want)
		}
	}
}
