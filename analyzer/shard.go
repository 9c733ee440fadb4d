package analyzer

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

// shardObjects is the smallest graph whose sharded rules run shard by shard
// by default (Options.ShardSize 0). Below it a kind's objects stay in the
// last-level cache from one rule to the next, and sharding only adds passes.
const shardObjects = 16384

// defaultShardSize is about how many objects a shard holds by default: a
// shard's objects, their typed specs and what the rules build for them
// stay in the caches while every sharded rule visits them.
const defaultShardSize = 4096

// shardCount returns the number of shards a graph of n objects is cut into
// for a shard size setting (see Options.ShardSize); 1 or less runs the
// sharded rules over the whole graph.
func shardCount(n, size int) int {
	switch {
	case size < 0:
		return 1
	case size == 0:
		if n < shardObjects {
			return 1
		}
		size = defaultShardSize
	}
	return (n + size - 1) / size
}

// shardable reports whether the driver may run r shard by shard: a Go rule
// that says it may (live rules wait on their systems and run whole).
func shardable(r *rules.Rule) bool { return r.Sharded && r.Source == rules.SourceGo }

// runSharded runs the sharded rules (indexes into enabled) over n shards:
// on each shard every rule in turn, while the shard's objects are in the
// caches, on up to GOMAXPROCS goroutines (bounded by par) taking the
// shards in order. Each rule's diagnostics are its shards' in shard order,
// which, as a shard is a contiguous run of every kind, is the order a
// whole-graph pass reports them in for a rule walking one kind. A rule that
// breaks (an error or a panic) on a shard is not run on the later ones; its
// findings are those of the shards before it and the RL0009 finding, the
// same whichever goroutine got there first. A rule with MergeShards gets
// its shards' diagnostics joined by it. A cancelled context stops the
// goroutines before their next shard.
func runSharded(g *graph.Graph, enabled []*rules.Rule, sharded []int, n, par int, settings map[string]config.Setting, opts Options, perRule [][]rules.Diagnostic) {
	type result struct {
		diags  []rules.Diagnostic
		failed bool
	}
	results := make([][]result, len(sharded)) // [rule][shard]
	failedAt := make([]atomic.Int64, len(sharded))
	for k := range sharded {
		results[k] = make([]result, n)
		failedAt[k].Store(int64(n))
	}
	runShard := func(shard int) {
		for k, i := range sharded {
			if failedAt[k].Load() < int64(shard) {
				continue // broke on an earlier shard: its findings stop there
			}
			r := enabled[i]
			diags, _, failed := runPass(g, r, settings[r.ID], opts, rules.Shard{Index: shard, Count: n})
			results[k][shard] = result{diags, failed}
			if failed {
				for { // keep the earliest failing shard
					at := failedAt[k].Load()
					if at <= int64(shard) || failedAt[k].CompareAndSwap(at, int64(shard)) {
						break
					}
				}
			}
		}
	}
	cancelled := func() bool { return opts.Context != nil && opts.Context.Err() != nil }
	workers := min(par, runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for shard := 0; shard < n && !cancelled(); shard++ {
			runShard(shard)
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !cancelled() {
					shard := int(next.Add(1) - 1)
					if shard >= n {
						return
					}
					runShard(shard)
				}
			}()
		}
		wg.Wait()
	}
	for k, i := range sharded {
		var out []rules.Diagnostic
		for shard := range results[k] {
			out = append(out, results[k][shard].diags...)
			if results[k][shard].failed {
				break
			}
		}
		if r := enabled[i]; r.MergeShards != nil {
			out = r.MergeShards(out)
		}
		perRule[i] = out
	}
}
