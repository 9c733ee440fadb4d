package traffic_test

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/traffic"
)

const serviceOtherNamespace = `---
apiVersion: v1
kind: Service
metadata: {name: checkout-stable, namespace: payments}
spec: {selector: {app: checkout}, ports: [{port: 80}]}
`

const serviceSameNamespace = `---
apiVersion: v1
kind: Service
metadata: {name: checkout-canary, namespace: shop}
spec: {selector: {app: checkout}, ports: [{port: 80}]}
`

// TestServiceNotFoundSeverityPolicy checks RL2019's documented policy:
// warning when the bundle holds Services of the Rollout's namespace, info
// when it holds none, never an error, in the CLI or the webhook (whose
// bundle is the Rollout with the cluster objects it names), and a Service of
// the name in another namespace as a related location.
func TestServiceNotFoundSeverityPolicy(t *testing.T) {
	cases := []struct {
		name    string
		doc     string
		mode    rules.Mode
		want    rules.Severity
		related int
	}{
		{"no service of the namespace", rolloutOnly, rules.ModeCLI, rules.Info, 0},
		{"the name in another namespace", rolloutOnly + serviceOtherNamespace, rules.ModeCLI, rules.Info, 1},
		{"services of the namespace", rolloutOnly + serviceSameNamespace, rules.ModeCLI, rules.Warning, 0},
		{"webhook, services of the namespace", rolloutOnly + serviceSameNamespace, rules.ModeWebhook, rules.Warning, 0},
		{"webhook, rollout alone", rolloutOnly, rules.ModeWebhook, rules.Info, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := load.Inputs([]load.Input{{Path: "bundle.yaml", Data: []byte(c.doc)}}, load.Options{})
			var got []rules.Diagnostic
			p := rules.NewPass(g, traffic.ServiceNotFound, nil, c.mode, rules.Globals{}, func(d rules.Diagnostic) { got = append(got, d) })
			if err := traffic.ServiceNotFound.Run(p); err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 || got[0].Path != "spec.strategy.canary.stableService" {
				t.Fatalf("got %+v, want a finding on stableService first", got)
			}
			d := got[0]
			if d.Severity != c.want {
				t.Errorf("severity %s, want %s", d.Severity, c.want)
			}
			if d.Pos.Line != 10 || d.Pos.Column != 22 {
				t.Errorf("at %d:%d, want 10:22 (the stableService value)", d.Pos.Line, d.Pos.Column)
			}
			if len(d.Related) != c.related {
				t.Errorf("related %+v, want %d", d.Related, c.related)
			}
		})
	}
}
