package traffic_test

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/traffic"
)

const rolloutOnly = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: checkout, namespace: shop}
spec:
  selector: {matchLabels: {app: checkout}}
  template:
    metadata: {labels: {app: checkout}}
  strategy:
    canary:
      stableService: checkout-stable
      canaryService: checkout-canary
      trafficRouting:
        istio:
          virtualService: {name: checkout, routes: [primary]}
      steps: [{setWeight: 20}]
`

const otherIstioObject = `---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: payments, namespace: shop}
spec: {host: payments}
`

// TestMissingObjectSeverityPolicy checks the documented policy: info when the
// bundle has no Istio object at all, warning when it has some, and never an
// error, in the CLI or the webhook.
func TestMissingObjectSeverityPolicy(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		mode rules.Mode
		want rules.Severity
	}{
		{"no istio objects", rolloutOnly, rules.ModeCLI, rules.Info},
		{"istio objects present", rolloutOnly + otherIstioObject, rules.ModeCLI, rules.Warning},
		{"webhook, istio objects present", rolloutOnly + otherIstioObject, rules.ModeWebhook, rules.Warning},
		{"webhook, rollout alone", rolloutOnly, rules.ModeWebhook, rules.Info},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := load.Inputs([]load.Input{{Path: "bundle.yaml", Data: []byte(c.doc)}}, load.Options{})
			var got []rules.Diagnostic
			p := rules.NewPass(g, traffic.MissingObject, nil, c.mode, rules.Globals{}, func(d rules.Diagnostic) { got = append(got, d) })
			if err := traffic.MissingObject.Run(p); err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("got %d diagnostics, want 1: %+v", len(got), got)
			}
			d := got[0]
			if d.Severity != c.want {
				t.Errorf("severity %s, want %s", d.Severity, c.want)
			}
			if d.Pos.Line != 14 || d.Pos.Column != 34 {
				t.Errorf("at %d:%d, want 14:34 (the virtualService name)", d.Pos.Line, d.Pos.Column)
			}
		})
	}
}
