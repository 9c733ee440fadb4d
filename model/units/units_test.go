package units

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, s := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const manifest = "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n"

// TestDiscover checks the unit kinds found in one tree: overlays are roots
// and their base is not; a chart owns its subtree; an Application's
// directory source honours recurse and include; plain directories take
// the rest; hidden directories are skipped.
func TestDiscover(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"base/kustomization.yaml":     "resources: [svc.yaml]\n",
		"base/svc.yaml":               manifest,
		"dev/kustomization.yaml":      "resources: [../base]\n",
		"prod/kustomization.yml":      "resources: [../base, patch.yaml]\n",
		"prod/patch.yaml":             manifest,
		"chart/Chart.yaml":            "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"chart/templates/svc.yaml":    "{{ .Values.x }}\n",
		"chart/charts/dep/Chart.yaml": "apiVersion: v2\nname: dep\nversion: 0.1.0\n",
		"raw/a.yaml":                  manifest,
		"raw/sub/b.yaml":              manifest,
		"raw/sub/skip.json":           "{}",
		"plain/c.yaml":                manifest,
		".github/workflows/ci.yaml":   "on: push\n",
		"apps/app.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: raw, namespace: argocd}
spec:
  source:
    path: raw
    directory: {recurse: true, include: "*.yaml"}
  destination: {server: https://kubernetes.default.svc, namespace: team}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: elsewhere}
spec:
  source: {path: not/here}
  destination: {namespace: team}
`,
	})
	set, err := Discover([]string{dir}, Options{RepoRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range set.Units {
		rel, _ := filepath.Rel(dir, u.Dir)
		s := string(u.Kind) + " " + filepath.ToSlash(rel)
		if u.App != nil {
			s += " app=" + u.App.Name + " ns=" + u.Namespace
		}
		for _, f := range u.Files {
			r, _ := filepath.Rel(dir, f)
			s += " " + filepath.ToSlash(r)
		}
		got = append(got, s)
	}
	sort.Strings(got)
	want := []string{
		"directory apps apps/app.yaml",
		"directory plain plain/c.yaml",
		"directory raw app=raw ns=team raw/a.yaml raw/sub/b.yaml",
		"helm chart",
		"kustomize dev",
		"kustomize prod",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("units:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(set.Applications) != 2 {
		t.Errorf("%d Applications, want 2", len(set.Applications))
	}
	// A base file belongs to both overlays; the Application file to its unit.
	if us := set.UnitsOf(filepath.Join(dir, "base", "svc.yaml")); len(us) != 2 {
		t.Errorf("base/svc.yaml belongs to %d units, want 2", len(us))
	}
	if us := set.UnitsOf(filepath.Join(dir, "chart", "templates", "svc.yaml")); len(us) != 1 || us[0].Kind != Helm {
		t.Errorf("the template belongs to %v, want the chart", us)
	}
	found := false
	for _, u := range set.UnitsOf(filepath.Join(dir, "apps", "app.yaml")) {
		found = found || u.App != nil
	}
	if !found {
		t.Error("the Application's file does not belong to the unit it deploys")
	}
}

func TestIsRemote(t *testing.T) {
	for _, p := range []string{"https://example.com/x.yaml", "github.com/org/repo//base?ref=v1", "git@github.com:org/repo.git", "ssh://host/repo.git//dir"} {
		if !IsRemote(p) {
			t.Errorf("IsRemote(%q) = false", p)
		}
	}
	for _, p := range []string{"../base", "rollout.yaml", "overlays/prod"} {
		if IsRemote(p) {
			t.Errorf("IsRemote(%q) = true", p)
		}
	}
}

// TestDirectoryUnitsKeepWhatDiscoveryRead checks that a directory unit
// carries the bytes discovery read to find Applications, as the loader reads
// them: a file over the size limit as far as the loader reads it (one byte
// past the limit, which makes its RL0005), while an Application beyond the
// limit is still found; files of other units are not kept.
func TestDirectoryUnitsKeepWhatDiscoveryRead(t *testing.T) {
	const limit = 200
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: late}\nspec: {source: {path: raw}}\n"
	big := manifest + "---\n# " + strings.Repeat("x", limit) + "\n---\n" + app
	dir := writeTree(t, map[string]string{
		"raw/a.yaml":              manifest,
		"raw/big.yaml":            big,
		"base/kustomization.yaml": "resources: [svc.yaml]\n",
		"base/svc.yaml":           manifest,
	})
	set, err := Discover([]string{dir}, Options{RepoRoot: dir, Limits: load.Limits{MaxFileBytes: limit}})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Applications) != 1 || set.Applications[0].Name != "late" {
		t.Errorf("Applications %v, want the one past the size limit", set.Applications)
	}
	kept := map[string]string{}
	for _, u := range set.Units {
		for f, in := range u.Inputs {
			if u.Kind != Directory {
				t.Errorf("a %s unit keeps %s", u.Kind, f)
			}
			r, _ := filepath.Rel(dir, f)
			kept[filepath.ToSlash(r)] = string(in.Data)
		}
	}
	want := map[string]string{"raw/a.yaml": manifest, "raw/big.yaml": big[:limit+1]}
	if len(kept) != len(want) {
		t.Errorf("kept %d files, want %d: %v", len(kept), len(want), kept)
	}
	for f, data := range want {
		if kept[f] != data {
			t.Errorf("%s kept as %q, want %q", f, kept[f], data)
		}
	}
}

// TestLocalDependencyOwned: a chart's file:// dependency is rendered from
// its own directory, so a file there given alone loads the chart using it
// (as well as its own chart).
func TestLocalDependencyOwned(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"umbrella/Chart.yaml":          "apiVersion: v2\nname: shop\nversion: 0.1.0\ndependencies:\n- name: cart\n  repository: file://../cart\n",
		"cart/Chart.yaml":              "apiVersion: v2\nname: cart\nversion: 1.0.0\n",
		"cart/templates/rollout.yaml":  manifest,
		"other/Chart.yaml":             "apiVersion: v2\nname: other\nversion: 0.1.0\ndependencies:\n- name: cart\n  repository: https://charts.example.com\n",
		"other/templates/service.yaml": manifest,
	})
	set, err := Discover([]string{dir}, Options{RepoRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range set.UnitsOf(filepath.Join(dir, "cart", "templates", "rollout.yaml")) {
		got = append(got, filepath.Base(u.Dir))
	}
	sort.Strings(got)
	if strings.Join(got, " ") != "cart umbrella" {
		t.Errorf("cart/templates/rollout.yaml belongs to %v, want [cart umbrella]", got)
	}
}

// TestDiscoverDot: discovery of "." — `rolloutlint lint .` inside a chart
// or beside an Application's recursive directory — gives the units that
// discovery of the directory by name gives (the chart owns its templates,
// which are not plain manifests).
func TestDiscoverDot(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"Chart.yaml":            "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"values.yaml":           "x: 1\n",
		"templates/svc.yaml":    "{{ .Values.x }}\n",
		"templates/extra.yaml":  manifest,
		"charts/dep/Chart.yaml": "apiVersion: v2\nname: dep\nversion: 0.1.0\n",
	})
	t.Chdir(dir)
	set, err := Discover([]string{"."}, Options{RepoRoot: "."})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Units) != 1 || set.Units[0].Kind != Helm || set.Units[0].Dir != "." {
		for _, u := range set.Units {
			t.Errorf("unit %v %s", u.Kind, u.Dir)
		}
		t.Fatal("want one Helm unit at .")
	}
	for _, p := range []string{"templates", "charts/dep", "x/../y"} {
		if !Within(filepath.Clean(p), ".") {
			t.Errorf("Within(%q, \".\") = false", p)
		}
	}
	for _, p := range []string{"..", "../x", "/abs"} {
		if Within(p, ".") {
			t.Errorf("Within(%q, \".\") = true", p)
		}
	}
	if Within("chartx/t", "chart") || !Within("chart/t", "chart") {
		t.Error("Within compares whole path elements")
	}
}
