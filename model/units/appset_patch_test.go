package units

import (
	"strings"
	"testing"
)

// TestTemplatePatch: the rendered patch is merged into each Application
// (mappings by key, null deletes, lists replaced, spec.project kept), and
// the patched fields are at their lines in the patch: a range's items on
// the range's body.
func TestTemplatePatch(t *testing.T) {
	dir := t.TempDir()
	sets := applicationSetsIn(dir+"/sets.yaml", []byte(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: s, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - list: {elements: [{env: dev, files: [a.yaml, b.yaml]}]}
  template:
    metadata: {name: 'p-{{ .env }}'}
    spec:
      project: default
      source: {repoURL: x, path: 'apps/{{ .env }}', helm: {releaseName: r, valueFiles: [base.yaml]}}
      destination: {server: 'https://kubernetes.default.svc', namespace: base}
  templatePatch: |
    spec:
      project: other
      source:
        helm:
          releaseName: null
          valueFiles:
          {{- range .files }}
            - {{ . }}
          {{- end }}
      destination:
        namespace: ns-{{ .env }}
`))
	apps, problems := expandApplicationSet(sets[0], []string{dir})
	if len(problems) != 0 || len(apps) != 1 {
		t.Fatalf("apps %v, problems %v", apps, problems)
	}
	a := apps[0]
	if a.Project != "default" || a.Destination.Namespace != "ns-dev" || a.Source.Path != "apps/dev" || a.Source.Helm == nil ||
		strings.Join(a.Source.Helm.ValueFiles, ",") != "a.yaml,b.yaml" || a.Source.Helm.ReleaseName != "" {
		t.Fatalf("patched wrongly: %+v %+v", a, a.Source.Helm)
	}
	for path, want := range map[string]int{
		"spec.source.path":               12, // the template's
		"spec.source.helm.valueFiles[0]": 22, // the range's body
		"spec.source.helm.valueFiles[1]": 22,
		"spec.destination.namespace":     25,
		"spec.project":                   11,
	} {
		if got := a.Pos(path); got.Line != want {
			t.Errorf("%s at line %d, want %d", path, got.Line, want)
		}
	}
	if got := a.Pos("spec.destination.namespace"); got.Column != 20 {
		t.Errorf("spec.destination.namespace at column %d, want 20", got.Column)
	}
}

// TestTemplatePatchErrors: a patch that does not parse, has the wrong
// types or is not a mapping is an error Argo CD has too (no Application),
// at the templatePatch; one calling a nondeterministic function is not
// evaluated.
func TestTemplatePatchErrors(t *testing.T) {
	set := func(patch string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: s, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - list: {elements: [{env: dev}]}
  template:
    metadata: {name: 'p-{{ .env }}'}
    spec:
      source: {repoURL: x, path: apps}
      destination: {server: 'https://kubernetes.default.svc', namespace: base}
  templatePatch: |
` + patch
	}
	for _, c := range []struct{ patch, want string }{
		{"    spec: {destination: [unclosed\n", "templatePatch does not parse"},
		{"    spec: {source: {path: [a]}}\n", "invalid templatePatch: json: cannot unmarshal array"},
		{"    - {{ .env }}\n", "invalid templatePatch: json: cannot unmarshal array"},
		{"    spec: {destination: {namespace: '{{ .env | env }}'}}\n", `function "env" not defined`},
		{"    spec: {source: {$retainKeys: [path]}}\n", "$retainKeys directive is not applied"},
		{"    spec: {destination: {namespace: '{{ now | date \"2006\" }}'}}\n", "calls now, which does not give the same result"},
	} {
		apps, problems := expandSets(t, set(c.patch))
		if len(apps) != 0 || len(problems) != 1 || !strings.Contains(problems[0].Message, c.want) || problems[0].Pos.Line != 13 {
			t.Errorf("%q: apps %q, problems %v; want one at line 13 with %q", c.patch, apps, problems, c.want)
		}
	}
}
