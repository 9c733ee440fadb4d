package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPlanCommand(t *testing.T) {
	t.Parallel()
	code, out, errs := runMain("plan", "--config", "/dev/null", "../../../testdata/plan/subset-level.yaml", "../../../testdata/plan/bluegreen.yaml")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Rollout default/rollouts-demo", "Rollout default/api", "push 1 full, changes EDS", "summary: 4 full pushes"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestPlanSelectAndFormats(t *testing.T) {
	t.Parallel()
	code, out, errs := runMain("plan", "--config", "/dev/null", "--rollout", "default/api", "--format", "json", "--istio-version", "1.31", "../../../testdata/plan/")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		IstioVersion string `json:"istioVersion"`
		Rollouts     []struct {
			Strategy string `json:"strategy"`
		} `json:"rollouts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.IstioVersion != "1.31" || len(doc.Rollouts) != 1 || doc.Rollouts[0].Strategy != "blueGreen" {
		t.Errorf("doc = %+v", doc)
	}
	for _, f := range []string{"markdown", "mermaid"} {
		if code, out, errs := runMain("plan", "--config", "/dev/null", "-f", f, "../../../testdata/plan/host-level.yaml"); code != ExitOK || out == "" {
			t.Errorf("%s: exit %d %s", f, code, errs)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	t.Parallel()
	cases := [][]string{
		{"plan", "--config", "/dev/null", "--istio-version", "1.29", "../../../testdata/plan/host-level.yaml"},
		{"plan", "--config", "/dev/null", "--format", "yaml", "../../../testdata/plan/host-level.yaml"},
		{"plan", "--config", "/dev/null", "--rollout", "nope/missing", "../../../testdata/plan/host-level.yaml"},
		{"lint", "--config", "/dev/null", "--istio-version", "2.0", "../../../testdata/plan/host-level.yaml"},
		{"plan", "--config", "/dev/null", "../../../testdata/rules/RL0001/bad.yaml"},
	}
	wants := []string{"unsupported Istio version \"1.29\"", "unknown format \"yaml\"", "have: default/rollouts-demo", "unsupported Istio version \"2.0\"",
		"testdata/rules/RL0001/bad.yaml:15:1: invalid YAML"}
	for i, c := range cases {
		code, _, errs := runMain(c...)
		if code != ExitFailure || !strings.Contains(errs, wants[i]) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c, code, errs, wants[i])
		}
	}
}

func TestLintIstioVersion(t *testing.T) {
	t.Parallel()
	code, out, errs := runMain("lint", "--config", "/dev/null", "--enable", "RL6002", "--istio-version", "1.30", "--format", "json", "../../../testdata/rules/RL6002/bad.yaml")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "after Istio 1.30's 100 ms debounce window") {
		t.Errorf("RL6002 message does not use the chosen model:\n%s", out)
	}
}
