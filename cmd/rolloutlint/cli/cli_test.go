package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/cmd/rolloutlint/cli"
)

// acceptance is the acceptance case: a misspelt key and an out-of-range
// weight in one Rollout. Line/column of the two offending fields are asserted.
const acceptance = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
spec:
  selector:
    matchLabels: {app: checkout}
  template:
    metadata: {labels: {app: checkout}}
    spec: {containers: [{name: checkout, image: checkout:1}]}
  strategy:
    canary:
      steps:
      - setWieght: 20
      - setWeight: 120
`

const clean = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
spec:
  selector:
    matchLabels: {app: checkout}
  template:
    metadata: {labels: {app: checkout}}
    spec: {containers: [{name: checkout, image: checkout:1}]}
  strategy:
    canary:
      steps:
      - setWeight: 20
      - pause: {}
`

// warnOnly yields only an RL1003 warning (explicit zero pause).
const warnOnly = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
spec:
  selector:
    matchLabels: {app: checkout}
  template:
    metadata: {labels: {app: checkout}}
    spec: {containers: [{name: checkout, image: checkout:1}]}
  strategy:
    canary:
      steps:
      - pause: {duration: 0}
`

type result struct {
	code     int
	out, err string
}

// run executes the real command line in working directory dir (so no
// .rolloutlint.yaml of the repository is found) with the given stdin and no
// environment variables.
func run(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	return runEnv(t, dir, stdin, nil, args...)
}

// runEnv is run with the environment variables env.
func runEnv(t *testing.T, dir, stdin string, env map[string]string, args ...string) result {
	t.Helper()
	var out, errw bytes.Buffer
	e := &cli.Env{In: strings.NewReader(stdin), Out: &out, Err: &errw, Dir: dir,
		Getenv: func(k string) string { return env[k] }}
	code := e.Run(args)
	return result{code, out.String(), errw.String()}
}

// write creates files under a fresh temp dir and returns the dir.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type jsonDiag struct {
	RuleID    string `json:"ruleId"`
	Name      string `json:"name"`
	Severity  string `json:"severity"`
	Message   string `json:"message"`
	File      string `json:"file"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"endLine"`
	EndColumn int    `json:"endColumn"`
	Object    struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Namespace  string `json:"namespace"`
		Name       string `json:"name"`
	} `json:"object"`
	Path    string            `json:"path"`
	Related []json.RawMessage `json:"related"`
}

func parseJSON(t *testing.T, out string) []jsonDiag {
	t.Helper()
	var raw struct {
		Diagnostics []map[string]json.RawMessage `json:"diagnostics"`
		Summary     map[string]any               `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if raw.Summary == nil {
		t.Errorf("no summary in %s", out)
	}
	var diags []jsonDiag
	for _, d := range raw.Diagnostics {
		for _, f := range []string{"ruleId", "name", "severity", "message", "file", "line", "column", "endLine", "endColumn", "object", "path", "related"} {
			if _, ok := d[f]; !ok {
				t.Errorf("diagnostic lacks field %q: %v", f, d)
			}
		}
		b, _ := json.Marshal(d)
		var jd jsonDiag
		if err := json.Unmarshal(b, &jd); err != nil {
			t.Fatal(err)
		}
		diags = append(diags, jd)
	}
	return diags
}

