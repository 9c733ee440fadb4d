package graph_test

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// NameLine scans the text instead of parsing it; it must give the line Pos
// gives for every object of the repository's manifests, a corpus and
// documents written to sit at the edge of what the scan follows.
func TestNameLineAgreesWithPos(t *testing.T) {
	in := manifestInputs(t)
	in = append(in, corpus.Generate(corpus.Options{Rollouts: 30, Seed: 7, MistakeRate: 0.3})...)
	edges := []string{
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n",
		"# lead\n---\napiVersion: v1\nkind: Service\nmetadata: # c\n\n  # c\n  labels:\n    app: x\n  name: b # c\n",
		"apiVersion: v1\nkind: Service\nmetadata: {namespace: n, name: c}\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: c} # c\n",
		"apiVersion: v1\nkind: Service\nmetadata: {labels: {a: b}, name: d}\n",
		"apiVersion: v1\nkind: Service\nmetadata:\n  name:\n    e\n",
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: \"f\"\n",
		"apiVersion: v1\nkind: Service\nmetadata:\n  annotations:\n    a: |\n      name: x\n  name: g\n",
		"apiVersion: v1\nkind: Service\nmetadata:\n    namespace: n\n    name: h\n",
		"apiVersion: v1\nkind: Service\nspec:\n  metadata:\n    name: x\nmetadata:\n  name: i\n",
		"apiVersion: v1\nkind: Service\nmetadata:\n  labels: {a: b}\n  name: j\n",
		"apiVersion: v1\r\nkind: Service\r\nmetadata:\r\n  name: k\r\n",
		"apiVersion: v1\nkind: Service\nmetadata:\n  namespace: n\n",
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: l\n",
	}
	for i, e := range edges {
		// Each edge after a first document, so that line offsets count.
		in = append(in, load.Input{Path: "edge-" + string(rune('a'+i)) + ".yaml",
			Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lead\n---\n" + e)})
	}
	n := 0
	for _, r := range load.Inputs(in, load.Options{}).Resources {
		got := r.NameLine() // before Pos, which keeps the parsed node
		if want := r.Pos("metadata.name").Line; got != want {
			t.Errorf("%s %s/%s: NameLine %d, Pos(metadata.name) line %d", r.File, r.Kind, r.Name, got, want)
		}
		n++
	}
	if n < 500 {
		t.Fatalf("only %d resources checked", n)
	}
}
