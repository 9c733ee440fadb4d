package all_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
	"github.com/rolloutlint/rolloutlint/rules/ruletest"
)

// shardedRules returns the built-in rules marked Sharded.
func shardedRules(t *testing.T) []*rules.Rule {
	t.Helper()
	var out []*rules.Rule
	for _, r := range all.Rules() {
		if r.Sharded {
			if r.Source != rules.SourceGo {
				t.Errorf("%s is Sharded but a %s rule: only Go rules run shard by shard", r.ID, r.Source)
			}
			out = append(out, r)
		}
	}
	if len(out) < 40 {
		t.Fatalf("only %d sharded rules", len(out))
	}
	return out
}

// TestShardedSameFindings holds every sharded rule (rules.Rule.Sharded) to
// what marking it promises: its findings for an object do not depend on
// which other objects of its kinds it scans. On every rule's testdata, every
// bundle under testdata/bundles and generated corpora, each sharded rule is
// run over the whole graph and then over one object a shard (and over
// shards of three), through rules.Pass directly: the findings of the shards
// together must be exactly the whole run's, none missing, none extra, none
// twice. A rule that aggregates over objects (duplicates, "two objects share
// X", a set of what it has seen) loses or repeats findings when its objects
// are apart; one that scans Graph.OfKind instead of Pass.OfKind reports
// every finding once a shard. Then the analyzer's output (JSON) with every
// graph sharded one object a shard must be byte-identical to the unsharded
// run's.
func TestShardedSameFindings(t *testing.T) {
	rs := shardedRules(t)
	type bundle struct {
		name string
		cfg  *config.Config
		load func() *graph.Graph
	}
	var bundles []bundle
	for _, dir := range bundleDirs(t) {
		files, err := ruletest.Files(dir)
		if err != nil || len(files) == 0 {
			continue
		}
		var cfg *config.Config
		if p := filepath.Join(dir, config.FileName); fileExists(p) {
			if cfg, err = config.Load(p); err != nil {
				t.Fatal(err)
			}
		}
		lopts := load.Options{}
		if cfg != nil {
			lopts.Namespace = cfg.Namespace
		}
		bundles = append(bundles, bundle{dir, cfg, func() *graph.Graph {
			g, err := load.Paths(files, lopts)
			if err != nil {
				t.Fatal(err)
			}
			return g
		}})
	}
	for _, p := range []corpus.Profile{corpus.Mixed, corpus.Gateways} {
		inputs := corpus.Generate(corpus.Options{Profile: p, Rollouts: 120, MistakeRate: 0.3, Seed: 7})
		bundles = append(bundles, bundle{fmt.Sprintf("corpus %v", p), nil, func() *graph.Graph { return load.Inputs(inputs, load.Options{}) }})
	}
	compared, fired := 0, map[string]int{}
	for _, b := range bundles {
		g := b.load()
		for _, r := range rs {
			opts := b.cfg.For(r.ID).Options
			whole := runShards(g, r, opts, 1)
			fired[r.ID] += len(whole)
			for _, size := range []int{1, 3} {
				n := (len(g.Resources) + size - 1) / size
				if got := runShards(g, r, opts, n); !equalLines(got, whole) {
					t.Errorf("%s is marked Sharded but on %s with %d shards it reports\n%s\ninstead of\n%s",
						r.ID, b.name, n, orNone(strings.Join(got, "\n")), orNone(strings.Join(whole, "\n")))
				}
			}
			compared++
		}
		ids := make([]string, len(rs))
		for i, r := range rs {
			ids[i] = r.ID
		}
		lint := func(size int) []byte {
			res := analyzer.Run(g, analyzer.Options{Rules: all.Rules(), Config: b.cfg, Enable: ids, Mode: rules.ModeCLI,
				Globals: rules.Globals{IstioVersion: "1.28"}, ShardSize: size})
			out, err := json.Marshal(struct {
				D []rules.Diagnostic
				S analyzer.Summary
			}{res.Diagnostics, res.Summary})
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		if whole, sharded := lint(-1), lint(1); !bytes.Equal(whole, sharded) {
			t.Errorf("on %s the analyzer's findings sharded one object a shard differ from unsharded:\n%s\ninstead of\n%s", b.name, sharded, whole)
		}
	}
	for _, r := range rs {
		if fired[r.ID] == 0 {
			t.Errorf("%s: no bundle has a finding of it, so sharding it is not checked", r.ID)
		}
	}
	t.Logf("%d sharded rules × %d bundles compared", len(rs), compared/len(rs))
}

// runShards runs r over g cut into n shards, through rules.Pass as the
// analyzer does, and returns its findings, one a line, sorted.
func runShards(g *graph.Graph, r *rules.Rule, opts rules.Options, n int) []string {
	var diags []rules.Diagnostic
	var out []string
	report := func(d rules.Diagnostic) { diags = append(diags, d) }
	for i := range n {
		p := rules.NewPass(g, r, opts, rules.ModeCLI, rules.Globals{IstioVersion: "1.28"}, report)
		if n > 1 {
			p.WithShard(rules.Shard{Index: i, Count: n})
		}
		if err := r.Run(p); err != nil {
			out = append(out, "  error: "+err.Error())
		}
	}
	if n > 1 && r.MergeShards != nil {
		diags = r.MergeShards(diags)
	}
	for _, d := range diags {
		var rel []string
		for _, x := range d.Related {
			rel = append(rel, fmt.Sprintf("%s:%d:%d %s", x.File, x.Line, x.Column, x.Message))
		}
		out = append(out, fmt.Sprintf("  %s %s %q %q related %q", d.Pos, d.Severity, d.Message, d.Detail, rel))
	}
	sort.Strings(out)
	return out
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
