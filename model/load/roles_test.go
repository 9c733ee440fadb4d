package load_test

import (
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
)

// TestNotKubernetesFiles: YAML none of whose documents looks like a
// Kubernetes object (CI pipelines, docker-compose, OpenAPI) draws no
// RL0002, while a file with one object-like document keeps it for the
// others, and a syntax error is reported whatever the file is.
func TestNotKubernetesFiles(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"compose.yml", "services:\n  web:\n    image: nginx\n", ""},
		{"workflow.yaml", "on: [push]\njobs:\n  lint:\n    runs-on: ubuntu-latest\n", ""},
		{"hooks.yaml", "- id: lint\n  entry: lint\n", ""},
		{"openapi.yaml", "openapi: 3.0.3\ninfo: {title: x, version: '1'}\n", ""},
		{"mixed.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n---\n- a list\n", "RL0002@5:1"},
		{"orphan.yaml", "metadata:\n  name: orphan\n", "RL0002@1:1"},
		{"broken.yml", "services: [unclosed\n", "RL0001@1:1"},
	}
	for _, c := range cases {
		got := strings.Join(problems(loadOne(t, c.name, c.src)), " ")
		if got != c.want {
			t.Errorf("%s: problems %q, want %q", c.name, got, c.want)
		}
	}
}

// TestRoles: a renderer's output is a rendered file whose comments
// suppress nothing; a source file is recorded (directives, text) but not
// parsed.
func TestRoles(t *testing.T) {
	g := load.Inputs([]load.Input{
		{Path: "out", Data: []byte("# rolloutlint:ignore RL1001 -- x\napiVersion: v1\nkind: Service\nmetadata: {name: a}\n"), Role: load.RoleRendered},
		{Path: "kustomization.yaml", Data: []byte("# rolloutlint:ignore RL1001 -- x\nresources: [a.yaml]\n"), Role: load.RoleSource},
	}, load.Options{})
	if len(g.Resources) != 1 || g.Resources[0].File != "out" {
		t.Fatalf("resources: %v", g.Resources)
	}
	if f := g.File("out"); f == nil || !f.Rendered || len(f.Directives) != 0 {
		t.Errorf("rendered file: %+v", f)
	}
	if f := g.File("kustomization.yaml"); f == nil || f.Rendered || len(f.Directives) != 1 {
		t.Errorf("source file: %+v", f)
	}
	if len(g.Problems) != 0 || g.UserFiles() != 1 {
		t.Errorf("problems %v, user files %d", problems(g), g.UserFiles())
	}
}
