package promcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
	"github.com/rolloutlint/rolloutlint/rules/ruletest"
	"github.com/rolloutlint/rolloutlint/semantics/promql"
)

// exporter serves istio_requests_total with the labels of seed 004's canary:
// 200s and 503s for destination_service_name="app-canary", growing on every
// scrape so that rate() has data after two scrapes.
type exporter struct {
	mu      sync.Mutex
	scrapes int
}

func (e *exporter) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	e.mu.Lock()
	e.scrapes++
	n := e.scrapes
	e.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintln(w, "# HELP istio_requests_total Requests seen by the Istio sidecar.")
	fmt.Fprintln(w, "# TYPE istio_requests_total counter")
	for _, s := range []struct {
		code  string
		count int
	}{{"200", 100 * n}, {"503", n}} {
		fmt.Fprintf(w, "istio_requests_total{reporter=\"destination\",destination_service_name=\"app-canary\",destination_service_namespace=\"shop\",destination_workload=\"app\",destination_version=\"unknown\",response_code=%q} %d\n", s.code, s.count)
	}
}

// startPrometheus runs the Debian prometheus binary on a free loopback port
// scraping target every second, and stops it (by PID) when the test ends.
func startPrometheus(t *testing.T, target string) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus binary not installed (scripts/install-prometheus.sh installs the Debian package); skipping the live dry-run test")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	conf := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n- job_name: istio\n  static_configs:\n  - targets: [%q]\n", target)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	// Free the port for Prometheus; a listener still open would make it fail to bind.
	if err := l.Close(); err != nil {
		t.Fatalf("releasing port %s: %v", addr, err)
	}
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
		_ = cmd.Wait()
	})
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/-/ready")
		if err == nil {
			_ = resp.Body.Close() // only the status matters
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus on %s not ready after 30s; its log:\n%s", addr, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	return base
}

// waitForData polls until the query returns a non-empty vector: the first
// scrapes have landed and rate() has two samples.
func waitForData(t *testing.T, c *Client, query string) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		r, err := c.Query(context.Background(), query)
		if err == nil && r.Series > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no data for %s after 45s (last error %v)", query, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

const liveBundle = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: { name: app, namespace: shop }
spec:
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
  strategy:
    canary:
      steps:
        - setWeight: 5
        - analysis:
            templates: [{ templateName: canary-health }]
            args: [{ name: canary-svc, value: app-canary }]
        - analysis:
            templates: [{ templateName: canary-health }]
            args: [{ name: canary-svc, value: app-missing }]
        - analysis:
            templates: [{ templateName: hashed }]
            args:
              - name: hash
                valueFrom: { podTemplateHashValue: Latest }
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: { name: canary-health, namespace: shop }
spec:
  args: [{ name: canary-svc }]
  metrics:
    - name: error-rate
      interval: 1m
      count: 5
      successCondition: len(result) > 0 && result[0] < 0.02
      provider:
        prometheus:
          address: http://prometheus.monitoring:9090
          query: |
            sum(rate(istio_requests_total{destination_service_name="{{args.canary-svc}}",response_code=~"5.."}[1m]))
            / sum(rate(istio_requests_total{destination_service_name="{{args.canary-svc}}"}[1m]))
    - name: seed-condition
      interval: 1m
      count: 5
      successCondition: result < 0.02
      provider:
        prometheus:
          address: http://prometheus.monitoring:9090
          query: |
            sum(rate(istio_requests_total{destination_service_name="{{args.canary-svc}}",response_code=~"5.."}[1m]))
            / sum(rate(istio_requests_total{destination_service_name="{{args.canary-svc}}"}[1m]))
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: { name: hashed, namespace: shop }
spec:
  args: [{ name: hash }]
  metrics:
    - name: by-hash
      provider:
        prometheus:
          query: sum(istio_requests_total{destination_workload_label_rollouts_pod_template_hash="{{args.hash}}"})
