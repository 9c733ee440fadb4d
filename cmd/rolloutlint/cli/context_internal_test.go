package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// TestContextResolvesReferences checks that --context files take part in
// reference resolution: a probe rule, added to the registry of its Env, reports every
// VirtualService reference of a Rollout that does not resolve.
func TestContextResolvesReferences(t *testing.T) {
	t.Parallel()
	probe := &rules.Rule{ID: "RL0990", Name: "probe-unresolved-vs", Summary: "test probe", Doc: rules.Doc{Why: "test rule"},
		Severity: rules.Error, Source: rules.SourceGo,
		Run: func(p *rules.Pass) error {
			for _, rr := range p.Graph.Refs().Rollouts {
				for _, vs := range rr.VirtualServices {
					if vs.Target == nil {
						p.Report(rr.Rollout, vs.Path, "unresolved VirtualService "+vs.Name)
					}
				}
			}
			return nil
		}}
	withProbe := func() []*rules.Rule { return append(all.Rules(), probe) }

	dir := t.TempDir()
	ro := `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: checkout}
spec:
  selector: {matchLabels: {app: checkout}}
  template: {metadata: {labels: {app: checkout}}, spec: {containers: [{name: checkout, image: checkout:1}]}}
  strategy:
    canary:
      canaryService: checkout-canary
      stableService: checkout-stable
      trafficRouting:
        istio:
          virtualService: {name: checkout, routes: [primary]}
`
	vs := `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: checkout}
spec:
  hosts: [checkout]
  http:
  - name: primary
    route:
    - {destination: {host: checkout-stable}, weight: 100}
    - {destination: {host: checkout-canary}, weight: 0}
`
	for name, body := range map[string]string{"rollout.yaml": ro, "vs.yaml": vs} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lint := func(args ...string) string {
		var out, errw bytes.Buffer
		e := &Env{In: strings.NewReader(""), Out: &out, Err: &errw, Dir: dir, builtin: withProbe}
		e.Run(append([]string{"lint", "--enable", "RL0990"}, args...))
		if errw.Len() > 0 {
			t.Fatalf("stderr: %s", errw.String())
		}
		return out.String()
	}
	if out := lint("rollout.yaml"); !strings.Contains(out, "rollout.yaml:13:34: error RL0990 unresolved VirtualService checkout") {
		t.Errorf("without context the probe should fire at the reference:\n%s", out)
	}
	if out := lint("--context", "vs.yaml", "rollout.yaml"); strings.Contains(out, "RL0990") {
		t.Errorf("with --context vs.yaml the reference should resolve:\n%s", out)
	}
}
