package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/yaml"

	"github.com/rolloutlint/rolloutlint/live/clusterview"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

const badRollout = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: checkout, namespace: shop}
spec:
  selector: {matchLabels: {app: checkout}}
  template: {metadata: {labels: {app: checkout}}, spec: {containers: [{name: checkout, image: checkout:1}]}}
  strategy:
    canary:
      steps:
      - setWeight: 20
      - setWeight: 150
`

const goodRollout = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: checkout, namespace: shop}
spec:
  selector: {matchLabels: {app: checkout}}
  template: {metadata: {labels: {app: checkout}}, spec: {containers: [{name: checkout, image: checkout:1}]}}
  strategy:
    canary:
      steps:
      - setWeight: 20
      - pause: {}
`

// warnRollout is clean but for a suppression without a reason that also
// suppresses nothing: two warning-level findings, no error.
const warnRollout = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
  namespace: shop
  annotations: {rolloutlint.io/ignore: RL1001}
spec:
  selector: {matchLabels: {app: checkout}}
  template: {metadata: {labels: {app: checkout}}, spec: {containers: [{name: checkout, image: checkout:1}]}}
  strategy: {canary: {steps: [{setWeight: 20}]}}
`

func reviewJSON(t testing.TB, uid, op, manifest string, dryRun bool) []byte {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(manifest), &obj); err != nil {
		t.Fatal(err)
	}
	md := obj["metadata"].(map[string]any)
	kind := obj["kind"].(string)
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	review := map[string]any{
		"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"request": map[string]any{
			"uid": uid, "kind": map[string]any{"group": "argoproj.io", "version": "v1alpha1", "kind": kind},
			"resource": map[string]any{"group": "argoproj.io", "version": "v1alpha1", "resource": strings.ToLower(kind) + "s"},
			"name":     md["name"], "namespace": md["namespace"], "operation": op,
			"userInfo": map[string]any{"username": "tester"},
			"object":   json.RawMessage(raw), "dryRun": dryRun,
		},
	}
	out, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func newTestHandler(opts Options) *Handler {
	if opts.Linter == nil {
		opts.Linter = &Linter{Rules: all.Rules(), Globals: rules.Globals{IstioVersion: "1.28"}}
	}
	return NewHandler(opts)
}

func post(t testing.TB, h http.Handler, body []byte) (*httptest.ResponseRecorder, *admissionv1.AdmissionResponse) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, ValidatePath, bytes.NewReader(body)))
	if rec.Code != http.StatusOK {
		return rec, nil
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil {
		t.Fatalf("response is not a review: %v\n%s", err, rec.Body)
	}
	if review.APIVersion != "admission.k8s.io/v1" || review.Kind != "AdmissionReview" || review.Response == nil {
		t.Fatalf("bad response envelope: %s", rec.Body)
	}
	return rec, review.Response
}

func TestDeniesErrorsWithRuleAndPath(t *testing.T) {
	h := newTestHandler(Options{})
	_, resp := post(t, h, reviewJSON(t, "uid-1", "CREATE", badRollout, false))
	if resp == nil || resp.UID != "uid-1" {
		t.Fatalf("uid not echoed: %+v", resp)
	}
	if resp.Allowed {
		t.Fatal("bad Rollout allowed")
	}
	if resp.Result == nil || resp.Result.Code != http.StatusForbidden {
		t.Fatalf("want status 403, got %+v", resp.Result)
	}
	msg := resp.Result.Message
	for _, want := range []string{"RL1001", "spec.strategy.canary.steps[1].setWeight", "150", "Rollout shop/checkout"} {
		if !strings.Contains(msg, want) {
			t.Errorf("deny message lacks %q: %s", want, msg)
		}
	}
}

func TestAllowsCleanObject(t *testing.T) {
	_, resp := post(t, newTestHandler(Options{}), reviewJSON(t, "uid-2", "CREATE", goodRollout, false))
	if resp == nil || !resp.Allowed || len(resp.Warnings) != 0 || resp.UID != "uid-2" {
		t.Fatalf("clean Rollout: %+v", resp)
	}
}

func TestWarningsAreShortAndAllowed(t *testing.T) {
	_, resp := post(t, newTestHandler(Options{}), reviewJSON(t, "uid-3", "UPDATE", warnRollout, false))
	if resp == nil || !resp.Allowed {
		t.Fatalf("warning-only object denied: %+v", resp)
	}
	joined := strings.Join(resp.Warnings, "\n")
	if !strings.Contains(joined, "RL0007") || !strings.Contains(joined, "RL0008") {
		t.Fatalf("want RL0007 and RL0008 warnings, got %q", resp.Warnings)
	}
	for _, w := range resp.Warnings {
		if n := len([]rune(w)); n > MaxWarningLen {
			t.Errorf("warning of %d chars: %q", n, w)
		}
	}
}

func TestEnforceModes(t *testing.T) {
	_, resp := post(t, newTestHandler(Options{Enforce: EnforceWarning}), reviewJSON(t, "w", "CREATE", badRollout, false))
	if resp == nil || !resp.Allowed || !strings.Contains(strings.Join(resp.Warnings, " "), "RL1001") {
		t.Fatalf("enforce=warning should allow and warn about RL1001: %+v", resp)
	}
	_, resp = post(t, newTestHandler(Options{Enforce: EnforceOff}), reviewJSON(t, "o", "CREATE", badRollout, false))
	if resp == nil || !resp.Allowed || len(resp.Warnings) != 0 || !strings.Contains(resp.AuditAnnotations["findings"], "RL1001") {
		t.Fatalf("enforce=off should allow silently with an audit annotation: %+v", resp)
	}
}

func TestDryRunIsValidatedAndCountedApart(t *testing.T) {
	h := newTestHandler(Options{})
	_, resp := post(t, h, reviewJSON(t, "d", "CREATE", badRollout, true))
	if resp == nil || resp.Allowed {
		t.Fatalf("dry run of a bad Rollout must be denied like a real one: %+v", resp)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `rolloutlint_webhook_decisions_total{decision="denied",dry_run="true"} 1`) {
		t.Fatalf("dry-run decision not counted:\n%s", grep(rec.Body.String(), "rolloutlint_webhook_decisions_total"))
	}
	if !strings.Contains(rec.Body.String(), `rolloutlint_webhook_findings_total{rule="RL1001",severity="error"} 1`) {
		t.Fatalf("finding not counted:\n%s", grep(rec.Body.String(), "rolloutlint_webhook_findings"))
	}
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestExemptions(t *testing.T) {
	h := newTestHandler(Options{ExemptNamespaces: []string{"sh*"}})
	if _, resp := post(t, h, reviewJSON(t, "e", "CREATE", badRollout, false)); resp == nil || !resp.Allowed {
		t.Fatalf("namespace exemption ignored: %+v", resp)
	}
	h = newTestHandler(Options{ExemptObjects: []string{"Rollout/shop/check*"}})
	if _, resp := post(t, h, reviewJSON(t, "e", "CREATE", badRollout, false)); resp == nil || !resp.Allowed {
		t.Fatalf("object exemption ignored: %+v", resp)
	}
	h = newTestHandler(Options{ExemptObjects: []string{"Service/shop/*"}})
	if _, resp := post(t, h, reviewJSON(t, "e", "CREATE", badRollout, false)); resp == nil || resp.Allowed {
		t.Fatalf("exemption for another kind applied: %+v", resp)
	}
}

func TestMalformedReviews(t *testing.T) {
	for _, mode := range []FailureMode{FailOpen, FailClosed} {
		h := newTestHandler(Options{Failure: mode, MaxBodyBytes: 4096})
		cases := []struct {
			name string
			body string
			code int
		}{
			{"not json", "{{{", http.StatusBadRequest},
			{"wrong apiVersion", `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"x"}}`, http.StatusBadRequest},
			{"no request", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, http.StatusBadRequest},
			{"too large", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"` + strings.Repeat("a", 5000) + `"}}`, http.StatusRequestEntityTooLarge},
		}
		for _, c := range cases {
			rec, _ := post(t, h, []byte(c.body))
			if rec.Code != c.code {
				t.Errorf("%s/%s: got HTTP %d, want %d", mode, c.name, rec.Code, c.code)
			}
		}
		// A review whose object is not an object, a CREATE or UPDATE without
		// one, or one whose object is another kind than the request names
		// (each was allowed without a word before, the last two silently):
		// answered per failure mode, uid echoed.
		for _, obj := range []string{`[1,2]`, `null`, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`} {
			for _, op := range []string{"CREATE", "UPDATE"} {
				body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u9","kind":{"group":"argoproj.io","version":"v1alpha1","kind":"Rollout"},"resource":{"group":"argoproj.io","version":"v1alpha1","resource":"rollouts"},"operation":"` + op + `","userInfo":{},"name":"x","namespace":"n","object":` + obj + `}}`
				_, resp := post(t, h, []byte(body))
				if resp == nil || resp.UID != "u9" {
					t.Fatalf("%s %s %s: bad object not answered with uid: %+v", mode, op, obj, resp)
				}
				if got := resp.Allowed; got != (mode == FailOpen) {
					t.Errorf("%s %s %s: allowed=%v", mode, op, obj, got)
				}
				if mode == FailOpen && (len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], "did not check")) {
					t.Errorf("%s %s %s: fail-open answer lacks its warning: %q", mode, op, obj, resp.Warnings)
				}
			}
		}
	}
}

