package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/model/units"
)

// writeTree writes files (path → content) under a temp directory.
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

// mapped renders a unit and maps the position of a field of one rendered
// object, returning "file:line:col" relative to dir and the related
// locations the same way.
func mapped(t *testing.T, res *Result, dir, kind, name, path string) (string, []string) {
	t.Helper()
	for _, p := range res.Problems {
		if !p.Info { // notes such as a deprecated kustomize field are not failures
			t.Fatalf("render failed: %s", p.Message)
		}
	}
	g := load.Inputs(res.Inputs, load.Options{})
	for _, r := range g.Resources {
		if r.Kind != kind || r.Name != name {
			continue
		}
		pos, rel := res.Mapper.MapPos(r.Pos(path))
		var out []string
		for _, l := range rel {
			out = append(out, short(dir, l.Pos)+" "+l.Message)
		}
		return short(dir, pos), out
	}
	t.Fatalf("no rendered %s %s", kind, name)
	return "", nil
}

func short(dir string, p graph.Position) string {
	rel, err := filepath.Rel(dir, p.File)
	if err != nil {
		rel = p.File
	}
	return filepath.ToSlash(rel) + ":" + itoa(p.Line) + ":" + itoa(p.Column)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

const baseRollout = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
  labels:
    team: shop
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: web
        image: example/web:1.0
      - name: proxy
        image: example/proxy:1.0
  strategy:
    canary:
      steps:
      - setWeight: 20
      - pause: {}
`

// TestKustomizePositions checks each mapping rule of a kustomize build on
// one overlay: a value written in the base, one set by a strategic merge
// patch (a list item merged by name), a JSON 6902 operation, and the
// namespace, namePrefix, images and commonLabels fields of the overlay.
func TestKustomizePositions(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"base/kustomization.yaml": "resources:\n- rollout.yaml\n- deployment.yaml\n",
		"base/rollout.yaml":       baseRollout,
		"base/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: web
        image: example/web:1.0
      - name: proxy
        image: example/proxy:1.0
`,
		"prod/kustomization.yaml": `namespace: web-prod
namePrefix: prod-
resources:
- ../base
commonLabels:
  env: prod
images:
- name: example/web
  newTag: "2.0"
patches:
- path: proxy.yaml
- path: steps.yaml
  target:
    kind: Rollout
`,
		"prod/proxy.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: proxy
        image: example/proxy:1.1
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
      - name: proxy
        image: example/proxy:1.1
`,
		"prod/steps.yaml": `- op: replace
  path: /spec/strategy/canary/steps/0/setWeight
  value: 5
`,
	})
	res := New(Options{}).Render(&units.Unit{Kind: units.Kustomize, Dir: filepath.Join(dir, "prod")})
	cases := []struct {
		path, pos, related string
	}{
		{"spec.replicas", "base/rollout.yaml:8:13", ""},                       // written in the base
		{"spec.strategy.canary.steps[1].pause", "base/rollout.yaml:20:9", ""}, // a collection: its key
		// A strategic merge patch of a custom resource replaces lists (kustomize
		// has no merge keys for a Rollout): the patch's list item is rendered.
		{"spec.template.spec.containers[0].image", "prod/proxy.yaml:10:16", "base/rollout.yaml:15:16"}, // the same container in the base
		{"spec.strategy.canary.steps[0].setWeight", "prod/steps.yaml:3:10", "base/rollout.yaml:19:20"},
		{"metadata.namespace", "prod/kustomization.yaml:1:12", ""},
		{"metadata.name", "prod/kustomization.yaml:2:13", "base/rollout.yaml:4:9"},
		{"metadata.labels.env", "prod/kustomization.yaml:6:8", ""},
	}
	for _, c := range cases {
		pos, rel := mapped(t, res, dir, "Rollout", "prod-web", c.path)
		if pos != c.pos {
			t.Errorf("%s: at %s, want %s", c.path, pos, c.pos)
		}
		if c.related != "" && (len(rel) == 0 || !strings.HasPrefix(rel[0], c.related)) {
			t.Errorf("%s: related %q, want %s", c.path, rel, c.related)
		}
	}
	// A Deployment has merge keys: the patch's container is merged by name
	// into the base's list, at another index than in the base; the image the
	// overlay's images field retagged points there.
	for _, c := range []struct{ path, pos string }{
		// kustomize puts the patch's item first: proxy is [0] once rendered.
		{"spec.template.spec.containers[0].image", "prod/proxy.yaml:21:16"},
		{"spec.template.spec.containers[0].name", "base/deployment.yaml:15:15"},
		{"spec.template.spec.containers[1].image", "prod/kustomization.yaml:9:11"},
		{"spec.template.spec.containers[1].name", "base/deployment.yaml:13:15"},
	} {
		if pos, _ := mapped(t, res, dir, "Deployment", "prod-api", c.path); pos != c.pos {
			t.Errorf("Deployment %s: at %s, want %s", c.path, pos, c.pos)
		}
	}
}

// TestHelmPositions checks the template line of a field, the value's
// columns when written literally, and the values source a value came from:
// the chart's values.yaml, a value file, an item of a range, a toYaml block.
func TestHelmPositions(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"chart/Chart.yaml":  "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"chart/values.yaml": "replicas: 2\nweights: [10, 40]\nanalysis:\n  templates:\n  - templateName: rate\n",
		"chart/prod.yaml":   "replicas: 5\n",
		"chart/templates/rollout.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas }}
  revisionHistoryLimit: 3
  strategy:
    canary:
      steps:
      {{- range .Values.weights }}
      - setWeight: {{ . }}
      - pause: {}
      {{- end }}
      - analysis:
          {{- toYaml .Values.analysis | nindent 10 }}
`,
	})
	res := New(Options{HelmValueFiles: []string{filepath.Join(dir, "chart", "prod.yaml")}}).Render(&units.Unit{Kind: units.Helm, Dir: filepath.Join(dir, "chart")})
	cases := []struct {
		path, pos, related string
	}{
		{"spec.revisionHistoryLimit", "chart/templates/rollout.yaml:7:25", ""},
		{"spec.replicas", "chart/templates/rollout.yaml:6:3", "chart/prod.yaml:1:11"},
		{"spec.strategy.canary.steps[2].setWeight", "chart/templates/rollout.yaml:12:9", "chart/values.yaml:2:15"},
		{"spec.strategy.canary.steps[3].pause", "chart/templates/rollout.yaml:13:9", ""},
		{"spec.strategy.canary.steps[4].analysis.templates[0].templateName", "chart/templates/rollout.yaml:15:9", "chart/values.yaml:5:19"},
		{"kind", "chart/templates/rollout.yaml:2:7", ""},
	}
	for _, c := range cases {
		pos, rel := mapped(t, res, dir, "Rollout", "release-name", c.path)
		if pos != c.pos {
			t.Errorf("%s: at %s, want %s", c.path, pos, c.pos)
		}
		if c.related != "" && (len(rel) == 0 || !strings.HasPrefix(rel[0], c.related)) {
			t.Errorf("%s: related %q, want %s", c.path, rel, c.related)
		}
		if c.related == "" && len(rel) > 0 {
			t.Errorf("%s: unexpected related %q", c.path, rel)
		}
	}
}

