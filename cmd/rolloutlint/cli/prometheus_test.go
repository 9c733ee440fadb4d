package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

const seed004 = "../../../testdata/rules/RL4010/clean-seed004.yaml"

// TestPrometheusFlagWiring checks the flags: no request without
// --prometheus-url; with it, one request per distinct query, RL4090 findings
// in the report, and exit code 2 when the server is unreachable. The live
// behaviour against a real Prometheus is tested in live/promcheck.
func TestPrometheusFlagWiring(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	var lastQuery atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_ = r.ParseForm()
		lastQuery.Store(r.Form.Get("query"))
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	}))
	defer srv.Close()

	var out, errw bytes.Buffer
	Main([]string{"lint", "--format", "json", seed004}, nil, &out, &errw)
	if n := requests.Load(); n != 0 {
		t.Fatalf("lint without --prometheus-url sent %d requests", n)
	}

	out.Reset()
	errw.Reset()
	code := Main([]string{"lint", "--format", "json", "--prometheus-url", srv.URL, "--prometheus-timeout", "2s", seed004}, nil, &out, &errw)
	if code != ExitFindings { // RL4025 is an error on the seed's condition
		t.Errorf("exit %d, want %d; stderr %s", code, ExitFindings, errw.String())
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("sent %d requests, want 1 (two steps share the query)", n)
	}
	if q, _ := lastQuery.Load().(string); !strings.Contains(q, `destination_service_name="app-canary"`) || strings.Contains(q, "{{") {
		t.Errorf("query sent: %q", q)
	}
	var rep struct {
		Diagnostics []struct {
			RuleID  string `json:"ruleId"`
			Line    int    `json:"line"`
			Message string `json:"message"`
			Related []struct {
				Line int `json:"line"`
			} `json:"related"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out.String())
	}
	live := 0
	for _, d := range rep.Diagnostics {
		if d.RuleID == "RL4090" {
			live++
			if d.Line != 79 || !strings.Contains(d.Message, "analysis would see no data") || len(d.Related) != 2 {
				t.Errorf("RL4090 finding: %+v", d)
			}
		}
	}
	if live != 1 {
		t.Errorf("got %d RL4090 findings, want 1:\n%s", live, out.String())
	}
	if !strings.Contains(errw.String(), "prometheus dry-run: 1 queries sent") {
		t.Errorf("no summary on stderr: %q", errw.String())
	}

	srv.Close()
	errw.Reset()
	if code := Main([]string{"lint", "--prometheus-url", srv.URL, seed004}, nil, &out, &errw); code != ExitFailure ||
		!strings.Contains(errw.String(), "prometheus unreachable") {
		t.Errorf("unreachable server: exit %d, stderr %q", code, errw.String())
	}
}

// RL4090 is a rule like any other: the config sets its severity or turns it
// off (then nothing is sent), and a comment on the query's line suppresses it.
func TestPrometheusRuleConfigAndSuppression(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	}))
	defer srv.Close()
	const template = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: app}
spec:
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: web:1}]}}
  strategy:
    canary:
      steps:
      - analysis: {templates: [{templateName: health}]}
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: health}
spec:
  metrics:
  - name: requests
    successCondition: len(result) > 0
    provider:
      prometheus:
        query: sum(istio_requests_total{destination_service_name="web"})%s
`
	lint := func(cfg, comment string) (int, []map[string]any, string) {
		t.Helper()
		dir := t.TempDir()
		files := map[string]string{"bundle.yaml": fmt.Sprintf(template, comment), ".rolloutlint.yaml": cfg}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var out, errw bytes.Buffer
		e := &Env{In: strings.NewReader(""), Out: &out, Err: &errw, Dir: dir}
		code := e.Run([]string{"lint", "-f", "json", "--include-suppressed", "--prometheus-url", srv.URL, "bundle.yaml"})
		var rep struct {
			Diagnostics []map[string]any `json:"diagnostics"`
		}
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("json: %v\n%s%s", err, out.String(), errw.String())
		}
		var live []map[string]any
		for _, d := range rep.Diagnostics {
			if d["ruleId"] == "RL4090" {
				live = append(live, d)
			}
		}
		return code, live, errw.String()
	}

	code, live, _ := lint("rules:\n  RL4090: error\n", "")
	if code != ExitFindings || len(live) != 1 || live[0]["severity"] != "error" || live[0]["line"] != 21.0 {
		t.Errorf("RL4090: error in the config: exit %d, findings %v; want exit 1 and one error on line 21", code, live)
	}
	code, live, _ = lint("rules:\n  RL4090: error\n", " # rolloutlint:ignore RL4090 -- the exporter ships next week")
	if code != ExitOK || len(live) != 1 || live[0]["suppressed"] == nil {
		t.Errorf("suppressed: exit %d, findings %v; want exit 0 and the finding marked suppressed", code, live)
	}
	before := requests.Load()
	code, live, stderr := lint("rules:\n  RL4090: off\n", "")
	if code != ExitOK || len(live) != 0 || requests.Load() != before || strings.Contains(stderr, "dry-run") {
		t.Errorf("RL4090: off: exit %d, findings %v, %d requests, stderr %q; want nothing sent", code, live, requests.Load()-before, stderr)
	}
}

// TestPrometheusFlagsNeedURL: the other --prometheus-* flags without
// --prometheus-url did nothing, silently; they are a usage error, as the
// --cluster-* flags without --cluster are. A timeout must be positive.
func TestPrometheusFlagsNeedURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--prometheus-timeout", "5s"}, "--prometheus-timeout needs --prometheus-url"},
		{[]string{"--prometheus-ca-file", "ca.pem"}, "--prometheus-ca-file needs --prometheus-url"},
		{[]string{"--prometheus-bearer-token-file", "t"}, "--prometheus-bearer-token-file needs --prometheus-url"},
		{[]string{"--prometheus-insecure-skip-verify"}, "--prometheus-insecure-skip-verify needs --prometheus-url"},
		{[]string{"--prometheus-url", "http://127.0.0.1:1", "--prometheus-timeout", "0s"}, "--prometheus-timeout 0s: must be positive"},
	} {
		var out, errw bytes.Buffer
		args := append(append([]string{"lint"}, c.args...), seed004)
		if code := Main(args, nil, &out, &errw); code != ExitFailure || !strings.Contains(errw.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errw.String(), c.want)
		}
	}
}
