package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rolloutlint/rolloutlint/internal/testcert"
)

// TestServesTLSAndReloadsCertificate serves over real TLS, rotates the
// certificate files under the running server and checks that new handshakes
// present the new certificate without a restart.
func TestServesTLSAndReloadsCertificate(t *testing.T) {
	dir := t.TempDir()
	pair, err := testcert.New(dir, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	certs, err := NewCertReloader(pair.CertFile, pair.KeyFile, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	certs.Interval = 10 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- ServeListener(ctx, ln, newTestHandler(Options{}), certs, slog.New(slog.DiscardHandler), ServeOptions{})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pair.CAPEM)
	serial := func() int64 {
		t.Helper()
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("https://" + ln.Addr().String() + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		if b, _ := io.ReadAll(resp.Body); string(b) != "ok\n" {
			t.Fatalf("healthz: %q", b)
		}
		return resp.TLS.PeerCertificates[0].SerialNumber.Int64()
	}
	if got := serial(); got != 2 {
		t.Fatalf("serving serial %d, want 2", got)
	}
	if err := pair.Issue(3, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	// Make sure the stamp differs even on coarse-mtime filesystems.
	future := time.Now().Add(time.Minute)
	if err := os.Chtimes(pair.CertFile, future, future); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if got := serial(); got != 3 {
		t.Fatalf("after rotation serving serial %d, want 3", got)
	}
	// A broken file keeps the last good certificate in service.
	if err := os.WriteFile(pair.CertFile, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if got := serial(); got != 3 {
		t.Fatalf("after a broken rotation serving serial %d, want the previous 3", got)
	}
}

// TestCertReloadIsKeyedByContent rewrites the pair with a new certificate of
// the same size and puts the old modification times back: a size+mtime stamp
// would miss that, the content digest does not.
func TestCertReloadIsKeyedByContent(t *testing.T) {
	dir := t.TempDir()
	pair, err := testcert.New(dir, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	certs, err := NewCertReloader(pair.CertFile, pair.KeyFile, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	certs.Interval = 0
	stat := func(p string) os.FileInfo {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	oldCert, oldKey := stat(pair.CertFile), stat(pair.KeyFile)
	serial := int64(3)
	for ; serial < 100; serial++ { // ECDSA signatures vary in length: find a same-size pair
		if err := pair.Issue(serial, "127.0.0.1"); err != nil {
			t.Fatal(err)
		}
		if stat(pair.CertFile).Size() == oldCert.Size() && stat(pair.KeyFile).Size() == oldKey.Size() {
			break
		}
	}
	for p, st := range map[string]os.FileInfo{pair.CertFile: oldCert, pair.KeyFile: oldKey} {
		if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	c, err := certs.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Leaf.SerialNumber.Int64(); got != serial {
		t.Fatalf("serving serial %d after a same-size, same-mtime rotation; want %d", got, serial)
	}
	m := NewMetrics(nil)
	m.WatchCertificate(certs)
	rec := httptest.NewRecorder()
	newTestHandler(Options{Metrics: m}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	want := "rolloutlint_webhook_certificate_expiry_timestamp_seconds " + strconv.FormatFloat(float64(c.Leaf.NotAfter.Unix()), 'e', -1, 64)
	if !strings.Contains(rec.Body.String(), want) {
		t.Errorf("metrics lack %q:\n%s", want, grep(rec.Body.String(), "certificate"))
	}
}

// TestShutdownDrainsFirst checks the SIGTERM sequence: readiness turns false
// while reviews are still served for the drain delay, then the server stops.
func TestShutdownDrainsFirst(t *testing.T) {
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
	h := newTestHandler(Options{})
	var logs strings.Builder
	var mu sync.Mutex
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- ServeListener(ctx, ln, h, certs, newLockedLogger(&logs, &mu), ServeOptions{Drain: h.Drain, DrainDelay: 300 * time.Millisecond})
	}()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pair.CAPEM)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(p string) int {
		resp, err := client.Get("https://" + ln.Addr().String() + p)
		if err != nil {
			return -1
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if got := get("/readyz"); got != 200 {
		t.Fatalf("readyz before shutdown: %d", got)
	}
	cancel()
	time.Sleep(50 * time.Millisecond)
	if got := get("/readyz"); got != http.StatusServiceUnavailable {
		t.Errorf("readyz while draining: %d, want 503", got)
	}
	if got := get("/healthz"); got != 200 {
		t.Errorf("healthz while draining: %d, want still served", got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := get("/healthz"); got != -1 {
		t.Errorf("served after shutdown: %d", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "draining") || !strings.Contains(logs.String(), "shut down") {
		t.Errorf("shutdown not logged:\n%s", logs.String())
	}
}

// TestServesHTTP2 checks that connections whose handshake the listener
// completed still negotiate HTTP/2, as the API server's client does.
func TestServesHTTP2(t *testing.T) {
	pair, err := testcert.New(t.TempDir(), "127.0.0.1")
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
	done := make(chan error, 1)
	go func() {
		done <- ServeListener(ctx, ln, newTestHandler(Options{}), certs, slog.New(slog.DiscardHandler), ServeOptions{})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pair.CAPEM)
	for _, h2 := range []bool{true, false} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: h2}
		if !h2 {
			tr.TLSClientConfig.NextProtos = []string{"http/1.1"}
		}
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Post("https://"+ln.Addr().String()+ValidatePath,
			"application/json", bytes.NewReader(reviewJSON(t, "h", "CREATE", badRollout, false)))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		want := map[bool]string{true: "HTTP/2.0", false: "HTTP/1.1"}[h2]
		if resp.Proto != want || resp.StatusCode != 200 {
			t.Errorf("got %s %d, want %s 200", resp.Proto, resp.StatusCode, want)
		}
	}
}
