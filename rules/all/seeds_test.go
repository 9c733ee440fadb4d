package all_test

import (
	"path/filepath"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/analyzer/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// TestSeedExamplesAreClean runs every rule over the seed documents' official
// host-level and subset-level configurations: correct bundles must produce no
// error and no warning.
func TestSeedExamplesAreClean(t *testing.T) {
	files := []string{
		filepath.Join(testdataRoot, "RL1007", "seed-host-level.yaml"),
		filepath.Join(testdataRoot, "RL1007", "seed-subset-level.yaml"),
	}
	g, err := load.Paths(files, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Resources) != 8 {
		t.Fatalf("loaded %d objects, want 8 (Rollout, 2 Services, VS; Rollout, Service, VS, DR)", len(g.Resources))
	}
	res := analyzer.Run(g, analyzer.Options{Rules: all.Rules()})
	for _, d := range res.Active() {
		if d.Severity >= rules.Warning {
			t.Errorf("%s: %s %s %s", d.Pos, d.Severity, d.RuleID, d.Message)
		}
	}
}
