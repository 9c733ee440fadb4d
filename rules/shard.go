package rules

import (
	"sort"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// Shard is one part of a graph's objects for a sharded rule (Rule.Sharded):
// part Index of Count of every kind's objects, a contiguous range of
// positions in each OfKind list. Objects loaded together sit next to each
// other in those lists and in memory, so a shard's objects (a Rollout with
// its Services and VirtualService, the templates it runs) mostly fall in
// the same shard, and the analyzer runs all sharded rules over one shard
// while it is in the caches. The zero Shard is the whole graph.
type Shard struct {
	// Index is the part, 0 <= Index < Count.
	Index int
	// Count is the number of parts every kind is cut into; 0 or 1 is the
	// whole graph.
	Count int
}

// Whole reports whether the shard is the whole graph.
func (s Shard) Whole() bool { return s.Count <= 1 }

// Range returns the positions [lo, hi) of the shard's part of a list of n
// objects. The parts of a list are contiguous, in order, and cover it.
func (s Shard) Range(n int) (lo, hi int) {
	if s.Whole() {
		return 0, n
	}
	return n * s.Index / s.Count, n * (s.Index + 1) / s.Count
}

// Contains reports whether position i of a list of n objects is in the
// shard.
func (s Shard) Contains(i, n int) bool {
	lo, hi := s.Range(n)
	return lo <= i && i < hi
}

// WithShard restricts the pass's scans (OfKind, Rollouts, ShardPart) to a
// shard. The analyzer and the rule tests call it, for sharded rules only;
// rules never do.
func (p *Pass) WithShard(s Shard) *Pass {
	p.shard = s
	return p
}

// Shard returns the part of the graph the pass scans (the zero Shard when
// it scans all of it).
func (p *Pass) Shard() Shard { return p.shard }

// OfKind returns the objects of a kind the rule scans for findings: all of
// the graph's (Graph.OfKind) normally, the shard's part when the analyzer
// runs a sharded rule shard by shard. Lookups of other objects (Graph.Get,
// Graph.Refs, the host indexes) still see the whole graph. The slice is
// shared: do not modify it.
func (p *Pass) OfKind(kind string) []*graph.Resource {
	all := p.Graph.OfKind(kind)
	lo, hi := p.shard.Range(len(all))
	return all[lo:hi]
}

// Resources returns the objects the rule scans, of every kind, in load
// order: all of the graph's (Graph.Resources) normally, the shard's range
// of them when the analyzer runs a sharded rule shard by shard (objects
// loaded together are in the same range, as in the OfKind parts). The
// slice is shared: do not modify it.
func (p *Pass) Resources() []*graph.Resource {
	all := p.Graph.Resources
	lo, hi := p.shard.Range(len(all))
	return all[lo:hi]
}

// Rollouts returns the resolved references of the Rollouts the rule scans
// (Graph.Refs().Rollouts, or the ones of the shard's part of the Rollouts),
// in load order. The slice is shared: do not modify it.
func (p *Pass) Rollouts() []*graph.RolloutRefs {
	return ShardPart(p, p.Graph.Refs().Rollouts, kinds.Rollout, func(rr *graph.RolloutRefs) *graph.Resource { return rr.Rollout })
}

// ShardPart returns the entries of list the rule scans: all of them
// normally; when the pass is a shard's, the run of entries whose object
// (of the given kind) is in the shard's part of Graph.OfKind(kind). list is
// built for the whole graph (a memo) with any number of entries an object,
// in the order of the objects in Graph.OfKind(kind) (as Refs().Rollouts,
// or a memo built by walking them), so the run is found by binary search on
// the objects' KindPos, not by a scan. KindPos is another graph's when the
// object was put in a graph built later (Resource.KindPos): once per list
// and lint, ShardPart checks that every entry's KindPos is its position in
// this graph, in order; if not, the entries are picked by membership,
// which is exact but reads the whole list. The slice is list's, or a new
// one: do not modify it.
func ShardPart[T any](p *Pass, list []T, kind string, object func(T) *graph.Resource) []T {
	if p.shard.Whole() || len(list) == 0 {
		return list
	}
	objs := p.Graph.OfKind(kind)
	lo, hi := p.shard.Range(len(objs))
	inOrder := listsInOrder.Get(p.Graph, listKey{&list[0], len(list)}, func() bool {
		last := 0
		for _, e := range list {
			o := object(e)
			i := o.KindPos()
			if i < last || i >= len(objs) || objs[i] != o {
				return false
			}
			last = i
		}
		return true
	})
	if inOrder {
		from := sort.Search(len(list), func(i int) bool { return object(list[i]).KindPos() >= lo })
		to := from + sort.Search(len(list)-from, func(i int) bool { return object(list[from+i]).KindPos() >= hi })
		return list[from:to]
	}
	in := make(map[*graph.Resource]bool, hi-lo)
	for _, o := range objs[lo:hi] {
		in[o] = true
	}
	var out []T
	for _, e := range list {
		if in[object(e)] {
			out = append(out, e)
		}
	}
	return out
}

// listKey identifies a list ShardPart is given: its first entry's address
// and its length.
type listKey struct {
	first any
	n     int
}

// listsInOrder remembers, per list, whether its entries' KindPos are their
// objects' positions in the graph, in order (see ShardPart).
var listsInOrder = graph.NewKeyedMemo[listKey, bool]("rules.ShardPart")
