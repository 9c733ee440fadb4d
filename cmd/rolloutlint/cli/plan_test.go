package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
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

// A Rollout Argo Rollouts would refuse (InvalidSpec) is not played out: the
// plan names the findings instead of steps Argo never runs.
func TestPlanRejectedRollout(t *testing.T) {
	code, out, errs := runMain("plan", "--config", "/dev/null", "-f", "json", "../../../examples/checkout")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Rollouts []struct {
			States   []json.RawMessage `json:"states"`
			Rejected []struct {
				RuleID string `json:"ruleId"`
				Line   int    `json:"line"`
				Detail string `json:"detail"`
			} `json:"rejected"`
		} `json:"rollouts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Rollouts) != 1 || len(doc.Rollouts[0].States) != 0 {
		t.Fatalf("the invalid Rollout was played out: %s", out)
	}
	got := map[string]int{}
	for _, r := range doc.Rollouts[0].Rejected {
		got[r.RuleID] = r.Line
		// The detail travels with the message, as in lint's JSON.
		if r.RuleID == "RL1001" && !strings.Contains(r.Detail, "InvalidSpec") {
			t.Errorf("RL1001 rejection detail %q does not say what Argo does", r.Detail)
		}
	}
	// examples/checkout: a step with no action (line 38) and setWeight 120 (line 45).
	if got["RL1002"] != 38 || got["RL1001"] != 45 || len(got) != 2 {
		t.Errorf("rejections %v, want RL1002 at 38 and RL1001 at 45", got)
	}
	code, out, _ = runMain("plan", "--config", "/dev/null", "../../../examples/checkout")
	if code != ExitOK || !strings.Contains(out, "not played out: Argo Rollouts refuses this spec (InvalidSpec)") || strings.Contains(out, "step 0 ") {
		t.Errorf("text plan of a refused Rollout:\n%s", out)
	}
}

// The workloadRef and pod template rules are Argo's validation too: a
// Rollout whose resolved template has no containers, or whose workloadRef
// names a kind the controller cannot resolve, is refused; one whose
// Deployment is merely not in the bundle is played out.
func TestPlanRejectsWorkloadRefRollouts(t *testing.T) {
	t.Parallel()
	const bundle = `apiVersion: apps/v1
kind: Deployment
metadata: {name: empty, namespace: shop}
spec:
  selector: {matchLabels: {app: empty}}
  template:
    metadata: {labels: {app: empty}}
    spec: {containers: []}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: empty, namespace: shop}
spec:
  selector: {matchLabels: {app: empty}}
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: empty}
  strategy: {canary: {steps: [{setWeight: 20}]}}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: stateful, namespace: shop}
spec:
  selector: {matchLabels: {app: db}}
  workloadRef: {apiVersion: apps/v1, kind: StatefulSet, name: db}
  strategy: {canary: {steps: [{setWeight: 20}]}}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: elsewhere, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  strategy: {canary: {steps: [{setWeight: 20}]}}
`
	path := filepath.Join(t.TempDir(), "bundle.yaml")
	if err := os.WriteFile(path, []byte(bundle), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runMain("plan", "--config", "/dev/null", "-f", "json", path)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Rollouts []struct {
			Rollout struct {
				Name string `json:"name"`
			} `json:"rollout"`
			States   []json.RawMessage `json:"states"`
			Rejected []struct {
				RuleID string `json:"ruleId"`
			} `json:"rejected"`
		} `json:"rollouts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range doc.Rollouts {
		var ids []string
		for _, j := range r.Rejected {
			ids = append(ids, j.RuleID)
		}
		if len(ids) > 0 && len(r.States) != 0 {
			t.Errorf("refused Rollout %s was played out", r.Rollout.Name)
		}
		if len(ids) == 0 && len(r.States) == 0 {
			t.Errorf("Rollout %s was neither refused nor played out", r.Rollout.Name)
		}
		got[r.Rollout.Name] = strings.Join(ids, ",")
	}
	want := map[string]string{"empty": "RL1023", "stateful": "RL1024", "elsewhere": ""}
	for name, ids := range want {
		if g, ok := got[name]; !ok || g != ids {
			t.Errorf("Rollout %s: rejections %q, want %q (all: %v)", name, g, ids, got)
		}
	}
}

// Services, VirtualServices, DestinationRules and templates the Rollout names
// but the input lacks are listed alike.
func TestPlanNotInBundle(t *testing.T) {
	code, out, errs := runMain("plan", "--config", "/dev/null", "-f", "json", "../../../testdata/plan/subset-level.yaml")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, `"notInBundle": []`) {
		t.Errorf("a complete bundle should list nothing as missing:\n%s", out)
	}
	dir := t.TempDir()
	rollout := `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
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
          destinationRule: {name: web, stableSubsetName: stable, canarySubsetName: canary}
      steps:
      - setWeight: 20
      - analysis: {templates: [{templateName: success-rate}]}
`
	if err := os.WriteFile(filepath.Join(dir, "rollout.yaml"), []byte(rollout), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runMain("plan", "--config", "/dev/null", "-f", "json", filepath.Join(dir, "rollout.yaml"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Rollouts []struct {
			NotInBundle []struct{ Kind, Namespace, Name, Path string } `json:"notInBundle"`
		} `json:"rollouts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range doc.Rollouts[0].NotInBundle {
		got = append(got, r.Kind+" "+r.Namespace+"/"+r.Name+" "+r.Path)
	}
	want := []string{
		"Service shop/web-stable spec.strategy.canary.stableService",
		"Service shop/web-canary spec.strategy.canary.canaryService",
		"VirtualService shop/web spec.strategy.canary.trafficRouting.istio.virtualService.name",
		"DestinationRule shop/web spec.strategy.canary.trafficRouting.istio.destinationRule.name",
		"AnalysisTemplate shop/success-rate spec.strategy.canary.steps[1].analysis.templates[0].templateName",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("notInBundle:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range []string{"text", "markdown", "mermaid"} {
		_, out, _ := runMain("plan", "--config", "/dev/null", "-f", f, filepath.Join(dir, "rollout.yaml"))
		if strings.Count(strings.ToLower(out), "not in the bundle") != len(want) {
			t.Errorf("%s output names %d missing objects, want %d:\n%s", f, strings.Count(strings.ToLower(out), "not in the bundle"), len(want), out)
		}
	}
}
