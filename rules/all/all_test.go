package all_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
	"github.com/rolloutlint/rolloutlint/rules/ruletest"
)

const testdataRoot = "../../testdata/rules"

// TestRules runs every rule over its testdata directory.
func TestRules(t *testing.T) {
	rs := all.Rules()
	for _, r := range rs {
		if _, ok := noTestdataYet[r.ID]; ok {
			continue
		}
		if r.Source == rules.SourceLive {
			// It needs a live system: live/promcheck runs its testdata against
			// a real Prometheus (TestLivePrometheus).
			continue
		}
		t.Run(r.ID, func(t *testing.T) {
			t.Parallel()
			ruletest.Run(t, rs, r.ID, filepath.Join(testdataRoot, r.ID), ruletest.UserPolicies)
		})
	}
}

// noTestdataYet lists rules whose findings cannot be provoked from YAML alone.
var noTestdataYet = map[string]string{}

// TestRuleMetadata checks IDs, names and docs, and that every rule has
// testdata with at least one `# want` and at least one clean file.
func TestRuleMetadata(t *testing.T) {
	seenID, seenName := map[string]bool{}, map[string]bool{}
	for _, r := range all.Rules() {
		if err := r.Validate(); err != nil {
			t.Error(err)
		}
		if seenID[r.ID] {
			t.Errorf("duplicate rule ID %s", r.ID)
		}
		if seenName[r.Name] {
			t.Errorf("duplicate rule name %s", r.Name)
		}
		seenID[r.ID], seenName[r.Name] = true, true
		if doc := r.Summary + r.Doc.Why + r.Doc.Bad + r.Doc.Good + r.Doc.BadNote + r.Doc.GoodNote; strings.Contains(doc, "TODO") {
			t.Errorf("%s: its summary or Doc still says TODO: finish its documentation", r.ID)
		}
		if _, ok := noTestdataYet[r.ID]; ok {
			continue
		}
		files, err := ruletest.AllFiles(filepath.Join(testdataRoot, r.ID))
		if err != nil || len(files) == 0 {
			t.Errorf("%s: no testdata in %s/%s", r.ID, testdataRoot, r.ID)
			continue
		}
		wants, clean := 0, 0
		regos, _ := filepath.Glob(filepath.Join(testdataRoot, r.ID, ruletest.UserPoliciesDir, "*.rego"))
		trees, _ := filepath.Glob(filepath.Join(testdataRoot, r.ID, ruletest.TreeDir, "*.yaml"))
		regos = append(regos, trees...)
		for _, f := range regos { // a user policy (RL0009) or a walked file (RL0011) may carry the wants
			data, _ := os.ReadFile(f)
			ws, err := ruletest.ParseWants(f, data)
			if err != nil {
				t.Error(err)
			}
			wants += len(ws)
		}
		for _, f := range files {
			data, _ := os.ReadFile(f)
			ws, err := ruletest.ParseWants(f, data)
			if err != nil {
				t.Error(err)
			}
			wants += len(ws)
			if len(ws) == 0 {
				clean++
			}
		}
		if wants == 0 {
			t.Errorf("%s: testdata has no `# want` line", r.ID)
		}
		if clean == 0 {
			t.Errorf("%s: testdata has no clean file (one without `# want`)", r.ID)
		}
	}
}
