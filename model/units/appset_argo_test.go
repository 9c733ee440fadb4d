package units

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestPathspecMatch pins the git files generator's matching to what
// `git ls-files -- PATTERN` lists (checked with Argo CD's git client by
// make conformance-appset): `*` and `?` cross `/`, a pattern without
// wildcards names a file or a directory.
func TestPathspecMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"envs/*/config.json", "envs/dev/config.json", true},
		{"envs/*/config.json", "envs/prod/eu/config.json", true}, // `*` crosses `/`
		{"envs/**/config.json", "envs/prod/eu/config.json", true},
		{"envs/*/config.json", "envs/config.json", false},
		{"envs/dev", "envs/dev/config.json", true}, // a directory: all below it
		{"envs/de", "envs/dev/config.json", false},
		{"envs/dev/config.json", "envs/dev/config.json", true},
		{"envs/?ev/*.json", "envs/dev/config.json", true},
		{"envs/[a-d]*/*.json", "envs/dev/config.json", true},
		{"envs/[!d]*/*.json", "envs/dev/config.json", false},
		{"./envs/dev/config.json", "envs/dev/config.json", true},
		{"apps/*.yaml", "envs/dev/config.json", false},
	} {
		if got := pathspecMatch(c.pattern, c.name); got != c.want {
			t.Errorf("pathspecMatch(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}

// TestApplicationSetAsArgoCD covers the differences from Argo CD that
// make conformance-appset found: directories come from the tree on disk
// (one without manifests too) matched with path.Match (`**` is `*`); an
// error anywhere generates no Application at all; fasttemplate takes
// string parameters only and flattens lists as key.N; the Applications
// are in the ApplicationSet's namespace.
func TestApplicationSetAsArgoCD(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("apps/a/x/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	write("apps/docs/README.md", "no manifests\n")
	write("envs/dev/config.json", `{"zones": ["z1"], "big": 1000000}`)
	write("envs/prod/eu/config.json", `{"zones": ["z2"], "big": 7}`)
	write("sets.yaml", `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: dirs, namespace: argocd}
spec:
  generators:
  - git: {repoURL: x, directories: [{path: 'apps/**'}]}
  template:
    metadata: {name: 'd-{{path.basename}}', namespace: other}
    spec:
      source: {repoURL: x, path: '{{path}}'}
      destination: {server: 'https://kubernetes.default.svc', namespace: d}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: files, namespace: argocd}
spec:
  generators:
  - git: {repoURL: x, files: [{path: 'envs/*/config.json'}]}
  template:
    metadata: {name: 'f-{{zones.0}}'}
    spec:
      source: {repoURL: x, path: 'apps/{{big}}'}
      destination: {server: 'https://kubernetes.default.svc', namespace: f}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: number, namespace: argocd}
spec:
  generators:
  - list: {elements: [{env: dev}, {env: qa, replicas: 2}]}
  template:
    metadata: {name: 'n-{{env}}'}
    spec:
      source: {repoURL: x, path: apps/a}
      destination: {server: 'https://kubernetes.default.svc', namespace: n}
`)
	set, err := Discover([]string{dir}, Options{RepoRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range set.Applications {
		if a.Origin != nil {
			got = append(got, a.Namespace+"/"+a.Name+" "+a.Source.Path)
		}
	}
	sort.Strings(got)
	want := []string{
		"argocd/d-a apps/a", "argocd/d-docs apps/docs",
		"argocd/f-z1 apps/1e+06", "argocd/f-z2 apps/7",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("generated:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(set.Problems) != 1 || !strings.Contains(set.Problems[0].Message, "ApplicationSet number: list element 1: replicas is not a string") ||
		!strings.Contains(set.Problems[0].Message, "Argo CD generates none of its Applications") {
		t.Errorf("problems: %+v, want one on the number set", set.Problems)
	}
}
