package analyzer_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

// services returns a bundle of n Services in one file, one document each.
func services(t testing.TB, n int) *graph.Graph {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: s%d}\nspec: {ports: [{port: 80}]}\n", i)
	}
	g := bundle(t, "s.yaml", b.String())
	if len(g.Resources) != n {
		t.Fatalf("loaded %d objects, want %d", len(g.Resources), n)
	}
	return g
}

// passLog records the shard and the scanned objects of every pass of a rule.
type passLog struct {
	mu      sync.Mutex
	shards  []rules.Shard
	scanned []string
}

func (l *passLog) rule(id string, sharded bool, also func(p *rules.Pass, r *graph.Resource) error) *rules.Rule {
	r := fake(id, func(p *rules.Pass) error {
		l.mu.Lock()
		l.shards = append(l.shards, p.Shard())
		for _, o := range p.OfKind("Service") {
			l.scanned = append(l.scanned, o.Name)
		}
		l.mu.Unlock()
		for _, o := range p.OfKind("Service") {
			if err := also(p, o); err != nil {
				return err
			}
		}
		return nil
	})
	r.Sharded = sharded
	return r
}

func nothing(*rules.Pass, *graph.Resource) error { return nil }

// TestShardThreshold checks that the sharded rules run shard by shard from
// ShardObjects objects on, and over the whole graph below; that the shards
// together scan every object once; and that a rule not marked Sharded always
// runs once over the whole graph.
func TestShardThreshold(t *testing.T) {
	for _, tc := range []struct {
		objects, size, wantShards int
	}{
		{analyzer.ShardObjects - 1, 0, 1},
		{analyzer.ShardObjects, 0, (analyzer.ShardObjects + analyzer.DefaultShardSize - 1) / analyzer.DefaultShardSize},
		{analyzer.ShardObjects, -1, 1},
		{300, 0, 1},
		{300, 1, 300},
		{300, 7, 43},
	} {
		t.Run(fmt.Sprintf("objects=%d,size=%d", tc.objects, tc.size), func(t *testing.T) {
			g := services(t, tc.objects)
			var sharded, whole passLog
			rs := []*rules.Rule{sharded.rule("RL9903", true, nothing), whole.rule("RL9904", false, nothing)}
			analyzer.Run(g, analyzer.Options{Rules: rs, ShardSize: tc.size})
			if len(sharded.shards) != tc.wantShards {
				t.Errorf("sharded rule ran %d passes, want %d", len(sharded.shards), tc.wantShards)
			}
			if tc.wantShards == 1 && !sharded.shards[0].Whole() || tc.wantShards > 1 && sharded.shards[0].Count != tc.wantShards {
				t.Errorf("sharded rule's shard %+v, want %d shards", sharded.shards[0], tc.wantShards)
			}
			if len(whole.shards) != 1 || !whole.shards[0].Whole() {
				t.Errorf("unsharded rule's passes: %+v, want one over the whole graph", whole.shards)
			}
			slices.Sort(sharded.scanned)
			slices.Sort(whole.scanned)
			if !slices.Equal(sharded.scanned, whole.scanned) || len(whole.scanned) != tc.objects {
				t.Errorf("the shards scanned %d objects (%d distinct), want each of the %d once",
					len(sharded.scanned), len(slices.Compact(slices.Clone(sharded.scanned))), tc.objects)
			}
		})
	}
}

// TestShardedRulePanic checks that a sharded rule that panics on one shard
// gives one RL0009 finding, keeps the findings of the shards before it and
// drops the later ones (the same on every run, however the shards are
// spread over goroutines), while the other sharded rules report everything.
func TestShardedRulePanic(t *testing.T) {
	g := services(t, 300)
	for _, par := range []int{1, 2, 0} {
		for run := range 10 {
			var l1, l2 passLog
			boom := l1.rule("RL9905", true, func(p *rules.Pass, r *graph.Resource) error {
				if r.Name == "s150" {
					panic("boom at " + r.Name)
				}
				p.Report(r, "metadata.name", "seen "+r.Name)
				return nil
			})
			fine := l2.rule("RL9906", true, func(p *rules.Pass, r *graph.Resource) error {
				p.Report(r, "metadata.name", "seen "+r.Name)
				return nil
			})
			failing := l2.rule("RL9907", true, func(p *rules.Pass, r *graph.Resource) error {
				if r.Name == "s10" {
					return errors.New("backend unavailable")
				}
				return nil
			})
			res := analyzer.Run(g, analyzer.Options{Rules: []*rules.Rule{boom, fine, failing}, ShardSize: 1, Parallelism: par})
			var internal []string
			for _, d := range res.Diagnostics {
				if d.RuleID == analyzer.RuleInternal {
					internal = append(internal, d.Message)
				}
			}
			if len(internal) != 2 || !strings.Contains(strings.Join(internal, "\n"), "rule RL9905 (fake-rl9905) failed: panic: boom at s150") ||
				!strings.Contains(strings.Join(internal, "\n"), "rule RL9907 (fake-rl9907) failed: backend unavailable") {
				t.Fatalf("parallelism %d run %d: RL0009 findings %q, want one for RL9905's panic and one for RL9907's error", par, run, internal)
			}
			if n := count(res, "RL9905", false); n != 150 {
				t.Errorf("parallelism %d run %d: RL9905 kept %d findings, want the 150 of the shards before the panic", par, run, n)
			}
			if n := count(res, "RL9906", false); n != 300 {
				t.Errorf("parallelism %d run %d: RL9906 reported %d findings, want 300", par, run, n)
			}
		}
	}
}

// TestShardedCancel checks that a cancelled context stops the sharded rules
// before their next shard, and is not reported as a broken rule.
func TestShardedCancel(t *testing.T) {
	g := services(t, 300)
	for _, par := range []int{1, 2} {
		ctx, cancel := context.WithCancel(context.Background())
		var l passLog
		stop := l.rule("RL9908", true, func(p *rules.Pass, _ *graph.Resource) error {
			cancel()
			return p.Context().Err()
		})
		res := analyzer.Run(g, analyzer.Options{Rules: []*rules.Rule{stop}, ShardSize: 1, Parallelism: par, Context: ctx})
		if !errors.Is(res.Err, context.Canceled) {
			t.Errorf("parallelism %d: Result.Err = %v", par, res.Err)
		}
		if len(l.shards) > par {
			t.Errorf("parallelism %d: %d shards ran after the cancellation, want at most one a goroutine", par, len(l.shards))
		}
		for _, d := range res.Diagnostics {
			if d.RuleID == analyzer.RuleInternal {
				t.Errorf("cancellation reported as a broken rule: %s", d.Message)
			}
		}
		cancel()
	}
}
