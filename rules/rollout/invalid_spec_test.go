package rollout_test

import (
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/rules/rollout"
)

// Each rule listed as an InvalidSpec check documents that Argo Rollouts
// refuses the Rollout for what it finds.
func TestInvalidSpecRulesSayInvalidSpec(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range rollout.InvalidSpec {
		if seen[r.ID] {
			t.Errorf("%s listed twice", r.ID)
		}
		seen[r.ID] = true
		if why := r.Doc.Why; !strings.Contains(why, "InvalidSpec") && !strings.Contains(why, "rejects the Rollout") {
			t.Errorf("%s (%s) is listed as an InvalidSpec check but its doc does not say Argo Rollouts rejects the Rollout (InvalidSpec)", r.ID, r.Name)
		}
	}
}
