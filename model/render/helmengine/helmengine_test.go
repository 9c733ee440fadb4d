package helmengine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v4/pkg/strvals"

	"github.com/rolloutlint/rolloutlint/model/render/helmengine"
	"github.com/rolloutlint/rolloutlint/model/render/helmrpc"
	"github.com/rolloutlint/rolloutlint/model/render/helmtest"
)

func TestMain(m *testing.M) { helmtest.Main(m) }

// typesChart prints each value with %v, its Go type, its kind and toYaml:
// what differs when a value changes type on the way to the companion.
const typesChart = `{{- range $k, $v := .Values.v }}
{{ $k }}: {{ $v }} | {{ typeOf $v }} | {{ kindOf $v }} | {{ toJson $v }} | {{ toYaml $v | replace "\n" " " }}
{{- end }}
`

// values are what rolloutlint sends: YAML decoded by yaml.v3, then --set
// values parsed by strvals.
func values(t *testing.T) map[string]any {
	t.Helper()
	vals := map[string]any{}
	const doc = "v:\n  int: 3\n  float: 1.0\n  big: 1e6\n  huge: 18446744073709551615\n  str: '3'\n  empty: []\n  map: {}\n  nul: ~\n  intKeys: {1: a}\n"
	if err := yaml.Unmarshal([]byte(doc), &vals); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"v.set=1000000", "v.setList={1,2}", "v.setFloat=1.5", "v.setNull=null"} {
		if err := strvals.ParseInto(s, vals); err != nil {
			t.Fatal(err)
		}
	}
	return vals
}

