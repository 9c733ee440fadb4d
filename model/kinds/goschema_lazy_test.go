package kinds

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// describeGraph compiles every body reachable from roots in r, visiting the
// roots in the given order, and describes each node by its type: its own
// facts and, by type, the nodes its body names. It fails t when a node names
// a schema that is not r's one node of that type, since the walks compare
// nodes by identity.
func describeGraph(t testing.TB, r *goRegistry, roots []reflect.Type) map[reflect.Type]string {
	out := map[reflect.Type]string{}
	ref := func(s *goSchema) string {
		if s == nil {
			return "nil"
		}
		if s != r.of(s.typ) {
			t.Errorf("a second node for %v", s.typ)
		}
		return s.typ.String()
	}
	var visit func(s *goSchema)
	visit = func(s *goSchema) {
		if s == nil {
			return
		}
		if _, done := out[s.typ]; done {
			return
		}
		out[s.typ] = "" // recursive types
		b := s.body()
		var d strings.Builder
		fmt.Fprintf(&d, "%s %v custom=%v text=%v bytes=%v accept=%v elem=%s\n",
			s.name, s.kind, s.custom, s.text, s.bytes, s.accept, ref(b.elem))
		var next []*goSchema
		for _, k := range slices.Sorted(maps.Keys(b.fields)) {
			fmt.Fprintf(&d, "field %s: %s\n", k, ref(b.fields[k]))
			next = append(next, b.fields[k])
		}
		if b.plan != nil {
			fmt.Fprintf(&d, "unsupported %q\n", b.plan.unsupported)
			for _, f := range b.plan.whole {
				fmt.Fprintf(&d, "whole %v: %s\n", f.index, ref(f.schema))
				next = append(next, f.schema)
			}
			for _, k := range slices.Sorted(maps.Keys(b.plan.byName)) {
				for _, f := range b.plan.byName[k] {
					fmt.Fprintf(&d, "plan %s %v: %s\n", k, f.index, ref(f.schema))
					next = append(next, f.schema)
				}
			}
		}
		var keys []string
		for _, sl := range b.byKey.slots {
			if sl.used {
				keys = append(keys, sl.key)
			}
		}
		for _, k := range slices.Sorted(slices.Values(keys)) {
			kf := b.byKey.get(k)
			fmt.Fprintf(&d, "key %s: check=%s fused=%v fields=%d leaf=%d@%d\n", k, ref(kf.check), kf.fused, len(kf.fields), kf.leaf, kf.offset)
		}
		out[s.typ] = d.String()
		visit(b.elem)
		for _, n := range next {
			visit(n)
		}
	}
	for _, rt := range roots {
		visit(r.of(rt))
	}
	return out
}

// TestGoSchemaConcurrentFirstUse builds the schemas of every typed kind in a
// fresh registry from many goroutines at once, each walking the graphs in its
// own order, as the loader's decoders do on every CPU; every goroutine must see
// the graph a sequential build gives. Run it under -race.
func TestGoSchemaConcurrentFirstUse(t *testing.T) {
	var roots []reflect.Type
	for _, k := range table {
		if k.New != nil {
			roots = append(roots, reflect.TypeOf(k.New()).Elem())
		}
	}
	if len(roots) < 5 {
		t.Fatalf("only %d typed kinds", len(roots))
	}
	want := describeGraph(t, &goRegistry{}, roots)
	if len(want) < 100 {
		t.Fatalf("the sequential graph has only %d types", len(want))
	}

	const workers = 32
	var fresh goRegistry
	got := make([]map[reflect.Type]string, workers)
	var start, wg sync.WaitGroup
	start.Add(1)
	for w := range workers {
		order := slices.Clone(roots)
		rand.New(rand.NewPCG(uint64(w), 1)).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		wg.Go(func() {
			start.Wait()
			got[w] = describeGraph(t, &fresh, order)
		})
	}
	start.Done()
	wg.Wait()
	for w, g := range got {
		if len(g) != len(want) {
			t.Errorf("goroutine %d saw %d types, the sequential build %d", w, len(g), len(want))
		}
		for typ, d := range want {
			if g[typ] != d {
				t.Errorf("goroutine %d: %v is\n%s\nsequentially\n%s", w, typ, g[typ], d)
			}
		}
	}
}