func TestSkipsDeleteAndOtherKinds(t *testing.T) {
	h := newTestHandler(Options{})
	del := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"d1","kind":{"group":"argoproj.io","version":"v1alpha1","kind":"Rollout"},"resource":{"group":"argoproj.io","version":"v1alpha1","resource":"rollouts"},"operation":"DELETE","userInfo":{},"name":"x","namespace":"n","object":null}}`
	if _, resp := post(t, h, []byte(del)); resp == nil || !resp.Allowed || resp.UID != "d1" {
		t.Fatalf("DELETE: %+v", resp)
	}
	cm := reviewJSON(t, "c1", "CREATE", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: b}\ndata: {x: 'y'}\n", false)
	if _, resp := post(t, h, cm); resp == nil || !resp.Allowed {
		t.Fatalf("ConfigMap: %+v", resp)
	}
}

// slowRule stands in for a rule that runs past the deadline.
var slowRule = &rules.Rule{
	ID: "RL0999", Name: "slow", Summary: "s", Doc: rules.Doc{Why: "d"}, Severity: rules.Error, Source: rules.SourceGo,
	Run: func(*rules.Pass) error { time.Sleep(300 * time.Millisecond); return nil },
}

var panicRule = &rules.Rule{
	ID: "RL0998", Name: "panics", Summary: "s", Doc: rules.Doc{Why: "d"}, Severity: rules.Error, Source: rules.SourceGo,
	Run: func(*rules.Pass) error { panic(errors.New("boom")) },
}

func TestTimeoutAndInternalErrorsFollowFailureMode(t *testing.T) {
	for _, r := range []*rules.Rule{slowRule, panicRule} {
		for _, mode := range []FailureMode{FailOpen, FailClosed} {
			h := newTestHandler(Options{Failure: mode, Timeout: 50 * time.Millisecond,
				Linter: &Linter{Rules: append(all.Rules(), r)}})
			start := time.Now()
			_, resp := post(t, h, reviewJSON(t, "t", "CREATE", goodRollout, false))
			if el := time.Since(start); r == slowRule && el > 250*time.Millisecond {
				t.Errorf("%s/%s: answered after %s, past the 50ms timeout", r.Name, mode, el)
			}
			if resp == nil || resp.UID != "t" {
				t.Fatalf("%s/%s: %+v", r.Name, mode, resp)
			}
			if resp.Allowed != (mode == FailOpen) {
				t.Errorf("%s/%s: allowed=%v", r.Name, mode, resp.Allowed)
			}
			if mode == FailClosed && (resp.Result == nil || resp.Result.Code != http.StatusInternalServerError) {
				t.Errorf("%s/%s: want status 500, got %+v", r.Name, mode, resp.Result)
			}
		}
	}
}

func TestAuditModeNeverDenies(t *testing.T) {
	h := newTestHandler(Options{Enforce: EnforceOff, Failure: FailClosed, Timeout: 50 * time.Millisecond,
		Linter: &Linter{Rules: append(all.Rules(), slowRule)}})
	_, resp := post(t, h, reviewJSON(t, "a", "CREATE", badRollout, false))
	if resp == nil || !resp.Allowed {
		t.Fatalf("enforce=off denied a review that timed out: %+v", resp)
	}
}

func TestHealthAndReadiness(t *testing.T) {
	ready := false
	h := newTestHandler(Options{Ready: func() bool { return ready }})
	get := func(p string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
		return rec.Code
	}
	if get("/healthz") != 200 || get("/readyz") != 503 {
		t.Fatal("before sync: want healthz 200, readyz 503")
	}
	ready = true
	if get("/readyz") != 200 {
		t.Fatal("after sync: readyz not 200")
	}
	// The plain-HTTP side serves health and metrics but never reviews.
	obs := h.Observability()
	for p, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200, ValidatePath: 404} {
		rec := httptest.NewRecorder()
		obs.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, p, bytes.NewReader(reviewJSON(t, "p", "CREATE", badRollout, false))))
		if rec.Code != want {
			t.Errorf("observability %s: HTTP %d, want %d", p, rec.Code, want)
		}
	}
}

// A `kubectl apply` of a template and the Rollout that names it sends the
// two reviews a millisecond apart, before the watch brings the template into
// the view: the Rollout's review must see the template the webhook just
// admitted. A dry run creates nothing, and is not kept.
func TestAdmittedCreateIsSeenByTheNextReview(t *testing.T) {
	const template = `
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: success-rate, namespace: shop}
spec:
  metrics:
  - name: success-rate
    successCondition: len(result) > 0 && result[0] >= 0.95
    provider: {prometheus: {address: "http://prometheus:9090", query: "sum(up)"}}
