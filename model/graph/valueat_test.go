package graph_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// ValueAt decodes a document along the path only; it must answer exactly as
// a walk over the whole object does, for every field path of the
// repository's manifests and a corpus, and for paths that miss: an absent
// key, an index out of range or negative, a key on a sequence, an index on a
// mapping, a step below a scalar.
func TestValueAtAgreesWithWholeObject(t *testing.T) {
	in := manifestInputs(t)
	in = append(in, corpus.Generate(corpus.Options{Rollouts: 30, Seed: 5, MistakeRate: 0.3})...)

	resources, paths := 0, 0
	for _, r := range load.Inputs(in, load.Options{}).Resources {
		whole := r.Object()
		if whole == nil {
			continue
		}
		resources++
		for _, p := range probePaths("", whole) {
			paths++
			want, wantOK := walk(whole, p)
			got, gotOK := r.ValueAt(p)
			if gotOK != wantOK || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s %s/%s: ValueAt(%q) = %v, %v; the whole object has %v, %v",
					r.File, r.Kind, r.Name, p, got, gotOK, want, wantOK)
			}
			if r.Exists(p) != wantOK {
				t.Fatalf("%s %s/%s: Exists(%q) = %v", r.File, r.Kind, r.Name, p, !wantOK)
			}
		}
	}
	t.Logf("%d paths of %d resources", paths, resources)
	if resources < 500 || paths < 50000 {
		t.Fatalf("only %d paths of %d resources checked", paths, resources)
	}
}

// manifestInputs are the repository's manifests (testdata and examples).
func manifestInputs(t *testing.T) []load.Input {
	t.Helper()
	var in []load.Input
	root := filepath.Join("..", "..")
	for _, dir := range []string{"testdata", "examples"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !load.IsManifestName(path) {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			in = append(in, load.Input{Path: path, Data: data})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return in
}

// probePaths lists every field path under v (base included) and, for each
// collection, paths that are not there.
func probePaths(base string, v any) []string {
	out := []string{base}
	switch c := v.(type) {
	case map[string]any:
		out = append(out, graph.Key(base, "not-there"), graph.Index(base, 0))
		for k, sub := range c {
			out = append(out, probePaths(graph.Key(base, k), sub)...)
		}
	case []any:
		out = append(out, graph.Index(base, len(c)), graph.Index(base, -1), graph.Key(base, "name"))
		for i, sub := range c {
			out = append(out, probePaths(graph.Index(base, i), sub)...)
		}
	default:
		out = append(out, graph.Key(base, "below"), graph.Index(base, 0))
	}
	if base == "" {
		out = out[1:] // "" is the whole object
	}
	return out
}

// walk is the reference: the value at path in the whole object.
func walk(obj map[string]any, path string) (any, bool) {
	var cur any = obj
	for _, e := range graph.ParsePath(path) {
		switch c := cur.(type) {
		case map[string]any:
			if !e.IsKey {
				return nil, false
			}
			v, ok := c[e.Key]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			if e.IsKey || e.Index < 0 || e.Index >= len(c) {
				return nil, false
			}
			cur = c[e.Index]
		default:
			return nil, false
		}
	}
	return cur, true
}