// TestHelmLocalDependency: a dependency with a file:// repository that is
// not vendored is rendered from its directory, as `helm dependency build`
// would package it, with positions in its own template and values; one
// whose version the chart there does not satisfy stays missing.
func TestHelmLocalDependency(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"umbrella/Chart.yaml":  "apiVersion: v2\nname: shop\nversion: 0.1.0\ndependencies:\n- name: cart\n  version: '>=1.0.0'\n  repository: file://../cart\n",
		"umbrella/values.yaml": "cart:\n  replicas: 4\n",
		"cart/Chart.yaml":      "apiVersion: v2\nname: cart\nversion: 1.2.0\n",
		"cart/values.yaml":     "replicas: 1\nhistory: 3\n",
		"cart/templates/rollout.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: cart
spec:
  replicas: {{ .Values.replicas }}
  revisionHistoryLimit: {{ .Values.history }}
`,
	})
	res := New(Options{}).Render(&units.Unit{Kind: units.Helm, Dir: filepath.Join(dir, "umbrella")})
	for _, p := range res.Problems {
		t.Fatalf("%s at %v: %s", p.RuleID, p.Pos, p.Message)
	}
	cases := []struct{ path, pos, related string }{
		{"spec.replicas", "cart/templates/rollout.yaml:6:3", "umbrella/values.yaml:2:13"},
		{"spec.revisionHistoryLimit", "cart/templates/rollout.yaml:7:3", "cart/values.yaml:2:10"},
	}
	for _, c := range cases {
		pos, rel := mapped(t, res, dir, "Rollout", "cart", c.path)
		if pos != c.pos || len(rel) == 0 || !strings.HasPrefix(rel[0], c.related) {
			t.Errorf("%s: at %s, related %q; want %s, related %s", c.path, pos, rel, c.pos, c.related)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "cart", "Chart.yaml"), []byte("apiVersion: v2\nname: cart\nversion: 0.9.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = New(Options{}).Render(&units.Unit{Kind: units.Helm, Dir: filepath.Join(dir, "umbrella")})
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Message, `chart dependency "cart" is not in`) {
		t.Errorf("cart 0.9.0 for >=1.0.0: %+v, want the dependency missing", res.Problems)
	}
}

// TestDirectoryUnitRendersWhatDiscoveryRead checks that a directory unit is
// rendered from the bytes discovery read (Unit.Inputs), not from a second
// read of the file, and that a file discovery did not keep is read.
func TestDirectoryUnitRendersWhatDiscoveryRead(t *testing.T) {
	const first = "apiVersion: v1\nkind: Service\nmetadata: {name: first}\n"
	dir := writeTree(t, map[string]string{"raw/a.yaml": first, "raw/b.yaml": first})
	set, err := units.Discover([]string{dir}, units.Options{RepoRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Units) != 1 || set.Units[0].Kind != units.Directory {
		t.Fatalf("units %v, want one directory unit", set.Units)
	}
	u := set.Units[0]
	a, b := filepath.Join(dir, "raw", "a.yaml"), filepath.Join(dir, "raw", "b.yaml")
	delete(u.Inputs, b)
	const second = "apiVersion: v1\nkind: Service\nmetadata: {name: second}\n"
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, []byte(second), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]string{}
	for _, in := range New(Options{}).Render(u).Inputs {
		got[in.Path] = string(in.Data)
	}
	if got[a] != first {
		t.Errorf("a.yaml rendered as %q, want the bytes discovery read", got[a])
	}
	if got[b] != second {
		t.Errorf("b.yaml rendered as %q, want the file as it is now", got[b])
	}
}

// TestHelmValuesErrorPositions: a values file that does not parse, or holds
// a value values.schema.json refuses, is an RL0010 at that file and line
// (it was at Chart.yaml:1:1 for the chart's own values.yaml), and the
// message quotes nothing of the file (a values file often holds secrets).
func TestHelmValuesErrorPositions(t *testing.T) {
	const chartYAML = "apiVersion: v2\nname: web\nversion: 0.1.0\n"
	const tmpl = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n"
	const head = "# values\nname: web\nimage:\n  repo: x\n  tag: v1\nsecret: hunter2\n" // lines 1-6
	schema := `{"type": "object", "properties": {"replicas": {"type": "integer"}, "image": {"type": "object", "properties": {"tag": {"type": "string"}}}}}`
	cases := []struct {
		name   string
		files  map[string]string
		values []string // --values files
		want   string   // file:line:col of the one problem
	}{
		{"values.yaml YAML error", map[string]string{"chart/values.yaml": head + "bad: [unclosed\nother: 1\n"}, nil, "chart/values.yaml:7:1"},
		{"values.yaml undefined alias", map[string]string{"chart/values.yaml": head + "ref: *hunter3\nother: 1\n"}, nil, "chart/values.yaml:7:6"},
		{"values.yaml second document", map[string]string{"chart/values.yaml": head + "---\nname: web\nbad: {x: 1\n"}, nil, "chart/values.yaml:9:1"},
		{"values.yaml bad indentation", map[string]string{"chart/values.yaml": head + "x:\n  a: 1\n b: 2\n"}, nil, "chart/values.yaml:9:1"},
		{"values.yaml nested bad indentation", map[string]string{"chart/values.yaml": head + "x:\n  a:\n    b: 1\n    c: 2\n   d: 3\n"}, nil, "chart/values.yaml:11:1"},
		{"subchart values.yaml", map[string]string{"chart/values.yaml": "name: web\n",
			"chart/charts/sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 0.1.0\n", "chart/charts/sub/values.yaml": "a: 1\nb: 'hunter2\n"}, nil, "chart/charts/sub/values.yaml:2:1"},
		{"--values YAML error", map[string]string{"chart/values.yaml": "name: web\n", "prod.yaml": "name: web\nfoo:\n  bar: [hunter2\n"}, []string{"prod.yaml"}, "prod.yaml:3:1"},
		{"--values undefined alias", map[string]string{"chart/values.yaml": "name: web\n", "prod.yaml": "name: web\nfoo: *hunter3\n"}, []string{"prod.yaml"}, "prod.yaml:2:6"},
		{"schema refuses values.yaml", map[string]string{"chart/values.yaml": "name: web\nreplicas: hunter2\n", "chart/values.schema.json": schema}, nil, "chart/values.yaml:2:11"},
		{"schema refuses --values", map[string]string{"chart/values.yaml": "name: web\nreplicas: 2\nimage: {tag: v1}\n", "chart/values.schema.json": schema,
			"prod.yaml": "image:\n  tag: 5\n"}, []string{"prod.yaml"}, "prod.yaml:2:8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{"chart/Chart.yaml": chartYAML, "chart/templates/cm.yaml": tmpl}
			for p, s := range c.files {
				files[p] = s
			}
			dir := writeTree(t, files)
			var opts Options
			for _, v := range c.values {
				opts.HelmValueFiles = append(opts.HelmValueFiles, filepath.Join(dir, v))
			}
			res := New(opts).Render(&units.Unit{Kind: units.Helm, Dir: filepath.Join(dir, "chart")})
			if len(res.Problems) != 1 {
				t.Fatalf("problems %v, want one", res.Problems)
			}
			p := res.Problems[0]
			if got := short(dir, p.Pos); p.RuleID != RuleRender || got != c.want {
				t.Errorf("%s at %s (%s), want at %s", p.RuleID, got, p.Message, c.want)
			}
			if strings.Contains(p.Message, "hunter") || strings.Contains(p.Message, "line ") {
				t.Errorf("message quotes the values file or names a line: %s", p.Message)
			}
		})
	}
}
