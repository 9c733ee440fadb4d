package ghaction_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "action.yml")); err != nil {
		t.Fatalf("action.yml not found at the repository root: %v", err)
	}
	return root
}

// runner is the environment of one job: a workspace, a temp dir, and the
// files the runner reads step outputs and the summary from.
type runner struct {
	root, workspace, temp, output, summary string
}

// resetOutputs empties GITHUB_OUTPUT, as a fresh step starts with an empty file.
func (r *runner) resetOutputs(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(r.output, nil, 0o644); err != nil {
		t.Fatalf("resetting GITHUB_OUTPUT: %v", err)
	}
}

func newRunner(t *testing.T) *runner {
	t.Helper()
	dir := t.TempDir()
	r := &runner{root: repoRoot(t), workspace: filepath.Join(dir, "workspace"), temp: filepath.Join(dir, "runner-temp"),
		output: filepath.Join(dir, "github-output"), summary: filepath.Join(dir, "step-summary")}
	for _, d := range []string{r.workspace, r.temp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{r.output, r.summary} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// step runs one of the action's scripts as the runner would, with the step's
// env block, and returns stdout+stderr and the exit code.
func (r *runner) step(t *testing.T, script string, env map[string]string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(r.root, "scripts", script))
	cmd.Dir = r.workspace
	cmd.Env = append(os.Environ(),
		"GITHUB_ACTIONS=true", "CI=true",
		"GITHUB_ACTION_PATH="+r.root, "GITHUB_WORKSPACE="+r.workspace,
		"GITHUB_OUTPUT="+r.output, "GITHUB_STEP_SUMMARY="+r.summary,
		"RUNNER_TEMP="+r.temp, "GITHUB_ACTION_REF=v0.0.0-test")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s: %v", script, err)
	}
	return out.String(), code
}

// outputs parses GITHUB_OUTPUT (name=value lines); a later value wins, as on
// the runner.
func (r *runner) outputs(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(r.output)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), "="); ok {
			out[k] = v
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("reading GITHUB_OUTPUT: %v", err)
	}
	return out
}

