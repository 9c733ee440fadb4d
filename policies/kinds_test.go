package policies

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
)

// kindsMeta is goodMeta with the kinds line replaced.
func kindsMeta(kinds string) string {
	return strings.Replace(goodMeta, "#   kinds: [Rollout]\n", "#   kinds: "+kinds+"\n", 1)
}

// TestUndeclaredKindReadIsRejectedAtLoad: a policy naming a kind it does not
// declare where it reads that kind's objects fails to load, with file:line.
func TestUndeclaredKindReadIsRejectedAtLoad(t *testing.T) {
	cases := []struct{ name, kinds, body, want string }{
		{"lib.resources", "[Rollout]", `violation contains {"msg": "x", "ref": t.ref} if {
	some t in lib.resources("AnalysisTemplate")
	not t.object.spec.metrics
}`, "p.rego:14: policy acme.p reads kind AnalysisTemplate (lib.resources) but custom.kinds [Rollout] does not declare it"},
		{"lib.get", "[Rollout]", `violation contains {"msg": "x", "ref": ro.rollout} if {
	some ro in input.rollouts
	lib.get("Gateway", ro.rollout.namespace, "gw")
}`, "p.rego:15: policy acme.p reads kind Gateway (lib.get) but custom.kinds [Rollout] does not declare it"},
		{"input.kinds", "[Rollout, Service]", `violation contains {"msg": "x", "ref": g.ref} if {
	some g in input.kinds.Gateway
	not g.object.spec.servers
}`, "p.rego:14: policy acme.p reads kind Gateway (input.kinds) but custom.kinds [Rollout, Service] does not declare it"},
		{"computed kind", "[Rollout]", `violation contains {"msg": "x", "ref": i.ref} if {
	some k in {"Rollout", "Gateway"}
	some i in input.kinds[k]
	not i.object.spec
}`, "p.rego:15: policy acme.p reads input.kinds[...] with a kind computed at run time (any kind: declare \"*\") but custom.kinds [Rollout] does not declare it"},
		{"lib.applications", "[Rollout]", `violation contains {"msg": "x", "ref": app.ref} if {
	some app in lib.applications
	lib.automated(app)
}`, "p.rego:14: policy acme.p reads kind Application (lib.applications) but custom.kinds [Rollout] does not declare it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writePolicy(t, "p.rego", kindsMeta(c.kinds)+"package acme.p\n\nimport data.rolloutlint.lib\n\n"+c.body+"\n")
			_, err := LoadDirs([]string{dir})
			if err == nil {
				t.Fatal("the policy loaded")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), filepath.Join(dir, "p.rego")) {
				t.Errorf("error:\n%v\nwant it to contain %q and the file", err, c.want)
			}
		})
	}
}

// TestDeclaredKindsLoad: the reads load when the kind is declared; a kind
// computed at run time loads with "*".
func TestDeclaredKindsLoad(t *testing.T) {
	for _, c := range []struct{ kinds, body string }{
		{"[Rollout, AnalysisTemplate]", `violation contains {"msg": "x", "ref": t.ref} if {
	some t in lib.resources("AnalysisTemplate")
	not t.object.spec.metrics
}`},
		{`["*"]`, `violation contains {"msg": "x", "ref": t.ref} if {
	some k in {"AnalysisTemplate", "Gateway"}
	some t in input.kinds[k]
	not t.object.spec
}`},
	} {
		dir := writePolicy(t, "p.rego", kindsMeta(c.kinds)+"package acme.p\n\nimport data.rolloutlint.lib\n\n"+c.body+"\n")
		if _, err := LoadDirs([]string{dir}); err != nil {
			t.Errorf("kinds %s: %v", c.kinds, err)
		}
	}
}

// undeclaredKindPolicy reaches AnalysisTemplates through input.resources,
// which the load-time check cannot see. It reports whether or not the
// object's fields are in its input (an item of an undeclared kind keeps its
// ref; its object is there only when another policy compiled in the process
// declared the kind), so the test does not depend on which tests ran before.
const undeclaredKindPolicy = `package acme.p

violation contains {"msg": sprintf("template %s has %d metrics", [item.ref.name, metrics(item)]), "ref": item.ref, "path": "spec.metrics"} if {
	some item in input.resources
	item.ref.kind == "AnalysisTemplate"
}

metrics(item) := n if {
	n := count(item.object.spec.metrics)
} else := 0
`

