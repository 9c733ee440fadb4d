package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/internal/testcert"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// clusterFromCorpus fills a view with a generated bundle of about n objects
// and returns review bodies for the objects the webhook lints, as UPDATEs of
// what is already in the cluster (so each is linted with its neighbours).
func clusterFromCorpus(t testing.TB, n int) (*View, [][]byte) {
	t.Helper()
	apps := 1
	for corpus.Objects(apps) < n {
		apps++
	}
	g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: apps, Seed: 7, MistakeRate: 0.1}), load.Options{})
	v := NewView()
	var bodies [][]byte
	for i, r := range g.Resources {
		if err := v.Set(&unstructured.Unstructured{Object: r.Object()}); err != nil {
			t.Fatal(err)
		}
		if !linted(r.Kind) {
			continue
		}
		raw, err := json.Marshal(r.Object())
		if err != nil {
			t.Fatal(err)
		}
		review := map[string]any{
			"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
			"request": map[string]any{
				"uid": fmt.Sprintf("load-%d", i), "kind": map[string]any{"group": r.Group, "version": r.Version, "kind": r.Kind},
				"resource": map[string]any{"group": r.Group, "version": r.Version, "resource": "x"},
				"name":     r.Name, "namespace": r.Namespace, "operation": "UPDATE", "userInfo": map[string]any{},
				"object": json.RawMessage(raw), "oldObject": json.RawMessage(raw),
			},
		}
		b, err := json.Marshal(review)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	return v, bodies
}

// BenchmarkReview measures one review end to end through the handler (no
// network) against a 1,000-object cluster view.
func BenchmarkReview(b *testing.B) {
	v, bodies := clusterFromCorpus(b, 1000)
	h := NewHandler(Options{Linter: &Linter{Rules: all.Rules(), View: v, Globals: rules.Globals{IstioVersion: "1.28"}}})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec := &discardWriter{h: http.Header{}}
		req, _ := http.NewRequest(http.MethodPost, ValidatePath, bytes.NewReader(bodies[i%len(bodies)]))
		h.ServeHTTP(rec, req)
		if rec.code != 0 && rec.code != http.StatusOK {
			b.Fatalf("HTTP %d", rec.code)
		}
	}
}

type discardWriter struct {
	h    http.Header
	code int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(c int)           { d.code = c }

// TestLoad drives the HTTPS server at a fixed arrival rate (open loop, like
// the API server's independent requests) with a 1,000-object cluster view,
// and reports p50/p99/max latency. It runs with WEBHOOK_LOAD=1 (make
// bench-webhook); WEBHOOK_LOAD_P99 sets the latency the p99 must stay under
// (default 10ms).
func TestLoad(t *testing.T) {
	if os.Getenv("WEBHOOK_LOAD") == "" {
		t.Skip("load test: set WEBHOOK_LOAD=1 (make bench-webhook)")
	}
	target := 10 * time.Millisecond
	if s := os.Getenv("WEBHOOK_LOAD_P99"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		target = d
	}
	const (
		rate     = 200
		duration = 15 * time.Second
	)
	v, bodies := clusterFromCorpus(t, 1000)
	t.Logf("cluster view: %d objects; %d distinct reviews", v.Len(), len(bodies))

	dir := t.TempDir()
	pair, err := testcert.New(dir, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	certs, err := NewCertReloader(pair.CertFile, pair.KeyFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := NewHandler(Options{Linter: &Linter{Rules: all.Rules(), View: v, Globals: rules.Globals{IstioVersion: "1.28"}}})
	go func() { _ = ServeListener(ctx, ln, h, certs, slog.New(slog.DiscardHandler), ServeOptions{}) }()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pair.CAPEM)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: 64,
	}}
	url := "https://" + ln.Addr().String() + ValidatePath
	send := func(body []byte) (time.Duration, error) {
		began := time.Now()
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		data, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		el := time.Since(began)
		if err != nil {
			return 0, fmt.Errorf("reading response: %w", err)
		}
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("HTTP %d: %s", resp.StatusCode, data)
		}
		var review admissionv1.AdmissionReview
		if err := json.Unmarshal(data, &review); err != nil || review.Response == nil {
			return 0, fmt.Errorf("bad response: %w", err)
		}
		return el, nil
	}
	for i := 0; i < 200; i++ { // warm connections and caches
		if _, err := send(bodies[i%len(bodies)]); err != nil {
			t.Fatal(err)
		}
	}
	n := int(rate * duration / time.Second)
	lat := make([]time.Duration, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	// Each request has a scheduled start; a generator that falls behind
	// catches up instead of silently lowering the rate.
	began := time.Now()
	for i := 0; i < n; i++ {
		time.Sleep(time.Until(began.Add(time.Duration(i) * time.Second / rate)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := send(bodies[i%len(bodies)])
			if err != nil {
				errs <- err
				return
			}
			lat[i] = d
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	close(errs)
	for err := range errs {
		t.Fatalf("request failed: %v", err)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) time.Duration { return lat[int(float64(len(lat)-1)*p)] }
	t.Logf("%d requests in %s (%.0f req/s): p50 %s p90 %s p99 %s max %s",
		n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(),
		pct(0.50).Round(time.Microsecond), pct(0.90).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
	if p99 := pct(0.99); p99 > target {
		t.Errorf("p99 %s over the %s target", p99, target)
	}
}
