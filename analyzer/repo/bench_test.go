package repo_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/analyzer/repo"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// benchUnits is the size of the benchmark repository: half Kustomize
// overlays (each over its own base), half Helm charts.
const benchUnits = 200

// writeRepo writes a repository of n deployable units.
func writeRepo(tb testing.TB, dir string, n int) (kusts, charts []string) {
	tb.Helper()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	for i := 0; i < n/2; i++ {
		name := fmt.Sprintf("svc%03d", i)
		base := filepath.Join(dir, "kustomize", name, "base")
		write(filepath.Join(base, "kustomization.yaml"), "resources: [rollout.yaml, services.yaml, virtualservice.yaml]\n")
		write(filepath.Join(base, "rollout.yaml"), fmt.Sprintf(benchRollout, name, name, name, name, name, name, name))
		write(filepath.Join(base, "services.yaml"), fmt.Sprintf(benchServices, name, name, name, name))
		write(filepath.Join(base, "virtualservice.yaml"), fmt.Sprintf(benchVS, name, name, name, name))
		ov := filepath.Join(dir, "kustomize", name, "overlays", "prod")
		write(filepath.Join(ov, "kustomization.yaml"), fmt.Sprintf("namespace: %s-prod\nresources: [../../base]\npatches:\n- path: replicas.yaml\n", name))
		write(filepath.Join(ov, "replicas.yaml"), fmt.Sprintf("apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata:\n  name: %s\nspec:\n  replicas: 6\n", name))
		kusts = append(kusts, ov)
	}
	for i := 0; i < n-n/2; i++ {
		name := fmt.Sprintf("chart%03d", i)
		c := filepath.Join(dir, "charts", name)
		write(filepath.Join(c, "Chart.yaml"), fmt.Sprintf("apiVersion: v2\nname: %s\nversion: 0.1.0\n", name))
		write(filepath.Join(c, "values.yaml"), "replicas: 3\nweights: [10, 50]\n")
		write(filepath.Join(c, "templates", "rollout.yaml"), benchTemplate)
		write(filepath.Join(c, "templates", "services.yaml"), benchServiceTemplate)
		charts = append(charts, c)
	}
	return kusts, charts
}

const benchRollout = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: %s
spec:
  replicas: 3
  selector:
    matchLabels: {app: %s}
  template:
    metadata:
      labels: {app: %s}
    spec:
      containers:
      - name: app
        image: example/%s:1.0.0
  strategy:
    canary:
      canaryService: %s-canary
      stableService: %s-stable
      trafficRouting:
        istio:
          virtualService: {name: %s, routes: [primary]}
      steps:
      - setWeight: 20
      - pause: {duration: 1m}
      - setWeight: 60
      - pause: {duration: 1m}
`

const benchServices = `apiVersion: v1
kind: Service
metadata: {name: %s-stable}
spec:
  selector: {app: %s}
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: %s-canary}
spec:
  selector: {app: %s}
  ports: [{port: 80}]
`

const benchVS = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: %s}
spec:
  hosts: [%s]
  http:
  - name: primary
    route:
    - destination: {host: %s-stable}
      weight: 100
    - destination: {host: %s-canary}
      weight: 0
`

const benchTemplate = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: {{ .Chart.Name }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Chart.Name }}}
  template:
    metadata:
      labels: {app: {{ .Chart.Name }}}
    spec:
      containers:
      - name: app
        image: example/{{ .Chart.Name }}:1.0.0
  strategy:
    canary:
      canaryService: {{ .Chart.Name }}-canary
      stableService: {{ .Chart.Name }}-stable
      steps:
      {{- range .Values.weights }}
      - setWeight: {{ . }}
      - pause: {duration: 1m}
      {{- end }}
`

const benchServiceTemplate = `{{- range $role := list "stable" "canary" }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $.Chart.Name }}-{{ $role }}
spec:
  selector: {app: {{ $.Chart.Name }}}
  ports: [{port: 80}]
{{- end }}
`

// rawRender renders every unit with the libraries alone (what kustomize
// build and helm template do), returning the output of each.
func rawRender(tb testing.TB, kusts, charts []string) [][]byte {
	var out [][]byte
	fs := filesys.MakeFsOnDisk()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	for _, d := range kusts {
		m, err := k.Run(fs, d)
		if err != nil {
			tb.Fatal(err)
		}
		y, err := m.AsYaml()
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, y)
	}
	for _, d := range charts {
		ch, err := loader.Load(d)
		if err != nil {
			tb.Fatal(err)
		}
		if err := chartutil.ProcessDependencies(ch, map[string]any{}); err != nil {
			tb.Fatal(err)
		}
		top, err := util.ToRenderValuesWithSchemaValidation(ch, map[string]any{}, common.ReleaseOptions{Name: "release-name", Namespace: "default", Revision: 1, IsInstall: true}, common.DefaultCapabilities.Copy(), false)
		if err != nil {
			tb.Fatal(err)
		}
		files, err := engine.Render(ch, top)
		if err != nil {
			tb.Fatal(err)
		}
		var b bytes.Buffer
		for name, text := range files {
			fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", name, text)
		}
		out = append(out, b.Bytes())
	}
	return out
}

// BenchmarkRepository compares, on a repository of 200 units (100
// Kustomize overlays, 100 Helm charts), the render alone (the libraries'
// calls), the lint of the rendered output without rendering (one bundle
// per unit, as the repository lint makes), and the repository lint, which
// is both plus discovery and position mapping. See docs/performance.md.
func BenchmarkRepository(b *testing.B) {
	dir := b.TempDir()
	kusts, charts := writeRepo(b, dir, benchUnits)
	opts := options(dir)
	b.Run("render-only", func(b *testing.B) {
		for b.Loop() {
			rawRender(b, kusts, charts)
		}
	})
	rendered := rawRender(b, kusts, charts)
	b.Run("lint-rendered-output", func(b *testing.B) {
		for b.Loop() {
			for i, y := range rendered {
				g := load.Inputs([]load.Input{{Path: fmt.Sprintf("unit%d.yaml", i), Data: y}}, load.Options{})
				analyzer.Run(g, opts.Analyzer)
			}
		}
	})
	b.Run("repository-lint", func(b *testing.B) {
		for b.Loop() {
			rep, err := repo.Lint([]string{dir}, opts)
			if err != nil {
				b.Fatal(err)
			}
			if n := len(rep.Bundles); n != benchUnits {
				b.Fatalf("%d bundles, want %d", n, benchUnits)
			}
			if e := rep.Result.Summary.Errors; e != 0 {
				b.Fatalf("%d errors on a clean repository: %v", e, rep.Result.Diagnostics[0].Message)
			}
		}
	})
}