`
	const rollout = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: checkout, namespace: shop}
spec:
  selector: {matchLabels: {app: checkout}}
  template: {metadata: {labels: {app: checkout}}, spec: {containers: [{name: checkout, image: checkout:1}]}}
  strategy: {canary: {steps: [{setWeight: 20}, {analysis: {templates: [{templateName: success-rate}]}}]}}
`
	rl4001 := func(resp *admissionv1.AdmissionResponse) bool {
		for _, w := range resp.Warnings {
			if strings.Contains(w, "RL4001") {
				return true
			}
		}
		return false
	}
	h := newTestHandler(Options{Linter: &Linter{Rules: all.Rules(), Globals: rules.Globals{IstioVersion: "1.28"}, View: clusterview.New()}})
	if _, resp := post(t, h, reviewJSON(t, "1", "CREATE", template, true)); resp == nil || !resp.Allowed {
		t.Fatalf("dry-run template: %+v", resp)
	}
	if _, resp := post(t, h, reviewJSON(t, "2", "CREATE", rollout, true)); resp == nil || !rl4001(resp) {
		t.Fatalf("after a dry run of the template, the Rollout's review should warn RL4001: %+v", resp)
	}
	if _, resp := post(t, h, reviewJSON(t, "3", "CREATE", template, false)); resp == nil || !resp.Allowed {
		t.Fatalf("template: %+v", resp)
	}
	if _, resp := post(t, h, reviewJSON(t, "4", "CREATE", rollout, false)); resp == nil || !resp.Allowed || rl4001(resp) {
		t.Fatalf("the Rollout's review did not see the template just admitted: %+v", resp)
	}
}

