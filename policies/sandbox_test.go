package policies

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/rollout"
)

const goodMeta = `# METADATA
# title: Example.
# description: |
#   Why. Bad: x. Good: y.
# custom:
#   id: RL9100
#   severity: warning
#   kinds: [Rollout]
`

func writePolicy(t *testing.T, name, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestUserPolicyCallingHTTPSendIsRejected(t *testing.T) {
	dir := writePolicy(t, "exfil.rego", goodMeta+`package acme.exfil

violation contains v if {
	some ro in input.rollouts
	resp := http.send({"method": "GET", "url": "http://127.0.0.1:1/"})
	v := {"msg": resp.body, "ref": ro.rollout, "path": "spec"}
}
`)
	_, err := LoadDirs([]string{dir})
	if err == nil {
		t.Fatal("a policy calling http.send loaded")
	}
	want := filepath.Join(dir, "exfil.rego") + ":13: http.send is not allowed in rolloutlint policies (network access)"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error does not name the file:line and reason:\n got: %v\nwant: %s", err, want)
	}
}

func TestForbiddenBuiltinsAreOutOfTheCapabilities(t *testing.T) {
	caps := Capabilities()
	have := map[string]bool{}
	for _, b := range caps.Builtins {
		have[b.Name] = true
	}
	for name := range forbiddenBuiltins {
		if have[name] {
			t.Errorf("%s is still in the sandbox capabilities", name)
		}
	}
	if !have["sprintf"] || !have["regex.match"] {
		t.Error("the sandbox lost ordinary built-ins")
	}
	if caps.AllowNet == nil || len(caps.AllowNet) != 0 {
		t.Errorf("AllowNet = %v, want an empty list (no hosts)", caps.AllowNet)
	}
}

