package graph

import (
	"fmt"
	"reflect"
	"testing"
)

// TestKeyIndex compares the key index with a map of every key's resources,
// with the real hash and with hashes that make keys collide.
func TestKeyIndex(t *testing.T) {
	mk := func(group, kind, ns, name string) *Resource {
		return &Resource{Group: group, Kind: kind, Namespace: ns, Name: name}
	}
	var res []*Resource
	for i := range 50 {
		res = append(res, mk("", "Service", fmt.Sprintf("ns%d", i%3), fmt.Sprintf("svc%d", i)))
	}
	res = append(res,
		mk("networking.istio.io", "Gateway", "shop", "gw"),
		mk("gateway.networking.k8s.io", "Gateway", "shop", "gw"), // same key, another group
		mk("", "Service", "ns1", "svc1"),                         // svc1 again
		mk("", "Service", "svc1", "ns1"),                         // namespace and name swapped
		mk("", "Namespace", "", "shop"),
		mk("", "Service", "ns1", "svc1"), // a third time
		mk("", "ConfigMap", "shop", ""),
		mk("", "ConfigMap", "shop", ""),
	)
	absent := []ObjectKey{{"Service", "ns0", "svc1"}, {"Service", "ns1", "svc100"}, {"Namespace", "shop", ""}, {"Gateway", "", "gw"}, {}}

	hashes := map[string]func(kind, namespace, name string) uint64{
		"real":  keyHash,
		"one":   func(string, string, string) uint64 { return 7 },
		"name":  func(_, _, name string) uint64 { return uint64(len(name)) },
		"kinds": func(kind, _, _ string) uint64 { return uint64(len(kind)) },
	}
	saved := keyHash
	defer func() { keyHash = saved }()
	for hname, h := range hashes {
		t.Run(hname, func(t *testing.T) {
			keyHash = h
			x := newKeyIndex(res)
			want := map[ObjectKey][]*Resource{}
			var dups []*Resource
			for _, r := range res {
				k := ObjectKey{r.Kind, r.Namespace, r.Name}
				if len(want[k]) > 0 {
					dups = append(dups, r)
				}
				want[k] = append(want[k], r)
			}
			for k, rs := range want {
				got := x.all(k.Kind, k.Namespace, k.Name)
				if !reflect.DeepEqual(got, rs) {
					t.Errorf("all(%v) = %v, want %v", k, got, rs)
				}
				for i := range got {
					if got[i] != rs[i] {
						t.Errorf("all(%v)[%d] is another resource", k, i)
					}
				}
				if f := x.first(k.Kind, k.Namespace, k.Name); f != rs[0] {
					t.Errorf("first(%v) = %v, want %v", k, f, rs[0])
				}
			}
			for _, k := range absent {
				if got := x.all(k.Kind, k.Namespace, k.Name); got != nil {
					t.Errorf("all(%v) = %v, want nil", k, got)
				}
				if got := x.first(k.Kind, k.Namespace, k.Name); got != nil {
					t.Errorf("first(%v) = %v, want nil", k, got)
				}
			}
			if !reflect.DeepEqual(x.dups, dups) {
				t.Errorf("dups = %v, want %v", x.dups, dups)
			}
			// A lone object's list is a window of capacity one: appending
			// to it must not write into the next resource's place.
			if got := x.all("Service", "ns0", "svc0"); len(got) != 1 || cap(got) != 1 {
				t.Errorf("all(svc0): len %d cap %d, want 1 and 1", len(got), cap(got))
			}
		})
	}
}

// TestGraphDuplicates checks Graph.Duplicates on a built graph.
func TestGraphDuplicates(t *testing.T) {
	a := &Resource{Kind: "Service", Namespace: "shop", Name: "a"}
	b := &Resource{Kind: "Service", Namespace: "shop", Name: "b"}
	a2 := &Resource{Kind: "Service", Namespace: "shop", Name: "a"}
	for _, concurrent := range []bool{false, true} {
		g := newGraph("shop", []*Resource{a, b, a2}, nil, nil, concurrent)
		if d := g.Duplicates(); len(d) != 1 || d[0] != a2 {
			t.Errorf("concurrent %v: Duplicates = %v, want [a2]", concurrent, d)
		}
		if g.Get("Service", "shop", "a") != a || len(g.All("Service", "shop", "a")) != 2 || g.Get("Service", "shop", "c") != nil {
			t.Errorf("concurrent %v: Get/All wrong", concurrent)
		}
	}
}
