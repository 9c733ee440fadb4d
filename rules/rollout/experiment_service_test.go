package rollout_test

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/rollout"
)

// portless is a Rollout whose pods declare no container port, with an
// experiment step of one weighted and one service-only template, and an
// Experiment object asking for a Service (the shape of Argo Rollouts' e2e
// fixture experiment-dry-run-analysis.yaml, which the controller runs).
const portless = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: search, namespace: shop}
spec:
  selector: {matchLabels: {app: search}}
  template:
    metadata: {labels: {app: search}}
    spec: {containers: [{name: search, image: "registry.example.com/search:1.0"}]}
  strategy:
    canary:
      steps:
      - experiment:
          templates:
          - {name: exp, specRef: canary, weight: 20}
          - {name: base, specRef: stable, service: {}}
---
apiVersion: argoproj.io/v1alpha1
kind: Experiment
metadata: {name: dry-run, namespace: shop}
spec:
  templates:
  - name: baseline
    service: {}
    selector: {matchLabels: {app: dry-run}}
    template:
      metadata: {labels: {app: dry-run}}
      spec: {containers: [{name: web, image: "registry.example.com/web:1.0"}]}
`

// TestExperimentServiceSeverity: a Service that is not created is an error
// only when a weight routes traffic to it; otherwise Argo Rollouts runs the
// experiment and the field is dead configuration (a warning).
func TestExperimentServiceSeverity(t *testing.T) {
	g := load.Inputs([]load.Input{{Path: "bundle.yaml", Data: []byte(portless)}}, load.Options{})
	got := map[int]rules.Severity{}
	p := rules.NewPass(g, rollout.ExperimentTemplateService, nil, rules.ModeCLI, rules.Globals{}, func(d rules.Diagnostic) { got[d.Pos.Line] = d.Severity })
	if err := rollout.ExperimentTemplateService.Run(p); err != nil {
		t.Fatal(err)
	}
	want := map[int]rules.Severity{
		14: rules.Error,   // weighted template: its share gets 503
		15: rules.Warning, // service only: unused
		23: rules.Warning, // Experiment object: unused
	}
	if len(got) != len(want) {
		t.Fatalf("findings on lines %v, want %v", got, want)
	}
	for line, sev := range want {
		if got[line] != sev {
			t.Errorf("line %d: severity %v, want %v", line, got[line], sev)
		}
	}
}