func writeChart(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"Chart.yaml":           "apiVersion: v2\nname: types\nversion: 0.1.0\n",
		"templates/types.yaml": typesChart,
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func render(t *testing.T, engine interface {
	Render(*helmrpc.Request) (*helmrpc.Response, error)
}, dir string, vals map[string]any) string {
	t.Helper()
	resp, err := engine.Render(&helmrpc.Request{ChartDir: dir, Values: vals, ReleaseName: "r", Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Stage != "" {
		t.Fatalf("%s: %s", resp.Stage, resp.Error)
	}
	var b strings.Builder
	for _, f := range resp.Files {
		b.WriteString(f.Name + ":" + f.Text)
	}
	return b.String()
}

// TestCompanionRendersValuesAsInProcess renders one chart with the same
// values in process and through the companion (the values crossing the
// pipe in helmrpc's encoding): the output must be byte for byte the same,
// and must not be what values that went through JSON render.
func TestCompanionRendersValuesAsInProcess(t *testing.T) {
	dir := writeChart(t)
	inProcess := render(t, helmengine.InProcess{}, dir, values(t))
	c := helmrpc.NewClient(helmrpc.ClientOptions{})
	defer func() { _ = c.Close() }()
	viaCompanion := render(t, c, dir, values(t))
	if viaCompanion != inProcess {
		t.Errorf("through the companion:\n%s\nin process:\n%s", viaCompanion, inProcess)
	}
	for _, want := range []string{"int: 3 | int | int |", "set: 1000000 | int64 | int64 |", "float: 1 | float64 |",
		"big: 1e+06 | float64 |", "huge: 18446744073709551615 | uint64 |", "empty: [] | []interface {} | slice | [] | []",
		"intKeys: map[1:a] | map[interface {}]interface {} | map |"} {
		if !strings.Contains(inProcess, want) {
			t.Errorf("the output lacks %q: the test no longer covers that type\n%s", want, inProcess)
		}
	}
	// Values that went through JSON (what a plain JSON protocol would
	// send) render otherwise.
	jsonVals := values(t)
	delete(jsonVals["v"].(map[string]any), "intKeys") // JSON cannot carry it at all
	data, err := json.Marshal(jsonVals)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(back, jsonVals) || render(t, helmengine.InProcess{}, dir, back) == render(t, helmengine.InProcess{}, dir, jsonVals) {
		t.Error("values through JSON render the same: the lossless encoding is no longer needed (or the chart no longer tells)")
	}
}

// TestTimestampValuePanicsHelm: Helm's copy of the values panics on a
// time.Time (an explicit YAML !!timestamp); that is a response, in process
// and through the companion, not a crash.
func TestTimestampValuePanicsHelm(t *testing.T) {
	dir := writeChart(t)
	vals := map[string]any{}
	if err := yaml.Unmarshal([]byte("v: {stamp: !!timestamp 2026-01-02T03:04:05Z}\n"), &vals); err != nil {
		t.Fatal(err)
	}
	c := helmrpc.NewClient(helmrpc.ClientOptions{})
	defer func() { _ = c.Close() }()
	for name, engine := range map[string]interface {
		Render(*helmrpc.Request) (*helmrpc.Response, error)
	}{"in process": helmengine.InProcess{}, "companion": c} {
		resp, err := engine.Render(&helmrpc.Request{ChartDir: dir, Values: vals})
		if err != nil || resp.Stage != helmrpc.StagePanic || !strings.Contains(resp.Error, "unexported field") || resp.ChartName != "types" {
			t.Errorf("%s: %+v, %v; want a StagePanic response", name, resp, err)
		}
	}
}

// TestRenderStages: each failure is reported at its stage with Helm's text.
func TestRenderStages(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	resp := helmengine.Render(&helmrpc.Request{ChartDir: dir})
	if resp.Stage != helmrpc.StageLoad || resp.Error == "" {
		t.Errorf("no Chart.yaml: %+v, want the load stage", resp)
	}
	write("Chart.yaml", "apiVersion: v2\nname: s\nversion: 0.1.0\nkubeVersion: '>=1.40.0'\ndependencies:\n- name: sub\n  version: 0.1.0\n")
	resp = helmengine.Render(&helmrpc.Request{ChartDir: dir, Values: map[string]any{}})
	if !reflect.DeepEqual(resp.Missing, []string{"sub"}) || resp.ChartName != "s" {
		t.Errorf("a missing dependency: %+v", resp)
	}
	write("charts/sub/Chart.yaml", "apiVersion: v2\nname: sub\nversion: 0.1.0\n")
	resp = helmengine.Render(&helmrpc.Request{ChartDir: dir, Values: map[string]any{}})
	if resp.Stage != helmrpc.StageKubeVersion || resp.ChartKubeVersion != ">=1.40.0" || resp.KubeVersion == "" {
		t.Errorf("kubeVersion: %+v", resp)
	}
	resp = helmengine.Render(&helmrpc.Request{ChartDir: dir, Values: map[string]any{}, KubeVersion: "v1.41.0"})
	if resp.Stage != "" || resp.KubeVersion != "v1.41.0" {
		t.Errorf("an Application's kubeVersion: %+v", resp)
	}
	write("values.schema.json", `{"type": "object", "required": ["x"]}`)
	resp = helmengine.Render(&helmrpc.Request{ChartDir: dir, Values: map[string]any{}, KubeVersion: "v1.41.0"})
	if resp.Stage != helmrpc.StageValues || !strings.Contains(resp.Error, "schema") {
		t.Errorf("schema: %+v", resp)
	}
	write("templates/x.yaml", "{{ required \"x is required\" .Values.y }}")
	resp = helmengine.Render(&helmrpc.Request{ChartDir: dir, Values: map[string]any{"x": 1}, KubeVersion: "v1.41.0"})
	if resp.Stage != helmrpc.StageRender || !strings.Contains(resp.Error, "x is required") {
		t.Errorf("render: %+v", resp)
	}
}

// TestDisabledDependencyNotVendored: a dependency its condition or tags
// disable is not needed to render (Helm removes it before rendering), so
// its absence from charts/ is no failure; enabled by the values, it is.
func TestDisabledDependencyNotVendored(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: shop\nversion: 0.1.0\ndependencies:\n" +
			"- name: cache\n  version: 1.0.0\n  repository: https://charts.example.com\n  condition: cache.enabled\n" +
			"- name: queue\n  alias: jobs\n  version: 1.0.0\n  repository: https://charts.example.com\n  tags: [async]\n" +
			"  import-values: [{child: exported, parent: imported}]\n",
		"values.yaml":            "cache:\n  enabled: false\ntags:\n  async: false\n",
		"templates/service.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: shop\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	resp := helmengine.Render(&helmrpc.Request{ChartDir: dir, Values: map[string]any{}})
	if len(resp.Missing) != 0 || resp.Stage != "" || len(resp.Files) != 1 {
		t.Errorf("both disabled: %+v, want the chart rendered without them", resp)
	}
	resp = helmengine.Render(&helmrpc.Request{ChartDir: dir, Values: map[string]any{"cache": map[string]any{"enabled": true}}})
	if !reflect.DeepEqual(resp.Missing, []string{"cache"}) {
		t.Errorf("cache enabled: missing %v, want [cache]", resp.Missing)
	}
	resp = helmengine.Render(&helmrpc.Request{ChartDir: dir, Values: map[string]any{"tags": map[string]any{"async": true}}})
	if !reflect.DeepEqual(resp.Missing, []string{"queue"}) {
		t.Errorf("async tag on: missing %v, want [queue]", resp.Missing)
	}
}
