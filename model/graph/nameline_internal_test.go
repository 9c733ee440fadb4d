package graph

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// The scan must take the plain forms (or NameLine saves nothing) and decline
// the others; where it answers, the line is the one yaml.v3 gives.
func TestScanNameLine(t *testing.T) {
	for _, c := range []struct {
		doc  string
		take bool
	}{
		{"kind: A\nmetadata:\n  name: a\n", true},
		{"---\nkind: A\nmetadata: {namespace: n, name: b}\n", true},
		{"kind: A\nmetadata: # c\n  labels:\n    x: y\n\n  # c\n  name: c # c\n", true},
		{"kind: A\nmetadata:\n  name:\n    d\n", false},
		{"kind: A\nmetadata:\n  name: \"e\"\n", false},
		{"kind: A\nmetadata: {labels: {a: b}, name: f}\n", false},
		{"kind: A\nmetadata: {name: g,\n  namespace: n}\n", false},
		{"kind: A\nmetadata:\n  namespace: n\n", false},
		{"kind: A\nmetadata:\n  name: |\n    h\n", false},
		{"kind: A\nmetadata:\n- name: i\n", false},
		{"kind: A\nmetadata:\n\tname: j\n", false},
	} {
		line, ok := scanNameLine([]byte(c.doc))
		if ok != c.take {
			t.Errorf("%q: scan answered %v, want %v", c.doc, ok, c.take)
			continue
		}
		if !ok {
			continue
		}
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(c.doc), &n); err != nil {
			t.Fatal(err)
		}
		_, md := mapGet(deref(&n), "metadata")
		_, name := mapGet(deref(md), "name")
		if name == nil || name.Line != line {
			t.Errorf("%q: scan says line %d, yaml.v3 %v", c.doc, line, name)
		}
	}
}
