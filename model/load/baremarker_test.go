package load

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestBareMarkerIsWhatYAMLCallsEmpty holds the shortcut to yaml.v3: every
// chunk bareMarker accepts decodes to nothing (io.EOF or a null document),
// and a marker with any content is left to the parser.
func TestBareMarkerIsWhatYAMLCallsEmpty(t *testing.T) {
	for _, s := range []string{"---", "---\n", "--- \n", "---\n\n", "---   \n\n  \n", "---\n \n"} {
		if !bareMarker([]byte(s)) {
			t.Errorf("bareMarker(%q) = false", s)
		}
		var root yaml.Node
		err := yaml.NewDecoder(bytes.NewReader([]byte(s))).Decode(&root)
		if errors.Is(err, io.EOF) {
			continue
		}
		if err != nil {
			t.Errorf("yaml.v3 on %q: %v", s, err)
			continue
		}
		body := &root
		if body.Kind == yaml.DocumentNode && len(body.Content) > 0 {
			body = body.Content[0]
		}
		if body.Kind != yaml.ScalarNode || body.ShortTag() != "!!null" {
			t.Errorf("yaml.v3 reads %q as %v %s, not an empty document", s, body.Kind, body.ShortTag())
		}
	}
	for _, s := range []string{"", "--", "--- a", "---\na: 1\n", "---\n# c\n", "--- !t\n", "---\t\n", "---\r\n", "----\n", "--- {}\n", "---\n...\n"} {
		if bareMarker([]byte(s)) {
			t.Errorf("bareMarker(%q) = true", s)
		}
	}
}

// TestBareMarkerLoadsAsBefore loads files ending in `---` both ways.
func TestBareMarkerLoadsAsBefore(t *testing.T) {
	src := "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {ports: [{port: 80}]}\n---\n"
	for _, s := range []string{src, src + "\n", src + "---\n", "---\n" + src, "--- \n\n" + src + "--- \n"} {
		for _, full := range []bool{false, true} {
			g := Inputs([]Input{{Path: "a.yaml", Data: []byte(s)}}, Options{FullDecode: full})
			if n := len(g.Resources); n != 1 || len(g.Problems) != 0 {
				t.Errorf("%q (full %v): %d resources, problems %v", s, full, n, g.Problems)
			}
		}
	}
}
