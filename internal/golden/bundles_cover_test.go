package golden_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// TestEveryRuleFiresInBundles lints every bundle under testdata/bundles/ (each
// with its own .rolloutlint.yaml, so opt-in rules and user policies a bundle
// enables take part) and fails naming each registered rule that reports no
// active finding in any of them. The broken bundles exist so that every rule
// is seen working end to end, through the command line, on realistic input
// (all but the live rules, which need a running system).
func TestEveryRuleFiresInBundles(t *testing.T) {
	t.Chdir(repoRoot(t))
	fired := map[string][]string{} // rule ID -> bundles where it fired
	for _, b := range findBundles(t) {
		var out struct {
			Diagnostics []struct {
				RuleID string `json:"ruleId"`
			} `json:"diagnostics"`
		}
		if err := json.Unmarshal(lint(t, b, "json"), &out); err != nil {
			t.Fatalf("%s: JSON report: %v", b.dir, err)
		}
		for _, d := range out.Diagnostics {
			fired[d.RuleID] = append(fired[d.RuleID], b.dir)
		}
	}
	var silent []string
	for _, r := range all.Rules() {
		// A live rule needs its running system, which a bundle cannot hold:
		// live/promcheck runs RL4090 against a real Prometheus.
		if r.Source == rules.SourceLive {
			continue
		}
		if len(fired[r.ID]) == 0 {
			silent = append(silent, r.ID+" ("+r.Name+")")
		}
	}
	sort.Strings(silent)
	if len(silent) > 0 {
		t.Errorf("%d of %d rules fire in no bundle under %s; add a realistic mistake for each to a broken-* bundle:\n  %s",
			len(silent), len(all.Rules()), bundlesDir, strings.Join(silent, "\n  "))
	}
}
