package units

import (
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rolloutlint/rolloutlint/model/graph"
)

// expandSets expands the ApplicationSets of one file (in a tree holding
// only it) and returns the generated Applications as "name path" lines,
// sorted, and the findings.
func expandSets(t *testing.T, sets string) ([]string, []graph.Problem) {
	t.Helper()
	dir := t.TempDir()
	var apps []string
	var problems []graph.Problem
	for _, s := range applicationSetsIn(dir+"/sets.yaml", []byte(sets)) {
		a, p := expandApplicationSet(s, []string{dir})
		for _, app := range a {
			apps = append(apps, app.Name+" "+app.Source.Path)
		}
		problems = append(problems, p...)
	}
	sort.Strings(apps)
	return apps, problems
}

// goSet is an ApplicationSet with Go templates, one list element
// {env: Prod_EU, tier: "3", path: {basename: Web.UI}}, and NAME as the
// template's metadata.name (on line 9).
func goSet(name string, opts ...string) string {
	o := ""
	if len(opts) > 0 {
		o = "  goTemplateOptions: [" + strings.Join(opts, ", ") + "]\n"
	}
	return `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: s, namespace: argocd}
spec:
  goTemplate: true
` + o + `  generators:
  - list: {elements: [{env: Prod_EU, tier: "3", path: {basename: Web.UI}}]}
  template:
    metadata: {name: ` + name + `}
    spec:
      project: default
      source: {repoURL: x, path: apps}
      destination: {server: 'https://kubernetes.default.svc', namespace: x}
`
}

// TestGoTemplateFunctions evaluates Sprig's functions and Argo CD's own
// (normalize, slugify, toYaml, fromYaml) as Argo CD's controller does.
func TestGoTemplateFunctions(t *testing.T) {
	for _, c := range []struct{ tmpl, want string }{
		{`{{ .path.basename | lower | replace "." "-" }}`, "web-ui"},
		{`{{ .env | lower | trimPrefix "prod_" }}`, "eu"},
		{`{{ .missing | default "dflt" }}-{{ .tier | atoi | add 1 }}`, "dflt-4"},
		{`{{ .env | normalize }}`, "prod-eu"},
		{`{{ printf "%s.%s" .env .tier | slugify }}`, "prod-eu-3"},
		{`{{ slugify 9 "Hello World.Again" }}`, "hello"},           // cut at the last '-' before 9
		{`{{ slugify 9 false "Hello World.Again" }}`, "hello-wor"}, // cut at 9
		{`{{ dict "a" .tier | toYaml | trim }}`, `a: "3"`},         // sigs.k8s.io/yaml quotes a numeric string
		{`{{ (fromYaml "b: [1, 2]").b | toJson }}`, `[1,2]`},       // JSON's types
		{`{{ semverCompare ">=1.2.0" "1.10.0" }}`, "true"},         // a Sprig function the old subset lacked
		{`{{ list "b" "a" | sortAlpha | join "," | sha256sum | trunc 7 }}`, fmt.Sprintf("%x", sha256.Sum256([]byte("a,b")))[:7]},
	} {
		apps, problems := expandSets(t, goSet("'"+c.tmpl+"'"))
		if len(problems) != 0 || len(apps) != 1 {
			t.Errorf("%s: apps %q, problems %+v", c.tmpl, apps, problems)
			continue
		}
		if got := strings.TrimSuffix(apps[0], " apps"); got != c.want {
			t.Errorf("%s = %q, want %q", c.tmpl, got, c.want)
		}
	}
}

