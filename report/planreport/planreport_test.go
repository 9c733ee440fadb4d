package planreport_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xeipuuv/gojsonschema"

	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/report/planreport"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const fixtures = "../../testdata/plan"

var fixtureNames = []string{"host-level", "subset-level", "header-mirror", "additional-subsets", "bluegreen"}

func doc(t *testing.T, name, version string) *planreport.Document {
	t.Helper()
	// A relative path keeps file names in the output stable across machines.
	g, err := load.Paths([]string{filepath.Join(fixtures, name+".yaml")}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := xds.ForVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	return planreport.Build(m, xds.NewScoper(g), plan.Build(g), nil)
}

// TestJSONSchema validates the JSON of every fixture under every model
// against docs/plan.schema.json.
func TestJSONSchema(t *testing.T) {
	schema, err := gojsonschema.NewSchema(gojsonschema.NewReferenceLoader("file://" + mustAbs(t, "../../docs/plan.schema.json")))
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	for _, name := range fixtureNames {
		for _, v := range xds.Versions() {
			var buf bytes.Buffer
			if err := planreport.JSON(&buf, doc(t, name, v)); err != nil {
				t.Fatal(err)
			}
			res, err := schema.Validate(gojsonschema.NewBytesLoader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.Errors() {
				t.Errorf("%s@%s: %s", name, v, e)
			}
		}
	}
	// An experiment step's writes (service-create, service-delete, hash).
	eg, err := load.Paths([]string{"../../testdata/xds-conformance/scenarios/experiment.yaml"}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range xds.Versions() {
		m, err := xds.ForVersion(v)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := planreport.JSON(&buf, planreport.Build(m, xds.NewScoper(eg), plan.Build(eg), nil)); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), `"kind": "service-delete"`) {
			t.Errorf("experiment@%s: no service-delete write", v)
		}
		res, err := schema.Validate(gojsonschema.NewBytesLoader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Errors() {
			t.Errorf("experiment@%s: %s", v, e)
		}
	}
	// Rollouts of two bundles, rendered in units: each with its unit, one
	// with the Application rendering it, at the position Origin gives.
	var ub bytes.Buffer
	origin := func(u *planreport.Unit) func(*plan.Plan) (*planreport.Unit, string, int) {
		return func(*plan.Plan) (*planreport.Unit, string, int) { return u, "base/rollout.yaml", 4 }
	}
	bundles := []planreport.Bundle{
		{N: 1, At: func(int, *plan.Planner) *plan.Plan { return plan.Build(eg)[0] }, Scoper: xds.NewScoper(eg),
			Origin: origin(&planreport.Unit{Kind: "kustomize", Dir: "overlays/dev"})},
		{N: 1, At: func(int, *plan.Planner) *plan.Plan { return plan.Build(eg)[0] }, Scoper: xds.NewScoper(eg),
			Origin: origin(&planreport.Unit{Kind: "helm", Dir: "charts/app", Application: "argocd/app"})},
	}
	m0, err := xds.ForVersion(xds.DefaultVersion)
	if err != nil {
		t.Fatal(err)
	}
	if err := planreport.WriteBundles(&ub, "json", m0, bundles); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"file": "base/rollout.yaml"`, `"dir": "overlays/dev"`, `"application": "argocd/app"`} {
		if !strings.Contains(ub.String(), want) {
			t.Errorf("units: the JSON lacks %s", want)
		}
	}
	ures, err := schema.Validate(gojsonschema.NewBytesLoader(ub.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ures.Errors() {
		t.Errorf("units: %s", e)
	}
	// A refused Rollout: its rejections, with and without a detail.
	g, err := load.Paths([]string{filepath.Join(fixtures, "host-level.yaml")}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plans := plan.Build(g)
	m, err := xds.ForVersion(xds.Versions()[0])
	if err != nil {
		t.Fatal(err)
	}
	rejected := map[plan.Object][]planreport.Rejection{plans[0].Rollout: {
		{RuleID: "RL1001", Message: "step 0: setWeight 120 is outside 0..100", Detail: "Argo Rollouts marks the Rollout InvalidSpec.", File: "r.yaml", Line: 3, Column: 5},
		{RuleID: "RL1002", Message: "step 1 has no action", File: "r.yaml", Line: 4, Column: 5},
	}}
	var buf bytes.Buffer
	if err := planreport.JSON(&buf, planreport.Build(m, xds.NewScoper(g), plans, rejected)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"detail": "Argo Rollouts marks the Rollout InvalidSpec."`) || strings.Count(buf.String(), `"detail"`) != 1 {
		t.Errorf("rejections: the detail is not written once, or is written empty:\n%s", buf.String())
	}
	res, err := schema.Validate(gojsonschema.NewBytesLoader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Errors() {
		t.Errorf("rejected Rollout: %s", e)
	}
	// ... and a Rollout both refused and played out is not a plan.
	buf.Reset()
	played := planreport.Build(m, xds.NewScoper(g), plans, nil)
	played.Rollouts[0].Rejected = rejected[plans[0].Rollout]
	if err := planreport.JSON(&buf, played); err != nil {
		t.Fatal(err)
	}
	if res, err = schema.Validate(gojsonschema.NewBytesLoader(buf.Bytes())); err != nil || res.Valid() {
		t.Errorf("schema accepts states for a refused Rollout (err %v)", err)
	}
	// The schema must reject what it documents as wrong, or it checks nothing.
	bad := []byte(`{"schemaVersion":1,"istioVersion":"1.28","rollouts":[{"rollout":{"kind":"Rollout","namespace":"a","name":"b"},` +
		`"file":"f","line":1,"strategy":"canary","split":"host","replicas":1,"states":[],"abortFrom":0,"abort":[],` +
		`"summary":{"fullPushes":0,"endpointPushes":0,"allGatewayPushes":0,"mergedPushes":0},"extra":true}]}`)
	res, err = schema.Validate(gojsonschema.NewBytesLoader(bad))
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid() {
		t.Error("schema accepts an empty state list and an unknown field")
	}
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(a)
}

// TestTextWidth keeps the text table readable in 100 columns.
func TestTextWidth(t *testing.T) {
	for _, name := range fixtureNames {
		var buf bytes.Buffer
		if err := planreport.Text(&buf, doc(t, name, "1.28")); err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(buf.String(), "\n") {
			if n := utf8.RuneCountInString(l); n > planreport.Width {
				t.Errorf("%s line %d is %d columns: %q", name, i+1, n, l)
			}
		}
	}
}

// TestGolden compares every format with testdata/plan/golden (-update rewrites).
func TestGolden(t *testing.T) {
	for _, name := range fixtureNames {
		for format, w := range planreport.Formats {
			ext := map[string]string{"text": "txt", "json": "json", "markdown": "md", "mermaid": "mmd"}[format]
			var buf bytes.Buffer
			if err := w(&buf, doc(t, name, "1.28")); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(fixtures, "golden", name+"."+ext)
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./report/planreport -update)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s differs from the golden file (run with -update and review the diff):\n%s", path, buf.String())
			}
		}
	}
}