// TestFindingsLogLineIsBounded: a Rollout with hundreds of bad steps has
// hundreds of findings; the review's log line lists the first
// maxLoggedFindings and says how many more there are, and the findings
// metric still counts every one.
func TestFindingsLogLineIsBounded(t *testing.T) {
	var steps strings.Builder
	const bad = 300
	for range bad {
		steps.WriteString("      - setWeight: 150\n")
	}
	manifest := strings.Replace(badRollout, "      - setWeight: 20\n      - setWeight: 150\n", steps.String(), 1)
	var logs bytes.Buffer
	h := newTestHandler(Options{Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	_, resp := post(t, h, reviewJSON(t, "many", "CREATE", manifest, false))
	if resp == nil || resp.Allowed {
		t.Fatalf("Rollout with %d bad steps not denied: %+v", bad, resp)
	}
	var line struct {
		Msg      string   `json:"msg"`
		Errors   int      `json:"errors"`
		Findings []string `json:"findings"`
	}
	for l := range strings.Lines(logs.String()) {
		if strings.Contains(l, `"msg":"findings"`) {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatalf("findings log line is not JSON: %v\n%s", err, l)
			}
		}
	}
	if line.Errors < bad {
		t.Fatalf("log line counts %d errors, want at least %d:\n%s", line.Errors, bad, logs.String())
	}
	if len(line.Findings) != maxLoggedFindings+1 {
		t.Fatalf("log line lists %d findings, want %d and a count of the rest", len(line.Findings), maxLoggedFindings+1)
	}
	var more int
	if _, err := fmt.Sscanf(line.Findings[maxLoggedFindings], "%d more findings not logged", &more); err != nil || more+maxLoggedFindings < bad {
		t.Errorf("last entry %q: want the count of the at least %d findings not listed", line.Findings[maxLoggedFindings], bad-maxLoggedFindings)
	}
	for _, f := range line.Findings[:maxLoggedFindings] {
		if !strings.Contains(f, "RL1001") || len([]rune(f)) > maxLoggedFindingLen {
			t.Errorf("logged finding %q: want an RL1001 of at most %d characters", f, maxLoggedFindingLen)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(rec.Body.String(), fmt.Sprintf(`rolloutlint_webhook_findings_total{rule="RL1001",severity="error"} %d`, bad)) {
		t.Errorf("findings metric does not count all %d:\n%s", bad, grep(rec.Body.String(), "rolloutlint_webhook_findings"))
	}
}
