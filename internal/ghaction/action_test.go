package ghaction_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// runner is the environment of one job: a workspace, a temp dir, a tool
// cache, the event payload, and the files the runner reads step outputs and
// the summary from.
type runner struct {
	root, workspace, temp, toolCache, output, summary, event string
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
		toolCache: filepath.Join(dir, "toolcache"), output: filepath.Join(dir, "github-output"),
		summary: filepath.Join(dir, "step-summary"), event: filepath.Join(dir, "event.json")}
	for _, d := range []string{r.workspace, r.temp, r.toolCache} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{r.output, r.summary} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(r.event, []byte(pullRequestEvent), 0o644); err != nil {
		t.Fatal(err)
	}
	return r
}

// runnerArch is RUNNER_ARCH for this machine.
func runnerArch() string {
	if runtime.GOARCH == "arm64" {
		return "ARM64"
	}
	return "X64"
}

// step runs one of the action's scripts as a Linux runner would, with the
// variables a runner sets for every step and the step's env block; it returns
// stdout+stderr and the exit code.
func (r *runner) step(t *testing.T, script string, env map[string]string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(r.root, "scripts", script)}, args...)...)
	cmd.Dir = r.workspace
	cmd.Env = append(os.Environ(),
		"GITHUB_ACTIONS=true", "CI=true",
		"GITHUB_ACTION_PATH="+r.root, "GITHUB_ACTION_REPOSITORY=rolloutlint/rolloutlint", "GITHUB_ACTION_REF=",
		"GITHUB_WORKSPACE="+r.workspace, "GITHUB_EVENT_NAME=pull_request", "GITHUB_EVENT_PATH="+r.event,
		"GITHUB_REPOSITORY=octo-org/shop", "GITHUB_SHA=6dcb09b5b57875f334f61aebed695e2e4193db5e",
		"GITHUB_REF=refs/pull/42/merge", "GITHUB_SERVER_URL=https://github.com", "GITHUB_RUN_ID=1",
		"GITHUB_OUTPUT="+r.output, "GITHUB_STEP_SUMMARY="+r.summary,
		"RUNNER_OS=Linux", "RUNNER_ARCH="+runnerArch(), "RUNNER_TEMP="+r.temp, "RUNNER_TOOL_CACHE="+r.toolCache)
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

// copyTree copies the directory src of the repository, with everything under
// it, to the workspace path to.
func (r *runner) copyTree(t *testing.T, src, to string) {
	t.Helper()
	from := filepath.Join(r.root, src)
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(r.workspace, to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
}

// localRelease is a snapshot release of this checkout for the host platform,
// made by scripts/release.sh (or taken from ROLLOUTLINT_RELEASE_DIST), served
// from a loopback HTTP server as GitHub serves release assets:
// <url>/<version>/<asset>.
type localRelease struct {
	dist, version string
	srv           *httptest.Server
	requests      atomic.Int64
	tamper        atomic.Bool // serve the archive with one byte changed
}

var (
	releaseOnce sync.Once
	releaseDist string
	releaseErr  error
	releaseTemp string // the snapshot this process built (~110 MB), removed by TestMain
)

func TestMain(m *testing.M) {
	code := m.Run()
	if releaseTemp != "" {
		_ = os.RemoveAll(releaseTemp)
	}
	os.Exit(code)
}

func buildRelease(t *testing.T, root string) (dist, version string) {
	t.Helper()
	releaseOnce.Do(func() {
		releaseDist = os.Getenv("ROLLOUTLINT_RELEASE_DIST")
		if releaseDist != "" {
			return
		}
		dir, err := os.MkdirTemp("", "rolloutlint-action-release-")
		if err != nil {
			releaseErr = err
			return
		}
		releaseTemp = dir
		releaseDist = filepath.Join(dir, "dist")
		cmd := exec.Command("bash", filepath.Join(root, "scripts", "release.sh"), "--snapshot",
			"--targets", "linux/"+runtime.GOARCH, "--out", releaseDist)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			releaseErr = fmt.Errorf("scripts/release.sh: %w\n%s", err, out)
		}
	})
	if releaseErr != nil {
		t.Fatal(releaseErr)
	}
	sums, err := filepath.Glob(filepath.Join(releaseDist, "rolloutlint_*_checksums.txt"))
	if err != nil || len(sums) != 1 {
		t.Fatalf("no checksums file in %s: %v", releaseDist, sums)
	}
	v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(sums[0]), "rolloutlint_"), "_checksums.txt")
	return releaseDist, "v" + v
}