// TestGoTemplateArgoErrors: a function Argo CD does not have (env, one it
// removes from Sprig; Helm's include) and an unknown goTemplateOptions
// option are errors Argo CD's controller has too: the set generates none
// of its Applications, with a finding at the template's line.
func TestGoTemplateArgoErrors(t *testing.T) {
	for _, c := range []struct {
		set, want string
		line      int
	}{
		{goSet(`'{{ env "HOME" }}'`), `function "env" not defined`, 9},
		{goSet(`'{{ getHostByName "x" }}'`), `function "getHostByName" not defined`, 9},
		{goSet(`'{{ include "x" . }}'`), `function "include" not defined`, 9},
		{goSet(`'{{ .nope }}'`, `"missingkey=error"`), `map has no entry for key "nope"`, 10},
		{goSet(`'{{ .env }}'`, `"missingkey=bogus"`), `goTemplateOptions: unrecognized option: missingkey=bogus`, 10},
		// text/template's own bound on recursion, which Argo CD hits too.
		{goSet(`'{{ define "a" }}{{ template "a" . }}{{ end }}{{ template "a" . }}'`), "exceeded maximum template depth (100000)", 9},
	} {
		apps, problems := expandSets(t, c.set)
		if len(apps) != 0 || len(problems) != 1 || !problems[0].Info ||
			!strings.Contains(problems[0].Message, c.want) || !strings.Contains(problems[0].Message, "Argo CD generates none") ||
			problems[0].Pos.Line != c.line {
			t.Errorf("want one finding at line %d with %q; apps %q, problems %+v", c.line, c.want, apps, problems)
		}
	}
}

// TestGoTemplateNondeterministic: a template calling a function whose
// result changes from run to run is not evaluated, and the finding names
// the function, at the line of the string that calls it.
func TestGoTemplateNondeterministic(t *testing.T) {
	for _, fn := range []string{"now", "uuidv4", "randAlphaNum 5", "genPrivateKey \"rsa\"", "date \"2006\" 0"} {
		name := strings.Fields(fn)[0]
		apps, problems := expandSets(t, goSet(`'a{{ `+fn+` | trunc 0 }}'`))
		if len(apps) != 0 || len(problems) != 1 || problems[0].Pos.Line != 9 ||
			!strings.Contains(problems[0].Message, "calls "+name+", which does not give the same result every time") ||
			strings.Contains(problems[0].Message, "Argo CD generates none") {
			t.Errorf("%s: apps %q, problems %+v", fn, apps, problems)
		}
	}
}

// TestGoTemplateHostile: templates that loop, recurse or build huge values
// end quickly with a finding at their line, without exhausting memory.
func TestGoTemplateHostile(t *testing.T) {
	for _, c := range []struct{ tmpl, want string }{
		{`{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}`, "more than 1000000 steps"},
		{`{{ range 1000000000 }}{{ end }}`, "more than 1000000 steps"},
		{`{{ $l := until 3000 }}{{ range $l }}{{ range $l }}{{ end }}{{ end }}`, "more than 1000000 steps"},
		{`{{ repeat 1000000000 "xx" }}`, "repeat would make a value of about 2000000000 bytes"},
		{`{{ $s := "xxxxxxxx" }}{{ range until 100 }}{{ $s = cat $s $s }}{{ end }}`, "cat makes a value of more than 1048576 bytes"},
		{`{{ $s := "xxxxxxxx" }}{{ range until 100 }}{{ $s = printf "%s%s" $s $s }}{{ end }}{{ $s }}`, "printf makes a value of more than 1048576 bytes"},
		{`{{ range until 2000 }}{{ printf "%0999d" 1 }}{{ end }}`, "writes more than 1048576 bytes"},
		{`{{ printf "%0999999d%0999999d" 1 2 }}`, "printf would make a value of about 2000040 bytes"},
		{`{{ $d := dict }}{{ $_ := set $d "a" $d }}{{ $d }}`, "nested deeper than 64 levels"},
		{`{{ $l := list }}{{ range until 200 }}{{ $l = append $l (repeat 10000 "x") }}{{ end }}{{ join "" $l }}`, "makes a value of more than"},
	} {
		start := time.Now()
		apps, problems := expandSets(t, goSet(`'`+c.tmpl+`'`))
		t.Logf("%v: %s", time.Since(start), c.tmpl)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s took %v", c.tmpl, d)
		}
		if len(apps) != 0 || len(problems) != 1 || problems[0].Pos.Line != 9 || !strings.Contains(problems[0].Message, c.want) ||
			!strings.Contains(problems[0].Message, "is not evaluated") {
			t.Errorf("%s: apps %q, problems %s", c.tmpl, apps, fmt.Sprint(problems))
		}
	}
}
