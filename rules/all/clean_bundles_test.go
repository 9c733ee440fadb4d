package all_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

const cleanBundles = "../../testdata/bundles/clean"

// TestCleanBundles runs every rule over correct bundles written in the shapes
// of the upstream Rollout+Istio examples and the seed documents: none may
// report an error or a warning. So that a bundle cannot pass by being ignored,
// each must hold a Rollout whose traffic references all resolve.
func TestCleanBundles(t *testing.T) {
	dirs, err := os.ReadDir(cleanBundles)
	if err != nil {
		t.Fatal(err)
	}
	rs := all.Rules()
	n := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		n++
		dir := filepath.Join(cleanBundles, d.Name())
		t.Run(d.Name(), func(t *testing.T) {
			t.Parallel()
			g, err := load.Paths([]string{dir}, load.Options{})
			if err != nil {
				t.Fatal(err)
			}
			x := g.Refs()
			if len(x.Rollouts) == 0 {
				t.Fatal("bundle has no Rollout")
			}
			for _, rr := range x.Rollouts {
				for _, s := range rr.Services {
					if s.Target == nil {
						t.Errorf("Rollout %s: Service %s not resolved", rr.Rollout.Name, s.Name)
					}
				}
				for _, vs := range rr.VirtualServices {
					if vs.Target == nil {
						t.Errorf("Rollout %s: VirtualService %s not resolved", rr.Rollout.Name, vs.Ref)
					}
					for _, rt := range vs.Routes {
						if rt.Index < 0 {
							t.Errorf("Rollout %s: %s route %q of %s not resolved", rr.Rollout.Name, rt.Kind, rt.Name, vs.Ref)
						}
					}
				}
				if dr := rr.DestinationRule; dr != nil && dr.Target == nil {
					t.Errorf("Rollout %s: DestinationRule %s not resolved", rr.Rollout.Name, dr.Name)
				}
			}
			res := analyzer.Run(g, analyzer.Options{Rules: rs, Mode: rules.ModeCLI})
			for _, diag := range res.Active() {
				if diag.Severity >= rules.Warning {
					t.Errorf("%s:%d:%d: %s %s: %s", diag.Pos.File, diag.Pos.Line, diag.Pos.Column, diag.Severity, diag.RuleID, diag.Message)
				}
			}
		})
	}
	if n < 12 {
		t.Errorf("found %d clean bundles in %s, want at least 12", n, cleanBundles)
	}
}