// TestJSONFieldsStable checks the documented top-level field names of a push.
func TestJSONFieldsStable(t *testing.T) {
	var buf bytes.Buffer
	if err := planreport.JSON(&buf, doc(t, "host-level", "1.28")); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Rollouts []struct {
			States []struct {
				Pushes []map[string]any `json:"pushes"`
			} `json:"states"`
		} `json:"rollouts"`
	}
	if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	// step 2, setWeight 50: the canary selector and the weights in one window.
	push := v.Rollouts[0].States[4].Pushes[0]
	for _, k := range []string{"window", "writes", "keys", "class", "eds", "sidecarTypes", "gatewayTypes", "effective", "scope", "merged", "async", "cites"} {
		if _, ok := push[k]; !ok {
			t.Errorf("push has no %q field: %v", k, push)
		}
	}
	if push["class"] != "partial-full-eds" {
		t.Errorf("canary selector and weight push class = %v", push["class"])
	}
}

// TestMermaidSyntax checks the diagram's structure: one sequenceDiagram for
// the document, a rect block per Rollout and an opt block for the abort path,
// only arrow and note lines inside, no characters Mermaid parses as syntax;
// and, with the Mermaid parser installed, that it parses.
func TestMermaidSyntax(t *testing.T) {
	var buf bytes.Buffer
	if err := planreport.Mermaid(&buf, doc(t, "header-mirror", "1.28")); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if lines[0] != "sequenceDiagram" {
		t.Fatalf("first line %q", lines[0])
	}
	for _, l := range lines[1:] {
		l = strings.TrimSpace(l)
		if l == "end" || strings.HasPrefix(l, "rect rgba(") || strings.HasPrefix(l, "opt abort from ") {
			continue
		}
		ok := strings.HasPrefix(l, "title ") || strings.HasPrefix(l, "participant ") ||
			strings.HasPrefix(l, "Note over A,P: ") || strings.HasPrefix(l, "A->>K: ") || strings.HasPrefix(l, "I->>P: ")
		if !ok {
			t.Errorf("unexpected line %q", l)
		}
		msg := l[strings.Index(l, ":")+1:]
		if strings.ContainsAny(msg, ";#<>") {
			t.Errorf("unescaped Mermaid syntax in %q", l)
		}
	}
	parseMermaid(t, buf.String())
}