// TestBuiltinFindingOnUndeclaredKindIsAnError: a built-in policy's input
// holds only its declared kinds' objects, so a built-in policy that reaches an
// undeclared kind does not pass silently: its findings on that kind turn into
// an RL0009 naming the kind to declare. Declaring the kind (or "*") gives the
// policy the objects and its finding.
func TestBuiltinFindingOnUndeclaredKindIsAnError(t *testing.T) {
	g, err := load.Paths([]string{"../examples/checkout"}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ kinds, rl0009, finding string }{
		{"[Rollout]", "it names AnalysisTemplate shop/success-rate, but custom.kinds declares only Rollout: add AnalysisTemplate", ""},
		{"[Rollout, AnalysisTemplate]", "", "template success-rate has 1 metrics"},
		{`["*"]`, "", "template success-rate has 1 metrics"},
	} {
		set, err := compile([]Source{{Name: "p.rego", Text: kindsMeta(c.kinds) + undeclaredKindPolicy}}, rules.SourceRego)
		if err != nil {
			t.Fatalf("kinds %s: %v", c.kinds, err)
		}
		res := analyzer.Run(g, analyzer.Options{Rules: set.rules, Mode: rules.ModeCLI})
		errs, found := messages(res, "RL0009"), messages(res, "RL9100")
		switch {
		case c.rl0009 != "" && (len(errs) != 1 || !strings.Contains(errs[0], c.rl0009) || len(found) != 0):
			t.Errorf("kinds %s: RL0009 %q, findings %q; want one RL0009 containing %q", c.kinds, errs, found, c.rl0009)
		case c.finding != "" && (len(errs) != 0 || len(found) != 1 || found[0] != c.finding):
			t.Errorf("kinds %s: RL0009 %q, findings %q; want %q", c.kinds, errs, found, c.finding)
		}
	}
}

// TestUserPolicySeesEveryKind: a user policy's input holds every object,
// whatever it declares, so it cannot miss one because of its declaration.
func TestUserPolicySeesEveryKind(t *testing.T) {
	g, err := load.Paths([]string{"../examples/checkout"}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := LoadDirs([]string{writePolicy(t, "p.rego", kindsMeta("[Rollout]")+undeclaredKindPolicy)})
	if err != nil {
		t.Fatal(err)
	}
	res := analyzer.Run(g, analyzer.Options{Rules: rs, Mode: rules.ModeCLI})
	if errs, found := messages(res, "RL0009"), messages(res, "RL9100"); len(errs) != 0 || len(found) != 1 || found[0] != "template success-rate has 1 metrics" {
		t.Errorf("RL0009 %q, findings %q; want the template's finding", errs, found)
	}
}

// TestInputHoldsOnlyDeclaredKindsObjects: the conversion leaves out the
// objects of kinds outside the set, and keeps every item's identity.
func TestInputHoldsOnlyDeclaredKindsObjects(t *testing.T) {
	g, err := load.Paths([]string{"../examples/checkout"}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := ast.JSON(convert(g, newKindSet([]string{"Rollout", "Service"}), wholeObjects(), true, allParts).resources.Value)
	if err != nil {
		t.Fatal(err)
	}
	resources := v.([]any)
	if len(resources) != len(g.Resources) {
		t.Fatalf("%d items for %d resources", len(resources), len(g.Resources))
	}
	for i, r := range g.Resources {
		item := resources[i].(map[string]any)
		_, has := item["object"]
		if want := r.Kind == "Rollout" || r.Kind == "Service"; has != want {
			t.Errorf("%s %s: object present %v, want %v", r.Kind, r.Name, has, want)
		}
		if ref := item["ref"].(map[string]any); ref["kind"] != r.Kind || ref["name"] != r.Name {
			t.Errorf("item %d: ref %v for %s %s", i, ref, r.Kind, r.Name)
		}
	}
}

// TestRouteDestinationsWeightSet: input.rollouts marks which destinations of a
// managed route set a weight in the file.
func TestRouteDestinationsWeightSet(t *testing.T) {
	dir := t.TempDir()
	bundle := `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: web:1}]}
  strategy:
    canary:
      stableService: web-stable
      canaryService: web-canary
      trafficRouting:
        istio:
          virtualService: {name: web, routes: [primary]}
---
apiVersion: v1
kind: Service
metadata: {name: web-stable, namespace: shop}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: web-canary, namespace: shop}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: web, namespace: shop}
spec:
  hosts: [web]
  http:
  - name: primary
    route:
    - destination: {host: web-stable}
      weight: 100
    - destination: {host: web-canary}
`
	if err := os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(bundle), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := load.Paths([]string{dir}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := ast.JSON(convert(g, newKindSet([]string{AllKinds}), wholeObjects(), true, allParts).rollouts.Value)
	if err != nil {
		t.Fatal(err)
	}
	rollouts := v.([]any)
	if len(rollouts) != 1 {
		t.Fatalf("rollouts = %v", rollouts)
	}
	route := rollouts[0].(map[string]any)["virtualServices"].([]any)[0].(map[string]any)["routes"].([]any)[0].(map[string]any)
	var got []string
	for _, d := range route["destinations"].([]any) {
		d := d.(map[string]any)
		got = append(got, fmt.Sprintf("%s %s %v", d["host"], d["role"], d["weightSet"]))
	}
	if want := []string{"web-stable stable true", "web-canary canary false"}; !slices.Equal(got, want) {
		t.Errorf("destinations %q, want %q", got, want)
	}
}
