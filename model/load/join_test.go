package load_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// describe renders what rules see of a graph: every resource (identity,
// typed and generic objects, the position of two paths, its index), every
// problem (with the index of its resource) and the files.
func describe(t *testing.T, g *graph.Graph) []string {
	t.Helper()
	var out []string
	index := map[*graph.Resource]int{}
	for i, r := range g.Resources {
		index[r] = i
		out = append(out, fmt.Sprintf("res %d %s %s/%s %s/%s ns-explicit=%v %s#%d known=%v failed=%v idx=%d typed=%s object=%s name@%v spec@%v weights=%v",
			i, r.APIVersion, r.Group, r.Version, r.Kind, r.Namespace+"/"+r.Name, r.NamespaceExplicit, r.File, r.Doc, r.Known, r.DecodeFailed,
			r.Index(), asJSON(t, r.Typed), asJSON(t, r.Object()), r.Pos("metadata.name"), r.Pos("spec.strategy.canary.steps[0]"), r.WeightsSet() != nil))
	}
	for _, p := range g.Problems {
		res := -1
		if p.Resource != nil {
			var ok bool
			if res, ok = index[p.Resource]; !ok {
				t.Fatalf("problem %s %q points at a resource outside the graph", p.RuleID, p.Message)
			}
		}
		out = append(out, fmt.Sprintf("problem %s %v %q %q %q res=%d", p.RuleID, p.Pos, p.Message, p.Detail, p.Path, res))
	}
	for _, f := range g.Files {
		out = append(out, fmt.Sprintf("file %s lines=%d directives=%d", f.Path, f.Lines, len(f.Directives)))
	}
	return append(out, fmt.Sprintf("fast=%d ns=%s", g.FastDocuments, g.DefaultNamespace))
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%T %s", v, b)
}

// TestJoinIsInputs holds Join (inputs loaded once with Load, then joined,
// twice, as the webhook joins a cluster object into many reviews) to Inputs
// on every bundle of the repository's testdata, problems included.
func TestJoinIsInputs(t *testing.T) {
	dirs, err := filepath.Glob("../../testdata/bundles/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no bundles: %v", err)
	}
	checked := 0
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		inputs, err := load.Expand([]string{dir}, load.Options{})
		if err != nil || len(inputs) < 2 {
			continue
		}
		for _, full := range []bool{false, true} {
			opts := load.Options{Namespace: "team", FullDecode: full}
			want := describe(t, load.Inputs(inputs, opts))
			var loaded []*load.Loaded
			for _, in := range inputs[1:] {
				loaded = append(loaded, load.Load(in, opts))
			}
			for round := range 2 {
				got := describe(t, load.Join(inputs[:1], loaded, opts))
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s (full=%v, round %d):\ngot  %q\nwant %q", dir, full, round, got, want)
				}
			}
			// Loaded with another default namespace: an object that took
			// the default is loaded again, the others are shared.
			var other []*load.Loaded
			for _, in := range inputs[1:] {
				other = append(other, load.Load(in, load.Options{Namespace: "elsewhere", FullDecode: full}))
			}
			if got := describe(t, load.Join(inputs[:1], other, opts)); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s (full=%v, loaded for another namespace):\ngot  %q\nwant %q", dir, full, got, want)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Fatalf("only %d bundles checked", checked)
	}
}

func TestLoadedFits(t *testing.T) {
	explicit := load.Load(load.Input{Path: "a.yaml", Data: []byte("apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: shop}\n")}, load.Options{})
	defaulted := load.Load(load.Input{Path: "b.yaml", Data: []byte("apiVersion: v1\nkind: Service\nmetadata: {name: b}\n")}, load.Options{})
	for _, c := range []struct {
		l    *load.Loaded
		opts load.Options
		want bool
	}{
		{explicit, load.Options{}, true},
		{explicit, load.Options{Namespace: "other"}, true},
		{explicit, load.Options{FullDecode: true}, false},
		{explicit, load.Options{Limits: load.Limits{MaxDocuments: 3}}, false},
		{explicit, load.Options{Limits: load.Limits{MaxDocuments: load.DefaultMaxDocuments}}, true},
		{defaulted, load.Options{}, true},
		{defaulted, load.Options{Namespace: "default"}, true},
		{defaulted, load.Options{Namespace: "other"}, false},
	} {
		if got := c.l.Fits(c.opts); got != c.want {
			t.Errorf("Fits(%+v) = %v, want %v", c.opts, got, c.want)
		}
	}
}
