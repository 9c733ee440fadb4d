package cli_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/cmd/rolloutlint/cli"
)

// The integration flags reach the writers through the lint hook.
func TestLintSARIFFlags(t *testing.T) {
	t.Parallel()
	var out, errw bytes.Buffer
	code := cli.Main([]string{"lint", "--format", "sarif", "--sarif-root", "../../../testdata", "--sarif-category", "ci/deploy",
		"../../../testdata/bundles/examples-checkout"}, strings.NewReader(""), &out, &errw)
	if code != cli.ExitFindings {
		t.Fatalf("exit %d, want %d: %s", code, cli.ExitFindings, errw.String())
	}
	var log struct {
		Runs []struct {
			AutomationDetails struct{ ID string } `json:"automationDetails"`
			Results           []struct {
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI, URIBaseID string } `json:"artifactLocation"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out.Bytes(), &log); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	run := log.Runs[0]
	if run.AutomationDetails.ID != "ci/deploy/" {
		t.Errorf("automationDetails.id = %q", run.AutomationDetails.ID)
	}
	if len(run.Results) == 0 {
		t.Fatal("no results")
	}
	for _, r := range run.Results {
		a := r.Locations[0].PhysicalLocation.ArtifactLocation
		if !strings.HasPrefix(a.URI, "bundles/examples-checkout/") {
			t.Errorf("URI %q is not relative to --sarif-root", a.URI)
		}
	}
}

func TestLintGitHubFormat(t *testing.T) {
	t.Parallel()
	var out, errw bytes.Buffer
	code := cli.Main([]string{"lint", "--format", "github", "--fail-level", "warning", "../../../testdata/bundles/examples-checkout/rollout.yaml"},
		strings.NewReader(""), &out, &errw)
	if code != cli.ExitFindings {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	want := "::error file=../../../testdata/bundles/examples-checkout/rollout.yaml,line=45,col=20,endLine=45,endColumn=23,title=RL1001::step 4: setWeight 120"
	if !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
}