func TestUserPolicyContractErrors(t *testing.T) {
	body := "\npackage acme.p\n\nviolation contains {\"msg\": \"x\", \"ref\": r.rollout, \"path\": \"spec\"} if some r in input.rollouts\n"
	cases := []struct {
		name, text, want string
	}{
		{"no metadata", "package acme.p\n\nviolation contains {\"msg\": \"x\"} if false\n",
			"p.rego:1: package acme.p defines violation but has no `# METADATA` block with custom.id"},
		{"bad id", strings.Replace(goodMeta, "RL9100", "X1", 1) + body, "p.rego:1: package acme.p: custom.id X1 is not RL followed by four digits"},
		{"bad severity", strings.Replace(goodMeta, "warning", "fatal", 1) + body, "p.rego:1: package acme.p: custom.severity fatal is not error, warning or info"},
		{"no kinds", strings.Replace(goodMeta, "#   kinds: [Rollout]\n", "", 1) + body, "custom.kinds must be a non-empty list"},
		{"no title", strings.Replace(goodMeta, "# title: Example.\n", "", 1) + body, "p.rego:1: package acme.p: missing title"},
		{"unknown custom key", strings.Replace(goodMeta, "#   kinds: [Rollout]\n", "#   kinds: [Rollout]\n#   severty: error\n", 1) + body, "unknown custom.severty"},
		{"no violation", goodMeta + "package acme.p\n\nallow := true\n", "p.rego:1: package acme.p has rule metadata but no `violation` rule"},
		{"parse error", goodMeta + "package acme.p\n\nviolation contains v if {\n", "p.rego:"},
		{"reserved package", "package rolloutlint.lib\n\nx := 1\n", "p.rego:1: package rolloutlint.lib is reserved"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writePolicy(t, "p.rego", c.text)
			_, err := LoadDirs([]string{dir})
			if err == nil {
				t.Fatal("loaded")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

func TestUserPolicyCannotTakeABuiltinID(t *testing.T) {
	dir := writePolicy(t, "p.rego", strings.Replace(goodMeta, "RL9100", "RL5001", 1)+"package acme.p\n\nviolation contains {\"msg\": \"x\"} if false\n")
	if _, err := LoadDirs([]string{dir}); err == nil || !strings.Contains(err.Error(), "RL5001 is a built-in rule") {
		t.Fatalf("err = %v", err)
	}
	dir = writePolicy(t, "p.rego", goodMeta+"package acme.vs_weights_committed\n\nviolation contains {\"msg\": \"x\"} if false\n")
	if _, err := LoadDirs([]string{dir}); err == nil || !strings.Contains(err.Error(), "rule name vs-weights-committed is a built-in rule's") {
		t.Fatalf("err = %v", err)
	}
}

// TestViolationContractErrorsAreFindings checks that a policy returning a
// malformed violation breaks only itself, with a message naming it.
func TestViolationContractErrorsAreFindings(t *testing.T) {
	dir := writePolicy(t, "p.rego", goodMeta+`package acme.p

violation contains {"msg": "no such object", "ref": {"kind": "Rollout", "namespace": "shop", "name": "ghost"}, "path": "spec"} if true
`)
	rs, err := LoadDirs([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	res := lintRL0009Testdata(t, append(rs, rollout.SetWeightRange))
	if got := messages(res, "RL0009"); len(got) != 1 || !strings.Contains(got[0], "policy acme.p") || !strings.Contains(got[0], "ref Rollout shop/ghost names no object of the bundle") {
		t.Errorf("RL0009 findings: %q", got)
	}
}

// TestRunawayPolicyDoesNotStopOtherRules runs the RL0009 testdata's looping
// policy: it is stopped and named, and RL1001 still reports.
func TestRunawayPolicyDoesNotStopOtherRules(t *testing.T) {
	rs, err := LoadDirs([]string{"../testdata/rules/RL0009/policies"})
	if err != nil {
		t.Fatal(err)
	}
	res := lintRL0009Testdata(t, append(rs, rollout.SetWeightRange), rules.Options{"timeout": "200ms"})
	if got := messages(res, "RL0009"); len(got) != 1 || !strings.Contains(got[0], "policy example.runaway") || !strings.Contains(got[0], "stopped after 200ms") {
		t.Errorf("RL0009 findings: %q", got)
	}
	if got := messages(res, "RL1001"); len(got) != 1 {
		t.Errorf("RL1001 findings beside the runaway policy: %q", got)
	}
}

func lintRL0009Testdata(t *testing.T, rs []*rules.Rule, opts ...rules.Options) *analyzer.Result {
	t.Helper()
	g, err := load.Paths([]string{"../testdata/rules/RL0009/bad.yaml", "../testdata/rules/RL0009/clean.yaml"}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := analyzer.Options{Rules: rs, Mode: rules.ModeCLI}
	if len(opts) > 0 {
		cfgText := "rules:\n"
		for _, r := range rs {
			if r.Source == rules.SourceUser {
				cfgText += "  " + r.ID + ":\n    options: {timeout: " + opts[0].String("timeout", "") + "}\n"
			}
		}
		cfg, err := parseConfig(cfgText)
		if err != nil {
			t.Fatal(err)
		}
		a.Config = cfg
	}
	return analyzer.Run(g, a)
}

func messages(res *analyzer.Result, id string) []string {
	var out []string
	for _, d := range res.Active() {
		if d.RuleID == id {
			out = append(out, d.Message)
		}
	}
	return out
}

// TestRuleScopedMetadata accepts the METADATA block before the violation rule
// and derives the rule's name from the package.
func TestRuleScopedMetadata(t *testing.T) {
	dir := writePolicy(t, "p.rego", "package acme.image_tags\n\n"+goodMeta+`violation contains {"msg": "latest tag", "ref": ro.rollout, "path": "spec.template"} if {
	some ro in input.rollouts
	endswith(input.resources[ro.rollout.index].object.spec.template.spec.containers[_].image, ":latest")
}
`)
	rs, err := LoadDirs([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].ID != "RL9100" || rs[0].Name != "image-tags" || rs[0].Source != rules.SourceUser || rs[0].Severity != rules.Warning {
		t.Fatalf("rules = %+v", rs)
	}
}

// TestAbandonedLintStopsARunningPolicy runs the looping policy under a lint
// context that ends after 100 ms: the evaluation stops then (not after the
// policy's 10 s timeout), the result carries the context's error, and the
// interruption is not reported as a broken rule.
func TestAbandonedLintStopsARunningPolicy(t *testing.T) {
	rs, err := LoadDirs([]string{"../testdata/rules/RL0009/policies"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := load.Paths([]string{"../testdata/rules/RL0009/bad.yaml"}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	res := analyzer.Run(g, analyzer.Options{Rules: rs, Mode: rules.ModeWebhook, Context: ctx})
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("the policy ran %s after the lint was abandoned", el)
	}
	if !errors.Is(res.Err, context.DeadlineExceeded) {
		t.Errorf("Result.Err = %v, want the deadline", res.Err)
	}
	if got := messages(res, "RL0009"); len(got) != 0 {
		t.Errorf("an abandoned lint reported a broken rule: %q", got)
	}
}
