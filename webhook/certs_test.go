package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
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
		done <- ServeListener(ctx, ln, newTestHandler(Options{}), certs, slog.New(slog.DiscardHandler))
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
