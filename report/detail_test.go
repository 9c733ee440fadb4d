package report_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/report"
	"github.com/rolloutlint/rolloutlint/rules"
)

// detailResult is two findings, one with a long detail and one without.
func detailResult() *analyzer.Result {
	pos := graph.Position{File: "deploy/rollout.yaml", Line: 45, Column: 20, EndLine: 45, EndColumn: 23}
	return &analyzer.Result{Diagnostics: []rules.Diagnostic{{
		RuleID: "RL1001", Name: "set-weight-range", Severity: rules.Error, Pos: pos,
		Message: "step 4: setWeight 120 is outside 0..100",
		Detail: "Argo Rollouts marks the Rollout InvalidSpec and runs no step: the controller stops reconciling it " +
			"until the spec is fixed, and no traffic moves. Write a percentage between 0 and 100.",
		Related: []rules.Related{{File: "deploy/rollout.yaml", Line: 40, Column: 7, Message: "the steps"}},
	}, {
		RuleID: "RL1002", Name: "step-action", Severity: rules.Error, Pos: pos, Message: "step 5 has no action",
	}}, Summary: analyzer.Summary{Errors: 2, Files: 1, Objects: 1, Rules: 2}}
}

// Text shows the detail only with Verbose, wrapped to 100 columns and
// indented under the finding, before its related locations.
func TestTextDetailWithVerbose(t *testing.T) {
	res := detailResult()
	plain := string(writeFormat(t, "text", res, report.Options{}))
	if strings.Contains(plain, "InvalidSpec") {
		t.Errorf("text without --verbose shows the detail:\n%s", plain)
	}
	out := string(writeFormat(t, "text", res, report.Options{Verbose: true}))
	lines := strings.Split(out, "\n")
	if lines[0] != "deploy/rollout.yaml:45:20: error RL1001 step 4: setWeight 120 is outside 0..100" {
		t.Fatalf("first line %q", lines[0])
	}
	var detail []string
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "    deploy/") {
			break
		}
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("detail line of %d columns: %q", n, l)
		}
		detail = append(detail, strings.TrimPrefix(l, "    "))
	}
	if len(detail) < 2 {
		t.Fatalf("the detail is not wrapped under the finding:\n%s", out)
	}
	if got := strings.Join(detail, " "); got != res.Diagnostics[0].Detail {
		t.Errorf("wrapped detail reads %q, want %q", got, res.Diagnostics[0].Detail)
	}
	if l := lines[1+len(detail)]; l != "    deploy/rollout.yaml:40:7: the steps" {
		t.Errorf("after the detail %q, want the related location", l)
	}
	if !strings.Contains(out, "\ndeploy/rollout.yaml:45:20: error RL1002 step 5 has no action\n") {
		t.Errorf("the finding without detail is not a line of its own:\n%s", out)
	}
}

// JSON carries the detail as "detail" and leaves it out when there is none;
// GitHub annotations and SARIF join it to the message.
func TestDetailInMachineFormats(t *testing.T) {
	res := detailResult()
	var js struct{ Diagnostics []map[string]any }
	if err := json.Unmarshal(writeFormat(t, "json", res, report.Options{}), &js); err != nil {
		t.Fatal(err)
	}
	if got := js.Diagnostics[0]["detail"]; got != res.Diagnostics[0].Detail {
		t.Errorf("JSON detail %v", got)
	}
	if got := js.Diagnostics[0]["message"]; got != res.Diagnostics[0].Message {
		t.Errorf("JSON message %v", got)
	}
	if _, ok := js.Diagnostics[1]["detail"]; ok {
		t.Errorf("JSON has a detail for a finding without one: %v", js.Diagnostics[1])
	}
	gh := string(writeFormat(t, "github", res, report.Options{}))
	if !strings.Contains(gh, "::step 4: setWeight 120 is outside 0..100. Argo Rollouts marks the Rollout InvalidSpec") {
		t.Errorf("annotation lacks the detail:\n%s", gh)
	}
	var log sarifLog
	if err := json.Unmarshal(writeFormat(t, "sarif", res, report.Options{}), &log); err != nil {
		t.Fatal(err)
	}
	if got := log.Runs[0].Results[0].Message.Text; !strings.HasPrefix(got, "step 4: setWeight 120 is outside 0..100. Argo Rollouts marks") ||
		!strings.HasSuffix(got, "between 0 and 100. (related: [the steps](1))") {
		t.Errorf("SARIF message %q", got)
	}
}
