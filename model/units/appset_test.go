package units

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestApplicationSetGenerators expands git files, matrix and merge
// generators in both template modes; an unknown parameter stays as
// written (fasttemplate), and a function rolloutlint lacks is an info
// finding, not an Application.
func TestApplicationSetGenerators(t *testing.T) {
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
	for _, env := range []string{"dev", "prod"} {
		write("envs/"+env+"/config.json", `{"cluster": {"name": "c-`+env+`"}, "ns": "shop-`+env+`"}`)
		write("apps/"+env+"/svc.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n")
	}
	write("sets.yaml", `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: files, namespace: argocd}
spec:
  generators:
  - matrix:
      generators:
      - git: {repoURL: x, files: [{path: "envs/**/config.json"}]}
      - list: {elements: [{team: a}]}
  template:
    metadata: {name: '{{cluster.name}}-{{team}}-{{nope}}'}
    spec:
      source: {repoURL: x, path: 'apps/{{path.basename}}'}
      destination: {server: 'https://kubernetes.default.svc', namespace: '{{ns}}'}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: merged}
spec:
  goTemplate: true
  generators:
  - merge:
      mergeKeys: [env]
      generators:
      - list: {elements: [{env: dev, ns: d}, {env: prod, ns: p}]}
      - list: {elements: [{env: prod, ns: production}]}
  template:
    metadata: {name: '{{ .env | upper | lower }}-{{ .ns | normalize }}'}
    spec:
      source: {repoURL: x, path: 'apps/{{ .env }}'}
      destination: {server: 'https://kubernetes.default.svc', namespace: '{{ .ns }}'}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: odd}
spec:
  goTemplate: true
  generators:
  - list: {elements: [{env: dev}]}
  template:
    metadata: {name: '{{ .env | expandenv }}'}
    spec:
      source: {repoURL: x, path: apps/dev}
      destination: {server: 'https://kubernetes.default.svc', namespace: x}
`)
	set, err := Discover([]string{dir}, Options{RepoRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range set.Applications {
		if a.Origin != nil {
			got = append(got, a.Name+" "+a.Source.Path+" "+a.Destination.Namespace)
		}
	}
	sort.Strings(got)
	want := []string{
		"c-dev-a-{{nope}} apps/dev shop-dev", "c-prod-a-{{nope}} apps/prod shop-prod",
		"dev-d apps/dev d", "prod-production apps/prod production",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("generated:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(set.Problems) != 1 || !strings.Contains(set.Problems[0].Message, `function "expandenv" not defined`) || !set.Problems[0].Info {
		t.Errorf("problems: %+v, want one info on expandenv", set.Problems)
	}
	// Each generated Application deploys its directory.
	n := 0
	for _, u := range set.Units {
		if u.App != nil && u.App.Origin != nil {
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d units of generated Applications, want 4", n)
	}
}

// TestGitGeneratorStaysInTheRepository: a git generator that matches
// nothing in the repository must not list the directories above it (it
// once walked every parent up to the file system's root, and a test that
// linted this repository timed out). Here the directory above the
// repository has what the generator asks for: if it were read, the set
// would generate an Application instead of the info finding.
func TestGitGeneratorStaysInTheRepository(t *testing.T) {
	outer := t.TempDir()
	repo := filepath.Join(outer, "repo")
	for _, d := range []string{filepath.Join(outer, "clusters", "east"), filepath.Join(repo, "apps")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: clusters, namespace: argocd}
spec:
  generators:
  - git: {repoURL: x, directories: [{path: "clusters/*"}]}
  template:
    metadata: {name: '{{path.basename}}'}
    spec:
      source: {repoURL: x, path: '{{path}}'}
      destination: {server: 'https://kubernetes.default.svc', namespace: x}
`
	if err := os.WriteFile(filepath.Join(repo, "apps", "sets.yaml"), []byte(set), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		roots []string
		opts  Options
	}{
		{"repository root", []string{repo}, Options{RepoRoot: repo}},
		{"a directory of the repository", []string{filepath.Join(repo, "apps")}, Options{RepoRoot: repo}},
		{"no .git", []string{filepath.Join(repo, "apps")}, Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Discover(tc.roots, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range got.Applications {
				if a.Origin != nil {
					t.Errorf("generated %s from %s: the generator read a directory outside the linted repository", a.Name, a.Source.Path)
				}
			}
			if len(got.Problems) != 1 || !strings.Contains(got.Problems[0].Message, "matches nothing in the linted tree") {
				t.Errorf("problems %+v, want the info that the generator matches nothing", got.Problems)
			}
		})
	}
}

func TestGeneratorRoots(t *testing.T) {
	for _, tc := range []struct {
		roots []string
		repo  string
		want  []string
	}{
		{[]string{"/r/a/b"}, "/r", []string{"/r", "/r/a/b", "/r/a"}},
		{[]string{"/r"}, "/r", []string{"/r"}},
		{[]string{"/elsewhere/x"}, "/r", []string{"/r", "/elsewhere/x"}},
		{[]string{"/r/a/b"}, "", []string{"/r/a/b"}},
		{[]string{"apps/x"}, ".", []string{".", "apps/x", "apps"}},
		{[]string{"/"}, "/", []string{"/"}},
	} {
		got := generatorRoots(tc.roots, Options{RepoRoot: tc.repo})
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("generatorRoots(%q, %q) = %q, want %q", tc.roots, tc.repo, got, tc.want)
		}
	}
}

// TestApplicationSetExpansionIsDeterministic: the same tree gives the same
// Applications and findings on every run. A matrix clash once named
// whichever clashing parameter a map iteration met first (three lints of
// testdata/conformance/appset/repo, three outputs).
func TestApplicationSetExpansionIsDeterministic(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "conformance", "appset", "repo")
	describe := func() string {
		set, err := Discover([]string{root}, Options{RepoRoot: root})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, a := range set.Applications {
			fmt.Fprintf(&b, "app %s %s %s\n", a.Name, a.Source.Path, a.Destination.Namespace)
		}
		for _, p := range set.Problems {
			fmt.Fprintf(&b, "problem %s:%d:%d %s\n", p.Pos.File, p.Pos.Line, p.Pos.Column, p.Message)
		}
		return b.String()
	}
	first := describe()
	if !strings.Contains(first, "matrix: ") {
		t.Fatal("the fixture has no matrix clash any more; the test checks nothing")
	}
	for i := 0; i < 20; i++ {
		if got := describe(); got != first {
			t.Fatalf("run %d differs from the first:\n%s\nfirst:\n%s", i+2, got, first)
		}
	}
}