`

// lintLive runs the registry over the bundle with c as the live Prometheus
// and returns the RL4090 findings, the note the rule wrote and the result.
func lintLive(t *testing.T, c rules.Prometheus, bundle string) ([]rules.Diagnostic, string, *analyzer.Result) {
	t.Helper()
	g := load.Inputs([]load.Input{{Path: "bundle.yaml", Data: []byte(bundle)}}, load.Options{})
	var note strings.Builder
	live := &rules.Live{Prometheus: c, Notef: func(format string, args ...any) { fmt.Fprintf(&note, format, args...) }}
	res := analyzer.Run(g, analyzer.Options{Rules: all.Rules(), Mode: rules.ModeCLI, Live: live})
	var diags []rules.Diagnostic
	for _, d := range res.Diagnostics {
		if d.RuleID == ruleID {
			diags = append(diags, d)
		}
	}
	return diags, note.String(), res
}

const ruleID = "RL4090"

// TestLivePrometheus runs the dry-run rule against the real Prometheus: the
// bundle above, then the rule's `# want` testdata.
func TestLivePrometheus(t *testing.T) {
	exp := &exporter{}
	srv := httptest.NewServer(exp) // listens on 127.0.0.1
	defer srv.Close()
	base := startPrometheus(t, strings.TrimPrefix(srv.URL, "http://"))
	c, err := NewClient(Config{URL: base, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	waitForData(t, c, `sum(rate(istio_requests_total{destination_service_name="app-canary",response_code=~"5.."}[1m]))`)

	t.Run("bundle", func(t *testing.T) {
		diags, note, res := lintLive(t, c, liveBundle)
		if res.LiveErr != nil {
			t.Fatal(res.LiveErr)
		}
		for _, d := range diags {
			t.Logf("%s:%d:%d %s", d.Pos.File, d.Pos.Line, d.Pos.Column, d.Message)
		}
		// Two distinct queries reach Prometheus (app-canary and app-missing); the
		// hash query waits for a run-time value and is not sent.
		if !strings.HasPrefix(note, "prometheus dry-run: 2 queries sent, 1 skipped") {
			t.Errorf("note %q: want 2 queries sent and 1 skipped", note)
		}
		want := []struct {
			line int
			re   string
		}{
			// "has data": app-canary answers; only the unguarded scalar comparison fails on the vector.
			{48, `metric seed-condition \(Rollout app\): successCondition "result < 0.02" cannot evaluate the vector result \[0\.0099`},
			// "no data": app-missing has no series.
			{38, `metric error-rate \(Rollout app\): the analysis would see no data\. Prometheus returned no series for .*app-missing`},
			{48, `metric seed-condition \(Rollout app\): the analysis would see no data`},
		}
		if len(diags) != len(want) {
			t.Fatalf("got %d findings, want %d", len(diags), len(want))
		}
		for _, w := range want {
			found := false
			for _, d := range diags {
				if d.Pos.Line == w.line && d.Severity == rules.Warning && matches(w.re, d.FullMessage()) {
					found = true
				}
			}
			if !found {
				t.Errorf("no finding on line %d matching %q", w.line, w.re)
			}
		}
		// The has-data query with a guarded condition produced nothing.
		for _, d := range diags {
			if full := d.FullMessage(); strings.Contains(full, "error-rate") && strings.Contains(full, "app-canary") {
				t.Errorf("unexpected finding for a query with data: %s", full)
			}
		}
	})
	t.Run("testdata", func(t *testing.T) {
		ruletest.Run(t, all.Rules(), ruleID, "../../testdata/rules/"+ruleID, func(_ string, opts *analyzer.Options) error {
			opts.Live = &rules.Live{Prometheus: c}
			return nil
		})
	})
	if exp.scrapes < 2 {
		t.Errorf("exporter scraped %d times", exp.scrapes)
	}
}

// counting counts the queries sent through it.
type counting struct {
	rules.Prometheus
	n atomic.Int32
}

func (c *counting) Query(ctx context.Context, q string) (*promql.Result, error) {
	c.n.Add(1)
	return c.Prometheus.Query(ctx, q)
}

func TestUnreachableStops(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil { // nothing listens there now
		t.Fatalf("releasing port %s: %v", addr, err)
	}
	c, err := NewClient(Config{URL: "http://" + addr, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cc := &counting{Prometheus: c}
	diags, note, res := lintLive(t, cc, liveBundle)
	if res.LiveErr == nil || !strings.Contains(res.LiveErr.Error(), "prometheus unreachable") || !errors.Is(res.LiveErr, ErrUnreachable) {
		t.Fatalf("want an unreachable error, got %v", res.LiveErr)
	}
	if n := cc.n.Load(); n != 1 {
		t.Errorf("sent %d queries to a dead server, want 1 (no retry storm)", n)
	}
	for _, d := range res.Diagnostics {
		if d.RuleID == "RL0009" {
			t.Errorf("an unreachable server is not a broken rule: %s", d.Message)
		}
	}
	if len(diags) != 0 || note != "" {
		t.Errorf("a stopped dry run reported %d findings and noted %q", len(diags), note)
	}
}

// Without a live system the rule is off: no query, no finding, and not
// counted among the rules that ran.
func TestOffWithoutLive(t *testing.T) {
	t.Parallel()
	g := load.Inputs([]load.Input{{Path: "bundle.yaml", Data: []byte(liveBundle)}}, load.Options{})
	res := analyzer.Run(g, analyzer.Options{Rules: all.Rules(), Mode: rules.ModeCLI, Enable: []string{ruleID}})
	for _, r := range res.Rules {
		if r.ID == ruleID {
			t.Errorf("%s enabled in a run without a live Prometheus", ruleID)
		}
	}
}

func TestBearerTokenAndAPIError(t *testing.T) {
	var gotAuth, gotQuery string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		_ = r.ParseForm()
		gotQuery = r.Form.Get("query")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"status":"error","errorType":"bad_data","error":"many-to-many matching not allowed"}`)
	}))
	defer srv.Close()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(Config{URL: srv.URL, BearerTokenFile: tok})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Query(context.Background(), "up")
	if gotAuth != "Bearer s3cret" || gotQuery != "up" {
		t.Errorf("sent Authorization %q and query %q", gotAuth, gotQuery)
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.Type != "bad_data" {
		t.Errorf("want a bad_data APIError, got %v", err)
	}
	if _, err := NewClient(Config{URL: "prometheus:9090"}); err == nil {
		t.Error("a URL without scheme should be rejected")
	}
}

func matches(re, s string) bool {
	ok, err := regexp.MatchString(re, s)
	return err == nil && ok
}