func TestAcceptanceUnknownFieldAndRange(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{"rollout.yaml": acceptance})
	r := run(t, dir, "", "lint", "--format", "json", "rollout.yaml")
	if r.code != cli.ExitFindings {
		t.Fatalf("exit %d, want 1; stderr %s", r.code, r.err)
	}
	diags := parseJSON(t, r.out)
	type key struct {
		rule      string
		line, col int
	}
	got := map[key]jsonDiag{}
	for _, d := range diags {
		got[key{d.RuleID, d.Line, d.Column}] = d
	}
	unknown, ok := got[key{"RL0003", 14, 9}]
	if !ok {
		t.Fatalf("no RL0003 at 14:9 (the setWieght key); got %+v", diags)
	}
	if !strings.Contains(unknown.Message, "setWieght") {
		t.Errorf("RL0003 message does not name the field: %q", unknown.Message)
	}
	rng, ok := got[key{"RL1001", 15, 20}]
	if !ok {
		t.Fatalf("no RL1001 at 15:20 (the value 120); got %+v", diags)
	}
	if !strings.Contains(rng.Message, "120") || rng.Path != "spec.strategy.canary.steps[1].setWeight" {
		t.Errorf("RL1001 = %q at path %q", rng.Message, rng.Path)
	}
	if rng.EndLine != 15 || rng.EndColumn != 23 {
		t.Errorf("RL1001 range ends at %d:%d, want 15:23", rng.EndLine, rng.EndColumn)
	}
	if rng.Object.Kind != "Rollout" || rng.Object.Name != "checkout" || rng.Object.Namespace != "default" || rng.Object.APIVersion != "argoproj.io/v1alpha1" {
		t.Errorf("object = %+v", rng.Object)
	}
	if rng.File != "rollout.yaml" || rng.Severity != "error" || rng.Name != "set-weight-range" {
		t.Errorf("diagnostic = %+v", rng)
	}
	for _, d := range diags {
		if d.Line < 1 || d.Column < 1 {
			t.Errorf("%s at %d:%d: positions are 1-based", d.RuleID, d.Line, d.Column)
		}
	}
	if !sort.SliceIsSorted(diags, func(i, j int) bool {
		a, b := diags[i], diags[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return a.RuleID < b.RuleID
	}) {
		t.Errorf("diagnostics not sorted by file, line, column, rule: %+v", diags)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{"bad.yaml": acceptance, "clean.yaml": clean, "warn.yaml": warnOnly})
	cases := []struct {
		name string
		args []string
		want int
	}{
		{"clean bundle", []string{"lint", "clean.yaml"}, cli.ExitOK},
		{"error found", []string{"lint", "bad.yaml"}, cli.ExitFindings},
		{"warning below default fail level", []string{"lint", "warn.yaml"}, cli.ExitOK},
		{"warning at fail level warning", []string{"lint", "--fail-level", "warning", "warn.yaml"}, cli.ExitFindings},
		{"fail level none", []string{"lint", "--fail-level", "none", "bad.yaml"}, cli.ExitOK},
		{"bad fail level", []string{"lint", "--fail-level", "fatal", "bad.yaml"}, cli.ExitFailure},
		{"missing file", []string{"lint", "nope.yaml"}, cli.ExitFailure},
		{"unknown flag", []string{"lint", "--frobnicate", "clean.yaml"}, cli.ExitFailure},
		{"unknown format", []string{"lint", "--format", "xml", "clean.yaml"}, cli.ExitFailure},
		{"no paths and no config", []string{"lint"}, cli.ExitFailure},
		{"unknown command", []string{"frobnicate"}, cli.ExitFailure},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, dir, "", c.args...)
			if r.code != c.want {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, c.want, r.out, r.err)
			}
			if c.want == cli.ExitFailure && strings.TrimSpace(r.err) == "" {
				t.Errorf("exit 2 without a message on stderr")
			}
		})
	}
}

