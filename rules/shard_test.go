package rules_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
)

// rolloutsAndServices loads n Rollouts, each after a Service, so that the
// two kinds interleave in load order.
func rolloutsAndServices(t *testing.T, n int) *graph.Graph {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: s%d}\nspec: {ports: [{port: 80}]}\n", i)
		fmt.Fprintf(&b, "---\napiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r%d}\nspec:\n  selector: {matchLabels: {app: a%d}}\n  template:\n    metadata: {labels: {app: a%d}}\n    spec: {containers: [{name: c, image: i}]}\n  strategy: {canary: {steps: [{setWeight: 10}]}}\n", i, i, i)
	}
	g := load.Inputs([]load.Input{{Path: "b.yaml", Data: []byte(b.String())}}, load.Options{})
	if len(g.OfKind(kinds.Rollout)) != n || len(g.Refs().Rollouts) != n {
		t.Fatalf("loaded %d Rollouts (%d resolved), want %d", len(g.OfKind(kinds.Rollout)), len(g.Refs().Rollouts), n)
	}
	return g
}

// shardNames returns what the shards of a pass over g list, shard after shard.
func shardNames(g *graph.Graph, n int, list func(p *rules.Pass) []string) [][]string {
	r := &rules.Rule{ID: "RL9999", Name: "x", Severity: rules.Info, Source: rules.SourceGo}
	var out [][]string
	for i := range n {
		p := rules.NewPass(g, r, nil, rules.ModeCLI, rules.Globals{}, func(rules.Diagnostic) {}).WithShard(rules.Shard{Index: i, Count: n})
		out = append(out, list(p))
	}
	return out
}

func rolloutNames(p *rules.Pass) []string {
	var out []string
	for _, rr := range p.Rollouts() {
		out = append(out, rr.Rollout.Name)
	}
	return out
}

// TestShardsCoverEachObjectOnce checks that the shards' OfKind and
// Rollouts are contiguous runs that together hold each object once, in
// order, for shard counts below, at and above the number of objects.
func TestShardsCoverEachObjectOnce(t *testing.T) {
	g := rolloutsAndServices(t, 10)
	var want, wantServices []string
	for _, r := range g.OfKind(kinds.Rollout) {
		want = append(want, r.Name)
	}
	for _, r := range g.OfKind(kinds.Service) {
		wantServices = append(wantServices, r.Name)
	}
	for _, n := range []int{1, 2, 3, 7, 10, 11, 40} {
		shards := shardNames(g, n, rolloutNames)
		if got := slices.Concat(shards...); !slices.Equal(got, want) {
			t.Errorf("%d shards: Rollouts %v, want %v", n, shards, want)
		}
		ofKind := shardNames(g, n, func(p *rules.Pass) []string {
			var out []string
			for _, r := range p.OfKind(kinds.Service) {
				out = append(out, r.Name)
			}
			return out
		})
		if got := slices.Concat(ofKind...); !slices.Equal(got, wantServices) {
			t.Errorf("%d shards: Services %v, want %v", n, ofKind, wantServices)
		}
		for i, s := range shards {
			if n <= 10 && len(s) == 0 {
				t.Errorf("%d shards: shard %d is empty", n, i)
			}
		}
	}
}

// TestShardPartStaleKindPos checks ShardPart when some objects' KindPos is
// another graph's (they were put in a graph built later, as a cut-down
// copy of the bundle does): the shards must still hold each entry once.
func TestShardPartStaleKindPos(t *testing.T) {
	g := rolloutsAndServices(t, 12)
	// A later graph of every third Rollout renumbers those.
	var some []*graph.Resource
	for i, r := range g.OfKind(kinds.Rollout) {
		if i%3 == 1 {
			some = append(some, r)
		}
	}
	graph.New(g.DefaultNamespace, some, g.Files, nil)
	if r := g.OfKind(kinds.Rollout)[1]; g.OfKind(kinds.Rollout)[r.KindPos()] == r {
		t.Fatal("the later graph did not renumber the Rollouts it holds")
	}
	var want []string
	for _, r := range g.OfKind(kinds.Rollout) {
		want = append(want, r.Name)
	}
	for _, n := range []int{2, 3, 5, 12} {
		shards := shardNames(g, n, rolloutNames)
		if got := slices.Concat(shards...); !slices.Equal(got, want) {
			t.Errorf("%d shards: Rollouts %v, want %v", n, shards, want)
		}
	}
}