// copyBundle copies a bundle of testdata/bundles into the workspace.
func (r *runner) copyBundle(t *testing.T, name, to string) {
	t.Helper()
	src := filepath.Join(r.root, "testdata", "bundles", name)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(r.workspace, to)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// install runs the install step once per test binary: it builds rolloutlint
// from the action's own source, as a workflow with no `version` input does.
func install(t *testing.T, r *runner) string {
	t.Helper()
	out, code := r.step(t, "action-install.sh", map[string]string{"INPUT_VERSION": ""})
	if code != 0 {
		t.Fatalf("install step failed (exit %d):\n%s", code, out)
	}
	bin := r.outputs(t)["bin"]
	if bin == "" || !strings.HasPrefix(bin, r.temp) {
		t.Fatalf("install step output bin=%q, want a path under RUNNER_TEMP", bin)
	}
	if !strings.Contains(out, "rolloutlint v0.0.0-test") {
		t.Errorf("the binary should report the action ref as its version:\n%s", out)
	}
	return bin
}

func TestActionSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rolloutlint through the action's install step; skipped with -short")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	r := newRunner(t)
	bin := install(t, r)
	r.copyBundle(t, "broken-canary", "deploy/broken")
	r.copyBundle(t, "examples-checkout", "deploy/checkout")
	if err := os.WriteFile(filepath.Join(r.workspace, "deploy", "clean.yaml"), []byte(cleanRollout), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(kv ...string) map[string]string {
		m := map[string]string{"ROLLOUTLINT_BIN": bin, "INPUT_CATEGORY": "rolloutlint/deploy"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}

	t.Run("findings fail the step after the SARIF is written", func(t *testing.T) {
		r.resetOutputs(t)
		out, code := r.step(t, "action-run.sh", env("INPUT_PATHS", "deploy/broken\ndeploy/checkout\n", "INPUT_FAIL_LEVEL", "error",
			"INPUT_SARIF_FILE", "reports/rolloutlint.sarif"))
		if code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", code, out)
		}
		o := r.outputs(t)
		if o["sarif-file"] != "reports/rolloutlint.sarif" || o["exit-code"] != "1" {
			t.Errorf("outputs %v", o)
		}
		// The SARIF holds every finding, suppressed ones as such, with
		// workspace-relative URIs and the category.
		data, err := os.ReadFile(filepath.Join(r.workspace, "reports", "rolloutlint.sarif"))
		if err != nil {
			t.Fatalf("SARIF not written: %v", err)
		}
		var log struct {
			Runs []struct {
				AutomationDetails struct{ ID string } `json:"automationDetails"`
				Results           []struct {
					Suppressions []any `json:"suppressions"`
					Locations    []struct {
						PhysicalLocation struct {
							ArtifactLocation struct{ URI string } `json:"artifactLocation"`
						} `json:"physicalLocation"`
					} `json:"locations"`
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(data, &log); err != nil {
			t.Fatalf("SARIF is not JSON: %v", err)
		}
		run := log.Runs[0]
		active := 0
		for _, res := range run.Results {
			if len(res.Suppressions) == 0 {
				active++
			}
			if uri := res.Locations[0].PhysicalLocation.ArtifactLocation.URI; !strings.HasPrefix(uri, "deploy/") {
				t.Errorf("URI %q is not relative to the workspace", uri)
			}
		}
		if run.AutomationDetails.ID != "rolloutlint/deploy/" {
			t.Errorf("automationDetails.id = %q", run.AutomationDetails.ID)
		}
		if o["findings"] != itoa(active) || active == 0 || active == len(run.Results) {
			t.Errorf("findings output %q; SARIF has %d results, %d active", o["findings"], len(run.Results), active)
		}
		// Annotations with workspace-relative paths, and a summary.
		if !strings.Contains(out, "::error file=deploy/broken/rollout.yaml,line=31,col=20,") {
			t.Errorf("no annotation for the broken Rollout:\n%s", out)
		}
		summary, _ := os.ReadFile(r.summary)
		if !strings.Contains(string(summary), o["findings"]+" finding(s)") || !strings.Contains(string(summary), "deploy/broken/rollout.yaml:31:20: error RL1001") {
			t.Errorf("step summary:\n%s", summary)
		}
	})

	t.Run("fail-level none passes with findings", func(t *testing.T) {
		r.resetOutputs(t)
		out, code := r.step(t, "action-run.sh", env("INPUT_PATHS", "deploy/broken", "INPUT_FAIL_LEVEL", "none"))
		o := r.outputs(t)
		if code != 0 || o["findings"] == "0" || o["sarif-file"] != "rolloutlint.sarif" {
			t.Fatalf("exit %d, outputs %v:\n%s", code, o, out)
		}
		if _, err := os.Stat(filepath.Join(r.workspace, "rolloutlint.sarif")); err != nil {
			t.Errorf("default SARIF file not written: %v", err)
		}
	})

	t.Run("warning level fails on warnings only", func(t *testing.T) {
		r.resetOutputs(t)
		// The clean Rollout has no finding at all; broken-canary has warnings.
		_, code := r.step(t, "action-run.sh", env("INPUT_PATHS", "deploy/clean.yaml", "INPUT_FAIL_LEVEL", "warning"))
		if code != 0 || r.outputs(t)["findings"] != "0" {
			t.Errorf("clean bundle: exit %d, outputs %v", code, r.outputs(t))
		}
	})

	t.Run("config paths when paths is empty", func(t *testing.T) {
		r.resetOutputs(t)
		cfg := filepath.Join(r.workspace, "ci.rolloutlint.yaml")
		if err := os.WriteFile(cfg, []byte("paths: [deploy/clean.yaml]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, code := r.step(t, "action-run.sh", env("INPUT_CONFIG", "ci.rolloutlint.yaml"))
		if code != 0 || r.outputs(t)["findings"] != "0" {
			t.Errorf("exit %d, outputs %v:\n%s", code, r.outputs(t), out)
		}
	})

	t.Run("inputs are data, not shell", func(t *testing.T) {
		r.resetOutputs(t)
		marker := filepath.Join(r.workspace, "pwned")
		out, code := r.step(t, "action-run.sh", env("INPUT_PATHS", "$(touch pwned) `touch pwned`; touch pwned",
			"INPUT_SARIF_FILE", "x.sarif"))
		if _, err := os.Stat(marker); err == nil {
			t.Fatal("an input was executed")
		}
		if code != 2 {
			t.Errorf("nonexistent paths should be a failure (exit 2), got %d:\n%s", code, out)
		}
		_, code = r.step(t, "action-run.sh", env("INPUT_FAIL_LEVEL", "error; touch pwned"))
		if code != 2 {
			t.Errorf("invalid fail-level: exit %d", code)
		}
		out, code = r.step(t, "action-install.sh", map[string]string{"INPUT_VERSION": "v1.0.0; touch pwned"})
		if code != 2 || !strings.Contains(out, "must be a release tag") {
			t.Errorf("invalid version: exit %d:\n%s", code, out)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatal("an input was executed")
		}
	})
}

// No `${{ inputs.* }}` (or any expression) may appear inside a `run:` script:
// GitHub substitutes it into the shell code before bash sees it.
func TestActionYAMLPassesInputsThroughEnv(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Inputs  map[string]any `yaml:"inputs"`
		Outputs map[string]struct {
			Value string `yaml:"value"`
		} `yaml:"outputs"`
		Runs struct {
			Using string `yaml:"using"`
			Steps []struct {
				Run   string            `yaml:"run"`
				Shell string            `yaml:"shell"`
				Env   map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" {
		t.Errorf("runs.using = %q, want composite (Linux and macOS runners)", a.Runs.Using)
	}
	for _, in := range []string{"paths", "config", "fail-level", "sarif-file", "version"} {
		if _, ok := a.Inputs[in]; !ok {
			t.Errorf("input %q missing", in)
		}
	}
	for _, out := range []string{"sarif-file", "findings"} {
		if !strings.Contains(a.Outputs[out].Value, "steps.lint.outputs."+out) {
			t.Errorf("output %q = %q", out, a.Outputs[out].Value)
		}
	}
	expr := regexp.MustCompile(`\$\{\{`)
	used := map[string]bool{}
	for i, s := range a.Runs.Steps {
		if expr.MatchString(s.Run) {
			t.Errorf("step %d interpolates an expression into run: %q", i, s.Run)
		}
		if s.Run != "" && s.Shell != "bash" {
			t.Errorf("step %d: shell %q, want bash", i, s.Shell)
		}
		for _, v := range s.Env {
			if m := regexp.MustCompile(`inputs\.([a-z-]+)`).FindStringSubmatch(v); m != nil {
				used[m[1]] = true
			}
		}
	}
	for in := range a.Inputs {
		if !used[in] {
			t.Errorf("input %q is never passed to a step", in)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

const cleanRollout = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: clean
  namespace: shop
spec:
  replicas: 2
  selector:
    matchLabels:
      app: clean
  template:
    metadata:
      labels:
        app: clean
    spec:
      containers:
      - name: clean
        image: registry.example.com/shop/clean:1.0.0
  strategy:
    canary:
      steps:
      - setWeight: 20
      - pause: {duration: 1m}
`