func TestEnableDisable(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{"bad.yaml": acceptance})
	rulesIn := func(out string) map[string]bool {
		m := map[string]bool{}
		for _, d := range parseJSON(t, out) {
			m[d.RuleID] = true
		}
		return m
	}
	r := run(t, dir, "", "lint", "-f", "json", "--disable", "RL1001", "bad.yaml")
	if got := rulesIn(r.out); got["RL1001"] || !got["RL0003"] {
		t.Errorf("--disable RL1001: rules %v", got)
	}
	r = run(t, dir, "", "lint", "-f", "json", "--disable", "RL1*", "bad.yaml")
	if got := rulesIn(r.out); got["RL1001"] || got["RL1002"] || !got["RL0003"] {
		t.Errorf("--disable RL1*: rules %v", got)
	}
	r = run(t, dir, "", "lint", "-f", "json", "--disable", "RL1*", "--enable", "RL1001", "bad.yaml")
	if got := rulesIn(r.out); got["RL1002"] {
		t.Errorf("--disable RL1* --enable RL1001: RL1002 still on: %v", got)
	}
	r = run(t, dir, "", "lint", "-f", "json", "--enable", "RL1001", "--disable", "RL1001", "bad.yaml")
	if got := rulesIn(r.out); got["RL1001"] {
		t.Errorf("--disable must win over --enable: %v", got)
	}
	for _, bad := range []string{"RL9999", "RL9*", "setweight"} {
		r = run(t, dir, "", "lint", "--disable", bad, "bad.yaml")
		if r.code != cli.ExitFailure || !strings.Contains(r.err, bad) {
			t.Errorf("--disable %s: exit %d, stderr %q; want 2 naming the pattern", bad, r.code, r.err)
		}
	}
	// explain takes rl1001; --enable says how to write it.
	r = run(t, dir, "", "lint", "--enable", "rl1*", "bad.yaml")
	if r.code != cli.ExitFailure || !strings.Contains(r.err, `rule IDs are upper-case (did you mean "RL1*"?)`) {
		t.Errorf("--enable rl1*: exit %d, stderr %q", r.code, r.err)
	}
}

func TestNamespaceFlag(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{"bad.yaml": acceptance})
	r := run(t, dir, "", "lint", "-f", "json", "--namespace", "shop", "bad.yaml")
	for _, d := range parseJSON(t, r.out) {
		if d.Object.Kind == "Rollout" && d.Object.Namespace != "shop" {
			t.Errorf("%s: namespace %q, want shop", d.RuleID, d.Object.Namespace)
		}
	}
	// A namespace the API server would refuse is a usage error: every object
	// without one would be linted where none can be.
	for _, args := range [][]string{{"lint", "-n", "Shop", "bad.yaml"}, {"lint", "--render=false", "-n", "shop_1", "bad.yaml"}, {"plan", "-n", "Shop", "bad.yaml"}} {
		if r := run(t, dir, "", args...); r.code != cli.ExitFailure || !strings.Contains(r.err, "--namespace: \"") || !strings.Contains(r.err, "is not a namespace name") {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.err)
		}
	}
}

func TestStdin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := run(t, dir, acceptance, "lint", "-f", "json", "-")
	if r.code != cli.ExitFindings {
		t.Fatalf("exit %d, stderr %s", r.code, r.err)
	}
	diags := parseJSON(t, r.out)
	if len(diags) == 0 {
		t.Fatal("no findings from stdin")
	}
	for _, d := range diags {
		if d.File != "<stdin>" {
			t.Errorf("file %q, want <stdin>", d.File)
		}
	}
	if r := run(t, dir, clean, "lint", "-"); r.code != cli.ExitOK {
		t.Errorf("clean stdin: exit %d: %s", r.code, r.out)
	}
}