// A plan from the live state (plan --cluster) has a live row first, names
// the hashes and the live state, and keeps to the schema.
func TestLivePlan(t *testing.T) {
	g, err := load.Paths([]string{filepath.Join(fixtures, "host-level.yaml")}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := xds.ForVersion(xds.DefaultVersion)
	p := plan.FromLive(g, g.Refs().Rollouts[0], &plan.Live{Step: 1, Paused: true, StableHash: "6d4f8b7c9", CanaryHash: "5b9c7d8f4",
		CanaryWeight: 20, StableReplicas: 4, CanaryReplicas: 1})
	if p == nil {
		t.Fatal("no plan")
	}
	d := planreport.Build(m, xds.NewScoper(g), []*plan.Plan{p}, nil)
	var buf bytes.Buffer
	if err := planreport.JSON(&buf, d); err != nil {
		t.Fatal(err)
	}
	schema, err := gojsonschema.NewSchema(gojsonschema.NewReferenceLoader("file://" + mustAbs(t, "../../docs/plan.schema.json")))
	if err != nil {
		t.Fatal(err)
	}
	res, err := schema.Validate(gojsonschema.NewBytesLoader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Errors() {
		t.Errorf("live plan: %s", e)
	}
	buf.Reset()
	if err := planreport.Text(&buf, d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"from the live state: stable 6d4f8b7c9, canary 5b9c7d8f4, status canary weight 20%", "\nlive       live: at step 1 of", "-5b9c7d8f4"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "<stable-hash>") || strings.Contains(buf.String(), "<canary-hash>") {
		t.Errorf("symbolic hashes left in a live plan:\n%s", buf.String())
	}
}

// Write streams text and JSON one Rollout at a time; its bytes must be the
// format's Writer's on Build's document, for every fixture together (more
// than one Rollout, so the separators count), one alone, and none.
func TestWriteMatchesBuild(t *testing.T) {
	var all []string
	for _, n := range fixtureNames {
		all = append(all, filepath.Join(fixtures, n+".yaml"))
	}
	m, err := xds.ForVersion(xds.DefaultVersion)
	if err != nil {
		t.Fatal(err)
	}
	for _, paths := range [][]string{all, all[:1], nil} {
		g, err := load.Paths(paths, load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		plans := plan.Build(g)
		if len(paths) > 1 && len(plans) < 2 {
			t.Fatalf("%d plans of %d fixtures", len(plans), len(paths))
		}
		rejected := map[plan.Object][]planreport.Rejection{}
		if len(plans) > 0 {
			rejected[plans[0].Rollout] = []planreport.Rejection{{RuleID: "RL1001", Message: "refused <here>", File: "f.yaml", Line: 3, Column: 5}}
		}
		for _, format := range planreport.FormatNames() {
			var want, got bytes.Buffer
			if err := planreport.Formats[format](&want, planreport.Build(m, xds.NewScoper(g), plans, rejected)); err != nil {
				t.Fatal(err)
			}
			at := func(i int, _ *plan.Planner) *plan.Plan { return plans[i] }
			if err := planreport.Write(&got, format, m, xds.NewScoper(g), len(plans), at, rejected); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%d plans, %s: Write differs from %s on Build's document:\n%s\nwant:\n%s", len(plans), format, format, got.String(), want.String())
			}
		}
	}
}
