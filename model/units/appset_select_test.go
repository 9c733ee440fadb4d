package units

import (
	"strings"
	"testing"
)

// TestGeneratorSelector: a selector filters a generator's parameter sets
// by their flattened parameters; a bad one is an error Argo CD has too,
// at the selector.
func TestGeneratorSelector(t *testing.T) {
	set := func(selector string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: s, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - list:
      elements: [{env: dev, n: 1, meta: {team: a}}, {env: prod, n: 2, meta: {team: b}}, {env: qa, n: 3}]
    selector: ` + selector + `
  template:
    metadata: {name: '{{ .env }}'}
    spec:
      source: {repoURL: x, path: apps}
      destination: {server: 'https://kubernetes.default.svc', namespace: x}
`
	}
	for _, c := range []struct{ selector, want string }{
		{`{}`, "dev,prod,qa"},
		{`{matchLabels: {env: prod}}`, "prod"},
		{`{matchLabels: {n: "2"}}`, "prod"}, // numbers as %v prints them
		{`{matchLabels: {meta.team: a}}`, "dev"},
		{`{matchExpressions: [{key: meta.team, operator: Exists}]}`, "dev,prod"},
		{`{matchExpressions: [{key: meta.team, operator: DoesNotExist}]}`, "qa"},
		{`{matchExpressions: [{key: env, operator: NotIn, values: [dev]}]}`, "prod,qa"},
		{`{matchExpressions: [{key: env, operator: In, values: [dev, qa]}], matchLabels: {n: "3"}}`, "qa"},
		{`{matchExpressions: [{key: nope, operator: NotIn, values: [x]}]}`, "dev,prod,qa"},
	} {
		apps, problems := expandSets(t, set(c.selector))
		var names []string
		for _, a := range apps {
			names = append(names, strings.Fields(a)[0])
		}
		if got := strings.Join(names, ","); got != c.want || len(problems) != 0 {
			t.Errorf("%s: %q, problems %v; want %q", c.selector, got, problems, c.want)
		}
	}
	for _, c := range []struct{ selector, want string }{
		{`{matchExpressions: [{key: env, operator: Gt, values: ["1"]}]}`, `"Gt" is not a valid pod selector operator`},
		{`{matchExpressions: [{key: env, operator: In}]}`, `values set can't be empty`},
		{`{matchExpressions: [{key: env, operator: Exists, values: [a]}]}`, `values set must be empty`},
		{`{matchLabels: {'path[0]': a}}`, `selector key "path[0]": name part must consist of`},
		{`[a]`, `the selector is not a label selector`},
	} {
		apps, problems := expandSets(t, set(c.selector))
		if len(apps) != 0 || len(problems) != 1 || !strings.Contains(problems[0].Message, c.want) ||
			!strings.Contains(problems[0].Message, "Argo CD generates none") || problems[0].Pos.Line != 9 {
			t.Errorf("%s: apps %q, problems %v; want one at line 9 with %q", c.selector, apps, problems, c.want)
		}
	}
}

// TestSelectorLabels flattens parameters as Argo CD's flatten does: a
// list of JSON values by index, a []string (path.segments) as one value.
func TestSelectorLabels(t *testing.T) {
	got := selectorLabels(map[string]any{
		"path":  map[string]any{"segments": []string{"apps", "web"}, "basename": "web"},
		"zones": []any{"a", map[string]any{"id": 2.0}},
		"big":   1e6, "nil": nil, "empty": map[string]any{},
	})
	want := map[string]string{"path.segments": "[apps web]", "path.basename": "web", "zones.0": "a", "zones.1.id": "2", "big": "1e+06", "nil": "<nil>"}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

// TestGeneratorTemplate: a generator's template is merged over the set's
// (its non-empty fields win, maps merge by key, lists do not), and a
// generated Application's fields keep the line of the template that set
// them.
func TestGeneratorTemplate(t *testing.T) {
	dir := t.TempDir()
	sets := applicationSetsIn(dir+"/sets.yaml", []byte(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: s, namespace: argocd}
spec:
  generators:
  - list:
      elements: [{env: dev}]
      template:
        metadata: {name: 'gen-{{env}}', labels: {from: generator}}
        spec:
          project: ''
          source: {path: 'override/{{env}}', helm: {valueFiles: [a.yaml]}}
  - list: {elements: [{env: qa}]}
  template:
    metadata: {name: 'set-{{env}}', labels: {from: set, base: "yes"}}
    spec:
      project: default
      source: {repoURL: x, path: 'apps/{{env}}', helm: {valueFiles: [b.yaml, c.yaml], releaseName: r}}
      destination: {server: 'https://kubernetes.default.svc', namespace: 'ns-{{env}}'}
`))
	apps, problems := expandApplicationSet(sets[0], []string{dir})
	if len(problems) != 0 || len(apps) != 2 {
		t.Fatalf("apps %v, problems %v", apps, problems)
	}
	gen, plain := apps[0], apps[1]
	if gen.Name != "gen-dev" || gen.Project != "default" || gen.Source.Path != "override/dev" || gen.Source.RepoURL != "x" ||
		gen.Destination.Namespace != "ns-dev" || gen.Source.Helm == nil || strings.Join(gen.Source.Helm.ValueFiles, ",") != "a.yaml" ||
		gen.Source.Helm.ReleaseName != "r" {
		t.Errorf("generator template merged wrongly: %+v %+v", gen, gen.Source.Helm)
	}
	if plain.Name != "set-qa" || plain.Source.Path != "apps/qa" {
		t.Errorf("the second generator has no template of its own: %+v", plain)
	}
	// Positions: the path comes from the generator's template (line 12),
	// the destination from the set's (line 19).
	if l := lineOf(gen, "spec.source.path"); l != 12 {
		t.Errorf("spec.source.path at line %d, want 12", l)
	}
	if l := lineOf(gen, "spec.destination.namespace"); l != 19 {
		t.Errorf("spec.destination.namespace at line %d, want 19", l)
	}
}

func lineOf(a *Application, path string) int { return a.Pos(path).Line }