// helm template | rolloutlint lint --stdin-filename chart/ -: the findings and
// the SARIF artifact are the chart's path, with fingerprints from the text read.
func TestStdinFilename(t *testing.T) {
	dir := write(t, map[string]string{"chart/Chart.yaml": "name: checkout\n"})
	r := run(t, dir, acceptance, "lint", "-f", "json", "--stdin-filename", "chart/", "-")
	if r.code != cli.ExitFindings {
		t.Fatalf("exit %d, stderr %s", r.code, r.err)
	}
	for _, d := range parseJSON(t, r.out) {
		if d.File != "chart" {
			t.Errorf("file %q, want chart", d.File)
		}
	}
	r = run(t, dir, acceptance, "lint", "-f", "sarif", "--sarif-root", dir, "--stdin-filename", "chart/", "-")
	var log struct {
		Runs []struct {
			Results []struct {
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI       string `json:"uri"`
							URIBaseID string `json:"uriBaseId"`
						} `json:"artifactLocation"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(r.out), &log); err != nil || len(log.Runs) != 1 || len(log.Runs[0].Results) == 0 {
		t.Fatalf("SARIF: %v (exit %d, %s)", err, r.code, r.err)
	}
	for _, res := range log.Runs[0].Results {
		loc := res.Locations[0].PhysicalLocation.ArtifactLocation
		if loc.URI != "chart" || loc.URIBaseID != "%SRCROOT%" {
			t.Errorf("artifact %+v, want chart relative to %%SRCROOT%%", loc)
		}
		if res.PartialFingerprints["primaryLocationLineHash"] == "" {
			t.Errorf("result at %s has no line fingerprint", loc.URI)
		}
	}
	// Misuse is a usage error, not a silent rename.
	if r := run(t, dir, acceptance, "lint", "--stdin-filename", "x.yaml", "chart"); r.code != cli.ExitFailure || !strings.Contains(r.err, "no - among the paths") {
		t.Errorf("--stdin-filename without -: exit %d, %s", r.code, r.err)
	}
	dir2 := write(t, map[string]string{"a.yaml": clean})
	if r := run(t, dir2, clean, "lint", "--stdin-filename", "a.yaml", "-", "a.yaml"); r.code != cli.ExitFailure || !strings.Contains(r.err, "names a file that is linted too") {
		t.Errorf("--stdin-filename of a linted file: exit %d, %s", r.code, r.err)
	}
}

// No Kubernetes object is a failure unless --allow-empty: a helm template that
// printed nothing, a directory of values files, a wrong path.
func TestEmptyInput(t *testing.T) {
	dir := write(t, map[string]string{"empty/values.yaml": "# only a comment\n", "nothing/README.md": "x"})
	for _, c := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"empty stdin", "", []string{"lint", "-"}, "no Kubernetes object in standard input"},
		{"comments only", "", []string{"lint", "empty"}, "no Kubernetes object in empty (1 file(s) read"},
		{"no manifest files", "", []string{"lint", "nothing"}, "no Kubernetes object in nothing (0 file(s) read"},
		{"SARIF too", "", []string{"lint", "-f", "sarif", "-"}, "--allow-empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, dir, c.stdin, c.args...)
			if r.code != cli.ExitFailure || !strings.Contains(r.err, c.want) || r.out != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want exit 2 with %q and no report", r.code, r.err, r.out, c.want)
			}
			args := append([]string{c.args[0], "--allow-empty"}, c.args[1:]...)
			r = run(t, dir, c.stdin, args...)
			if r.code != cli.ExitOK {
				t.Errorf("--allow-empty: exit %d, %s", r.code, r.err)
			}
			// The summary counts the rules in force, as for any lint.
			if c.args[1] != "-f" && !strings.Contains(r.out, " 0 objects, ") || strings.Contains(r.out, " 0 rules") {
				t.Errorf("--allow-empty summary: %q", r.out)
			}
		})
	}
	// Invalid YAML is not "empty": its finding is the report (exit 1).
	if r := run(t, dir, "a: [\n", "lint", "-"); r.code != cli.ExitFindings || !strings.Contains(r.out, "RL0001") {
		t.Errorf("invalid YAML on stdin: exit %d, %s %s", r.code, r.out, r.err)
	}
}

// routedRollout needs its canary and stable Services; they are in services.yaml.
const routedRollout = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
spec:
  selector:
    matchLabels: {app: checkout}
  template:
    metadata: {labels: {app: checkout}}
    spec: {containers: [{name: checkout, image: checkout:1}]}
  strategy:
    canary:
      canaryService: checkout-canary
      stableService: checkout-stable
      trafficRouting:
        istio:
          virtualService: {name: checkout, routes: [primary]}
      steps:
      - setWeight: 120
`

const virtualService = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: checkout
spec:
  hosts: [checkout]
  http:
  - name: primary
    route:
    - destination: {host: checkout-stable}
      weight: 100
    - destination: {host: checkout-canary}
      weight: 0
`

// services completes the routed bundle, so that only the Rollout's own
// mistake is an error in it.
const services = `apiVersion: v1
kind: Service
metadata: {name: checkout}
spec: {selector: {app: checkout}, ports: [{name: http, port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: checkout-stable}
spec: {selector: {app: checkout}, ports: [{name: http, port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: checkout-canary}
spec: {selector: {app: checkout}, ports: [{name: http, port: 80, targetPort: 8080}]}
`

func TestContextOnlyReportsNamedFiles(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		"deploy/rollout.yaml":  routedRollout,
		"deploy/vs.yaml":       virtualService,
		"deploy/services.yaml": services,
	})
	// The named file is clean; the context's Rollout has an error that
	// must not be reported.
	r := run(t, dir, "", "lint", "-f", "json", "--context", "deploy", "deploy/vs.yaml")
	for _, d := range parseJSON(t, r.out) {
		if !strings.HasSuffix(d.File, "vs.yaml") {
			t.Errorf("finding on a context file: %+v", d)
		}
	}
	if r.code != cli.ExitOK {
		t.Errorf("exit %d: %s %s", r.code, r.out, r.err)
	}
	// The Rollout named, the VS only as context: the Rollout's own error is
	// reported. A finding on a context file is kept only when one of its
	// related locations is in a named file (the change may have caused it).
	r = run(t, dir, "", "lint", "-f", "json", "--context", "deploy/vs.yaml", "deploy/rollout.yaml")
	found := false
	for _, d := range parseJSON(t, r.out) {
		if !strings.HasSuffix(d.File, "rollout.yaml") && !relatedIn(d, "rollout.yaml") {
			t.Errorf("finding on a context file, unrelated to the named one: %+v", d)
		}
		found = found || d.RuleID == "RL1001"
	}
	if !found || r.code != cli.ExitFindings {
		t.Errorf("want RL1001 on rollout.yaml and exit 1, got exit %d: %s", r.code, r.out)
	}
}

// relatedIn reports whether a finding has a related location in a file with
// that suffix.
func relatedIn(d jsonDiag, suffix string) bool {
	for _, raw := range d.Related {
		var r struct {
			File string `json:"file"`
		}
		if json.Unmarshal(raw, &r) == nil && strings.HasSuffix(r.File, suffix) {
			return true
		}
	}
	return false
}

func TestConfigFoundUpward(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		".rolloutlint.yaml":     "rules:\n  RL1001: off\n",
		"apps/web/bad.yaml":     acceptance,
		"apps/web/nested/.keep": "",
	})
	r := run(t, filepath.Join(dir, "apps", "web", "nested"), "", "lint", "-f", "json", "../bad.yaml")
	for _, d := range parseJSON(t, r.out) {
		if d.RuleID == "RL1001" {
			t.Errorf("RL1001 reported although the config found upward turns it off")
		}
	}
	// --config overrides discovery.
	other := write(t, map[string]string{"strict.yaml": "rules:\n  RL0003: off\n"})
	r = run(t, filepath.Join(dir, "apps", "web"), "", "lint", "-f", "json", "--config", filepath.Join(other, "strict.yaml"), "bad.yaml")
	got := map[string]bool{}
	for _, d := range parseJSON(t, r.out) {
		got[d.RuleID] = true
	}
	if !got["RL1001"] || got["RL0003"] {
		t.Errorf("--config strict.yaml: rules %v, want RL1001 on and RL0003 off", got)
	}
}

func TestConfigSeverityAndPaths(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		".rolloutlint.yaml": "paths: [deploy]\nrules:\n  RL1*: warning\n  RL0003: info\n",
		"deploy/bad.yaml":   acceptance,
	})
	r := run(t, dir, "", "lint", "-f", "json")
	if r.code != cli.ExitOK {
		t.Errorf("exit %d with every finding lowered below error: %s %s", r.code, r.out, r.err)
	}
	sev := map[string]string{}
	for _, d := range parseJSON(t, r.out) {
		sev[d.RuleID] = d.Severity
	}
	if sev["RL1001"] != "warning" || sev["RL0003"] != "info" {
		t.Errorf("severities %v, want RL1001 warning and RL0003 info", sev)
	}
}

// TestConfigPathsReportedRelative: the paths of a config found upward are
// reported relative to the working directory, as paths given on the command
// line are (they were absolute: /home/me/repo/deploy/bad.yaml:15:20), when
// they are below it.
func TestConfigPathsReportedRelative(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		".rolloutlint.yaml": "paths: [deploy]\n",
		"deploy/bad.yaml":   acceptance,
		"other/.keep":       "",
	})
	for _, c := range []struct{ wd, want string }{
		{dir, "deploy/bad.yaml:15:20: error RL1001"},
		{filepath.Join(dir, "deploy"), "bad.yaml:15:20: error RL1001"},
		{filepath.Join(dir, "other"), filepath.Join(dir, "deploy", "bad.yaml") + ":15:20: error RL1001"}, // outside: absolute
	} {
		for _, args := range [][]string{{"lint"}, {"lint", "--render=false"}} {
			r := run(t, c.wd, "", args...)
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(c.want)).MatchString(r.out) {
				t.Errorf("%v in %s: want a line starting %q, got:\n%s%s", args, c.wd, c.want, r.out, r.err)
			}
		}
	}
}

func TestBadConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, want string
	}{
		{"unknown key", "namespace: shop\nfailLevl: error\n", `\.rolloutlint\.yaml:2: failLevl: unknown setting`},
		{"bad severity", "rules:\n  RL1001: loud\n", `\.rolloutlint\.yaml:2: rules\.RL1001: "loud" is not off`},
		{"bad rule key", "rules:\n  setWeight: off\n", `\.rolloutlint\.yaml:2: rules\.setWeight: not a rule ID`},
		{"invalid yaml", "rules: [\n", `\.rolloutlint\.yaml:\d+: invalid YAML`},
		{"typo of a setting", "namepsace: shop\n", `\.rolloutlint\.yaml:1: namepsace: unknown setting \(did you mean "namespace"\?\)`},
		{"no such rule", "rules:\n  RL1001: warning\n  RL2103: off\n", `\.rolloutlint\.yaml:3: rules\.RL2103: no rule matches RL2103`},
		{"set twice", "rules:\n  RL1001: warning\n  RL1001: off\n", `\.rolloutlint\.yaml:3: rules\.RL1001: set twice \(first at line 2\)`},
		{"namespace", "namespace: Shop\n", `\.rolloutlint\.yaml:1: namespace: "Shop" is not a namespace name`},
		{"policies", "namespace: shop\npolicies: [policies/, rego/]\n", `\.rolloutlint\.yaml:2: policies: policies/ \(.*policies\): no such directory`},
		{"paths", "paths: [., nope/]\n", `\.rolloutlint\.yaml:1: paths: nope/ \(nope\): no such file or directory`},
		{"istio version", "namespace: shop\nistioVersion: \"1.29\"\n", `\.rolloutlint\.yaml:2: istioVersion: unsupported Istio version "1\.29"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := write(t, map[string]string{".rolloutlint.yaml": c.body, "clean.yaml": clean})
			// Rendering and plain lints read the config alike.
			for _, args := range [][]string{{"lint", "clean.yaml"}, {"lint", "--render=false", "clean.yaml"}} {
				r := run(t, dir, "", args...)
				if r.code != cli.ExitFailure {
					t.Errorf("%v: exit %d, want 2", args, r.code)
				}
				if !regexp.MustCompile(c.want).MatchString(r.err) {
					t.Errorf("%v: stderr %q does not match %s", args, r.err, c.want)
				}
			}
		})
	}
}

func TestTextOutputNoColourWhenNotATerminal(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{"bad.yaml": acceptance})
	r := run(t, dir, "", "lint", "bad.yaml")
	if strings.Contains(r.out, "\x1b[") {
		t.Errorf("colour escape in non-terminal output: %q", r.out)
	}
	if !regexp.MustCompile(`(?m)^bad\.yaml:15:20: error RL1001 step 1: setWeight 120`).MatchString(r.out) {
		t.Errorf("text output lacks the positioned RL1001 line:\n%s", r.out)
	}
	if !regexp.MustCompile(`(?m)^\d+ errors?, \d+ warnings?`).MatchString(r.out) {
		t.Errorf("text output lacks the summary line:\n%s", r.out)
	}
	r = run(t, dir, "", "lint", "--color", "always", "bad.yaml")
	if !strings.Contains(r.out, "\x1b[") {
		t.Errorf("--color always gave no colour")
	}
}

func TestRulesAndExplain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := run(t, dir, "", "rules")
	if r.code != 0 {
		t.Fatalf("rules: exit %d %s", r.code, r.err)
	}
	for _, want := range []string{"RL0003", "RL1001", "set-weight-range", "RL1013", "one-strategy"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("rules output lacks %s", want)
		}
	}
	r = run(t, dir, "", "explain", "RL1003")
	if r.code != 0 || !strings.Contains(r.out, "# RL1003 pause-duration") || !strings.Contains(r.out, "Bad:") || !strings.Contains(r.out, "Good:") || !strings.Contains(r.out, "```yaml") {
		t.Errorf("explain RL1003: exit %d\n%s", r.code, r.out)
	}
	if r = run(t, dir, "", "explain", "RL9999"); r.code != cli.ExitFailure || !strings.Contains(r.err, "RL9999") {
		t.Errorf("explain RL9999: exit %d, stderr %q", r.code, r.err)
	}
	if r = run(t, dir, "", "version"); r.code != 0 || !strings.HasPrefix(r.out, "rolloutlint ") {
		t.Errorf("version: %d %q", r.code, r.out)
	}
}