func serveRelease(t *testing.T, root string) *localRelease {
	t.Helper()
	rel := &localRelease{}
	rel.dist, rel.version = buildRelease(t, root)
	files := http.StripPrefix("/"+rel.version+"/", http.FileServer(http.Dir(rel.dist)))
	rel.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rel.requests.Add(1)
		if rel.tamper.Load() && strings.HasSuffix(req.URL.Path, ".tar.gz") {
			data, err := os.ReadFile(filepath.Join(rel.dist, filepath.Base(req.URL.Path)))
			if err != nil {
				http.NotFound(w, req)
				return
			}
			data[len(data)/2] ^= 0xff
			_, _ = w.Write(data)
			return
		}
		files.ServeHTTP(w, req)
	}))
	t.Cleanup(rel.srv.Close)
	return rel
}

// installed are the files the install step leaves in its directory: both
// binaries, each with its SHA-256.
var installed = []string{"rolloutlint", "rolloutlint-helm", "rolloutlint-helm.sha256", "rolloutlint.sha256"}

// dirFiles lists the names in dir, sorted.
func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// install runs the resolve and install steps for the local release, as a
// workflow pinned to that version does, and returns the binary; its Helm
// companion is beside it.
func install(t *testing.T, r *runner, rel *localRelease) string {
	t.Helper()
	env := map[string]string{"INPUT_VERSION": rel.version, "INPUT_RELEASE_URL": rel.srv.URL}
	r.resetOutputs(t)
	out, code := r.step(t, "action-install.sh", env, "resolve")
	if code != 0 {
		t.Fatalf("resolve step failed (exit %d):\n%s", code, out)
	}
	out, code = r.step(t, "action-install.sh", env, "install")
	if code != 0 {
		t.Fatalf("install step failed (exit %d):\n%s", code, out)
	}
	o := r.outputs(t)
	bin := o["bin"]
	if want := filepath.Join(r.toolCache, "rolloutlint", strings.TrimPrefix(rel.version, "v"), runtime.GOARCH, "rolloutlint"); bin != want || o["dir"] != filepath.Dir(want) {
		t.Fatalf("install step output bin=%q dir=%q, want %q in the tool cache", bin, o["dir"], want)
	}
	if !strings.Contains(out, "rolloutlint "+rel.version+" (commit ") || !regexp.MustCompile(`(?m)^rolloutlint-helm `+regexp.QuoteMeta(rel.version)+` \(protocol \d+, commit `).MatchString(out) {
		t.Errorf("the installed binaries should both report the release version %s:\n%s", rel.version, out)
	}
	if got := dirFiles(t, filepath.Dir(bin)); !slices.Equal(got, installed) {
		t.Errorf("the install directory holds %v, want %v", got, installed)
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
	rel := serveRelease(t, r.root)
	bin := install(t, r, rel)
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
		if o["suppressed"] != itoa(len(run.Results)-active) {
			t.Errorf("suppressed output %q; SARIF has %d suppressed results", o["suppressed"], len(run.Results)-active)
		}
		// Annotations, one per active finding, with workspace-relative paths;
		// the counts per level match them.
		annotations := map[string]int{}
		for _, line := range strings.Split(out, "\n") {
			if m := regexp.MustCompile(`^::(error|warning|notice) file=deploy/`).FindStringSubmatch(line); m != nil {
				annotations[m[1]]++
			}
		}
		if itoa(annotations["error"]) != o["errors"] || itoa(annotations["warning"]) != o["warnings"] ||
			itoa(annotations["notice"]) != o["infos"] || o["errors"] == "0" {
			t.Errorf("annotations %v, outputs errors=%s warnings=%s infos=%s", annotations, o["errors"], o["warnings"], o["infos"])
		}
		if !strings.Contains(out, "::error file=deploy/broken/rollout.yaml,line=31,col=20,") {
			t.Errorf("no annotation for the broken Rollout:\n%s", out)
		}
		summary, _ := os.ReadFile(r.summary)
		row := fmt.Sprintf("| %s | %s | %s | %s |", o["errors"], o["warnings"], o["infos"], o["suppressed"])
		if !strings.Contains(string(summary), row) || !strings.Contains(string(summary), "deploy/broken/rollout.yaml:31:20: error RL1001") {
			t.Errorf("step summary lacks %q or the text report:\n%s", row, summary)
		}
	})

	t.Run("format text and extra args", func(t *testing.T) {
		r.resetOutputs(t)
		out, code := r.step(t, "action-run.sh", env("INPUT_PATHS", "deploy/broken", "INPUT_FORMAT", "text",
			"INPUT_ARGS", "--disable\nRL1001\n"))
		o := r.outputs(t)
		if code != 1 || strings.Contains(out, "::error") || strings.Contains(out, "error RL1001") {
			t.Errorf("text format with RL1001 disabled: exit %d:\n%s", code, out)
		}
		if !regexp.MustCompile(`(?m)^deploy/broken/\S+:\d+:\d+: error RL\d{4} `).MatchString(out) {
			t.Errorf("no text report line in the log:\n%s", out)
		}
		sarif, _ := os.ReadFile(filepath.Join(r.workspace, "rolloutlint.sarif"))
		if bytes.Contains(sarif, []byte(`"ruleId": "RL1001"`)) || o["errors"] == "0" {
			t.Errorf("args must reach the SARIF run too (errors=%s)", o["errors"])
		}
		_, code = r.step(t, "action-run.sh", env("INPUT_FORMAT", "sarif"))
		if code != 2 {
			t.Errorf("format sarif (the SARIF file is separate) should be refused: exit %d", code)
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

	t.Run("a Helm chart is rendered by the installed rolloutlint-helm", func(t *testing.T) {
		r.copyTree(t, "testdata/repos/mixed/charts/reviews", "charts/reviews")
		r.resetOutputs(t)
		out, code := r.step(t, "action-run.sh", env("INPUT_PATHS", "charts/reviews", "INPUT_FORMAT", "text",
			"INPUT_ARGS", "--values charts/reviews/values-prod.yaml"))
		// The value from values-prod.yaml breaks a template line: only a render finds it.
		want := "charts/reviews/templates/rollout.yaml:34:9: error RL1001 step 2: setWeight 150 is outside 0..100"
		if code != 1 || !strings.Contains(out, want) || strings.Contains(out, "RL0010") {
			t.Errorf("exit %d, want 1 with %q and no RL0010:\n%s", code, want, out)
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
		out, code = r.step(t, "action-install.sh", map[string]string{"INPUT_VERSION": "v1.0.0; touch pwned"}, "resolve")
		if code != 2 || !strings.Contains(out, "must be a release tag") {
			t.Errorf("invalid version: exit %d:\n%s", code, out)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatal("an input was executed")
		}
	})
}

func TestActionResolve(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	r := newRunner(t)
	data, err := os.ReadFile(filepath.Join(r.root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	fileVersion := strings.TrimSpace(string(data))
	arch := map[string]string{"X64": "amd64", "ARM64": "arm64"}[runnerArch()]
	cases := []struct {
		name string
		env  map[string]string
		want map[string]string
	}{
		{"default: the VERSION file of a commit pinned by SHA", map[string]string{"GITHUB_ACTION_REF": "0123456789abcdef0123456789abcdef01234567"},
			map[string]string{"version": fileVersion, "source": "false", "asset": "rolloutlint_" + strings.TrimPrefix(fileVersion, "v") + "_linux_" + arch + ".tar.gz"}},
		{"default: the tag in uses:", map[string]string{"GITHUB_ACTION_REF": "v0.3.1"},
			map[string]string{"version": "v0.3.1", "asset": "rolloutlint_0.3.1_linux_" + arch + ".tar.gz", "dir": filepath.Join(r.toolCache, "rolloutlint", "0.3.1", arch)}},
		{"macOS arm64", map[string]string{"INPUT_VERSION": "v0.2.0", "RUNNER_OS": "macOS", "RUNNER_ARCH": "ARM64"},
			map[string]string{"asset": "rolloutlint_0.2.0_darwin_arm64.tar.gz"}},
		{"Windows x64: the zip", map[string]string{"INPUT_VERSION": "v0.2.0", "RUNNER_OS": "Windows", "RUNNER_ARCH": "X64"},
			map[string]string{"asset": "rolloutlint_0.2.0_windows_amd64.zip"}},
		{"source", map[string]string{"INPUT_VERSION": "source"},
			map[string]string{"version": "source", "source": "true", "asset": ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r.resetOutputs(t)
			out, code := r.step(t, "action-install.sh", c.env, "resolve")
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			o := r.outputs(t)
			for k, v := range c.want {
				if o[k] != v {
					t.Errorf("output %s = %q, want %q", k, o[k], v)
				}
			}
		})
	}
	for _, bad := range []map[string]string{{"INPUT_VERSION": "latest"}, {"INPUT_VERSION": "1.0.0"}, {"RUNNER_ARCH": "ARM"}, {"RUNNER_OS": "Plan9"}} {
		if out, code := r.step(t, "action-install.sh", bad, "resolve"); code != 2 || !strings.Contains(out, "::error title=rolloutlint::") {
			t.Errorf("%v: exit %d, want 2 with an error annotation:\n%s", bad, code, out)
		}
	}
}

func TestActionInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a snapshot release with scripts/release.sh; skipped with -short")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	r := newRunner(t)
	rel := serveRelease(t, r.root)
	env := map[string]string{"INPUT_VERSION": rel.version, "INPUT_RELEASE_URL": rel.srv.URL}

	bin := install(t, r, rel)
	if got := r.outputs(t)["cache-hit"]; got != "false" {
		t.Errorf("first install: cache-hit=%s", got)
	}
	if rel.requests.Load() != 2 {
		t.Errorf("first install made %d requests, want 2 (checksums and archive)", rel.requests.Load())
	}

	t.Run("the cache is used without the network", func(t *testing.T) {
		rel.srv.Close()
		r.resetOutputs(t)
		out, code := r.step(t, "action-install.sh", env, "install")
		if code != 0 || r.outputs(t)["cache-hit"] != "true" || r.outputs(t)["bin"] != bin {
			t.Fatalf("exit %d, outputs %v:\n%s", code, r.outputs(t), out)
		}
	})

	t.Run("a changed cached rolloutlint-helm is downloaded again", func(t *testing.T) {
		r5 := newRunner(t)
		rel5 := serveRelease(t, r5.root)
		bin5 := install(t, r5, rel5)
		helm := filepath.Join(filepath.Dir(bin5), "rolloutlint-helm")
		good, err := os.ReadFile(helm)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(helm, []byte("#!/bin/sh\necho tampered\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		before := rel5.requests.Load()
		r5.resetOutputs(t)
		env5 := map[string]string{"INPUT_VERSION": rel5.version, "INPUT_RELEASE_URL": rel5.srv.URL}
		out, code := r5.step(t, "action-install.sh", env5, "install")
		if code != 0 || r5.outputs(t)["cache-hit"] != "false" || strings.Contains(out, "tampered") {
			t.Fatalf("exit %d, outputs %v:\n%s", code, r5.outputs(t), out)
		}
		if got, _ := os.ReadFile(helm); !bytes.Equal(got, good) || rel5.requests.Load() != before+2 {
			t.Errorf("the companion was not downloaded again (%d requests)", rel5.requests.Load()-before)
		}
	})

	t.Run("a changed cached binary is not run", func(t *testing.T) {
		if err := os.WriteFile(bin, []byte("#!/bin/sh\necho tampered\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		r.resetOutputs(t)
		out, code := r.step(t, "action-install.sh", env, "install") // the server is closed: the download fails
		if code != 2 || strings.Contains(out, "tampered") || !strings.Contains(out, "cannot download") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})

	t.Run("checksum mismatch", func(t *testing.T) {
		r2 := newRunner(t)
		rel2 := serveRelease(t, r2.root)
		rel2.tamper.Store(true)
		out, code := r2.step(t, "action-install.sh", map[string]string{"INPUT_VERSION": rel2.version, "INPUT_RELEASE_URL": rel2.srv.URL}, "install")
		if code != 2 || !strings.Contains(out, "checksum mismatch for rolloutlint_") {
			t.Errorf("exit %d:\n%s", code, out)
		}
		matches, _ := filepath.Glob(filepath.Join(r2.toolCache, "rolloutlint", "*", "*", "rolloutlint*"))
		if len(matches) != 0 {
			t.Errorf("a binary was installed from a tampered archive: %v", matches)
		}
	})

	t.Run("a version that was not released", func(t *testing.T) {
		r3 := newRunner(t)
		rel3 := serveRelease(t, r3.root)
		out, code := r3.step(t, "action-install.sh", map[string]string{"INPUT_VERSION": "v9.9.9", "INPUT_RELEASE_URL": rel3.srv.URL}, "install")
		if code != 2 || !strings.Contains(out, "is v9.9.9 a rolloutlint release?") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})

	t.Run("version source builds the action's checkout", func(t *testing.T) {
		if _, err := exec.LookPath("go"); err != nil {
			t.Skip("no go on PATH")
		}
		r4 := newRunner(t)
		out, code := r4.step(t, "action-install.sh", map[string]string{"INPUT_VERSION": "source", "GITHUB_ACTION_REF": "main"}, "install")
		if code != 0 || !strings.Contains(out, "rolloutlint dev (commit main") || !regexp.MustCompile(`(?m)^rolloutlint-helm dev \(protocol \d+, commit main`).MatchString(out) {
			t.Fatalf("exit %d, want both binaries built and reporting commit main:\n%s", code, out)
		}
		got := r4.outputs(t)["bin"]
		if !strings.HasPrefix(got, r4.temp) {
			t.Errorf("source build bin=%q, want it under RUNNER_TEMP", got)
		}
		if names := dirFiles(t, filepath.Dir(got)); !slices.Equal(names, []string{"rolloutlint", "rolloutlint-helm"}) {
			t.Errorf("source build directory holds %v, want rolloutlint and rolloutlint-helm", names)
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
	for _, in := range []string{"paths", "config", "format", "fail-level", "args", "sarif-file", "category", "version", "release-url"} {
		if _, ok := a.Inputs[in]; !ok {
			t.Errorf("input %q missing", in)
		}
	}
	for _, out := range []string{"sarif-file", "findings", "errors", "warnings", "infos", "exit-code"} {
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

// pullRequestEvent is the start of the payload GitHub writes to
// GITHUB_EVENT_PATH for a pull_request event.
const pullRequestEvent = `{
  "action": "synchronize",
  "number": 42,
  "pull_request": {
    "number": 42,
    "head": {"ref": "canary-weights", "sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e"},
    "base": {"ref": "main", "sha": "1f0e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6"}
  },
  "repository": {"full_name": "octo-org/shop", "default_branch": "main"}
}
`
