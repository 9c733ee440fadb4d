package webhook

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/rolloutlint/rolloutlint/rules/all"
)

// updateJSON is an UPDATE review of oldManifest to newManifest by user.
func updateJSON(t testing.TB, uid, user, oldManifest, newManifest string) []byte {
	t.Helper()
	var review map[string]any
	if err := json.Unmarshal(reviewJSON(t, uid, "UPDATE", newManifest, false), &review); err != nil {
		t.Fatal(err)
	}
	var old map[string]any
	if err := yaml.Unmarshal([]byte(oldManifest), &old); err != nil {
		t.Fatal(err)
	}
	req := review["request"].(map[string]any)
	req["oldObject"] = old
	req["userInfo"] = map[string]any{"username": user}
	out, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rolloutWithSteps is a Rollout whose canary steps are the given flow list.
func rolloutWithSteps(steps string) string {
	return `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: checkout, namespace: shop, labels: {team: a}}
spec:
  selector: {matchLabels: {app: checkout}}
  template: {metadata: {labels: {app: checkout}}, spec: {containers: [{name: checkout, image: checkout:1}]}}
  strategy: {canary: {steps: ` + steps + `}}
`
}

func TestUpdateIsDeniedOnlyForFindingsItIntroduces(t *testing.T) {
	bad := rolloutWithSteps(`[{setWeight: 20}, {setWeight: 150}]`) // RL1001 on steps[1]
	cases := []struct {
		name, old, new string
		allowed        bool
	}{
		{"unrelated change keeps the old error", bad, rolloutWithSteps(`[{setWeight: 30}, {setWeight: 150}]`), true},
		{"a step inserted before the error renumbers it", bad, rolloutWithSteps(`[{setWeight: 10}, {setWeight: 20}, {setWeight: 150}]`), true},
		{"a second error of the same rule is new", bad, rolloutWithSteps(`[{setWeight: 20}, {setWeight: 150}, {setWeight: 170}]`), false},
		{"an error on a clean object is new", goodRollout, bad, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, resp := post(t, newTestHandler(Options{}), updateJSON(t, "u", "alice", c.old, c.new))
			if resp == nil || resp.Allowed != c.allowed {
				t.Fatalf("allowed=%v, want %v: %+v", resp != nil && resp.Allowed, c.allowed, resp)
			}
			if c.allowed {
				joined := strings.Join(resp.Warnings, "\n")
				if !strings.Contains(joined, "RL1001") || !strings.Contains(joined, "already there") {
					t.Errorf("the existing error is not returned as a warning: %q", resp.Warnings)
				}
				return
			}
			if resp.Result == nil || !strings.Contains(resp.Result.Message, "RL1001") {
				t.Errorf("deny message: %+v", resp.Result)
			}
		})
	}
	// The introduced error is the one named, the old one a warning.
	_, resp := post(t, newTestHandler(Options{}), updateJSON(t, "u", "alice", bad, rolloutWithSteps(`[{setWeight: 20}, {setWeight: 150}, {setWeight: 170}]`)))
	if msg := resp.Result.Message; !strings.Contains(msg, "adds 1 error(s) (1 it already had are warnings)") {
		t.Errorf("deny message does not tell new from old: %s", msg)
	}
	// --deny-existing: the old error denies too.
	_, resp = post(t, newTestHandler(Options{DenyExisting: true}), updateJSON(t, "u", "alice", bad, rolloutWithSteps(`[{setWeight: 30}, {setWeight: 150}]`)))
	if resp == nil || resp.Allowed {
		t.Fatalf("DenyExisting allowed an update keeping an error: %+v", resp)
	}
}

func TestMetadataAndStatusOnlyUpdatesAreNotLinted(t *testing.T) {
	bad := rolloutWithSteps(`[{setWeight: 150}]`)
	relabelled := strings.Replace(bad, "labels: {team: a}", "labels: {team: b}, annotations: {x: y}", 1) + "status: {phase: Healthy}\n"
	h := newTestHandler(Options{DenyExisting: true})
	_, resp := post(t, h, updateJSON(t, "m", "alice", bad, relabelled))
	if resp == nil || !resp.Allowed || len(resp.Warnings) != 0 {
		t.Fatalf("metadata-only update of an invalid object: %+v", resp)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `rolloutlint_webhook_decisions_total{decision="skipped",dry_run="false"} 1`) {
		t.Errorf("not counted as skipped:\n%s", grep(rec.Body.String(), "decisions_total"))
	}
	// A spec change with the same metadata is linted.
	_, resp = post(t, h, updateJSON(t, "m2", "alice", bad, rolloutWithSteps(`[{setWeight: 160}]`)))
	if resp == nil || resp.Allowed {
		t.Fatalf("spec change not linted: %+v", resp)
	}
}

func TestTrustedUsersAreNeverDenied(t *testing.T) {
	h := newTestHandler(Options{TrustedUsers: DefaultTrustedUsers})
	_, resp := post(t, h, updateJSON(t, "c", "system:serviceaccount:argo-rollouts:argo-rollouts", goodRollout, badRollout))
	if resp == nil || !resp.Allowed || !strings.Contains(strings.Join(resp.Warnings, " "), "RL1001") {
		t.Fatalf("controller update: want allowed with the error as a warning: %+v", resp)
	}
	_, resp = post(t, h, updateJSON(t, "c", "system:serviceaccount:argocd:argocd-server", goodRollout, badRollout))
	if resp == nil || resp.Allowed {
		t.Fatalf("a user that is not trusted was allowed: %+v", resp)
	}
	// A review of a trusted user that cannot be linted is allowed even fail-closed.
	h = newTestHandler(Options{TrustedUsers: DefaultTrustedUsers, Failure: FailClosed, Timeout: 50 * time.Millisecond,
		Linter: &Linter{Rules: append(all.Rules(), slowRule)}})
	_, resp = post(t, h, updateJSON(t, "c", "system:serviceaccount:argocd:argocd-application-controller", goodRollout, badRollout))
	if resp == nil || !resp.Allowed || !strings.Contains(strings.Join(resp.Warnings, " "), "did not check") {
		t.Fatalf("trusted review that timed out: %+v", resp)
	}
}

func TestWithoutNumbers(t *testing.T) {
	for in, want := range map[string]string{
		"spec.strategy.canary.steps[12].setWeight": "spec.strategy.canary.steps[#].setWeight",
		"step 3: setWeight 150 is outside 0..100":  "step #: setWeight # is outside #..#",
		"": "",
	} {
		if got := withoutNumbers(in); got != want {
			t.Errorf("withoutNumbers(%q) = %q, want %q", in, got, want)
		}
	}
}