func TestConfigExcludes(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		".rolloutlint.yaml":              "exclude: [\"**/charts/**\"]\n",
		"deploy/clean.yaml":              clean,
		"deploy/charts/app/bad.yaml":     acceptance,
		"deploy/charts/app/values.yaml":  "replicas: [\n",
		"deploy/notcharts/ok/clean.yaml": clean,
	})
	r := run(t, dir, "", "lint", "-f", "json", ".")
	if r.code != cli.ExitOK {
		t.Errorf("exit %d: excluded files were linted: %s %s", r.code, r.out, r.err)
	}
	var summary struct {
		Summary struct {
			Files int `json:"files"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(r.out), &summary); err != nil || summary.Summary.Files != 2 {
		t.Errorf("files linted = %d (%v), want 2", summary.Summary.Files, err)
	}
}

func TestNoColorEnv(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{"bad.yaml": acceptance})
	if r := runEnv(t, dir, "", map[string]string{"NO_COLOR": "1"}, "lint", "bad.yaml"); strings.Contains(r.out, "\x1b[") {
		t.Errorf("colour with NO_COLOR set: %q", r.out)
	}
}

func TestOutputFile(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{"bad.yaml": acceptance})
	r := run(t, dir, "", "lint", "-f", "json", "-o", "report.json", "bad.yaml")
	if r.code != cli.ExitFindings || r.out != "" {
		t.Errorf("exit %d, stdout %q: the report belongs in the file", r.code, r.out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if diags := parseJSON(t, string(data)); len(diags) == 0 {
		t.Errorf("empty report file")
	}
	// A missing directory is refused before the lint, named as given (not
	// the temporary file the report would have been written to first).
	for _, args := range [][]string{{"lint", "-o", "no/such/dir/r.txt", "bad.yaml"}, {"lint", "--render=false", "-o", "no/such/dir/r.txt", "bad.yaml"}} {
		if r := run(t, dir, "", args...); r.code != cli.ExitFailure || !strings.Contains(r.err, "--output no/such/dir/r.txt: directory no/such/dir does not exist") || strings.Contains(r.err, ".tmp") {
			t.Errorf("%v: exit %d stderr %q", args, r.code, r.err)
		}
	}
	if r := run(t, dir, "", "lint", "-o", "bad.yaml/r.txt", "bad.yaml"); r.code != cli.ExitFailure || !strings.Contains(r.err, "bad.yaml is not a directory") {
		t.Errorf("output under a file: exit %d stderr %q", r.code, r.err)
	}
}

// TestHelmValuesNeedRendering: --values and --set with --render=false would
// be ignored (no chart is rendered), so they are a usage error.
func TestHelmValuesNeedRendering(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{"bad.yaml": acceptance, "values.yaml": "a: 1\n"})
	for _, args := range [][]string{{"--values", "values.yaml"}, {"--set", "a=2"}} {
		args = append(append([]string{"lint", "--render=false"}, args...), "bad.yaml")
		if r := run(t, dir, "", args...); r.code != cli.ExitFailure || !strings.Contains(r.err, "with --render=false no chart is rendered") {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.err)
		}
	}
}

// TestHelmValuesNeedAChart: --values and --set apply to the charts no
// Application deploys; an input without one would ignore them, so that is a
// usage error, and an input with one is linted.
func TestHelmValuesNeedAChart(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{"bad.yaml": acceptance, "values.yaml": "a: 1\n", "plain/bad.yaml": acceptance,
		"chart/Chart.yaml":          "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"chart/templates/conf.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: \"{{ .Values.a }}\"}\n"})
	for _, args := range [][]string{{"--values", "values.yaml"}, {"--set", "a=2"}} {
		a := append(append([]string{"lint"}, args...), ".")
		if r := run(t, filepath.Join(dir, "plain"), "", a...); r.code != cli.ExitFailure || !strings.Contains(r.err, ". holds none: they would do nothing") {
			t.Errorf("%v: exit %d, stderr %q", a, r.code, r.err)
		}
		// A changed file given alone (pre-commit) is linted: the hook's
		// --values are for the commits that touch the chart.
		a = append(append([]string{"lint"}, args...), "bad.yaml")
		if r := run(t, dir, "", a...); r.code != cli.ExitFindings {
			t.Errorf("%v: exit %d, stderr %q", a, r.code, r.err)
		}
		a = append(append([]string{"lint"}, args...), "chart")
		if r := run(t, dir, "", a...); r.code == cli.ExitFailure || strings.Contains(r.err, "would do nothing") {
			t.Errorf("%v: exit %d, stderr %q", a, r.code, r.err)
		}
	}
}

// TestColorFlagValue: --color takes auto, always or never; anything else is
// a usage error, not a silent "no colour".
func TestColorFlagValue(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{"bad.yaml": acceptance})
	for _, v := range []string{"auto", "always", "never"} {
		if r := run(t, dir, "", "lint", "--color", v, "bad.yaml"); r.code != cli.ExitFindings {
			t.Errorf("--color %s: exit %d, stderr %q", v, r.code, r.err)
		}
	}
	for _, args := range [][]string{{"lint", "--color", "yes", "bad.yaml"}, {"lint", "--render=false", "--color", "yes", "bad.yaml"}} {
		if r := run(t, dir, "", args...); r.code != cli.ExitFailure || !strings.Contains(r.err, `--color: "yes" is not auto, always or never`) {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.err)
		}
	}
}

// TestConfigOptionTypo checks that a rule option the rule does not declare,
// or a value of the wrong type, stops the lint with the config's file:line.
func TestConfigOptionTypo(t *testing.T) {
	t.Parallel()
	for cfg, want := range map[string]string{
		"rules:\n  RL2011:\n    options:\n      versionKey: [track]\n": `.rolloutlint.yaml:4: rules.RL2011.options.versionKey: unknown option (known for RL2011: versionKeys)`,
		"rules:\n  RL5001:\n    options:\n      timeout: 5\n":          `.rolloutlint.yaml:4: rules.RL5001.options.timeout: must be a duration`,
	} {
		dir := write(t, map[string]string{"ok.yaml": clean, ".rolloutlint.yaml": cfg})
		r := run(t, dir, "", "lint", "ok.yaml")
		if r.code != cli.ExitFailure || !strings.Contains(r.err, want) {
			t.Errorf("config %q: exit %d, stderr %q; want 2 and %q", cfg, r.code, r.err, want)
		}
	}
	dir := write(t, map[string]string{"ok.yaml": clean, ".rolloutlint.yaml": "rules:\n  RL2011:\n    options:\n      versionKeys: [track]\n"})
	if r := run(t, dir, "", "lint", "ok.yaml"); r.code != cli.ExitOK {
		t.Errorf("declared option: exit %d, stderr %q", r.code, r.err)
	}
}
