package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const examplePolicies = "../../../examples/policies"
const exampleBundle = "../../../examples/checkout"

// TestUserPolicyEndToEnd follows the docs/policies.md example: the user rule
// is listed with source user, reports at the route's line in JSON, and is
// suppressible like a built-in rule.
func TestUserPolicyEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, ".rolloutlint.yaml")
	abs, _ := filepath.Abs(examplePolicies)
	if err := os.WriteFile(cfg, []byte("policies: ["+abs+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errw := runMain("rules", "--config", cfg)
	if code != 0 || !regexpMatch(`RL9001\s+managed-route-timeout\s+warning\s+user\s+An HTTP route managed by a Rollout sets no timeout`, out) {
		t.Fatalf("rules (exit %d) does not list the user policy:\n%s%s", code, out, errw)
	}
	if !regexpMatch(`RL5001\s+vs-weights-committed\s+warning\s+rego`, out) {
		t.Errorf("rules does not list the built-in Rego rule with source rego:\n%s", out)
	}
	code, out, _ = runMain("explain", "--config", cfg, "RL9001")
	if code != 0 || !strings.Contains(out, "- Source: user") || !strings.Contains(out, "Istio HTTPRoute") {
		t.Errorf("explain RL9001 (exit %d):\n%s", code, out)
	}

	code, out, errw = runMain("lint", "--policy", examplePolicies, "--format", "json", "--fail-level", "none", exampleBundle)
	if code != 0 {
		t.Fatalf("lint exit %d: %s", code, errw)
	}
	d := findDiag(t, out, "RL9001")
	if d == nil {
		t.Fatalf("no RL9001 in JSON output:\n%s", out)
	}
	if d["file"] != filepath.Join(exampleBundle, "virtualservice.yaml") || d["line"] != 12.0 || d["column"] != 5.0 || d["path"] != "spec.http[0]" {
		t.Errorf("RL9001 at %v:%v:%v path %v, want virtualservice.yaml:12:5 spec.http[0]", d["file"], d["line"], d["column"], d["path"])
	}
	if rel, _ := d["related"].([]any); len(rel) != 1 || !strings.HasSuffix(rel[0].(map[string]any)["file"].(string), "rollout.yaml") {
		t.Errorf("related = %v, want the Rollout", d["related"])
	}

	// Suppress it with an inline directive on a copy of the bundle.
	bundle := t.TempDir()
	for _, f := range []string{"rollout.yaml", "services.yaml", "analysis.yaml", "virtualservice.yaml"} {
		data, err := os.ReadFile(filepath.Join(exampleBundle, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "virtualservice.yaml" {
			data = []byte(strings.Replace(string(data), "  - name: primary\n", "  - name: primary # rolloutlint:ignore RL9001 -- timeouts come from the mesh default\n", 1))
		}
		if err := os.WriteFile(filepath.Join(bundle, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, out, _ = runMain("lint", "--policy", examplePolicies, "--format", "json", "--include-suppressed", "--fail-level", "none", bundle)
	d = findDiag(t, out, "RL9001")
	if d == nil || d["suppressed"] == nil {
		t.Errorf("RL9001 not reported as suppressed:\n%s", out)
	}
}

func TestPolicyTestCommand(t *testing.T) {
	t.Parallel()
	code, out, errw := runMain("policy", "test", "-v", examplePolicies)
	if code != 0 || !strings.Contains(out, "PASS data.acme.managed_route_timeout_test.test_route_without_timeout") || !strings.Contains(out, "2 passed, 0 failed") {
		t.Errorf("policy test (exit %d):\n%s%s", code, out, errw)
	}
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(examplePolicies, "managed_route_timeout.rego"))
	if err != nil {
		t.Fatal(err)
	}
	mustWriteFile(t, filepath.Join(dir, "p.rego"), data)
	mustWriteFile(t, filepath.Join(dir, "p_test.rego"), []byte("package acme.managed_route_timeout_test\n\ntest_wrong if {\n\tprint(\"weight\", 40 + 2)\n\t1 == 2\n}\n"))
	code, out, _ = runMain("policy", "test", dir)
	if code != ExitFindings || !strings.Contains(out, "p_test.rego:3: data.acme.managed_route_timeout_test.test_wrong") {
		t.Errorf("failing test: exit %d:\n%s", code, out)
	}
	// A failing test shows what it printed.
	if !strings.Contains(out, "weight 42\n") {
		t.Errorf("print() output of the failing test missing:\n%s", out)
	}
}

func TestPolicyCallingHTTPSendIsRejectedByLint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustWriteFile(t, filepath.Join(dir, "x.rego"), []byte(`# METADATA
# title: Phones home.
# description: Bad and Good.
# custom:
#   id: RL9002
#   severity: error
#   kinds: [Rollout]
package acme.x

violation contains {"msg": r.body, "ref": {"kind": "Rollout", "name": "x"}} if {
	r := http.send({"method": "GET", "url": "http://127.0.0.1:9/"})
}
`))
	code, _, errw := runMain("lint", "--policy", dir, exampleBundle)
	want := filepath.Join(dir, "x.rego") + ":11: http.send is not allowed in rolloutlint policies"
	if code != ExitFailure || !strings.Contains(errw, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant %q", code, errw, want)
	}
}

func findDiag(t *testing.T, out, id string) map[string]any {
	t.Helper()
	var doc struct {
		Diagnostics []map[string]any `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	for _, d := range doc.Diagnostics {
		if d["ruleId"] == id {
			return d
		}
	}
	return nil
}

// mustWriteFile writes a test input, failing the test when it cannot.
func mustWriteFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func regexpMatch(pattern, s string) bool {
	return regexp.MustCompile(pattern).MatchString(s)
}

// TestArgoCDFromConfig checks `argocd: true` reaches the Rego rules: with no
// Application in the bundle, RL5003 reminds at info level on the managed route.
func TestArgoCDFromConfig(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), ".rolloutlint.yaml")
	bundle := "../../../testdata/rules/RL5001/clean.yaml"
	for _, argocd := range []bool{false, true} {
		mustWriteFile(t, cfg, []byte("argocd: "+map[bool]string{true: "true", false: "false"}[argocd]+"\n"))
		_, out, errw := runMain("lint", "--config", cfg, "--format", "json", "--fail-level", "none", bundle)
		d := findDiag(t, out, "RL5003")
		switch {
		case !argocd && d != nil:
			t.Errorf("RL5003 without Argo CD: %v", d)
		case argocd && d == nil:
			t.Errorf("no RL5003 with argocd: true:\n%s%s", out, errw)
		case argocd && (d["severity"] != "info" || d["line"] != 46.0 || !strings.Contains(d["message"].(string), "VirtualService shop/search http route \"primary\"")):
			t.Errorf("RL5003 = %v", d)
		}
	}
}
